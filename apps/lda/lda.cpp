#include "lda.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "model.hpp"
#include "priors.hpp"
#include "schmp/kernels/device.hpp"
#include "schmp/kernels/topic_kernels.hpp"
#include "schmp/output.hpp"

namespace schmp::lda {

// The files a model's --output prefix names.
constexpr const char* kModelFileSuffixes[] = {".word_topic", ".vocab", ".topics", ".doc_topic"};

io::RunFiles Config::files() const {
  io::RunFiles files{{},
                     {{"--data", data},
                      {"--text", text},
                      {"--vocab", vocab},
                      {"--test", test},
                      {"--coherence_corpus", coherence_corpus}}};
  if (!output.empty()) {
    for (const char* suffix : kModelFileSuffixes) files.written.push_back({"--output", output + suffix});
  }
  return files;
}

void check(const Config& config) {
  if (config.data.empty() == config.text.empty()) throw std::runtime_error("give one of --data and --text");
  if (config.optimize_interval < 0 || config.optimize_burn_in < 0)
    throw std::runtime_error("--optimize_interval and --optimize_burn_in count iterations: 0 or more");
  // The first learning comes after the first multiple of the interval past the burn-in.
  if (config.optimize_interval > 0 &&
      (config.optimize_burn_in / config.optimize_interval + 1) * config.optimize_interval > config.iterations)
    throw std::runtime_error("--optimize_interval " + std::to_string(config.optimize_interval) +
                             " after --optimize_burn_in " + std::to_string(config.optimize_burn_in) +
                             " never comes within --iterations " + std::to_string(config.iterations));
  if (!config.text.empty() && !config.vocab.empty())
    throw std::runtime_error("--vocab names the words of --data's ids: --text documents name their own");
}

namespace {

// The configuration, once checked: the members built from it come after.
const Config& checked(const Config& config) {
  check(config);
  return config;
}

// While loading, every worker holds 12 bytes per document of the whole corpus and 8 per word; each then
// holds two blocks of the word-topic counts (its own and the one arriving, 4 bytes per word and topic of
// a block of W / P words), and with --output rank 0 ends with them all, dense (docs/memory.md). A header that
// declares far more than its data holds is refused before that memory is promised, rather than met by the
// OOM killer.
void check_declared_sizes(const std::string& data, int topics, int workers, bool writes_model) {
  io::CorpusSize declared;
  try {
    declared = io::read_bag_of_words(data, io::ByteRange{0, 0}, [](const io::WordCount&) {}).declared;
  } catch (const io::InputError&) {
    // Left to the read that follows, which reads the header again: there the workers first compare what
    // they see of the file, so that a host that lacks it is named.
    return;
  }
  const double bytes_per_word = 8.0 + 8.0 * topics / workers + (writes_model ? 4.0 * topics : 0.0);
  const double document_bytes = 12.0 * static_cast<double>(declared.documents);
  const double word_bytes = bytes_per_word * static_cast<double>(declared.words);
  char per_item[96];
  std::snprintf(per_item, sizeof per_item, ", at 12 bytes per document and %g per word,", bytes_per_word);
  // The message is at the line of the count that asks for more.
  io::check_memory(data, document_bytes > word_bytes ? declared.documents_source : declared.words_source,
                   "the header's " + std::to_string(declared.documents) + " documents (D) and " +
                       std::to_string(declared.words) + " words (W)" + per_item,
                   document_bytes + word_bytes);
}

// The counts below these are summarised exactly for learning the priors (DigammaSum): a topic's counts in
// the documents (K summaries), the documents' lengths and the word-topic counts (one each).
constexpr std::size_t kTopicExact = 128;
constexpr std::size_t kLengthExact = 1024;
constexpr std::size_t kWordExact = 1024;

// The mean of the topics' scores that are numbers (a topic of fewer than two words has none).
double mean_of_scored(const std::vector<double>& scores) {
  double sum = 0;
  int count = 0;
  for (const double score : scores) {
    if (std::isnan(score)) continue;
    sum += score;
    ++count;
  }
  return count > 0 ? sum / count : NAN;
}

}  // namespace

Lda::Worker::Worker(const Config& config, const WorkerContext& context)
    : config_(checked(config)),
      context_(context),
      // Before any data is read: --device gpu on a host without one fails at once.
      gpu_(kernels::pick_gpu(context)),
      documents_(config.topics, config.sampler == Sampler::kMetropolisHastings && gpu_ < 0),
      worker_seed_(config.seed * 1000003 + static_cast<std::uint64_t>(context.index)),
      sampler_(config.sampler, config.topics, config.mh_steps, worker_seed_) {
  // Each worker reads only its byte range of the corpus and receives the documents dealt to it.
  Peers& peers = peers_of(context);
  if (gpu_ >= 0 && config.optimize_interval > 0)
    throw std::runtime_error("--optimize_interval needs --device cpu: the GPU sampler's alpha is symmetric");
  io::Vocabulary vocabulary;
  std::vector<std::uint64_t> word_tokens;
  const CorpusFiles corpus{config.data, config.text};
  if (!config.data.empty())
    check_declared_sizes(config.data, config.topics, context.count, !config.output.empty());
  words_ = read_dealt_documents(corpus, vocabulary, true, UINT32_MAX, peers, &word_tokens,
                                [&](std::uint32_t id, const std::vector<std::uint32_t>& words) {
                                  documents_.add(id, words, config.seed);
                                  document_words_.add(words);
                                })
               .words;
  if (words_ == 0) throw io::InputError(corpus.path(), 0, "no words");
  // Worker 0 hands the text corpus's words to the model file at the end.
  if (context.index == 0) {
    for (std::uint32_t id = 0; id < vocabulary.size(); ++id) vocabulary_.push_back(vocabulary.word(id));
  }
  check_word_tokens(word_tokens, corpus.path());
  layout_ = WordLayout(word_tokens, context.count);
  documents_.finish(layout_);
  if (!config.test.empty()) {
    const CorpusFiles test{config.data.empty() ? "" : config.test, config.text.empty() ? "" : config.test};
    HeldOutDocuments& held_out = held_out_.emplace(config.topics);
    // Folding in draws from a stream of its own, so that watching held-out documents leaves the
    // training chain as it is without them.
    held_out_sampler_.emplace(
        config.sampler, config.topics, config.mh_steps,
        config.seed * 1000003 + static_cast<std::uint64_t>(context.count + context.index));
    unknown_tokens_ = read_dealt_documents(test, vocabulary, false, words_, peers, nullptr,
                                           [&](std::uint32_t id, const std::vector<std::uint32_t>& words) {
                                             held_out.add(id, words, config.seed + 1);
                                           })
                          .unknown_tokens;
    held_out.finish(layout_);
  }
  if (!config.coherence_corpus.empty()) {
    const CorpusFiles reference{config.data.empty() ? "" : config.coherence_corpus,
                                config.text.empty() ? "" : config.coherence_corpus};
    DocumentWords& reference_words = reference_words_.emplace();
    read_dealt_documents(
        reference, vocabulary, false, words_, peers, nullptr,
        [&](std::uint32_t, const std::vector<std::uint32_t>& words) { reference_words.add(words); });
  }
  alpha_.assign(static_cast<std::size_t>(config.topics), config.alpha);
  priors_ = Priors{alpha_, config.alpha * config.topics, config.beta, config.beta * words_};
  std::size_t most_rows = 0;
  for (const auto& words : layout_.words) most_rows = std::max(most_rows, words.size());
  dense_.resize(most_rows * static_cast<std::size_t>(config.topics));
  if (gpu_ >= 0) {
    std::vector<std::uint32_t> block_rows;
    for (const auto& words : layout_.words) block_rows.push_back(static_cast<std::uint32_t>(words.size()));
    gpu_sampler_ = kernels::make_gpu_topic_sampler(
        gpu_, kernels::GpuTopicModel{config.topics, priors_, worker_seed_, documents_.by_block, block_rows,
                                     documents_.counts});
  }
}

Lda::Setup Lda::Worker::setup() const {
  Setup setup;
  setup.topic_counts.assign(static_cast<std::size_t>(config_.topics), 0.0);
  for (const auto& tokens : documents_.by_block) {
    for (const auto& token : tokens) setup.topic_counts[token.topic] += 1;
    setup.tokens += static_cast<double>(tokens.size());
  }
  setup.words = words_;
  if (held_out_) setup.held_out_tokens = static_cast<double>(held_out_->held_out_tokens());
  // Every worker knows the whole --test file's count (read_dealt_documents adds the ranges' up).
  if (context_.index == 0) setup.unknown_tokens = static_cast<double>(unknown_tokens_);
  return setup;
}

void Lda::Worker::start(const Setup& summed) {
  totals_.assign(summed.topic_counts.begin(), summed.topic_counts.end());
  synced_totals_ = totals_;
}

std::uint32_t Lda::Worker::rows(std::uint32_t block) const {
  return static_cast<std::uint32_t>(layout_.words[block].size());
}

std::span<std::uint32_t> Lda::Worker::load(std::uint32_t block, const Block& held) {
  const std::span<std::uint32_t> dense(
      dense_.data(), static_cast<std::size_t>(rows(block)) * static_cast<std::size_t>(config_.topics));
  decode_rows(held.encoded, config_.topics, dense);
  return dense;
}

void Lda::Worker::store(std::uint32_t block, Block& held) const {
  held.encoded =
      encode_rows(std::span<const std::uint32_t>(dense_.data(), static_cast<std::size_t>(rows(block)) *
                                                                    static_cast<std::size_t>(config_.topics)),
                  config_.topics);
}

Lda::Block Lda::Worker::make_block() const {
  // Every row empty: a header of no counts.
  return Block{std::vector<std::uint32_t>(rows(static_cast<std::uint32_t>(context_.index)), 0)};
}

void Lda::Worker::prepare(std::uint32_t block, Block& held) {
  const auto topics = static_cast<std::size_t>(config_.topics);
  const std::span<std::uint32_t> counts = load(block, held);
  for (const auto& token : documents_.by_block[block]) ++counts[token.word * topics + token.topic];
  store(block, held);
}

void Lda::Worker::adopt_priors(std::span<const double> alpha, double beta) {
  if (alpha.size() != alpha_.size()) throw std::logic_error("priors that are not one per topic");
  // The GPU sampler keeps the priors it was made with: learned ones (a checkpoint's) it cannot follow.
  if (gpu_sampler_ && (beta != config_.beta ||
                       std::any_of(alpha.begin(), alpha.end(), [&](double a) { return a != config_.alpha; })))
    throw std::runtime_error("learned priors need --device cpu: the GPU sampler's alpha is symmetric");
  std::copy(alpha.begin(), alpha.end(), alpha_.begin());
  priors_ = Priors{alpha_, std::accumulate(alpha_.begin(), alpha_.end(), 0.0), beta, beta * words_};
}

void Lda::Worker::update(const Step& step, std::uint32_t block, Block& held) {
  adopt_priors(step.alpha, step.beta);
  if (gpu_sampler_) {
    update_on_gpu(step, block, held);
    return;
  }
  const std::span<std::uint32_t> counts = load(block, held);
  // A sweep's draws depend on its worker, iteration and block only (as on the GPU): a resumed run
  // draws what the uninterrupted one would have, rather than the first iterations' numbers again.
  sampler_.random = kernels::FastRandom(
      kernels::mix64(kernels::mix64(kernels::mix64(worker_seed_) ^ step.iteration) ^ block));
  if (held_out_) {
    // Scored first, against the model as the last round left it, then folded in further.
    if (step.score) held_out_->score(block, counts, totals_, priors_, held_out_sampler_->word_by_word);
    held_out_->fold_in(block, counts, totals_, priors_, *held_out_sampler_);
  }
  moved_ += static_cast<double>(documents_.learn(block, counts, totals_, priors_, sampler_));
  store(block, held);
}

void Lda::Worker::update_on_gpu(const Step& step, std::uint32_t block, Block& held) {
  // Decoded straight into the pinned staging memory the block goes up from.
  const std::span<std::uint32_t> counts = gpu_sampler_->block_staging(block);
  decode_rows(held.encoded, config_.topics, counts);
  gpu_sampler_->start_sweep(block, totals_, step.iteration);
  if (held_out_) {
    // On the CPU while the GPU samples, against the block and the totals as they were before the sweep
    // (the staging copy, which the GPU only reads from, and totals_, which finish_sweep rewrites): what
    // the CPU path reads too. Folding in moves neither.
    if (step.score) held_out_->score(block, counts, totals_, priors_, held_out_sampler_->word_by_word);
    held_out_->fold_in(block, counts, totals_, priors_, *held_out_sampler_);
  }
  const kernels::GpuSweep sweep = gpu_sampler_->finish_sweep(totals_);
  moved_ += static_cast<double>(sweep.moved);
  held.encoded = encode_rows(sweep.block_counts, config_.topics);
}

Lda::Shared Lda::Worker::share() {
  Shared shared;
  shared.topic_changes.resize(totals_.size());
  for (std::size_t k = 0; k < totals_.size(); ++k)
    shared.topic_changes[k] = static_cast<double>(totals_[k] - synced_totals_[k]);
  return shared;
}

void Lda::Worker::absorb(const Shared& summed) {
  for (std::size_t k = 0; k < totals_.size(); ++k) {
    synced_totals_[k] += static_cast<std::int64_t>(summed.topic_changes[k]);
  }
  totals_ = synced_totals_;
}

Lda::Partial Lda::Worker::end_update(const Step& step, Block& home) {
  // The GPU's topics and n_dk, for whatever reads the host copies next: an evaluation, a checkpoint,
  // the output. A round's copy is 4 bytes per token and 4 K per document, small beside its sampling.
  if (gpu_sampler_) gpu_sampler_->download(documents_.by_block, documents_.counts);
  Partial partial;
  partial.moved = moved_;
  moved_ = 0;
  if (held_out_ && step.score) {
    partial.held_out_log_likelihood = held_out_->log_likelihood(1);
    held_out_->clear_scores();
  }
  if (step.optimize) summarise_counts(home, partial);
  completed_ = step.iteration + 1;
  return partial;
}

bool Lda::Worker::rotates_evaluation() const {
  return config_.eval_every > 0 || completed_ >= static_cast<std::uint64_t>(config_.iterations);
}

void Lda::Worker::evaluate(std::uint32_t block, const Block& held) {
  if (!top_words_) top_words_.emplace(config_.topics, config_.top_words);
  const auto topics = static_cast<std::size_t>(config_.topics);
  const std::span<const std::uint32_t> counts = load(block, held);
  const std::vector<std::uint32_t>& words = layout_.words[block];
  for (std::size_t row = 0; row < words.size(); ++row)
    top_words_->offer(words[row], counts.subspan(row * topics, topics));
}

void Lda::Worker::count_top_words(Stats& stats) {
  const std::vector<std::vector<std::uint32_t>> top_words = top_words_->words();
  top_words_.reset();
  const std::size_t size = static_cast<std::size_t>(config_.topics) * pair_slots(config_.top_words);
  stats.training_counts.assign(size, 0.0);
  const CooccurrenceCounter counter(top_words, config_.top_words, words_);
  counter.count(document_words_, stats.training_counts);
  if (reference_words_) {
    stats.reference_counts.assign(size, 0.0);
    counter.count(*reference_words_, stats.reference_counts);
  }
  stats.reference_documents =
      static_cast<double>((reference_words_ ? *reference_words_ : document_words_).documents());
  stats.listed.assign(top_words.size(), 0.0);
  if (context_.index == 0) {
    for (std::size_t k = 0; k < top_words.size(); ++k)
      stats.listed[k] = static_cast<double>(top_words[k].size());
  }
}

void Lda::Worker::summarise_counts(const Block& home, Partial& partial) {
  const auto topics = static_cast<std::size_t>(config_.topics);
  const std::size_t width = DigammaSum::size(kTopicExact);
  partial.topic_summaries.assign(topics * width, 0.0);
  partial.length_summary.assign(DigammaSum::size(kLengthExact), 0.0);
  const std::span<double> topic_summaries(partial.topic_summaries);
  for (std::uint32_t row = 0; row < documents_.ids.size(); ++row) {
    const auto counts = documents_.document(row);
    for (std::size_t k = 0; k < topics; ++k) {
      if (counts[k] > 0) DigammaSum::add(topic_summaries.subspan(k * width, width), counts[k], alpha_[k]);
    }
    DigammaSum::add(partial.length_summary, documents_.length(row), priors_.alpha_sum);
  }
  if (config_.optimize_beta) {
    partial.word_summary.assign(DigammaSum::size(kWordExact), 0.0);
    for (const std::uint32_t count : load(static_cast<std::uint32_t>(context_.index), home)) {
      if (count > 0) DigammaSum::add(partial.word_summary, count, priors_.beta);
    }
    partial.totals.assign(topics, 0.0);
    if (context_.index == 0) std::copy(totals_.begin(), totals_.end(), partial.totals.begin());
  }
}

const std::vector<LogGammaRatio>& Lda::Worker::document_terms_for_alpha() {
  if (terms_alpha_ != alpha_) {
    // One table for a symmetric alpha; short ones per topic when they differ, K of them.
    const bool one = kernels::symmetric(alpha_);
    document_terms_.clear();
    for (std::size_t k = 0; k < (one ? 1 : alpha_.size()); ++k)
      document_terms_.emplace_back(alpha_[k], one ? 4096 : 256);
    terms_alpha_ = alpha_;
  }
  return document_terms_;
}

Lda::Stats Lda::Worker::end_evaluation(const Block& home) {
  // log p(w, z) of the collapsed model: the word part of its home block's words, its documents' part,
  // and (worker 0 only) the topic totals' part.
  const auto topics = static_cast<std::size_t>(config_.topics);
  const double beta = priors_.beta;
  const LogGammaRatio word_term(beta);
  const std::vector<LogGammaRatio>& document_terms = document_terms_for_alpha();
  const bool symmetric = document_terms.size() == 1;
  Stats stats;
  stats.word_totals_off.assign(topics, 0.0);
  stats.document_totals_off.assign(topics, 0.0);
  const std::span<const std::uint32_t> home_counts = load(static_cast<std::uint32_t>(context_.index), home);
  for (std::size_t i = 0; i < home_counts.size(); ++i) {
    const std::uint32_t count = home_counts[i];
    if (count == 0) continue;
    stats.word_tokens += count;
    stats.word_totals_off[i % topics] += count;
    stats.log_likelihood += word_term(count);
  }
  if (context_.index == 0) {
    const double beta_sum = priors_.beta_sum;
    for (std::size_t k = 0; k < topics; ++k) {
      const auto total = static_cast<double>(totals_[k]);
      stats.log_likelihood += std::lgamma(beta_sum) - std::lgamma(total + beta_sum);
      stats.word_totals_off[k] -= total;
      stats.document_totals_off[k] -= total;
    }
  }
  for (std::uint32_t row = 0; row < documents_.ids.size(); ++row) {
    double length = 0;
    const auto counts = documents_.document(row);
    for (std::size_t k = 0; k < topics; ++k) {
      const std::uint32_t count = counts[k];
      length += count;
      stats.document_tokens += count;
      stats.document_totals_off[k] += count;
      if (count > 0) stats.log_likelihood += document_terms[symmetric ? 0 : k](count);
    }
    stats.log_likelihood += std::lgamma(priors_.alpha_sum) - std::lgamma(length + priors_.alpha_sum);
  }
  if (top_words_) count_top_words(stats);
  return stats;
}

Lda::Saved Lda::Worker::save(const Block&) const {
  Saved saved;
  saved.alpha = alpha_;
  saved.beta = priors_.beta;
  saved.completed = completed_;
  saved.documents = documents_.ids;
  for (std::uint32_t row = 0; row < documents_.ids.size(); ++row)
    saved.lengths.push_back(documents_.length(row));
  saved.topics = documents_.topics_by_slot();
  return saved;
}

namespace {

std::runtime_error unfit_checkpoint(const std::string& why) {
  return std::runtime_error("the checkpoint does not fit this corpus: " + why);
}

}  // namespace

Lda::Worker::Restoring& Lda::Worker::restoring_state() {
  if (!restoring_) {
    restoring_.emplace();
    restoring_->topics_by_slot.resize(documents_.offsets.back());
    restoring_->found.resize(documents_.ids.size(), false);
    restoring_->totals.assign(static_cast<std::size_t>(config_.topics), 0);
  }
  return *restoring_;
}

void Lda::Worker::restore(const Saved& share, Block&) {
  Restoring& restoring = restoring_state();
  // Every share holds the same priors and iterations: the evaluation before the next update reads them.
  if (share.alpha.size() != alpha_.size())
    throw unfit_checkpoint("it holds " + std::to_string(share.alpha.size()) + " topics' priors");
  adopt_priors(share.alpha, share.beta);
  completed_ = share.completed;
  if (share.lengths.size() != share.documents.size())
    throw unfit_checkpoint("a share lists documents and lengths apart");
  std::uint64_t tokens = 0;
  for (const std::uint32_t length : share.lengths) tokens += length;
  if (tokens != share.topics.size())
    throw unfit_checkpoint("a share's token count disagrees with its documents");
  for (const std::uint32_t topic : share.topics) {
    if (topic >= restoring.totals.size())
      throw unfit_checkpoint("topic " + std::to_string(topic) + " of " +
                             std::to_string(restoring.totals.size()));
    ++restoring.totals[topic];
  }
  // This worker's documents among the share's: its ids are in ascending order (the reader deals them so).
  std::uint64_t start = 0;
  for (std::size_t i = 0; i < share.documents.size(); start += share.lengths[i], ++i) {
    const std::uint32_t id = share.documents[i];
    const auto it = std::lower_bound(documents_.ids.begin(), documents_.ids.end(), id);
    if (it == documents_.ids.end() || *it != id) continue;
    const auto row = static_cast<std::uint32_t>(it - documents_.ids.begin());
    if (restoring.found[row]) throw unfit_checkpoint("document " + std::to_string(id) + " twice");
    if (share.lengths[i] != documents_.length(row)) {
      throw unfit_checkpoint("document " + std::to_string(id) + " has " + std::to_string(share.lengths[i]) +
                             " tokens there, " + std::to_string(documents_.length(row)) + " here");
    }
    const auto first = share.topics.begin() + static_cast<std::ptrdiff_t>(start);
    std::copy(first, first + share.lengths[i], restoring.topics_by_slot.begin() + documents_.offsets[row]);
    restoring.found[row] = true;
  }
}

void Lda::Worker::finish_restore(Block&) {
  const Restoring& restoring = restoring_state();
  for (std::uint32_t row = 0; row < documents_.ids.size(); ++row) {
    if (!restoring.found[row])
      throw unfit_checkpoint("document " + std::to_string(documents_.ids[row]) + " is missing");
  }
  // Each worker finds its own documents; the shares' tokens, counted by every worker alike, must be the
  // corpus's, which also refuses documents the corpus does not have, but for empty ones (which change
  // nothing).
  const auto sum = [](const std::vector<std::int64_t>& counts) {
    return std::accumulate(counts.begin(), counts.end(), std::int64_t{0});
  };
  if (sum(restoring.totals) != sum(totals_)) {
    throw unfit_checkpoint("it holds " + std::to_string(sum(restoring.totals)) + " tokens, the corpus " +
                           std::to_string(sum(totals_)));
  }
  documents_.set_topics(restoring.topics_by_slot);
  if (gpu_sampler_) gpu_sampler_->upload(documents_.by_block, documents_.counts);
  // Every token of the corpus is in the shares, so their topics give the totals directly.
  totals_ = restoring.totals;
  synced_totals_ = restoring.totals;
  restoring_.reset();
}

Lda::Part Lda::Worker::part(const Block& home) const {
  const auto home_block = static_cast<std::uint32_t>(context_.index);
  return Part{home.encoded, layout_.words[home_block], encode_rows(documents_.counts, config_.topics),
              documents_.ids, vocabulary_};
}

Lda::Coordinator::Coordinator(const Config& config, const Setup& summed, int blocks)
    : config_(config),
      setup_(summed),
      words_(static_cast<std::uint32_t>(summed.words / blocks)),
      alpha_(static_cast<std::size_t>(config.topics), config.alpha),
      beta_(config.beta),
      sampled_alpha_sum_(config.alpha * config.topics),
      sampled_beta_(config.beta) {
  if (!(setup_.tokens > 0))
    throw io::InputError(config.data.empty() ? config.text : config.data, 0, "the corpus has no tokens");
  if (!config.test.empty()) {
    if (!(setup_.held_out_tokens > 0))
      throw std::runtime_error(config.test + ": no held-out tokens (documents need two tokens or more)");
    if (setup_.unknown_tokens > 0) {
      std::printf("%s: %.0f tokens of words the training corpus does not have are left out\n",
                  config.test.c_str(), setup_.unknown_tokens);
    }
  }
  if (!config.output.empty()) {
    for (const char* suffix : kModelFileSuffixes) io::check_writable(config.output + suffix);
  }
  if (!config.vocab.empty()) {
    vocabulary_ = io::read_vocabulary(config.vocab);
    // Another count of words would name the topics' words wrongly, or leave the model's words unnamed.
    if (vocabulary_.size() != words_) {
      throw io::InputError(
          config.vocab, 0,
          "holds " + std::to_string(vocabulary_.size()) + " words, the corpus " + std::to_string(words_));
    }
  }
}

std::vector<std::string> Lda::Coordinator::trace_columns() const {
  std::vector<std::string> columns{"iteration", "tokens_per_second", "moved"};
  if (!config_.test.empty()) columns.push_back("held_out_perplexity");
  if (config_.optimize_interval > 0) {
    columns.push_back("alpha_sum");
    columns.push_back("beta");
  }
  columns.push_back("umass");
  columns.push_back("npmi");
  return columns;
}

bool Lda::Coordinator::optimizes_after(std::uint64_t iteration) const {
  const auto interval = static_cast<std::uint64_t>(config_.optimize_interval);
  return interval > 0 && iteration > static_cast<std::uint64_t>(config_.optimize_burn_in) &&
         iteration % interval == 0;
}

bool Lda::Coordinator::evaluates_after(std::uint64_t iteration) const {
  return config_.eval_every == 0 || iteration % config_.eval_every == 0 ||
         iteration >= static_cast<std::uint64_t>(config_.iterations);
}

Lda::Step Lda::Coordinator::schedule() {
  round_started_ = std::chrono::steady_clock::now();
  return Step{iterations_, !config_.test.empty() && evaluates_after(iterations_ + 1),
              optimizes_after(iterations_ + 1), alpha_, beta_};
}

void Lda::Coordinator::aggregate(const Step& step, const Partial& summed) {
  ++iterations_;
  moved_ = summed.moved;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - round_started_).count();
  tokens_per_second_ = setup_.tokens / std::max(seconds, 1e-9);
  if (step.score) perplexity_ = std::exp(-summed.held_out_log_likelihood / setup_.held_out_tokens);
  sampled_alpha_sum_ = std::accumulate(step.alpha.begin(), step.alpha.end(), 0.0);
  sampled_beta_ = step.beta;
  if (step.optimize) learn_priors(summed);
}

void Lda::Coordinator::learn_priors(const Partial& summed) {
  const auto started = std::chrono::steady_clock::now();
  alpha_ = learn_alpha(summed.topic_summaries, summed.length_summary, alpha_);
  if (config_.optimize_beta) {
    const std::vector<std::int64_t> totals(summed.totals.begin(), summed.totals.end());
    beta_ = learn_beta(summed.word_summary, totals, words_, beta_);
  }
  optimizing_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

Report Lda::Coordinator::report(const Stats& summed) {
  // Every token is counted once in the word-topic and once in the document-topic counts, and each
  // topic's counts add up to its total n_k, at every evaluation; a count gone below zero would wrap
  // around and show here too.
  const double tokens = setup_.tokens;
  if (summed.word_tokens != tokens || summed.document_tokens != tokens) {
    throw std::logic_error("count invariant broken after iteration " + std::to_string(iterations_) + ": " +
                           std::to_string(summed.word_tokens) + " word-topic and " +
                           std::to_string(summed.document_tokens) + " document-topic counts for " +
                           std::to_string(tokens) + " tokens");
  }
  for (std::size_t k = 0; k < summed.word_totals_off.size(); ++k) {
    if (summed.word_totals_off[k] != 0 || summed.document_totals_off[k] != 0) {
      throw std::logic_error("count invariant broken after iteration " + std::to_string(iterations_) +
                             ": topic " + std::to_string(k) + "'s total is off its word-topic counts by " +
                             std::to_string(-summed.word_totals_off[k]) + ", its document-topic counts by " +
                             std::to_string(-summed.document_totals_off[k]));
    }
  }
  Report report;
  report.objective = summed.log_likelihood / tokens;
  report.columns = {static_cast<double>(iterations_), tokens_per_second_, moved_ / tokens};
  if (!config_.test.empty()) report.columns.push_back(perplexity_);
  if (config_.optimize_interval > 0) {
    report.columns.push_back(sampled_alpha_sum_);
    report.columns.push_back(sampled_beta_);
  }
  const bool scored = !summed.training_counts.empty();
  if (scored) score_coherence(summed);
  report.columns.push_back(scored ? mean_of_scored(scores_.umass) : NAN);
  report.columns.push_back(scored ? mean_of_scored(scores_.npmi) : NAN);
  report.finished = iterations_ >= static_cast<std::uint64_t>(config_.iterations);
  return report;
}

void Lda::Coordinator::score_coherence(const Stats& summed) {
  const auto topics = static_cast<std::size_t>(config_.topics);
  const std::size_t slots = pair_slots(config_.top_words);
  const std::span<const double> training(summed.training_counts);
  const std::span<const double> reference(summed.reference_counts.empty() ? summed.training_counts
                                                                          : summed.reference_counts);
  scores_.umass.resize(topics);
  scores_.npmi.resize(topics);
  for (std::size_t k = 0; k < topics; ++k) {
    const int listed = static_cast<int>(summed.listed[k]);
    scores_.umass[k] = umass(training.subspan(k * slots, slots), listed);
    scores_.npmi[k] = npmi(reference.subspan(k * slots, slots), listed, summed.reference_documents);
  }
  scored_after_ = iterations_;
}

Lda::Progress Lda::Coordinator::save() const {
  return Progress{iterations_,   perplexity_,  static_cast<std::uint32_t>(config_.topics),
                  config_.alpha, config_.beta, alpha_,
                  beta_};
}

void Lda::Coordinator::restore(const Progress& progress) {
  if (progress.topics != static_cast<std::uint32_t>(config_.topics) || progress.alpha != config_.alpha ||
      progress.beta != config_.beta) {
    throw std::runtime_error("the checkpoint was made with --topics " + std::to_string(progress.topics) +
                             " --alpha " + std::to_string(progress.alpha) + " --beta " +
                             std::to_string(progress.beta));
  }
  if (progress.current_alpha.size() != alpha_.size() || !(progress.current_beta > 0))
    throw std::runtime_error("the checkpoint's priors are not one per topic");
  iterations_ = progress.iterations;
  perplexity_ = progress.perplexity;
  alpha_ = progress.current_alpha;
  beta_ = progress.current_beta;
}

void Lda::Coordinator::finish(const Summary& summary, const std::vector<Part>& parts) {
  std::printf("iterations %llu  log-likelihood per token %.6f", static_cast<unsigned long long>(iterations_),
              summary.last.objective);
  if (!config_.test.empty()) std::printf("  held-out perplexity %.6f", perplexity_);
  std::printf("  (%.3f s, %.3g tokens/s, stopped by %s)\n", summary.seconds,
              setup_.tokens * static_cast<double>(iterations_) / std::max(summary.seconds, 1e-9),
              summary.stopped_by.c_str());
  // The last evaluation scored the final topics, unless the run stopped early.
  const bool scored = scored_after_ == iterations_ && !scores_.umass.empty();
  if (scored) {
    std::printf("coherence of the top %d words, mean over topics: umass %.6g  npmi %.6g\n", config_.top_words,
                mean_of_scored(scores_.umass), mean_of_scored(scores_.npmi));
  }
  const double alpha_sum = std::accumulate(alpha_.begin(), alpha_.end(), 0.0);
  if (config_.optimize_interval > 0) {
    const auto [least, most] = std::minmax_element(alpha_.begin(), alpha_.end());
    std::printf("learned priors: alpha_k from %.6g to %.6g (sum %.6g), beta %.6g (%.3f s of learning)\n",
                *least, *most, alpha_sum, beta_, optimizing_seconds_);
  }
  if (config_.output.empty()) return;

  // The whole word-topic matrix, word by word.
  const auto topics = static_cast<std::size_t>(config_.topics);
  Model model{words_,
              config_.topics,
              alpha_,
              beta_,
              std::vector<std::uint32_t>(static_cast<std::size_t>(words_) * topics, 0),
              {}};
  std::vector<std::uint32_t> dense;
  for (const Part& part : parts) {
    dense.resize(part.words.size() * topics);
    decode_rows(part.word_topic, config_.topics, dense);
    for (std::size_t row = 0; row < part.words.size(); ++row) {
      std::copy_n(dense.begin() + static_cast<std::ptrdiff_t>(row * topics), topics,
                  model.word_topic.begin() + static_cast<std::ptrdiff_t>(part.words[row] * topics));
    }
  }
  if (!config_.vocab.empty()) {
    model.vocabulary = std::move(vocabulary_);
  } else if (!parts.front().vocabulary.empty()) {
    model.vocabulary = io::Vocabulary(parts.front().vocabulary);
  }
  // Documents in id order, whichever worker holds them: the file is the same for every rank count.
  struct Held {
    std::uint32_t id;
    std::size_t part;
    std::size_t row;
  };
  std::vector<Held> held;
  std::vector<std::vector<std::size_t>> row_start(parts.size());  // each part's document rows, encoded
  for (std::size_t p = 0; p < parts.size(); ++p) {
    row_start[p] = row_starts(parts[p].document_topic, parts[p].documents.size());
    for (std::size_t row = 0; row < parts[p].documents.size(); ++row)
      held.push_back({parts[p].documents[row], p, row});
  }
  std::sort(held.begin(), held.end(), [](const Held& a, const Held& b) { return a.id < b.id; });
  io::FileWriter document_topics(config_.output + ".doc_topic", [&](std::ostream& out) {
    out.precision(10);
    std::vector<std::uint32_t> counts(topics);
    for (const Held& document : held) {
      const std::vector<std::size_t>& starts = row_start[document.part];
      decode_rows(std::span<const std::uint32_t>(parts[document.part].document_topic)
                      .subspan(starts[document.row], starts[document.row + 1] - starts[document.row]),
                  config_.topics, counts);
      const double length = std::accumulate(counts.begin(), counts.end(), 0.0);
      out << document.id + 1;
      for (std::size_t k = 0; k < topics; ++k) out << ' ' << (counts[k] + alpha_[k]) / (length + alpha_sum);
      out << '\n';
    }
  });
  write_model(config_.output, model, config_.top_words, scored ? scores_ : TopicScores{},
              {std::move(document_topics)});
  std::printf("model: %s.{word_topic,topics,doc_topic%s}\n", config_.output.c_str(),
              model.vocabulary.size() >= words_ ? ",vocab" : "");
}

}  // namespace schmp::lda
