#include "infer.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <stdexcept>

#include "schmp/output.hpp"

namespace schmp::lda {

namespace {

// Enough groups for the cores of one host, few enough that each keeps its words' tokens together.
constexpr std::uint32_t kGroups = 16;

struct Group {
  Group(int topics, std::uint64_t seed, std::uint32_t index)
      : whole(topics), halves(topics), sampler(Sampler::kSparse, topics, 0, seed * 1000003 + index) {}

  DocumentShard whole;      // every token, for the proportions
  HeldOutDocuments halves;  // even positions observed, odd ones scored
  SamplerState sampler;
  std::vector<double> count_sums;  // n_dk summed over the kept samples, K per document
};

}  // namespace

Inference infer(const Model& model, const InferConfig& config) {
  if (config.iterations < 2) throw std::runtime_error("--iterations must be at least 2");
  if (!config.corpus.text.empty() && model.vocabulary.size() == 0) {
    throw std::runtime_error("the model has no .vocab file, so text documents cannot be read against it");
  }
  // Refused before the sampling, not after it.
  if (!config.output.empty()) io::check_writable(config.output);
  const auto width = static_cast<std::size_t>(model.topics);
  std::vector<Group> groups;
  for (std::uint32_t g = 0; g < kGroups; ++g) groups.emplace_back(model.topics, config.seed, g);
  Inference inference;
  io::Vocabulary vocabulary = model.vocabulary;
  std::uint32_t order = 0;
  inference.unknown_tokens = read_documents(config.corpus, vocabulary, false, model.words,
                                            [&](std::uint32_t id, const std::vector<std::uint32_t>& words) {
                                              Group& group = groups[order++ % kGroups];
                                              group.whole.add(id, words, config.seed);
                                              group.halves.add(id, words, config.seed + 1);
                                              ++inference.documents;
                                              inference.tokens += words.size();
                                            })
                                 .unknown_tokens;
  if (inference.documents == 0) throw io::InputError(config.corpus.path(), 0, "no documents");

  // Read only, but the sampler's interface is the training one, which takes its rows to update.
  std::vector<std::uint32_t> word_topic = model.word_topic;
  std::vector<std::int64_t> totals = model.totals();
  const Priors priors{model.alpha, model.alpha_sum(), model.beta, model.beta * model.words};
  const int burn_in = config.iterations / 2;
  // One block, the model's rows as they are: row = word.
  const WordLayout layout(std::vector<std::uint64_t>(model.words, 0), 1);
  tbb::parallel_for(std::size_t{0}, groups.size(), [&](std::size_t g) {
    Group& group = groups[g];
    group.whole.finish(layout);
    group.halves.finish(layout);
    group.count_sums.assign(group.whole.ids.size() * width, 0.0);
    for (int sweep = 0; sweep < config.iterations; ++sweep) {
      group.whole.fold_in(0, word_topic, totals, priors, group.sampler);
      group.halves.fold_in(0, word_topic, totals, priors, group.sampler);
      if (sweep < burn_in) continue;
      for (std::uint32_t row = 0; row < group.whole.ids.size(); ++row) {
        const auto counts = group.whole.document(row);
        for (const std::uint32_t k : group.whole.nonzero[row]) group.count_sums[row * width + k] += counts[k];
      }
      group.halves.score(0, word_topic, totals, priors, group.sampler.word_by_word);
    }
  });

  const int samples = config.iterations - burn_in;
  double log_likelihood = 0;
  for (const Group& group : groups) {
    log_likelihood += group.halves.log_likelihood(samples);
    inference.held_out_tokens += group.halves.held_out_tokens();
  }
  if (inference.held_out_tokens == 0)
    throw io::InputError(config.corpus.path(), 0, "no held-out tokens (documents need two tokens or more)");
  inference.perplexity = std::exp(-log_likelihood / static_cast<double>(inference.held_out_tokens));

  if (config.output.empty()) return inference;
  struct Row {
    std::uint32_t id;
    const Group* group;
    std::uint32_t row;
  };
  std::vector<Row> rows;
  for (const Group& group : groups) {
    for (std::uint32_t row = 0; row < group.whole.ids.size(); ++row)
      rows.push_back({group.whole.ids[row], &group, row});
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.id < b.id; });
  io::write_file_atomically(config.output, [&](std::ostream& out) {
    out.precision(10);
    for (const Row& row : rows) {
      const double length = row.group->whole.length(row.row);
      out << row.id + 1;
      for (std::size_t k = 0; k < width; ++k) {
        const double mean_count = row.group->count_sums[row.row * width + k] / samples;
        out << ' ' << (mean_count + model.alpha[k]) / (length + priors.alpha_sum);
      }
      out << '\n';
    }
  });
  return inference;
}

}  // namespace schmp::lda
