// Collapsed Gibbs sampling for LDA: the counts one token's resampling reads and writes, and the exact
// sampler. A token of word w in document d takes topic k with probability proportional to
//
//   (n_dk + alpha_k) (n_kw + beta) / (n_k + W beta)
//
// where the counts leave the token itself out (Griffiths and Steyvers, 2004). The exact sampler costs
// O(K) per token; faster samplers are checked against it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "schmp/kernels/fast_random.hpp"

namespace schmp::kernels {

// A view of the priors: alpha_k may differ by topic (learned: --optimize_interval), beta is one value.
struct TopicPriors {
  std::span<const double> alpha;  // alpha_k, one per topic
  double alpha_sum = 0;           // sum_k alpha_k
  double beta = 0.01;             // per word
  double beta_sum = 1.0;          // W beta
};

// Whether every alpha_k is the same: samplers and tables then need one value, not K.
inline bool symmetric(std::span<const double> alpha) {
  return std::all_of(alpha.begin(), alpha.end(), [&](double a) { return a == alpha.front(); });
}

struct TopicCounts {
  std::span<std::uint32_t> document;  // n_dk of the token's document, one per topic
  std::span<std::uint32_t> word;      // n_kw of the token's word, one per topic
  std::span<std::int64_t> totals;     // n_k, one per topic
  TopicPriors priors;
};

// Takes the token (now of topic `old_topic`, and counted) out of the counts, draws its new topic from
// the conditional above with `uniform` in [0, 1), and counts it there. `weights` is scratch space of K
// doubles. Returns the new topic.
std::uint32_t resample_exact(const TopicCounts& counts, std::uint32_t old_topic, double uniform,
                             std::span<double> weights);

// The same conditional, for the tokens of one word after another (F+LDA: Yu, Hsieh, Yun, Vishwanathan
// and Dhillon, 2015). With c_k = (n_kw + beta) / (n_k + W beta) the weight splits as
//
//   (n_dk + alpha_k) c_k  =  n_dk c_k  (over the document's topics, usually few)  +  alpha_k c_k
//
// c_k is computed once per word and updated at the two topics a token move touches. The prior terms
// alpha_k c_k are summed in buckets of sqrt(K) topics or so: an update costs O(1), and a draw that lands
// in them (rarely, once documents have settled) O(sqrt K). The document part's total costs O(K_d) for
// the first token of a document and is then updated in O(1) for the document's next tokens of the same
// word, which come right after it (a word occurs about three times in each document that has it, in
// long documents). The old topic takes the draw's first interval: most tokens keep their topic, and
// such a token then costs O(1) past the document part, with no count or sum written. A token costs
// O(K_d) at most and a word O(K), drawing exactly from the distribution resample_exact draws from.
class WordByWordSampler {
 public:
  explicit WordByWordSampler(int topics);

  // The word whose tokens come next: its counts row and the totals, read and updated in place.
  void start_word(std::span<std::uint32_t> word, std::span<std::int64_t> totals, const TopicPriors& priors);

  // Moves one token of the word in a document (its counts, and the list of its topics with a nonzero
  // count, kept in step) from `old_topic` to a topic drawn with `uniform` in [0, 1); returns it.
  std::uint32_t resample(std::span<std::uint32_t> document, std::vector<std::uint32_t>& document_topics,
                         std::uint32_t old_topic, double uniform);

  // The same draw for a document the model does not learn from (fold-in: held-out or unseen
  // documents): only the document's counts move; the word's counts and the totals stay as they are.
  std::uint32_t fold_in(std::span<std::uint32_t> document, std::vector<std::uint32_t>& document_topics,
                        std::uint32_t old_topic, double uniform);

  // p(word | document) = sum_k theta_dk phi_kw with theta_dk = (n_dk + alpha_k) / (length + sum_k alpha_k)
  // and phi_kw = (n_kw + beta) / (n_k + W beta): the predictive probability of one more token of the word.
  double predictive(std::span<const std::uint32_t> document,
                    const std::vector<std::uint32_t>& document_topics, double length) const;

 private:
  // Takes the token out of the document's counts (and the model's, when `learn`), draws its topic, and
  // counts it there.
  std::uint32_t move(std::span<std::uint32_t> document, std::vector<std::uint32_t>& document_topics,
                     std::uint32_t old_topic, double uniform, bool learn);
  // sum_k n_dk c_k over the document's topics.
  double document_part(std::span<const std::uint32_t> document,
                       const std::vector<std::uint32_t>& document_topics) const;
  // A drawn topic and its place in the document's topic list, and the old topic's place if the draw
  // walked past it, which reorder() then need not search for; kUnlisted when not known.
  static constexpr std::size_t kUnlisted = SIZE_MAX;
  struct Drawn {
    std::uint32_t topic = 0;
    std::size_t place = kUnlisted;
    std::size_t old_place = kUnlisted;
  };
  // Walks the document's topics, the token of `old_topic` out of the counts and that topic left out,
  // to the one whose running weight passes `target`.
  Drawn draw(std::span<const std::uint32_t> document, const std::vector<std::uint32_t>& document_topics,
             std::uint32_t old_topic, double target) const;
  std::uint32_t draw_prior(double target) const;
  // After a move from `old_topic` (count already lowered) to the drawn topic (already raised):
  // restores the list's order by decreasing count and drops a topic whose count fell to 0.
  static void reorder(std::span<const std::uint32_t> document, std::vector<std::uint32_t>& document_topics,
                      std::uint32_t old_topic, Drawn drawn);
  // c_k of the current word, from its count and the cached 1 / (n_k + W beta).
  double coefficient(std::uint32_t k) const {
    return (word_[k] + priors_.beta) * inverse_totals_[k].of_total;
  }
  void set_coefficient(std::uint32_t k, double coefficient);
  void change_prior(std::uint32_t k, double change);  // of alpha_k c_k, in its bucket's sum and the total
  // Recomputes topic k's cached inverses for its current total.
  void refresh_inverse(std::uint32_t k);
  double inverse_of_one_less(std::int64_t total) const;  // 1 / (total - 1 + W beta), 0 for no token
  // A moved token leaves `topic`'s word count and total (its coefficient already lowered by move()),
  // whose inverses shift down by one; put_in counts a token into `topic`.
  void take_out(std::uint32_t topic);
  void put_in(std::uint32_t topic);

  // c_k of the current word, kept in step with its counts: the document terms then cost a multiply
  // each, not a division.
  std::vector<double> coefficients_;
  int bucket_shift_ = 0;  // buckets of 2^shift topics: an update's bucket is a shift, not a division
  std::vector<double> bucket_sums_;  // sum of alpha_k c_k over each bucket
  double prior_sum_ = 0;             // sum_k alpha_k c_k
  // The document of the last token moved, and its document part then: the next token of the same
  // document starts from it.
  const std::uint32_t* last_document_ = nullptr;
  double last_part_ = 0;
  std::span<std::uint32_t> word_;
  std::span<std::int64_t> totals_;
  TopicPriors priors_;
  // Per topic, 1 / (n_k + W beta) and 1 / (n_k - 1 + W beta) for the total n_k they were computed at
  // (-1: never): a token that is taken out and drawn back needs no division, nor a word whose totals
  // did not change since the last.
  struct InverseTotal {
    std::int64_t total = -1;
    double of_total = 0;
    double of_one_less = 0;
  };
  std::vector<InverseTotal> inverse_totals_;
};

// Metropolis-Hastings with cycle proposals (LightLDA: Yuan et al., 2015), each drawn in O(1) without
// tables by picking a random token (WarpLDA: Chen et al., 2016). A token's move alternates, `steps`
// times, between
//
//   the word proposal      q(k) ∝ m_kw + beta: the topic of a random token of the word among those
//                          being swept (m: their counts), or a uniform topic; and
//   the document proposal  q(k) ∝ n_dk + alpha_k: the topic of a random token of its document, or a
//                          topic drawn from the prior (uniform when alpha is symmetric),
//
// each accepted with the Metropolis-Hastings ratio for the exact collapsed conditional (the token out
// of every count), so every step leaves the conditional invariant. A step costs a few random reads,
// not O(K_d): fast, at the price of mixing more slowly per sweep than an exact Gibbs draw.
struct TopicToken {
  std::uint32_t document = 0;  // row among the documents
  std::uint32_t word = 0;      // row in the block of word-topic counts
  std::uint32_t topic = 0;
  std::uint32_t slot = 0;  // its place in DocumentTopics::topics
};

// Documents' topics as the document proposal reads them: n_dk (K per document), and every token's
// topic by slot, document d holding slots [offsets[d], offsets[d + 1]).
struct DocumentTopics {
  std::span<std::uint32_t> counts;
  std::span<std::uint32_t> topics;
  std::span<const std::uint32_t> offsets;
};

// One sweep over `tokens` (sorted by word) whose words' counts rows (K per row) are `block_counts`.
// Moves the tokens and every count with them; `local` is K zeros of scratch, left zero. Returns the
// number of tokens whose topic changed.
std::uint64_t metropolis_hastings_sweep(std::span<TopicToken> tokens, std::span<std::uint32_t> block_counts,
                                        std::span<std::int64_t> totals, const DocumentTopics& documents,
                                        const TopicPriors& priors, int steps, FastRandom& random,
                                        std::span<std::uint32_t> local);

// The collapsed Gibbs sampler on a CUDA GPU (--device gpu), after SaberLDA (Li, Chen, Chen, Zhu and
// Zhang, 2017) and CuLDA (Xie, Liang, Li and Tan, 2019). A worker's tokens (by block, sorted by word),
// their topics and its documents' counts n_dk stay on the GPU; a sub-round's travelling block of word-topic
// counts and the topic totals go up through pinned staging memory, the block's tokens are sampled, and
// both come back down before the block travels on.
//
// One warp draws one token from the exact conditional (n_dk + alpha)(n_kw + beta)/(n_k + W beta), the
// token left out of all three counts, in chunks of 32 topics: a warp prefix sum gives the chunk's
// running weights, and the chunk replaces the draw so far with probability (chunk's weight) / (weight
// of the chunks so far), the topic inside it found by a warp vote on the same uniform number. The last
// chunk to replace the draw holds topic k with probability w_k / (chunk's sum) * (chunk's sum / the sum
// so far) * prod over later chunks of (1 - their share) = w_k / sum_k w_k: exactly the conditional,
// reading each count once. Warps move their tokens at once, so a draw may miss the moves of the
// tokens being drawn alongside it (of its document, its word, and in the totals; thousands of warps
// run at once on a large GPU, against the millions of tokens of a block): the staleness the
// rotation's totals already have (lda.hpp), within a sub-round. Moves are atomic, so the counts stay
// exact; a token's own count is in every value it reads, so leaving it out never goes below zero.
//
// Random numbers are counter-based (splitmix64 of the seed, the iteration and the token's index), so a
// run repeats for a given seed up to the order of the atomic updates.
//
// GPU memory: 12 bytes per token (document row, word row, topic), 4 K bytes per document (n_dk,
// dense), 4 K bytes per row of the largest block and 8 K bytes of totals; pinned host memory: twice
// the largest block (one buffer up, one down, so that neither is rewritten while a copy reads it).
struct GpuTopicModel {
  int topics = 0;
  TopicPriors priors;  // alpha symmetric: the GPU sampler reads alpha_0 for every topic
  std::uint64_t seed = 0;
  std::span<const std::vector<TopicToken>> blocks;  // each block's tokens (word: its row there), by word
  std::span<const std::uint32_t> block_rows;        // each block's words
  std::span<const std::uint32_t> document_counts;   // n_dk, K per document, counting the tokens
};

// What a sweep leaves: the block's new counts (valid until the next start_sweep) and how many tokens
// changed topic.
struct GpuSweep {
  std::span<const std::uint32_t> block_counts;
  std::uint64_t moved = 0;
};

class GpuTopicSampler {
 public:
  virtual ~GpuTopicSampler() = default;

  // Pinned host memory for the dense rows (rows x K) of `block`, to be filled before start_sweep; not
  // to be written while a sweep is in flight.
  virtual std::span<std::uint32_t> block_staging(std::uint32_t block) = 0;
  // Sends the staged block and the totals (K) up, samples the block's tokens, and queues the block and
  // the totals' way back; returns without waiting, so that the caller can work meanwhile.
  virtual void start_sweep(std::uint32_t block, std::span<const std::int64_t> totals,
                           std::uint64_t iteration) = 0;
  // Waits for the sweep and writes the totals it left into `totals`.
  virtual GpuSweep finish_sweep(std::span<std::int64_t> totals) = 0;

  // The tokens' topics (into the blocks given at construction, in the same order) and n_dk, from the
  // GPU; and the other way, for a restored state.
  virtual void download(std::span<std::vector<TopicToken>> blocks,
                        std::span<std::uint32_t> document_counts) = 0;
  virtual void upload(std::span<const std::vector<TopicToken>> blocks,
                      std::span<const std::uint32_t> document_counts) = 0;
};

// A sampler on GPU `gpu` (kernels::pick_gpu) holding `model`. Throws std::runtime_error naming
// --device in a build without CUDA kernels.
std::unique_ptr<GpuTopicSampler> make_gpu_topic_sampler(int gpu, const GpuTopicModel& model);

}  // namespace schmp::kernels
