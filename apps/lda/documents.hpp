// Documents in the layout LDA's samplers want, for the corpus a worker learns from and for documents
// the model only reads (held-out documents during training, unseen ones in `schmp-lda infer`).
//
// Word v belongs to block v mod B and is row v / B there (B = 1 outside a rotation). Tokens are grouped
// by block and sorted word by word inside it, so the word's counts row stays hot and the word-by-word
// sampler computes its coefficients once per word. Each document keeps its topic counts n_dk (dense, K
// per document) and the list of its topics with n_dk > 0.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "schmp/io.hpp"
#include "schmp/kernels/topic_kernels.hpp"
#include "schmp/peers.hpp"

namespace schmp::lda {

using Priors = kernels::TopicPriors;

// How training draws a token's new topic (docs/lda.md compares them).
enum class Sampler {
  kSparse,              // exact Gibbs, word by word: O(K_d) per token (F+LDA)
  kExact,               // exact Gibbs, all K weights per token: the reference
  kMetropolisHastings,  // cycle proposals, O(1) per step (LightLDA / WarpLDA)
};

// A sampler with its scratch space and random stream: one per worker, or per group of documents.
struct SamplerState {
  SamplerState(Sampler kind, int topics, int steps, std::uint64_t seed)
      : kind(kind),
        steps(steps),
        word_by_word(topics),
        weights(static_cast<std::size_t>(topics)),
        local(static_cast<std::size_t>(topics), 0),
        random(seed) {}

  Sampler kind;
  int steps;  // Metropolis-Hastings: cycles of the word and the document proposals per token
  kernels::WordByWordSampler word_by_word;
  std::vector<double> weights;       // the exact sampler's scratch
  std::vector<std::uint32_t> local;  // Metropolis-Hastings scratch
  kernels::FastRandom random;
};

// Where each word's counts live: its block and its row there. Words are dealt to blocks by token
// count, heaviest first, each to the block with the fewest tokens so far: a sub-round lasts as long as
// its busiest worker, and word v mod B left blocks 10% apart on techdocs. One block: row = word.
struct WordLayout {
  // `tokens[v]`: word v's tokens in the whole corpus (the same on every worker, so every worker deals
  // the same layout).
  WordLayout() = default;
  WordLayout(std::span<const std::uint64_t> tokens, int blocks);

  std::vector<std::uint32_t> block;               // each word's block
  std::vector<std::uint32_t> row;                 // each word's row in its block
  std::vector<std::vector<std::uint32_t>> words;  // each block's words, by row
};

// io::InputError naming `path` when a word has more tokens than its 32-bit word-topic counts could
// hold, should they all take one topic.
void check_word_tokens(std::span<const std::uint64_t> tokens, const std::string& path);

// Deals documents to workers in id order, each to the worker with the fewest tokens so far. Every
// worker deals every document in the same order (from the job's document lengths), so all deal alike.
// (Document d to worker d mod P left techdocs' workers 8% apart at P = 2.)
class DocumentDealer {
 public:
  explicit DocumentDealer(int workers) : load_(static_cast<std::size_t>(workers), 0) {}
  // The worker that gets a document of `tokens` tokens.
  std::uint32_t deal(std::size_t tokens) {
    const auto lightest =
        static_cast<std::uint32_t>(std::min_element(load_.begin(), load_.end()) - load_.begin());
    load_[lightest] += tokens;
    return lightest;
  }

 private:
  std::vector<std::uint64_t> load_;
};

// The starting topic of a token: a hash of the seed, its document and its place there, so that the
// start does not depend on the rank count.
std::uint32_t starting_topic(std::uint64_t seed, std::uint64_t document, std::uint64_t position, int topics);

struct DocumentShard {
  using Token = kernels::TopicToken;  // document: row in the shard; word: row in its block

  // `slots`: keep every token's topic by slot too, which only the Metropolis-Hastings sampler reads.
  explicit DocumentShard(int topics, bool slots = false) : topics(topics), offsets{0}, slots(slots) {}

  // Appends a document with starting topics drawn from the seed.
  void add(std::uint32_t id, std::span<const std::uint32_t> words, std::uint64_t seed);
  // Call once every document is in: puts the tokens in their words' blocks, sorted word by word, and
  // lists each document's topics.
  void finish(const WordLayout& layout);

  std::span<std::uint32_t> document(std::uint32_t row) {
    return {counts.data() + static_cast<std::size_t>(row) * static_cast<std::size_t>(topics),
            static_cast<std::size_t>(topics)};
  }
  std::span<const std::uint32_t> document(std::uint32_t row) const {
    return {counts.data() + static_cast<std::size_t>(row) * static_cast<std::size_t>(topics),
            static_cast<std::size_t>(topics)};
  }
  std::uint32_t length(std::uint32_t row) const { return offsets[row + 1] - offsets[row]; }

  // Every token's topic by slot (rows in order, each document's tokens in file order), and back: the
  // form a checkpoint keeps, whatever blocks the tokens sit in.
  std::vector<std::uint32_t> topics_by_slot() const;
  void set_topics(std::span<const std::uint32_t> by_slot);

  // One sweep over the tokens of `block`, whose counts rows (K per row) are `block_counts`: the tokens,
  // their documents' counts, the word-topic counts and the totals all move. Returns the number of
  // tokens that changed topic.
  std::uint64_t learn(std::uint32_t block, std::span<std::uint32_t> block_counts,
                      std::span<std::int64_t> totals, const Priors& priors, SamplerState& sampler);
  // One fold-in sweep (exact Gibbs, word by word): only the tokens and their documents' counts move.
  void fold_in(std::uint32_t block, std::span<std::uint32_t> block_counts, std::span<std::int64_t> totals,
               const Priors& priors, SamplerState& sampler);

  int topics = 0;
  std::vector<Token> added;  // tokens until finish(), word = the word's id
  std::vector<std::vector<Token>> by_block;
  std::vector<std::uint32_t> ids;      // each row's document id
  std::vector<std::uint32_t> offsets;  // row r's tokens have slots [offsets[r], offsets[r + 1])
  bool slots = false;
  std::vector<std::uint32_t> slot_topics;           // each token's topic, by slot, when `slots`
  std::vector<std::uint32_t> counts;                // n_dk, K per row
  std::vector<std::vector<std::uint32_t>> nonzero;  // topics with n_dk > 0, heaviest first (sparse sampler)

 private:
  // Lists each document's topics with n_dk > 0, heaviest first.
  void list_topics();
  // The word-by-word Gibbs sweep, learning or folding in.
  std::uint64_t sweep_word_by_word(std::uint32_t block, std::span<std::uint32_t> block_counts,
                                   std::span<std::int64_t> totals, const Priors& priors, bool learn,
                                   SamplerState& sampler);
};

// Documents the model does not learn from, scored by document completion (Wallach, Murray,
// Salakhutdinov and Mimno, 2009): in each document the tokens at even positions are observed and
// folded in (Gibbs sampling of their topics with the model fixed); those at odd positions are held
// out and scored by p(w | d) = sum_k theta_dk phi_kw, theta from the observed half's topics and phi
// from the word-topic counts. Perplexity is exp(-sum log p(w | d) / held-out tokens).
class HeldOutDocuments {
 public:
  explicit HeldOutDocuments(int topics) : observed_(topics) {}

  void add(std::uint32_t id, std::span<const std::uint32_t> words, std::uint64_t seed);
  void finish(const WordLayout& layout);

  // One fold-in sweep over the observed tokens of `block`.
  void fold_in(std::uint32_t block, std::span<std::uint32_t> block_counts, std::span<std::int64_t> totals,
               const Priors& priors, SamplerState& sampler) {
    observed_.fold_in(block, block_counts, totals, priors, sampler);
  }
  // Adds p(w | d), under the documents' current topics, to each held-out token of `block`: one sample
  // of the posterior. Averaging over several samples gives a better estimate.
  void score(std::uint32_t block, std::span<std::uint32_t> block_counts, std::span<std::int64_t> totals,
             const Priors& priors, kernels::WordByWordSampler& sampler);
  // sum log (mean p(w | d)) over the held-out tokens, the means over the `samples` scores since the
  // last clear.
  double log_likelihood(int samples) const;
  void clear_scores();
  std::uint64_t held_out_tokens() const;
  std::uint64_t observed_tokens() const;

 private:
  struct HeldOutToken {
    std::uint32_t document = 0;  // row in observed_
    std::uint32_t word = 0;      // row in its block
    double probability_sum = 0;
  };

  DocumentShard observed_;
  std::vector<HeldOutToken> added_;                  // until finish(), word = the word's id
  std::vector<std::vector<HeldOutToken>> held_out_;  // by block, sorted word by word
};

// Word-topic count rows as they travel between workers: each row's number of nonzero counts (shifted
// left a bit), then each nonzero count with its topic. With many topics most counts are 0, and dense
// rows made the rotation's messages most of a round's time (at K = 1000 on techdocs, 63 MB per block
// and sub-round). A count and its topic share one 32-bit word, the topic in the low bits (7 of them
// for K = 100): half the bytes of (topic, count) pairs. Random starting topics leave most rows nearly
// full at first (78 of 100 topics on the scaling corpus, 30 after 8 iterations), so the first
// iterations' messages are the largest. A row with a count too large for the bits left (2^25 for
// K = 100, 2^22 for K = 1000) travels as (topic, count) pairs, which the header's low bit marks.
// The documents' topic counts go to rank 0 at the end of a run the same way.
std::vector<std::uint32_t> encode_rows(std::span<const std::uint32_t> dense, int topics);
// Fills `dense` (rows x K, the encoding's rows) from an encoding.
void decode_rows(std::span<const std::uint32_t> encoded, int topics, std::span<std::uint32_t> dense);
// Where each of an encoding's `rows` rows starts, and after them where the last ends: row r is
// encoded[starts[r], starts[r + 1]), for decode_rows one row at a time.
std::vector<std::size_t> row_starts(std::span<const std::uint32_t> encoded, std::size_t rows);

// Where a corpus is: UCI bag-of-words (`data`) or documents one per line, Mallet's format (`text`).
struct CorpusFiles {
  std::string data;
  std::string text;
  const std::string& path() const { return data.empty() ? text : data; }
};

struct CorpusRead {
  std::uint32_t words = 0;           // UCI: the header's W; text: the vocabulary's size
  std::uint64_t unknown_tokens = 0;  // text tokens left out, not in a vocabulary that may not grow
};

// Calls visit(id, words) for each document of the corpus, ids from 0 in file order. Text words take
// their ids from `vocabulary`, which grows when `grow`. A UCI word id of `known_words` or more is an
// error naming its line (documents read against a trained model).
CorpusRead read_documents(
    const CorpusFiles& files, io::Vocabulary& vocabulary, bool grow, std::uint32_t known_words,
    const std::function<void(std::uint32_t id, const std::vector<std::uint32_t>& words)>& visit);

// read_documents among the workers of a job (Peers): each worker reads only its byte range, and
// visit() sees the documents dealt to this worker, in id order: the same documents, ids, words and
// errors as a whole read feeding a DocumentDealer. The workers add up every document's tokens (and,
// when `word_tokens` is given, every word's: the whole corpus's, one per word) and hand each word's
// occurrences to their document's worker; a text corpus's words are numbered as a whole read numbers
// them (in order of first appearance), each worker receiving every worker's list of its range's words
// to do so.
// Holds the range's occurrences (12 bytes per UCI entry or text token), what this worker receives, and
// 12 bytes per document id.
CorpusRead read_dealt_documents(
    const CorpusFiles& files, io::Vocabulary& vocabulary, bool grow, std::uint32_t known_words, Peers& peers,
    std::vector<std::uint64_t>* word_tokens,
    const std::function<void(std::uint32_t id, const std::vector<std::uint32_t>& words)>& visit);

}  // namespace schmp::lda
