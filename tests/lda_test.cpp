// LDA pieces: the exact and the word-by-word collapsed Gibbs steps sample the collapsed conditional;
// fold-in samples it with the model fixed; the predictive probability is sum_k theta_dk phi_kw; the
// coordinator stops a run whose counts disagree with the topic totals.
#include "lda.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "documents.hpp"
#include "schmp/kernels/topic_kernels.hpp"

namespace schmp {
namespace {

// Priors viewing `alpha` (one per topic), with beta and W.
kernels::TopicPriors priors_of(const std::vector<double>& alpha, double beta, double words) {
  return {alpha, std::accumulate(alpha.begin(), alpha.end(), 0.0), beta, beta * words};
}

// The tiny model's priors: alpha_k apart (as learned ones are), beta 0.05, W = 1000.
const std::vector<double> kAlpha{0.5, 0.2, 1.5, 0.05, 0.8, 0.3};
const kernels::TopicPriors kPriors = priors_of(kAlpha, 0.05, 1000);

// Small counts, so that leaving the token itself out of them (or not) changes the conditional a lot.
struct TinyModel {
  std::vector<std::uint32_t> document{1, 0, 3, 0, 2, 1};
  std::vector<std::uint32_t> word{0, 2, 1, 0, 4, 1};
  std::vector<std::int64_t> totals{20, 35, 12, 50, 41, 9};
  // Counts one more token of the word in the document, at `topic`.
  void add_token(std::uint32_t topic) {
    ++document[topic];
    ++word[topic];
    ++totals[topic];
  }
  kernels::TopicCounts counts() { return kernels::TopicCounts{document, word, totals, kPriors}; }
};

// p(z = k | everything else) with the token already out of the counts.
std::vector<double> exact_conditional(const TinyModel& rest) {
  std::vector<double> p(rest.totals.size());
  for (std::size_t k = 0; k < p.size(); ++k) {
    p[k] = (rest.document[k] + kAlpha[k]) * (rest.word[k] + 0.05) /
           (static_cast<double>(rest.totals[k]) + 1000 * 0.05);
  }
  const double sum = std::accumulate(p.begin(), p.end(), 0.0);
  for (double& value : p) value /= sum;
  return p;
}

double chi_square(const std::vector<double>& seen, const std::vector<double>& p, int draws) {
  double sum = 0;
  for (std::size_t k = 0; k < p.size(); ++k) {
    const double expected = draws * p[k];
    sum += (seen[k] - expected) * (seen[k] - expected) / expected;
  }
  return sum;
}

constexpr int kDraws = 300000;

// How often each of the tiny model's 6 topics comes out of kDraws calls of draw(uniform, index),
// uniform in [0, 1).
template <class Draw>
std::vector<double> histogram(std::uint64_t seed, Draw draw) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<double> seen(6, 0.0);
  for (int i = 0; i < kDraws; ++i) seen[draw(uniform(random), i)] += 1;
  return seen;
}

double total_variation(const std::vector<double>& seen, const std::vector<double>& p, int draws) {
  double sum = 0;
  for (std::size_t k = 0; k < p.size(); ++k) sum += std::abs(seen[k] / draws - p[k]);
  return sum / 2;
}

// The document's topics with a nonzero count, heaviest first (the word-by-word sampler's order).
std::vector<std::uint32_t> nonzero_topics(const std::vector<std::uint32_t>& document) {
  std::vector<std::uint32_t> topics;
  for (std::uint32_t k = 0; k < document.size(); ++k) {
    if (document[k] > 0) topics.push_back(k);
  }
  std::stable_sort(topics.begin(), topics.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return document[a] > document[b]; });
  return topics;
}

TEST(ExactSampler, DrawsFromTheCollapsedConditional) {
  TinyModel model;
  const std::vector<double> p = exact_conditional(model);
  // The token starts counted at topic 2; every draw takes it out, so the rest never changes and the
  // draws are independent samples of p.
  std::uint32_t topic = 2;
  model.add_token(topic);
  std::vector<double> scratch(6);
  const std::vector<double> seen = histogram(17, [&](double uniform, int) {
    return topic = kernels::resample_exact(model.counts(), topic, uniform, scratch);
  });
  // 5 degrees of freedom: P(chi-square > 36) is below 1e-6. Sampling with the token left in the
  // counts gives about 800 here.
  EXPECT_LT(chi_square(seen, p, kDraws), 36.0);

  // The counts hold the token once, wherever it is.
  EXPECT_EQ(std::accumulate(model.document.begin(), model.document.end(), 0u), 8u);
  EXPECT_EQ(std::accumulate(model.word.begin(), model.word.end(), 0u), 9u);
  EXPECT_EQ(std::accumulate(model.totals.begin(), model.totals.end(), std::int64_t{0}), 168);
}

TEST(WordByWordSampler, DrawsFromTheCollapsedConditional) {
  TinyModel model;
  const std::vector<double> p = exact_conditional(model);
  std::uint32_t topic = 2;
  model.add_token(topic);
  std::vector<std::uint32_t> document_topics = nonzero_topics(model.document);
  kernels::WordByWordSampler sampler(6);
  sampler.start_word(model.word, model.totals, kPriors);
  const std::vector<double> seen = histogram(23, [&](double uniform, int draw) {
    topic = sampler.resample(model.document, document_topics, topic, uniform);
    // The document's topic list names exactly its topics with a nonzero count, heaviest first.
    if (draw % 1000 == 0) {
      EXPECT_TRUE(std::is_sorted(
          document_topics.begin(), document_topics.end(),
          [&](std::uint32_t a, std::uint32_t b) { return model.document[a] > model.document[b]; }))
          << "the list is in decreasing order of count";
      std::vector<std::uint32_t> listed = document_topics;
      std::vector<std::uint32_t> expected = nonzero_topics(model.document);
      std::sort(listed.begin(), listed.end());
      std::sort(expected.begin(), expected.end());
      EXPECT_EQ(listed, expected);
    }
    return topic;
  });
  EXPECT_LT(chi_square(seen, p, kDraws), 36.0);  // as for the exact sampler: 5 degrees of freedom, P < 1e-6
  EXPECT_EQ(std::accumulate(model.word.begin(), model.word.end(), 0u), 9u);
  EXPECT_EQ(std::accumulate(model.totals.begin(), model.totals.end(), std::int64_t{0}), 168);
}

// A document's tokens of one word, resampled in turn, with the empirical frequencies of the topics
// drawn and the average of the exact conditionals met at each draw (the token out of every count).
struct RunOfTokens {
  explicit RunOfTokens(std::size_t topics)
      : document(topics, 0), word(topics, 0), totals(topics, 0), seen(topics, 0.0), expected(topics, 0.0) {}

  // Counts the tokens (their topics already in `tokens`) into the document, the word and the totals.
  void count_tokens() {
    for (const std::uint32_t topic : tokens) {
      ++document[topic];
      ++word[topic];
      ++totals[topic];
    }
    document_topics = nonzero_topics(document);
  }

  // Resamples every token once with `sampler`, started on `word` and `totals` with `priors`.
  void resample(kernels::WordByWordSampler& sampler, const kernels::TopicPriors& priors,
                std::mt19937_64& random) {
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    std::vector<double> p(document.size());
    for (std::uint32_t& topic : tokens) {
      --document[topic];
      --word[topic];
      --totals[topic];
      double sum = 0;
      for (std::size_t k = 0; k < p.size(); ++k) {
        p[k] = (document[k] + priors.alpha[k]) * (word[k] + priors.beta) /
               (static_cast<double>(totals[k]) + priors.beta_sum);
        sum += p[k];
      }
      for (std::size_t k = 0; k < p.size(); ++k) expected[k] += p[k] / sum;
      ++document[topic];
      ++word[topic];
      ++totals[topic];
      topic = sampler.resample(document, document_topics, topic, uniform(random));
      seen[topic] += 1;
      ++draws;
    }
  }

  double distance() const {
    std::vector<double> average = expected;
    for (double& value : average) value /= draws;
    return total_variation(seen, average, draws);
  }

  std::vector<std::uint32_t> document;
  std::vector<std::uint32_t> word;
  std::vector<std::int64_t> totals;
  std::vector<std::uint32_t> tokens;  // their topics
  std::vector<std::uint32_t> document_topics;
  std::vector<double> seen;
  std::vector<double> expected;
  int draws = 0;
};

// With many topics the prior terms are drawn through their buckets; a document whose tokens of the
// word come one after another has its document part carried over between them. Both must leave the
// draw exact: several tokens of one word in one document, resampled in turn, each compared with the
// exact conditional at its own draw (the total-variation sum of the per-draw conditionals).
TEST(WordByWordSampler, StaysExactWithManyTopicsAndRunsOfTokens) {
  constexpr std::size_t kTopics = 300;
  std::mt19937_64 random(41);
  RunOfTokens run(kTopics);
  for (std::size_t k = 0; k < kTopics; ++k) run.totals[k] = 200 + static_cast<std::int64_t>(random() % 400);
  for (int i = 0; i < 600; ++i) ++run.word[random() % kTopics];  // every bucket carries weight
  for (int i = 0; i < 5; ++i) run.tokens.push_back(static_cast<std::uint32_t>(random() % 40));
  for (int i = 0; i < 40; ++i) ++run.document[random() % 12];  // its other tokens
  run.count_tokens();
  kernels::WordByWordSampler sampler(static_cast<int>(kTopics));
  std::vector<double> alpha(kTopics);
  for (double& a : alpha) a = 0.2 + static_cast<double>(random() % 1000) / 500;  // apart, in every bucket
  const kernels::TopicPriors priors = priors_of(alpha, 0.01, 5000);
  for (int round = 0; round < 160000; ++round) {
    sampler.start_word(run.word, run.totals, priors);
    run.resample(sampler, priors, random);
  }
  // Measured 0.0065 (sampling noise over 800,000 draws spread on 300 topics). Mutants measured at a
  // quarter of these draws: a draw that skips one bucket of prior terms, 0.050; one that forgets to
  // carry the document part's increase, 0.027 (noise then 0.013).
  EXPECT_LT(run.distance(), 0.013);
  EXPECT_EQ(std::accumulate(run.word.begin(), run.word.end(), 0u), 605u);
  EXPECT_EQ(std::accumulate(run.document.begin(), run.document.end(), 0u), 45u);
}

// Between two words the totals change under the sampler (the other workers' moves, synchronised
// between sub-rounds) and so may the priors: each word must be drawn with the totals and priors it
// is started with, whatever the sampler saw before.
TEST(WordByWordSampler, FollowsTotalsAndPriorsChangedBetweenWords) {
  constexpr std::size_t kTopics = 40;
  std::mt19937_64 random(43);
  RunOfTokens run(kTopics);
  // The other words' share of each topic's total, in two very different states.
  std::vector<std::int64_t> others_a(kTopics), others_b(kTopics);
  for (std::size_t k = 0; k < kTopics; ++k) {
    others_a[k] = 300 + static_cast<std::int64_t>(random() % 300);
    others_b[k] = static_cast<std::int64_t>(random() % 20);
  }
  for (int i = 0; i < 100; ++i) ++run.word[random() % kTopics];
  for (int i = 0; i < 4; ++i) run.tokens.push_back(static_cast<std::uint32_t>(random() % kTopics));
  for (int i = 0; i < 30; ++i) ++run.document[random() % kTopics];
  run.count_tokens();
  kernels::WordByWordSampler sampler(static_cast<int>(kTopics));
  const std::vector<double> alpha_a(kTopics, 0.5);
  std::vector<double> alpha_b(kTopics);
  for (double& a : alpha_b) a = 0.01 + static_cast<double>(random() % 1000) / 250;
  for (int round = 0; round < 60000; ++round) {
    // Round by round, in threes: totals and priors at state A; totals at B; priors (alpha_k and
    // beta's W beta) at B too.
    const std::vector<std::int64_t>& others = round % 3 == 0 ? others_a : others_b;
    for (std::size_t k = 0; k < kTopics; ++k) run.totals[k] = others[k] + run.word[k];
    const kernels::TopicPriors priors =
        round % 3 < 2 ? priors_of(alpha_a, 0.01, 1000) : priors_of(alpha_b, 0.01, 50);
    sampler.start_word(run.word, run.totals, priors);
    run.resample(sampler, priors, random);
  }
  // Measured 0.0058 (sampling noise). Mutants: a sampler that keeps its inverse totals when the totals
  // change, 0.038; one that keeps them when beta changes, 0.026.
  EXPECT_LT(run.distance(), 0.012);
}

// Fold-in: the token belongs to a document the model does not learn from, so the word's counts and
// the totals never held it and never change; only the document's counts leave it out.
TEST(WordByWordSampler, FoldsInWithTheModelFixed) {
  TinyModel model;
  const std::vector<double> p = exact_conditional(model);
  const TinyModel untouched = model;
  std::uint32_t topic = 4;
  ++model.document[topic];
  std::vector<std::uint32_t> document_topics = nonzero_topics(model.document);
  kernels::WordByWordSampler sampler(6);
  sampler.start_word(model.word, model.totals, kPriors);
  const std::vector<double> seen = histogram(29, [&](double uniform, int) {
    return topic = sampler.fold_in(model.document, document_topics, topic, uniform);
  });
  EXPECT_LT(chi_square(seen, p, kDraws), 36.0);
  EXPECT_EQ(model.word, untouched.word);
  EXPECT_EQ(model.totals, untouched.totals);
  EXPECT_EQ(std::accumulate(model.document.begin(), model.document.end(), 0u), 8u);
}

TEST(WordByWordSampler, PredictiveProbabilityIsSumOfThetaTimesPhi) {
  TinyModel model;
  kernels::WordByWordSampler sampler(6);
  sampler.start_word(model.word, model.totals, kPriors);
  const double length = std::accumulate(model.document.begin(), model.document.end(), 0.0);
  double expected = 0;
  for (std::size_t k = 0; k < 6; ++k) {
    const double theta = (model.document[k] + kAlpha[k]) / (length + kPriors.alpha_sum);
    const double phi = (model.word[k] + 0.05) / (static_cast<double>(model.totals[k]) + 1000 * 0.05);
    expected += theta * phi;
  }
  EXPECT_NEAR(sampler.predictive(model.document, nonzero_topics(model.document), length), expected, 1e-15);
}

// Metropolis-Hastings: successive topics of one token are a Markov chain, not independent draws, whose
// stationary distribution must be the exact conditional. The token is the only one of its word in the
// sweep (so the word proposal mostly proposes staying), in a document whose other tokens stay put.
TEST(MetropolisHastings, ChainStaysOnTheCollapsedConditional) {
  for (const int steps : {1, 2}) {
    TinyModel model;
    const std::vector<double> p = exact_conditional(model);
    std::vector<std::uint32_t> slot_topics{0, 2, 2, 2, 4, 4, 5};  // the document's other tokens
    const std::vector<std::uint32_t> offsets{0, 8};
    std::vector<kernels::TopicToken> token{{0, 0, 1, 7}};
    slot_topics.push_back(1);
    model.add_token(1);
    std::vector<std::uint32_t> local(6, 0);
    kernels::FastRandom random(31);
    std::vector<double> seen(6, 0.0);
    constexpr int kSweeps = 1000000;
    for (int sweep = 0; sweep < kSweeps; ++sweep) {
      kernels::metropolis_hastings_sweep(token, model.word, model.totals,
                                         kernels::DocumentTopics{model.document, slot_topics, offsets},
                                         kPriors, steps, random, local);
      seen[token[0].topic] += 1;
    }
    // Measured 0.0007 (1 step) and 0.001 (2 steps); sampling with the token left in the counts would
    // be 0.013 away.
    EXPECT_LT(total_variation(seen, p, kSweeps), 0.004) << steps << " steps";
    EXPECT_EQ(slot_topics[7], token[0].topic);
    EXPECT_EQ(local, std::vector<std::uint32_t>(6, 0));
    EXPECT_EQ(std::accumulate(model.document.begin(), model.document.end(), 0u), 8u);
    EXPECT_EQ(std::accumulate(model.word.begin(), model.word.end(), 0u), 9u);
    EXPECT_EQ(std::accumulate(model.totals.begin(), model.totals.end(), std::int64_t{0}), 168);
  }
}

// A count shares a word with its topic; a row with a count too large for that travels as (topic, count)
// pairs. Both round-trip, at K = 1 (no topic bits), a power of two (K - 1 fills its bits) and others.
TEST(WordTopicRows, EncodeAndDecodeRoundTrip) {
  struct Case {
    int topics;
    std::set<std::size_t> wide_rows;
  };
  // Row 2 holds 4,000,000,000 (counts keep all 32 bits), row 3 2^23 and row 4 2^23 - 1: counts up to
  // 2^32 - 1 pack with 1 topic, 2^29 - 1 with 7 (3 bits), 2^25 - 1 with 128 (7 bits), 2^23 - 1 with
  // 300 (9 bits) and 2^15 - 1 with 100,000 (17 bits).
  const Case cases[] = {{1, {}}, {7, {2}}, {128, {2}}, {300, {2, 3}}, {100000, {2, 3, 4}}};
  std::mt19937_64 random(5);
  for (const Case& c : cases) {
    const auto width = static_cast<std::size_t>(c.topics);
    const std::size_t rows = 11;
    std::vector<std::uint32_t> dense(width * rows);
    for (auto& count : dense) count = random() % 4 == 0 ? static_cast<std::uint32_t>(random() % 9) : 0;
    dense[width - 1] = 5;  // the last topic: the largest in the low bits
    dense[2 * width] = 4000000000u;
    dense[3 * width + width / 2] = 1u << 23;
    dense[4 * width + width - 1] = (1u << 23) - 1;
    const std::vector<std::uint32_t> encoded = lda::encode_rows(dense, c.topics);
    std::size_t expected_size = rows;  // a header per row
    for (std::size_t r = 0; r < rows; ++r) {
      const auto row = std::span<const std::uint32_t>(dense).subspan(r * width, width);
      const auto nonzero =
          static_cast<std::size_t>(std::count_if(row.begin(), row.end(), [](auto n) { return n > 0; }));
      expected_size += (c.wide_rows.count(r) ? 2 : 1) * nonzero;
    }
    EXPECT_EQ(encoded.size(), expected_size)
        << c.topics << " topics: a word per nonzero count, two in a wide row";
    std::vector<std::uint32_t> decoded(dense.size(), 7);
    lda::decode_rows(encoded, c.topics, decoded);
    EXPECT_EQ(decoded, dense) << c.topics << " topics";
    std::vector<std::uint32_t> too_many(dense.size() + width);
    EXPECT_THROW(lda::decode_rows(encoded, c.topics, too_many), std::logic_error);
    const std::vector<std::uint32_t> cut(encoded.begin(), encoded.end() - 1);
    EXPECT_THROW(lda::decode_rows(cut, c.topics, decoded), std::logic_error);
    // One row at a time, as rank 0 writes the documents' rows in id order.
    const std::vector<std::size_t> starts = lda::row_starts(encoded, rows);
    ASSERT_EQ(starts.size(), rows + 1);
    std::vector<std::uint32_t> row(width);
    for (std::size_t r = 0; r < rows; ++r) {
      lda::decode_rows(std::span<const std::uint32_t>(encoded).subspan(starts[r], starts[r + 1] - starts[r]),
                       c.topics, row);
      EXPECT_TRUE(std::equal(row.begin(), row.end(), dense.begin() + static_cast<std::ptrdiff_t>(r * width)))
          << c.topics << " topics, row " << r;
    }
    EXPECT_THROW(lda::row_starts(encoded, rows + 1), std::logic_error);
    EXPECT_THROW(lda::row_starts(encoded, rows - 1), std::logic_error);
    EXPECT_THROW(lda::row_starts(cut, rows), std::logic_error);
  }
}

// A malformed encoding is refused, not written past its row: a topic beyond K, packed or in a pair;
// more counts than topics; a row cut short; topics repeated or out of order (a repeat would lose a
// count); a zero count; pairs for counts that pack. Each bad row is the block's last, so that a write
// past it would leave the buffer (which the sanitizer build catches). At K = 7 a count packs below
// 2^29, so the pairs below hold 2^29 where they should be well formed otherwise.
TEST(WordTopicRows, DecodeRefusesMalformedRows) {
  constexpr std::uint32_t kWide = 1u << 29;
  const std::vector<std::uint32_t> good_row = {1 << 1, 2 | 5 << 3};  // topic 2, count 5
  const std::vector<std::vector<std::uint32_t>> bad_rows = {
      {1 << 1, 7 | 5 << 3},              // packed topic 7 of 7
      {1 << 1 | 1, 9, kWide},            // a pair naming topic 9
      {1 << 1 | 1, 0xffffffff, kWide},   // and one naming the largest topic there is
      {8 << 1, 1, 1, 1, 1, 1, 1, 1, 1},  // 8 counts in a row of 7 topics
      {2 << 1, 1 | 5 << 3},              // 2 counts announced, 1 there
      {2 << 1 | 1, 1, kWide},            // 2 pairs announced, 1 there
      {2 << 1, 3 | 1 << 3, 3 | 2 << 3},  // topic 3 twice
      {2 << 1, 4 | 1 << 3, 3 | 2 << 3},  // topics out of order
      {2 << 1 | 1, 4, kWide, 3, 2},      // and in pairs
      {1 << 1, 3},                       // a zero count
      {2 << 1 | 1, 1, kWide, 3, 0},      // and in a pair
      {1 << 1 | 1, 3, 5},                // pairs for a count that packs
      {0 << 1 | 1},                      // pairs for no count at all
  };
  for (const auto& bad_row : bad_rows) {
    std::vector<std::uint32_t> encoded = good_row;
    encoded.insert(encoded.end(), bad_row.begin(), bad_row.end());
    std::vector<std::uint32_t> dense(2 * 7, 0);
    EXPECT_THROW(lda::decode_rows(encoded, 7, dense), std::logic_error) << ::testing::PrintToString(bad_row);
  }
  std::vector<std::uint32_t> dense(2 * 7, 0);
  lda::decode_rows(std::vector<std::uint32_t>{2 << 1, 0 | 1 << 3, 6 | 5 << 3, 2 << 1 | 1, 0, 9, 1, kWide}, 7,
                   dense);
  EXPECT_EQ(dense, (std::vector<std::uint32_t>{1, 0, 0, 0, 0, 0, 5, 9, kWide, 0, 0, 0, 0, 0}));
}

// Tokens are numbered in 32 bits within a worker: a worker that would hold more is refused, rather
// than numbering past the wrap.
TEST(DocumentShard, RefusesMoreTokensThanItsSlotsNumber) {
  lda::DocumentShard shard(2);
  const std::vector<std::uint32_t> words{0, 1, 1};
  shard.add(0, words, 1);
  shard.offsets.back() = std::numeric_limits<std::uint32_t>::max() - 2;  // as if that many came before
  EXPECT_THROW(shard.add(1, words, 1), std::runtime_error);
  EXPECT_EQ(shard.ids.size(), 1u);
  shard.offsets.back() = std::numeric_limits<std::uint32_t>::max() - 3;
  shard.add(1, words, 1);
  EXPECT_EQ(shard.offsets.back(), std::numeric_limits<std::uint32_t>::max());
}

TEST(WordTokens, AWordTooFrequentForItsCountsIsRefused) {
  const std::uint64_t most = std::numeric_limits<std::uint32_t>::max();
  EXPECT_NO_THROW(lda::check_word_tokens(std::vector<std::uint64_t>{3, most, 0}, "corpus"));
  try {
    lda::check_word_tokens(std::vector<std::uint64_t>{3, most + 1, 0}, "corpus");
    ADD_FAILURE() << "no error";
  } catch (const io::InputError& error) {
    EXPECT_EQ(
        std::string(error.what()),
        "corpus: word 1 has 4294967296 tokens, more than a word-topic count holds (2^32 - 1): leave such "
        "words out (stop words)");
  }
}

TEST(DocumentDealer, GivesEachDocumentToTheLightestWorker) {
  lda::DocumentDealer dealer(3);
  // Loads after each deal: {50}, {50, 10}, {50, 10, 10}, {50, 30, 10}, {50, 30, 40}, {50, 35, 40}.
  const std::vector<std::size_t> lengths{50, 10, 10, 20, 30, 5};
  const std::vector<std::uint32_t> expected{0, 1, 2, 1, 2, 1};
  for (std::size_t i = 0; i < lengths.size(); ++i)
    EXPECT_EQ(dealer.deal(lengths[i]), expected[i]) << "document " << i;
}

TEST(WordLayout, DealsWordsSoBlocksWeighAlike) {
  // Zipf-like word counts: word v has about 10000 / (v + 1) tokens.
  std::vector<std::uint64_t> tokens(2000);
  for (std::size_t v = 0; v < tokens.size(); ++v) tokens[v] = 10000 / (v + 1) + 1;
  const std::uint64_t total = std::accumulate(tokens.begin(), tokens.end(), std::uint64_t{0});
  for (const int blocks : {2, 5, 16}) {
    const lda::WordLayout layout(tokens, blocks);
    std::vector<std::uint64_t> load(static_cast<std::size_t>(blocks), 0);
    std::size_t placed = 0;
    for (std::uint32_t b = 0; b < layout.words.size(); ++b) {
      for (std::uint32_t row = 0; row < layout.words[b].size(); ++row) {
        const std::uint32_t word = layout.words[b][row];
        EXPECT_EQ(layout.block[word], b);
        EXPECT_EQ(layout.row[word], row);
        load[b] += tokens[word];
        ++placed;
      }
    }
    EXPECT_EQ(placed, tokens.size()) << "every word in one block";
    // Dealt heaviest first, the blocks end within one of the last (6-token) words of each other;
    // with 16 blocks the heaviest word (10,001 tokens) outweighs an even share, and its block is the
    // heaviest with nothing else in it.
    const auto [lightest, heaviest] = std::minmax_element(load.begin(), load.end());
    const std::uint64_t share = total / static_cast<std::uint64_t>(blocks);
    if (tokens[0] <= share) {
      EXPECT_LE(*heaviest - *lightest, 6u) << blocks << " blocks";
    } else {
      EXPECT_EQ(*heaviest, tokens[0]) << blocks << " blocks";
    }
  }
  const lda::WordLayout one(tokens, 1);
  for (std::uint32_t v = 0; v < tokens.size(); ++v)
    EXPECT_EQ(one.row[v], v) << "one block keeps the word order";
}

TEST(ExactSampler, UniformEndsPickTheFirstAndLastTopics) {
  TinyModel model;
  std::vector<double> scratch(6);
  ++model.document[3];
  ++model.word[3];
  ++model.totals[3];
  EXPECT_EQ(kernels::resample_exact(model.counts(), 3, 0.0, scratch), 0u);
  EXPECT_EQ(kernels::resample_exact(model.counts(), 0, std::nextafter(1.0, 0.0), scratch), 5u);
}

// The coordinator stops the run when the counts and the topic totals disagree: each token counted once
// on both sides, and each topic's counts adding up to its total.
TEST(LdaCoordinator, RefusesCountsThatDisagreeWithTheTotals) {
  lda::Config config;
  config.topics = 2;
  lda::Lda::Setup setup;
  setup.topic_counts = {6, 4};
  setup.tokens = 10;
  setup.words = 3;
  lda::Lda::Coordinator coordinator(config, setup, 1);
  lda::Lda::Stats agreeing;
  agreeing.word_tokens = 10;
  agreeing.document_tokens = 10;
  agreeing.word_totals_off = {0, 0};
  agreeing.document_totals_off = {0, 0};
  EXPECT_NO_THROW(coordinator.report(agreeing));
  lda::Lda::Stats moved = agreeing;  // a count moved between topics: every token still counted once
  moved.word_totals_off = {1, -1};
  try {
    coordinator.report(moved);
    ADD_FAILURE() << "a topic total off its counts went unnoticed";
  } catch (const std::logic_error& error) {
    EXPECT_NE(std::string(error.what()).find("topic 0's total is off its word-topic counts by -1"),
              std::string::npos)
        << error.what();
  }
  lda::Lda::Stats lost = agreeing;
  lost.document_tokens = 9;
  EXPECT_THROW(coordinator.report(lost), std::logic_error);
}

}  // namespace
}  // namespace schmp
