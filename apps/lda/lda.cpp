#include "lda.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <stdexcept>

#include "kernels/topic_kernels.hpp"
#include "schmp/output.hpp"

namespace schmp::lda {

namespace {

// The starting topic of a token: a hash of the seed, its document and its place there, so that the
// start does not depend on the rank count.
std::uint32_t starting_topic(std::uint64_t seed, std::uint64_t document, std::uint64_t position, int topics) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + document * 0xBF58476D1CE4E5B9ull + position;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return static_cast<std::uint32_t>((z ^ (z >> 31)) % static_cast<std::uint64_t>(topics));
}

}  // namespace

void check(const Config& config) {
  if (config.data.empty() == config.text.empty()) throw std::runtime_error("give one of --data and --text");
  if (config.topics < 1 || config.topics > 100000)
    throw std::runtime_error("--topics must be between 1 and 100000");
  if (!(config.alpha > 0) || !(config.beta > 0))
    throw std::runtime_error("--alpha and --beta must be positive");
  if (config.iterations < 1) throw std::runtime_error("--iterations must be at least 1");
}

Lda::Worker::Worker(const Config& config, const WorkerContext& context)
    : config_(config),
      context_(context),
      by_block_(static_cast<std::size_t>(context.count)),
      sampler_(std::max(1, config.topics)) {
  check(config);
  const auto workers = static_cast<std::uint32_t>(context.count);
  const auto me = static_cast<std::uint32_t>(context.index);
  if (!config.data.empty()) {
    // UCI files list documents in order; a document's words are gathered, then added.
    std::vector<std::uint32_t> words;
    std::uint32_t previous = 0;
    bool mine_open = false;
    const io::CorpusSize size = io::read_bag_of_words(config.data, [&](const io::WordCount& entry) {
      if (entry.document < previous) {
        throw io::InputError(config.data, entry.line,
                             "document " + std::to_string(entry.document + 1) + " after document " +
                                 std::to_string(previous + 1) + ": documents must come in order");
      }
      if (mine_open && entry.document != previous) {
        add_document(previous, words);
        words.clear();
        mine_open = false;
      }
      previous = entry.document;
      if (entry.document % workers != me) return;
      mine_open = true;
      words.insert(words.end(), entry.count, entry.word);
    });
    if (mine_open) add_document(previous, words);
    words_ = static_cast<std::uint32_t>(size.words);
  } else {
    // Every worker reads the whole file, so that all build the same vocabulary.
    io::Vocabulary vocabulary;
    std::uint32_t id = 0;
    io::read_text_documents(config.text, vocabulary, true, [&](const io::TextDocument& document) {
      if (id % workers == me) add_document(id, document.words);
      ++id;
    });
    words_ = vocabulary.size();
  }
  if (words_ == 0) throw io::InputError(config.data.empty() ? config.text : config.data, 0, "no words");
  // Word by word within each block: the word's counts row stays hot, and the sparse sampler builds its
  // tree once per word.
  for (auto& tokens : by_block_) {
    std::stable_sort(tokens.begin(), tokens.end(),
                     [](const Token& a, const Token& b) { return a.word < b.word; });
  }
  const auto topics = static_cast<std::size_t>(config.topics);
  document_topics_.resize(documents_.size());
  for (std::size_t row = 0; row < documents_.size(); ++row) {
    for (std::uint32_t k = 0; k < topics; ++k) {
      if (document_topic_[row * topics + k] > 0) document_topics_[row].push_back(k);
    }
  }
  weights_.resize(static_cast<std::size_t>(config.topics));
  random_.seed(config.seed * 1000003 + me);
}

void Lda::Worker::add_document(std::uint32_t id, const std::vector<std::uint32_t>& words) {
  const auto row = static_cast<std::uint32_t>(documents_.size());
  const auto topics = static_cast<std::size_t>(config_.topics);
  const auto workers = static_cast<std::uint32_t>(context_.count);
  documents_.push_back(id);
  document_topic_.resize(document_topic_.size() + topics, 0);
  for (std::size_t position = 0; position < words.size(); ++position) {
    const std::uint32_t topic = starting_topic(config_.seed, id, position, config_.topics);
    by_block_[words[position] % workers].push_back(Token{row, words[position] / workers, topic});
    ++document_topic_[row * topics + topic];
  }
}

Lda::Setup Lda::Worker::setup() const {
  Setup setup;
  setup.topic_counts.assign(static_cast<std::size_t>(config_.topics), 0.0);
  for (const auto& tokens : by_block_) {
    for (const Token& token : tokens) setup.topic_counts[token.topic] += 1;
    setup.tokens += static_cast<double>(tokens.size());
  }
  setup.words = words_;
  return setup;
}

void Lda::Worker::start(const Setup& summed) {
  totals_.assign(summed.topic_counts.begin(), summed.topic_counts.end());
  synced_totals_ = totals_;
}

Lda::Block Lda::Worker::make_block() const {
  const auto workers = static_cast<std::uint32_t>(context_.count);
  const auto home = static_cast<std::uint32_t>(context_.index);
  const std::uint32_t rows = words_ > home ? (words_ - home + workers - 1) / workers : 0;
  return Block{std::vector<std::uint32_t>(
      static_cast<std::size_t>(rows) * static_cast<std::size_t>(config_.topics), 0)};
}

void Lda::Worker::prepare(std::uint32_t block, Block& held) {
  const auto topics = static_cast<std::size_t>(config_.topics);
  for (const Token& token : by_block_[block]) ++held.counts[token.word * topics + token.topic];
}

void Lda::Worker::update(const Step&, std::uint32_t block, Block& held) {
  const auto topics = static_cast<std::size_t>(config_.topics);
  const double beta_sum = config_.beta * words_;
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  if (config_.sparse_sampler) {
    std::uint32_t current_word = UINT32_MAX;
    for (Token& token : by_block_[block]) {
      if (token.word != current_word) {
        current_word = token.word;
        sampler_.start_word(std::span<std::uint32_t>(&held.counts[token.word * topics], topics), totals_,
                            config_.alpha, config_.beta, beta_sum);
      }
      const std::uint32_t topic =
          sampler_.resample(std::span<std::uint32_t>(&document_topic_[token.document * topics], topics),
                            document_topics_[token.document], token.topic, uniform(random_));
      if (topic != token.topic) moved_ += 1;
      token.topic = topic;
    }
    return;
  }
  for (Token& token : by_block_[block]) {
    const kernels::TopicCounts counts{
        std::span<std::uint32_t>(&document_topic_[token.document * topics], topics),
        std::span<std::uint32_t>(&held.counts[token.word * topics], topics),
        totals_,
        config_.alpha,
        config_.beta,
        beta_sum};
    const std::uint32_t topic = kernels::resample_exact(counts, token.topic, uniform(random_), weights_);
    if (topic != token.topic) moved_ += 1;
    token.topic = topic;
  }
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

Lda::Partial Lda::Worker::end_update(const Step&, Block&) {
  Partial partial{moved_};
  moved_ = 0;
  return partial;
}

Lda::Stats Lda::Worker::end_evaluation(const Block& home) {
  // log p(w, z) of the collapsed model: the word part of its home block's words, its documents' part,
  // and (worker 0 only) the topic totals' part.
  const auto topics = static_cast<std::size_t>(config_.topics);
  const double alpha = config_.alpha;
  const double beta = config_.beta;
  Stats stats;
  for (const std::uint32_t count : home.counts) {
    stats.word_tokens += count;
    if (count > 0) stats.log_likelihood += std::lgamma(count + beta) - std::lgamma(beta);
  }
  if (context_.index == 0) {
    const double beta_sum = beta * words_;
    for (const std::int64_t total : totals_) {
      stats.log_likelihood += std::lgamma(beta_sum) - std::lgamma(static_cast<double>(total) + beta_sum);
    }
  }
  for (std::size_t row = 0; row < documents_.size(); ++row) {
    double length = 0;
    for (std::size_t k = 0; k < topics; ++k) {
      const std::uint32_t count = document_topic_[row * topics + k];
      length += count;
      stats.document_tokens += count;
      if (count > 0) stats.log_likelihood += std::lgamma(count + alpha) - std::lgamma(alpha);
    }
    stats.log_likelihood += std::lgamma(alpha * static_cast<double>(topics)) -
                            std::lgamma(length + alpha * static_cast<double>(topics));
  }
  return stats;
}

Lda::Part Lda::Worker::part(const Block& home) const {
  return Part{home.counts, document_topic_, documents_};
}

Lda::Coordinator::Coordinator(const Config& config, const Setup& summed, int blocks)
    : config_(config),
      blocks_(blocks),
      tokens_(summed.tokens),
      words_(static_cast<std::uint32_t>(summed.words / blocks)) {
  if (!(tokens_ > 0)) throw std::runtime_error("the corpus has no tokens");
  if (!config.output.empty()) io::check_writable(config.output + ".topics");
}

void Lda::Coordinator::aggregate(const Step&, const Partial& summed) {
  ++iterations_;
  moved_ = summed.moved;
}

Report Lda::Coordinator::report(const Stats& summed) {
  // Every token is counted once in the word-topic and once in the document-topic counts, after every
  // round; a count gone below zero would wrap around and show here too.
  if (summed.word_tokens != tokens_ || summed.document_tokens != tokens_) {
    throw std::logic_error("count invariant broken after iteration " + std::to_string(iterations_) + ": " +
                           std::to_string(summed.word_tokens) + " word-topic and " +
                           std::to_string(summed.document_tokens) + " document-topic counts for " +
                           std::to_string(tokens_) + " tokens");
  }
  Report report;
  report.objective = summed.log_likelihood / tokens_;
  report.columns = {static_cast<double>(iterations_), moved_ / tokens_};
  report.finished = iterations_ >= static_cast<std::uint64_t>(config_.iterations);
  return report;
}

void Lda::Coordinator::finish(const Summary& summary, const std::vector<Part>& parts) {
  const auto topics = static_cast<std::size_t>(config_.topics);
  const auto blocks = static_cast<std::size_t>(blocks_);
  // The whole word-topic matrix, word by word, and the topic totals from it.
  std::vector<std::uint32_t> word_topic(static_cast<std::size_t>(words_) * topics, 0);
  std::vector<double> totals(topics, 0.0);
  for (std::size_t b = 0; b < parts.size(); ++b) {
    const auto& rows = parts[b].word_topic;
    for (std::size_t row = 0; row * topics < rows.size(); ++row) {
      std::copy_n(rows.begin() + static_cast<std::ptrdiff_t>(row * topics), topics,
                  word_topic.begin() + static_cast<std::ptrdiff_t>((row * blocks + b) * topics));
    }
    for (std::size_t i = 0; i < rows.size(); ++i) totals[i % topics] += rows[i];
  }
  std::printf("iterations %llu  log-likelihood per token %.6f  (%.3f s, %.3g tokens/s, stopped by %s)\n",
              static_cast<unsigned long long>(iterations_), summary.last.objective, summary.seconds,
              tokens_ * static_cast<double>(iterations_) / std::max(summary.seconds, 1e-9),
              summary.stopped_by.c_str());
  if (config_.output.empty()) return;

  // Text corpora number words in order of first appearance: reading the file again gives the same.
  io::Vocabulary vocabulary;
  if (!config_.vocab.empty()) {
    vocabulary = io::read_vocabulary(config_.vocab);
  } else if (!config_.text.empty()) {
    io::read_text_documents(config_.text, vocabulary, true, [](const io::TextDocument&) {});
  }
  auto word_name = [&](std::size_t word) {
    return word < vocabulary.size() ? vocabulary.word(static_cast<std::uint32_t>(word))
                                    : std::to_string(word + 1);
  };
  io::write_file_atomically(config_.output + ".word_topic", [&](std::ostream& out) {
    for (std::size_t word = 0; word < words_; ++word) {
      for (std::size_t k = 0; k < topics; ++k) out << (k ? " " : "") << word_topic[word * topics + k];
      out << '\n';
    }
  });
  io::write_file_atomically(config_.output + ".doc_topic", [&](std::ostream& out) {
    out.precision(10);
    for (const Part& part : parts) {
      for (std::size_t row = 0; row < part.documents.size(); ++row) {
        const auto first = part.document_topic.begin() + static_cast<std::ptrdiff_t>(row * topics);
        const double length = std::accumulate(first, first + static_cast<std::ptrdiff_t>(topics), 0.0);
        out << part.documents[row] + 1;
        for (std::size_t k = 0; k < topics; ++k)
          out << ' '
              << (first[static_cast<std::ptrdiff_t>(k)] + config_.alpha) / (length + config_.alpha * topics);
        out << '\n';
      }
    }
  });
  io::write_file_atomically(config_.output + ".topics", [&](std::ostream& out) {
    const double beta_sum = config_.beta * words_;
    std::vector<std::size_t> order(words_);
    for (std::size_t k = 0; k < topics; ++k) {
      std::iota(order.begin(), order.end(), 0);
      const std::size_t shown = std::min<std::size_t>(10, words_);
      std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(shown), order.end(),
                        [&](std::size_t a, std::size_t b) {
                          const auto ca = word_topic[a * topics + k], cb = word_topic[b * topics + k];
                          return ca != cb ? ca > cb : a < b;
                        });
      out << "topic " << k << " (" << totals[k] << " tokens):";
      for (std::size_t i = 0; i < shown; ++i) {
        const double p = (word_topic[order[i] * topics + k] + config_.beta) / (totals[k] + beta_sum);
        out << ' ' << word_name(order[i]) << ' ' << p;
      }
      out << '\n';
    }
  });
  std::printf("model: %s.{topics,word_topic,doc_topic}\n", config_.output.c_str());
}

}  // namespace schmp::lda
