// The GPU LDA sampler (kernels::GpuTopicSampler): one token's draws follow the exact collapsed
// conditional, sweeps keep every count equal to the one its tokens' topics give, and schmp-lda
// --device gpu reaches the log-likelihood of --device cpu under mpirun. Skipped without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "e2e.hpp"
#include "gpu.hpp"
#include "schmp/kernels/topic_kernels.hpp"
#include "test_files.hpp"

namespace schmp {
namespace {

using kernels::GpuTopicModel;
using kernels::TopicToken;

TEST(GpuTopicSampler, DrawsOneTokenFromTheCollapsedConditional) {
  SCHMP_REQUIRE_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(testing::seed_note(seed));
  std::mt19937_64 random(seed);
  // 70 topics: three chunks of 32 for the warp, the last one partial.
  constexpr int kTopics = 70;
  constexpr auto kWidth = static_cast<std::size_t>(kTopics);
  const std::vector<double> alpha(kWidth, 1.0);
  const kernels::TopicPriors priors{alpha, kWidth * 1.0, 1.0, 40.0};  // W = 40
  // The counts of every other token: fixed, since each draw takes the one token out of them first.
  std::vector<std::uint32_t> document(kWidth);
  std::vector<std::uint32_t> word(kWidth);
  std::vector<std::int64_t> totals(kWidth);
  std::uniform_int_distribution<std::uint32_t> small(0, 6);
  std::uniform_int_distribution<std::uint32_t> others(15, 60);
  std::vector<double> p(kWidth);
  for (std::size_t k = 0; k < kWidth; ++k) {
    document[k] = small(random);
    word[k] = small(random);
    totals[k] = word[k] + others(random);
    p[k] = (document[k] + priors.alpha[k]) * (word[k] + priors.beta) /
           (static_cast<double>(totals[k]) + priors.beta_sum);
  }
  const double sum = std::accumulate(p.begin(), p.end(), 0.0);
  for (double& value : p) value /= sum;
  const std::vector<std::uint32_t> rest_of_word = word;

  // One token of the word, counted at a random topic.
  const auto start = static_cast<std::uint32_t>(random() % kWidth);
  ++document[start];
  ++word[start];
  ++totals[start];
  std::vector<std::vector<TopicToken>> blocks{{TopicToken{0, 0, start, 0}}};
  const std::vector<std::uint32_t> rows{1};
  const auto sampler = kernels::make_gpu_topic_sampler(
      testing::test_gpu(), GpuTopicModel{kTopics, priors, seed, blocks, rows, document});

  constexpr int kDraws = 50000;
  std::vector<double> seen(kWidth, 0.0);
  std::vector<std::uint32_t> block = word;
  for (int draw = 0; draw < kDraws; ++draw) {
    std::ranges::copy(block, sampler->block_staging(0).begin());
    sampler->start_sweep(0, totals, static_cast<std::uint64_t>(draw));
    const kernels::GpuSweep sweep = sampler->finish_sweep(totals);
    block.assign(sweep.block_counts.begin(), sweep.block_counts.end());
    // The word's row holds the others and the token, once, at its new topic.
    std::uint32_t topic = kTopics;
    for (std::uint32_t k = 0; k < kTopics; ++k) {
      const std::uint32_t extra = block[k] - rest_of_word[k];
      ASSERT_LE(extra, 1u) << "topic " << k << ", draw " << draw;
      if (extra == 1) {
        ASSERT_EQ(topic, kTopics) << "the token counted twice, draw " << draw;
        topic = k;
      }
    }
    ASSERT_LT(topic, kTopics) << "the token is gone, draw " << draw;
    seen[topic] += 1;
  }
  double chi_square = 0;
  for (std::size_t k = 0; k < kWidth; ++k) {
    const double expected = kDraws * p[k];  // 40 or more, with these counts
    chi_square += (seen[k] - expected) * (seen[k] - expected) / expected;
  }
  // 69 degrees of freedom: P(chi-square > 140) is below 1e-6 (Wilson-Hilferty).
  EXPECT_LT(chi_square, 140.0);

  // The token's topic and its document's counts on the GPU agree with the word's row.
  std::vector<std::uint32_t> document_now(kWidth);
  sampler->download(blocks, document_now);
  const std::uint32_t topic = blocks[0][0].topic;
  EXPECT_EQ(block[topic], rest_of_word[topic] + 1);
  for (std::uint32_t k = 0; k < kTopics; ++k)
    EXPECT_EQ(document_now[k], document[k] - (k == start) + (k == topic)) << "topic " << k;
}

TEST(GpuTopicSampler, SweepsKeepTheCountsOfTheTopics) {
  SCHMP_REQUIRE_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(testing::seed_note(seed));
  std::mt19937_64 random(seed);
  constexpr int kTopics = 37;
  constexpr auto kWidth = static_cast<std::size_t>(kTopics);
  constexpr std::uint32_t kWords = 300;
  constexpr std::uint32_t kBlocks = 3;  // word w is row w / 3 of block w % 3
  constexpr std::uint32_t kDocuments = 40;
  const std::vector<double> alpha(kWidth, 0.1);
  const kernels::TopicPriors priors{alpha, kWidth * 0.1, 0.01, 0.01 * kWords};

  // Skewed word frequencies, so that many warps share a word's row at once.
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::uniform_int_distribution<std::uint32_t> length(1, 80);
  std::vector<std::vector<TopicToken>> blocks(kBlocks);
  std::vector<std::uint32_t> rows(kBlocks, 0);
  for (std::uint32_t w = 0; w < kWords; ++w) ++rows[w % kBlocks];
  std::vector<std::uint32_t> document_counts(kDocuments * kWidth, 0);
  std::uint32_t slot = 0;
  for (std::uint32_t d = 0; d < kDocuments; ++d) {
    for (std::uint32_t i = length(random); i > 0; --i) {
      const auto w = static_cast<std::uint32_t>(std::pow(uniform(random), 3) * kWords);
      const auto topic = static_cast<std::uint32_t>(random() % kWidth);
      blocks[w % kBlocks].push_back(TopicToken{d, w / kBlocks, topic, slot++});
      ++document_counts[d * kWidth + topic];
    }
  }
  const std::size_t tokens = slot;
  for (auto& block : blocks) {
    std::ranges::stable_sort(block, [](const TopicToken& a, const TopicToken& b) { return a.word < b.word; });
  }
  // n_kw of each block and n_k, from the topics.
  auto word_counts_of = [&](const std::vector<std::vector<TopicToken>>& of) {
    std::vector<std::vector<std::uint32_t>> counts(kBlocks);
    for (std::uint32_t b = 0; b < kBlocks; ++b) {
      counts[b].assign(rows[b] * kWidth, 0);
      for (const TopicToken& token : of[b]) ++counts[b][token.word * kWidth + token.topic];
    }
    return counts;
  };
  std::vector<std::vector<std::uint32_t>> word_counts = word_counts_of(blocks);
  std::vector<std::int64_t> totals(kWidth, 0);
  for (const auto& block : blocks) {
    for (const TopicToken& token : block) ++totals[token.topic];
  }

  const auto sampler = kernels::make_gpu_topic_sampler(
      testing::test_gpu(), GpuTopicModel{kTopics, priors, seed, blocks, rows, document_counts});
  std::uint64_t moved = 0;
  for (std::uint64_t iteration = 0; iteration < 5; ++iteration) {
    for (std::uint32_t b = 0; b < kBlocks; ++b) {
      std::ranges::copy(word_counts[b], sampler->block_staging(b).begin());
      sampler->start_sweep(b, totals, iteration);
      const kernels::GpuSweep sweep = sampler->finish_sweep(totals);
      word_counts[b].assign(sweep.block_counts.begin(), sweep.block_counts.end());
      moved += sweep.moved;
    }
  }
  EXPECT_GT(moved, 0u);

  std::vector<std::vector<TopicToken>> swept = blocks;
  std::vector<std::uint32_t> swept_document_counts(document_counts.size());
  sampler->download(swept, swept_document_counts);
  std::vector<std::uint32_t> rebuilt_documents(document_counts.size(), 0);
  std::vector<std::int64_t> rebuilt_totals(kWidth, 0);
  std::uint64_t changed = 0;
  for (std::uint32_t b = 0; b < kBlocks; ++b) {
    for (std::size_t i = 0; i < swept[b].size(); ++i) {
      const TopicToken& token = swept[b][i];
      ASSERT_LT(token.topic, kWidth);
      ++rebuilt_documents[token.document * kWidth + token.topic];
      ++rebuilt_totals[token.topic];
      changed += token.topic != blocks[b][i].topic;
    }
  }
  EXPECT_GT(changed, 0u);
  EXPECT_EQ(swept_document_counts, rebuilt_documents);
  EXPECT_EQ(word_counts, word_counts_of(swept));
  EXPECT_EQ(totals, rebuilt_totals);
  // Each count holds every token once; one gone below zero would have wrapped far past the tokens.
  std::uint64_t word_sum = 0;
  for (const auto& counts : word_counts) {
    for (const std::uint32_t count : counts) {
      EXPECT_LE(count, tokens);
      word_sum += count;
    }
  }
  EXPECT_EQ(word_sum, tokens);
  EXPECT_EQ(std::accumulate(swept_document_counts.begin(), swept_document_counts.end(), std::uint64_t{0}),
            tokens);
  EXPECT_EQ(std::accumulate(totals.begin(), totals.end(), std::int64_t{0}),
            static_cast<std::int64_t>(tokens));
  EXPECT_TRUE(std::ranges::all_of(totals, [](std::int64_t total) { return total >= 0; }));
}

const std::string kCorpus = std::string(SCHMP_SOURCE_DIR) + "/data/sotu/docword.txt";
constexpr double kTokens = 82951;  // data/sotu

double log_likelihood_of(const testing::Output& out) {
  std::smatch match;
  if (!std::regex_search(out.text, match, std::regex("log-likelihood per token ([-+0-9.eE]+)"))) return NAN;
  return std::stod(match[1]);
}

class GpuLdaRanks : public ::testing::TestWithParam<int> {};

TEST_P(GpuLdaRanks, ReachesTheLogLikelihoodOfTheCpu) {
  SCHMP_REQUIRE_GPU();
  testing::ScratchDir dir;
  const std::string command = testing::mpirun(GetParam()) + SCHMP_LDA_BIN + " --data " + kCorpus +
                              " --topics 10 --iterations 60 --progress_seconds 0";
  const testing::Output cpu = testing::run(command + " --device cpu");
  ASSERT_EQ(cpu.status, 0) << cpu.text;
  const std::string prefix = dir.file("model");
  const testing::Output gpu = testing::run(command + " --device gpu --output " + prefix);
  ASSERT_EQ(gpu.status, 0) << gpu.text;
  // Both chains are stochastic and the GPU's moves tokens at once: after 60 iterations CPU runs with
  // seeds 1, 2 and 3 gave -8.713, -8.732 and -8.706 per token on this corpus (a spread of 0.027).
  EXPECT_NEAR(log_likelihood_of(gpu), log_likelihood_of(cpu), 0.05) << cpu.text << gpu.text;

  // The model written from the host copies holds every token once.
  std::istringstream counts(testing::read_text(prefix + ".word_topic"));
  double total = 0;
  for (std::string line; std::getline(counts, line);) {
    if (line.starts_with("#")) continue;
    std::istringstream values(line);
    for (double value; values >> value;) total += value;
  }
  EXPECT_EQ(total, kTokens);
}

INSTANTIATE_TEST_SUITE_P(Ranks, GpuLdaRanks, ::testing::Values(1, 3),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return "np" + std::to_string(info.param);
                         });

}  // namespace
}  // namespace schmp
