// Latent Dirichlet allocation by collapsed Gibbs sampling, as a rotation program (STRADS's schedule):
// each worker owns the documents dealt to it (by token count: DocumentDealer), their tokens' topics
// and their document-topic counts n_dk; the word-topic counts n_kw are cut into P blocks of words (dealt by
// token count, so the blocks weigh alike: WordLayout) that rotate around the workers, so no two workers ever
// sample tokens of the same word at once. The topic totals n_k change with every token anywhere: each worker
// samples against its own copy, and the copies are summed after every sub-round (a Shared message), so a
// worker's totals miss at most one sub-round of the others' moves. Totals are sums over many words, so a
// sub-round's moves shift them by a small fraction; this is the approximation of AD-LDA (Newman et al., 2009)
// with a shorter lag.
//
// Samplers (kernels/topic_kernels.hpp, chosen in documents.hpp): `sparse` (the default) draws from the
// exact collapsed conditional word by word, O(K_d) per token (F+LDA); `mh` takes Metropolis-Hastings
// steps, O(1) each but slower to mix; `exact` computes all K weights per token, the reference. The
// block a worker holds travels encoded (nonzero counts only) and is decoded into dense rows while the
// worker samples.
//
// With --device gpu the worker's training tokens are sampled on its GPU (kernels::GpuTopicSampler: the
// exact collapsed conditional, one warp per token, whatever --sampler says, which picks among the CPU
// samplers): its tokens' topics and n_dk stay there, the held block goes up and comes back each
// sub-round, and the host copies of the topics and n_dk are brought up to date at the end of every
// update round, for the evaluation, checkpoints and the output to read. Held-out documents are folded in
// and scored on the CPU, while the GPU samples, and `schmp-lda infer` runs on the CPU.
//
// With --optimize_interval the priors are learned (priors.hpp): on a learning iteration every worker
// summarises its counts into the round's Partial, the coordinator runs the fixed point on their sum, and
// every Step carries the priors to sample with.
//
// Held-out documents (--test) are split among the workers like the training ones and folded in as the
// blocks pass (their topics are resampled with the model fixed, every round); rounds followed by an
// evaluation also score their held-out halves (documents.hpp), for the perplexity in the trace.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "coherence.hpp"
#include "documents.hpp"
#include "schmp/io.hpp"
#include "schmp/kernels/topic_kernels.hpp"
#include "schmp/output.hpp"
#include "schmp/program.hpp"

namespace schmp::lda {

// log Gamma(n + prior) - log Gamma(prior) for counts n: the terms of log p(w, z), one per nonzero
// count at every evaluation. Most counts are small, and a table of them is several times cheaper than
// two lgamma calls.
class LogGammaRatio {
 public:
  explicit LogGammaRatio(double prior, std::size_t size = 4096) : prior_(prior), table_(size) {
    for (std::size_t n = 0; n < table_.size(); ++n) table_[n] = std::lgamma(n + prior) - std::lgamma(prior);
  }
  double operator()(std::uint32_t n) const {
    return n < table_.size() ? table_[n] : std::lgamma(n + prior_) - std::lgamma(prior_);
  }

 private:
  double prior_;
  std::vector<double> table_;
};

struct Config {
  std::string data;              // UCI docword.txt
  std::string text;              // or documents one per line, Mallet's format
  std::string vocab;             // UCI vocab.txt, for the topics' top words
  std::string test;              // held-out documents, in the training corpus's format
  std::string coherence_corpus;  // reference documents for NPMI, in its format (empty: the training corpus)
  int top_words = 10;            // per topic, scored for coherence and shown in PREFIX.topics
  std::uint64_t eval_every = 0;  // rounds between evaluations (0: every round)
  int topics = 10;
  double alpha = 0.1;  // per topic
  double beta = 0.01;  // per word
  int iterations = 100;
  int optimize_interval = 0;  // iterations between learnings of alpha_k and beta (0: fixed priors)
  int optimize_burn_in = 50;  // iterations before the first
  bool optimize_beta = true;  // learn beta too, not alpha_k alone
  Sampler sampler = Sampler::kSparse;
  int mh_steps = 2;  // Metropolis-Hastings: proposal cycles per token
  std::uint64_t seed = 1;
  std::string output;  // prefix

  io::RunFiles files() const;  // the model's files (from the prefix) and the corpus, vocabulary and test

  std::vector<std::string> inputs() const { return {data, text}; }  // what a checkpoint is tied to
};

void check(const Config& config);

struct Lda {
  using Config = lda::Config;

  struct Setup {
    std::vector<double> topic_counts;  // n_k of the starting topics
    double tokens = 0;
    double words = 0;            // W, the same on every worker (summed: W times P)
    double held_out_tokens = 0;  // of the --test documents
    double unknown_tokens = 0;   // of the --test documents, words the training corpus does not have
    template <class V>
    void visit(V& v) {
      v(topic_counts, tokens, words, held_out_tokens, unknown_tokens);
    }
  };
  struct Step {
    std::uint64_t iteration = 0;
    bool score = false;         // score the held-out tokens: an evaluation follows
    bool optimize = false;      // summarise the counts for learning the priors (priors.hpp)
    std::vector<double> alpha;  // the priors to sample with: alpha_k, one per topic
    double beta = 0;
    template <class V>
    void visit(V& v) {
      v(iteration, score, optimize, alpha, beta);
    }
  };
  struct Shared {
    std::vector<double> topic_changes;  // this worker's moves since the last sum
    template <class V>
    void visit(V& v) {
      v(topic_changes);
    }
  };
  struct Partial {
    double moved = 0;                    // tokens that changed topic
    double held_out_log_likelihood = 0;  // sum of log p(w | d) over the held-out tokens, when scored
    // When the step optimises, the counts' summaries (DigammaSum): each topic's counts in the documents,
    // the documents' lengths; for beta, the word-topic counts of the home blocks and the topic totals (worker
    // 0).
    std::vector<double> topic_summaries;
    std::vector<double> length_summary;
    std::vector<double> word_summary;
    std::vector<double> totals;
    template <class V>
    void visit(V& v) {
      v(moved, held_out_log_likelihood, topic_summaries, length_summary, word_summary, totals);
    }
  };
  struct Stats {
    double log_likelihood = 0;   // log p(w, z), summed over the parts each worker owns
    double word_tokens = 0;      // the sum of the word-topic counts of the home blocks
    double document_tokens = 0;  // the sum of the document-topic counts
    // Per topic, the word-topic (then the document-topic) counts' sum less the topic totals n_k
    // (worker 0 takes them away): zero while the totals agree with the counts.
    std::vector<double> word_totals_off;
    std::vector<double> document_totals_off;
    // When the evaluation scores coherence (coherence.hpp): each topic's top words' document counts in
    // the training documents, and in the reference corpus when it is another; the reference's
    // documents; and how many top words each topic has (worker 0).
    std::vector<double> training_counts;
    std::vector<double> reference_counts;
    double reference_documents = 0;
    std::vector<double> listed;
    template <class V>
    void visit(V& v) {
      v(log_likelihood, word_tokens, document_tokens, word_totals_off, document_totals_off, training_counts,
        reference_counts, reference_documents, listed);
    }
  };
  // n_kw of a block's words (WordLayout gives their rows), encoded as it travels (encode_rows).
  // The worker holding it decodes it into dense rows while it samples.
  struct Block {
    std::vector<std::uint32_t> encoded;
    template <class V>
    void visit(V& v) {
      v(encoded);
    }
  };
  // Counts travel encoded (encode_rows): with many topics most are 0, and the documents' rows dense
  // (4 x K bytes each) would be most of what rank 0 collects and holds.
  struct Part {
    std::vector<std::uint32_t> word_topic;      // its home block's rows, encoded
    std::vector<std::uint32_t> words;           // their words
    std::vector<std::uint32_t> document_topic;  // its documents' rows, encoded
    std::vector<std::uint32_t> documents;       // their ids
    std::vector<std::string> vocabulary;        // worker 0, of a text corpus: every word by id
    template <class V>
    void visit(V& v) {
      v(word_topic, words, document_topic, documents, vocabulary);
    }
  };

  // A worker's share of a checkpoint: the topics of its documents' tokens, document by document in
  // file order (the counts follow from them), and the priors and iterations it had reached.
  struct Saved {
    std::vector<std::uint32_t> documents;  // ids
    std::vector<std::uint32_t> lengths;    // their token counts
    std::vector<std::uint32_t> topics;     // every token's, the documents one after another
    std::vector<double> alpha;             // the priors it sampled with, the same on every worker
    double beta = 0;
    std::uint64_t completed = 0;  // iterations
    template <class V>
    void visit(V& v) {
      v(documents, lengths, topics, alpha, beta, completed);
    }
  };
  // The coordinator's part: where the iterations stand, the settings they were made with, and the
  // priors they sample with now (learned, with --optimize_interval).
  struct Progress {
    std::uint64_t iterations = 0;
    double perplexity = NAN;
    std::uint32_t topics = 0;
    double alpha = 0;
    double beta = 0;
    std::vector<double> current_alpha;
    double current_beta = 0;
    template <class V>
    void visit(V& v) {
      v(iterations, perplexity, topics, alpha, beta, current_alpha, current_beta);
    }
  };

  class Worker {
   public:
    Worker(const Config& config, const WorkerContext& context);
    Setup setup() const;
    void start(const Setup& summed);
    Block make_block() const;
    void prepare(std::uint32_t block, Block& held);
    void update(const Step& step, std::uint32_t block, Block& held);
    Shared share();
    void absorb(const Shared& summed);
    Partial end_update(const Step& step, Block& home);
    // Coherence is scored at every evaluation with --eval_every, else at the one after the last
    // iteration; such an evaluation visits every block, for the topics' top words.
    bool rotates_evaluation() const;
    void evaluate(std::uint32_t block, const Block& held);
    Stats end_evaluation(const Block& home);
    Part part(const Block& home) const;
    Saved save(const Block& home) const;
    // Takes its documents' topics from each of the checkpointed run's shares in turn; the prepare
    // rotation then counts the blocks from them.
    void restore(const Saved& share, Block& home);
    void finish_restore(Block& home);

   private:
    // What the shares of a checkpoint have given so far, while they come in.
    struct Restoring {
      std::vector<std::uint32_t> topics_by_slot;  // of its tokens
      std::vector<bool> found;                    // of its documents, by row
      std::vector<std::int64_t> totals;           // n_k of every share's tokens
    };
    Restoring& restoring_state();  // begun at the first share

    std::uint32_t rows(std::uint32_t block) const;  // the words of a block
    // The held block's rows, dense, to be worked on; store() encodes them back into it.
    std::span<std::uint32_t> load(std::uint32_t block, const Block& held);
    void store(std::uint32_t block, Block& held) const;
    // update() on the GPU.
    void update_on_gpu(const Step& step, std::uint32_t block, Block& held);
    // Samples with these priors from now on.
    void adopt_priors(std::span<const double> alpha, double beta);
    // log Gamma(n_dk + alpha_k) - log Gamma(alpha_k) by table, made again only when alpha changes.
    const std::vector<LogGammaRatio>& document_terms_for_alpha();
    // The counts' summaries, into an optimising step's partial.
    void summarise_counts(const Block& home, Partial& partial);
    // The top words' document counts, into a coherence evaluation's stats.
    void count_top_words(Stats& stats);

    Config config_;
    WorkerContext context_;
    int gpu_ = -1;               // kernels::pick_gpu: -1 on the CPU
    std::vector<double> alpha_;  // alpha_k, which priors_ views
    Priors priors_;
    std::uint32_t words_ = 0;                       // W
    std::vector<std::string> vocabulary_;           // worker 0, of a text corpus: every word by id
    WordLayout layout_;                             // the words' blocks and rows
    DocumentShard documents_;                       // the documents it owns
    std::optional<HeldOutDocuments> held_out_;      // its share of the --test documents
    std::uint64_t unknown_tokens_ = 0;              // of those, left out
    DocumentWords document_words_;                  // its documents' distinct words, for coherence
    std::optional<DocumentWords> reference_words_;  // its share of --coherence_corpus
    std::uint64_t completed_ = 0;                   // iterations, after the last update round
    std::optional<TopWords> top_words_;             // gathered while a coherence evaluation rotates
    std::vector<LogGammaRatio> document_terms_;     // for terms_alpha_
    std::vector<double> terms_alpha_;
    std::vector<std::int64_t> totals_;         // n_k as this worker sees it
    std::vector<std::int64_t> synced_totals_;  // n_k at the last sum
    std::vector<std::uint32_t> dense_;         // the held block's rows, decoded (room for the largest)
    std::uint64_t worker_seed_;                // of its sampler's streams
    SamplerState sampler_;
    std::optional<SamplerState> held_out_sampler_;           // with held_out_: folds in and scores
    std::unique_ptr<kernels::GpuTopicSampler> gpu_sampler_;  // with --device gpu
    double moved_ = 0;
    std::optional<Restoring> restoring_;
  };

  class Coordinator {
   public:
    Coordinator(const Config& config, const Setup& summed, int blocks);
    std::vector<std::string> trace_columns() const;
    Step schedule();
    void aggregate(const Step& step, const Partial& summed);
    bool wants_evaluation() const { return evaluates_after(iterations_); }
    Report report(const Stats& summed);
    void finish(const Summary& summary, const std::vector<Part>& parts);
    Progress save() const;
    void restore(const Progress& progress);

   private:
    // Whether an evaluation follows iteration `iteration`: every --eval_every, and after the last.
    bool evaluates_after(std::uint64_t iteration) const;
    // Whether the priors are learned after iteration `iteration`: every --optimize_interval past the burn-in.
    bool optimizes_after(std::uint64_t iteration) const;
    // Learns alpha_k and beta from an optimising round's summed summaries.
    void learn_priors(const Partial& summed);
    // Each topic's coherence, from a coherence evaluation's summed stats.
    void score_coherence(const Stats& summed);

    Config config_;
    Setup setup_;
    std::uint32_t words_;
    io::Vocabulary vocabulary_;  // --vocab, read at start-up so that a bad file fails before training
    std::uint64_t iterations_ = 0;
    double moved_ = 0;
    double tokens_per_second_ = 0;  // of the last round
    double perplexity_ = NAN;       // held-out, from the last scored round
    std::vector<double> alpha_;     // the priors the next round samples with
    double beta_;
    double sampled_alpha_sum_;  // and those the last round sampled with, for the trace
    double sampled_beta_;
    double optimizing_seconds_ = 0;   // spent learning the priors, in all
    TopicScores scores_;              // each topic's coherence, at the last evaluation that scored it
    std::uint64_t scored_after_ = 0;  // the iterations then
    std::chrono::steady_clock::time_point round_started_;
  };
};

}  // namespace schmp::lda
