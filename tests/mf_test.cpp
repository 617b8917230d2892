// Matrix factorization pieces: the kernels against brute force, CCD++ rounds as exact coordinate
// minimisers, the LIBMF model file, and the ratings reader.
#include "mf.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "model.hpp"
#include "ranking.hpp"
#include "schmp/io.hpp"
#include "schmp/kernels/factor_kernels.hpp"
#include "test_files.hpp"

namespace schmp {
namespace {

using kernels::CellRating;

struct Factors {
  int rank = 3;
  std::vector<double> users, items;
};

Factors random_factors(std::mt19937_64& random, std::size_t users, std::size_t items, int rank) {
  std::normal_distribution<double> normal(0.0, 0.7);
  Factors f;
  f.rank = rank;
  f.users.resize(users * static_cast<std::size_t>(rank));
  f.items.resize(items * static_cast<std::size_t>(rank));
  for (double& v : f.users) v = normal(random);
  for (double& v : f.items) v = normal(random);
  return f;
}

double dot(const Factors& f, const CellRating& r, int skip = -1) {
  double sum = 0;
  for (int d = 0; d < f.rank; ++d) {
    if (d != skip) sum += f.users[r.user * f.rank + d] * f.items[r.item * f.rank + d];
  }
  return sum;
}

std::vector<CellRating> random_cell(std::mt19937_64& random, std::uint32_t users, std::uint32_t items) {
  std::vector<CellRating> cell;
  std::normal_distribution<double> normal(0.0, 1.0);
  for (std::uint32_t u = 0; u < users; ++u) {
    for (std::uint32_t j = 0; j < items; ++j) {
      if ((u + 2 * j) % 3 != 0) cell.push_back({u, j, normal(random)});
    }
  }
  return cell;
}

TEST(FactorKernels, CcdGatherMovesTheLiftAndSumsPerRow) {
  std::mt19937_64 random(11);
  const Factors f = random_factors(random, 5, 4, 3);
  const std::vector<CellRating> cell = random_cell(random, 5, 4);
  for (const bool users : {true, false}) {
    // Residuals lifted at component 1; the step moves the lift to component 0.
    std::vector<double> residuals;
    for (const CellRating& r : cell) residuals.push_back(r.value - dot(f, r, 1));
    std::vector<double> numerator(users ? 5 : 4, 0.0), denominator(users ? 5 : 4, 0.0);
    // Item rows as a narrow copy, as they travel between workers: columns (0, 1) of the rank-3 rows.
    std::vector<double> narrow;
    for (std::size_t j = 0; j < 4; ++j) narrow.insert(narrow.end(), {f.items[j * 3], f.items[j * 3 + 1]});
    kernels::ccd_gather(cell, residuals, {f.users.data(), 3, 0, 1}, {narrow.data(), 2, 0, 1}, true, users,
                        numerator.data(), denominator.data());
    std::vector<double> expected_numerator(numerator.size(), 0.0),
        expected_denominator(numerator.size(), 0.0);
    for (std::size_t e = 0; e < cell.size(); ++e) {
      const CellRating& r = cell[e];
      const double lifted = r.value - dot(f, r, 0);
      EXPECT_NEAR(residuals[e], lifted, 1e-12);
      const double other = users ? f.items[r.item * 3] : f.users[r.user * 3];
      const std::uint32_t row = users ? r.user : r.item;
      expected_numerator[row] += lifted * other;
      expected_denominator[row] += other * other;
    }
    for (std::size_t row = 0; row < numerator.size(); ++row) {
      EXPECT_NEAR(numerator[row], expected_numerator[row], 1e-12);
      EXPECT_NEAR(denominator[row], expected_denominator[row], 1e-12);
    }
  }
}

TEST(FactorKernels, SgdPassTakesLibmfsAdaGradStep) {
  Factors f;
  f.rank = 2;
  f.users = {0.5, -0.25};
  f.items = {1.0, 2.0};
  std::vector<double> user_sums{1.0}, item_sums{4.0};
  const std::vector<CellRating> cell{{0, 0, 3.0}};
  const double squared =
      kernels::sgd_pass(cell, {f.users.data(), user_sums.data()}, {f.items.data(), item_sums.data()},
                        kernels::RowLayout{2, false}, 0.1, 0.5);
  const double error = 3.0 - (0.5 * 1.0 - 0.25 * 2.0);
  EXPECT_DOUBLE_EQ(squared, error * error);
  const double gw[2] = {0.1 * 0.5 - error * 1.0, 0.1 * -0.25 - error * 2.0};
  const double gh[2] = {0.1 * 1.0 - error * 0.5, 0.1 * 2.0 - error * -0.25};
  EXPECT_DOUBLE_EQ(f.users[0], 0.5 - 0.5 / 1.0 * gw[0]);
  EXPECT_DOUBLE_EQ(f.users[1], -0.25 - 0.5 / 1.0 * gw[1]);
  EXPECT_DOUBLE_EQ(f.items[0], 1.0 - 0.5 / 2.0 * gh[0]);
  EXPECT_DOUBLE_EQ(f.items[1], 2.0 - 0.5 / 2.0 * gh[1]);
  EXPECT_DOUBLE_EQ(user_sums[0], 1.0 + (gw[0] * gw[0] + gw[1] * gw[1]) / 2);
  EXPECT_DOUBLE_EQ(item_sums[0], 4.0 + (gh[0] * gh[0] + gh[1] * gh[1]) / 2);
}

TEST(FactorKernels, ErrorSumsMatchBruteForce) {
  std::mt19937_64 random(5);
  const Factors f = random_factors(random, 4, 6, 2);
  const std::vector<CellRating> cell = random_cell(random, 4, 6);
  double squared = 0, absolute = 0;
  for (const CellRating& r : cell) {
    squared += (r.value - dot(f, r)) * (r.value - dot(f, r));
    absolute += std::abs(r.value - dot(f, r));
  }
  const kernels::ErrorSums sums = kernels::error_sums(cell, f.users.data(), f.items.data(), 2);
  EXPECT_NEAR(sums.squared, squared, 1e-12);
  EXPECT_NEAR(sums.absolute, absolute, 1e-12);
}

// The objective in the worker's internal units, from its part: ratings (r - offset) / s, lambda / s,
// no penalty on the fixed 1s of a biased layout.
double internal_objective(const std::vector<io::Rating>& ratings, const mf::MatrixFactorization::Part& part,
                          const kernels::RowLayout& layout, double offset, double scale, double lambda) {
  const int width = layout.width();
  std::vector<double> user_counts(part.users, 0.0), item_counts(part.items, 0.0);
  double loss = 0;
  for (const io::Rating& r : ratings) {
    double fit = 0;
    for (int d = 0; d < width; ++d)
      fit += part.user_factors[r.user * width + d] * part.item_factors[r.item * width + d];
    const double value = (r.value - offset) / scale;
    loss += (value - fit) * (value - fit);
    user_counts[r.user] += 1;
    item_counts[r.item] += 1;
  }
  double penalty = 0;
  for (int d = 0; d < width; ++d) {
    for (std::size_t u = 0; u < part.users; ++u) {
      if (!layout.biases || d != layout.item_bias())
        penalty += user_counts[u] * std::pow(part.user_factors[u * width + d], 2);
    }
    for (std::size_t j = 0; j < part.items; ++j) {
      if (!layout.biases || d != layout.user_bias())
        penalty += item_counts[j] * std::pow(part.item_factors[j * width + d], 2);
    }
  }
  return loss + lambda / scale * penalty;
}

class CcdRounds : public ::testing::TestWithParam<bool> {};

TEST_P(CcdRounds, EachRoundIsAnExactCoordinateMinimiserAndReportsItsDecrease) {
  const bool biases = GetParam();
  testing::ScratchDir dir;
  std::mt19937_64 random(3);
  std::normal_distribution<double> normal(3.0, 1.0);
  std::vector<io::Rating> ratings;
  std::string text;
  double sum = 0;
  for (std::uint32_t u = 0; u < 7; ++u) {
    for (std::uint32_t j = 0; j < 5; ++j) {
      if ((u * 3 + j) % 4 == 1) continue;
      const double value = std::round(normal(random) * 100) / 100;
      ratings.push_back({u, j, value, 0});
      sum += value;
      text += std::to_string(u) + " " + std::to_string(j) + " " + std::to_string(value) + "\n";
    }
  }
  mf::Config config;
  config.data = dir.write("r.txt", text);
  config.rank = 3;
  config.lambda = 0.2;
  config.biases = biases;
  const kernels::RowLayout layout{config.rank, biases};
  mf::MatrixFactorization::Worker worker(config, WorkerContext{0, 1, 1, 9});
  const auto setup = worker.setup();
  worker.start(setup);
  mf::MatrixFactorization::Block home = worker.make_block();
  const double scale = mf::rating_scale(setup, config);
  const double offset = biases ? sum / static_cast<double>(ratings.size()) : 0.0;

  // Latent components on both sides; with biases, the user bias (column 3) in a user round and the
  // item bias (column 4) in an item round.
  std::vector<std::pair<std::uint32_t, bool>> steps{{0, false}, {0, true}, {2, false}, {2, true},
                                                    {1, false}, {1, true}, {0, false}, {0, true}};
  if (biases) {
    steps.insert(steps.begin() + 2, {{3, true}, {4, false}});
    steps.push_back({4, false});
    steps.push_back({3, true});
  }
  for (const auto& [component, users] : steps) {
    const double before =
        internal_objective(ratings, worker.part(home), layout, offset, scale, config.lambda);
    mf::MatrixFactorization::Step step;
    step.component = component;
    step.users = users;
    worker.update(step, 0, home);
    const double decrease = worker.end_update(step, home).decrease;
    mf::MatrixFactorization::Part after = worker.part(home);
    const double objective = internal_objective(ratings, after, layout, offset, scale, config.lambda);
    EXPECT_GE(decrease, 0);
    EXPECT_NEAR(before - objective, decrease, 1e-9 * before) << component << (users ? " users" : " items");
    // Nudging any updated entry either way can only raise the objective.
    std::vector<double>& rows = users ? after.user_factors : after.item_factors;
    const auto width = static_cast<std::size_t>(layout.width());
    for (std::size_t row = 0; row * width < rows.size(); ++row) {
      for (const double nudge : {-1e-4, 1e-4}) {
        rows[row * width + component] += nudge;
        EXPECT_GT(internal_objective(ratings, after, layout, offset, scale, config.lambda), objective);
        rows[row * width + component] -= nudge;
      }
    }
  }
  if (biases) {
    // The fixed 1s stayed put.
    const mf::MatrixFactorization::Part part = worker.part(home);
    for (std::size_t u = 0; u < part.users; ++u) EXPECT_EQ(part.user_factors[u * 5 + 4], 1.0);
    for (std::size_t j = 0; j < part.items; ++j) EXPECT_EQ(part.item_factors[j * 5 + 3], 1.0);
  }
}

// The implicit objective of a part, by brute force over every cell of the dense matrix (mf.hpp).
double one_class_objective(const std::vector<io::Rating>& counts, const mf::MatrixFactorization::Part& part,
                           int rank, const mf::Config& config) {
  std::vector<double> confidence(std::size_t{part.users} * part.items, 1.0), target(confidence.size(), 0.0);
  for (const io::Rating& r : counts) {
    confidence[r.user * part.items + r.item] = 1 + mf::confidence_extra(r.value, config);
    target[r.user * part.items + r.item] = 1;
  }
  double sum = 0;
  for (std::size_t u = 0; u < part.users; ++u) {
    for (std::size_t j = 0; j < part.items; ++j) {
      double fit = 0;
      for (int d = 0; d < rank; ++d) fit += part.user_factors[u * rank + d] * part.item_factors[j * rank + d];
      sum += confidence[u * part.items + j] * std::pow(target[u * part.items + j] - fit, 2);
    }
  }
  for (const double w : part.user_factors) sum += config.lambda * w * w;
  for (const double h : part.item_factors) sum += config.lambda * h * h;
  return sum;
}

std::vector<double> gram(const std::vector<double>& rows, int rank) {
  std::vector<double> g(static_cast<std::size_t>(rank * rank), 0.0);
  for (std::size_t at = 0; at < rows.size(); at += rank) {
    for (int f = 0; f < rank; ++f) {
      for (int e = 0; e < rank; ++e) g[f * rank + e] += rows[at + f] * rows[at + e];
    }
  }
  return g;
}

// --implicit: the Gram round sums W'W and H'H, and each round is the exact minimiser of the dense
// objective in its block of entries, hands back its side's new Gram rows, and reports its decrease;
// blocks of one column (CCD++), of two (the last one narrower) and of the whole rank (ALS).
class ImplicitCcdRounds : public ::testing::TestWithParam<int> {};

TEST_P(ImplicitCcdRounds, MinimiseTheDenseObjectiveExactly) {
  const int block_size = GetParam();
  for (const auto confidence : {mf::Confidence::kLinear, mf::Confidence::kLog}) {
    testing::ScratchDir dir;
    std::mt19937_64 random(5);
    std::uniform_int_distribution<int> count(1, 9);
    std::vector<io::Rating> counts;
    std::string text;
    for (std::uint32_t u = 0; u < 8; ++u) {
      for (std::uint32_t j = 0; j < 6; ++j) {
        if ((u * 5 + j * 3) % 4 != 1) continue;
        const int r = count(random);
        counts.push_back({u, j, static_cast<double>(r), 0});
        text += std::to_string(u) + " " + std::to_string(j) + " " + std::to_string(r) + "\n";
      }
    }
    mf::Config config;
    config.data = dir.write("counts.txt", text);
    config.rank = 3;
    config.lambda = 0.3;
    config.biases = false;
    config.implicit = true;
    config.alpha = 2.5;
    config.confidence = confidence;
    config.epsilon = 0.5;
    config.block_size = block_size;
    mf::MatrixFactorization::Worker worker(config, WorkerContext{0, 1, 1, 4});
    worker.start(worker.setup());
    mf::MatrixFactorization::Block home = worker.make_block();
    mf::MatrixFactorization::Step gram_step;
    gram_step.gram = true;
    worker.update(gram_step, 0, home);
    const std::vector<double> sums = worker.end_update(gram_step, home).gram;
    mf::MatrixFactorization::Part part = worker.part(home);
    std::vector<double> users_gram = gram(part.user_factors, 3), items_gram = gram(part.item_factors, 3);
    ASSERT_EQ(sums.size(), 18u);
    for (std::size_t e = 0; e < 9; ++e) {
      EXPECT_NEAR(sums[e], users_gram[e], 1e-12);
      EXPECT_NEAR(sums[9 + e], items_gram[e], 1e-12);
    }
    const std::uint32_t last = mf::component_count(config) - 1;
    const std::vector<std::pair<std::uint32_t, bool>> steps{{0, false},    {0, true},   {last, false},
                                                            {last, true},  {0, false},  {0, true},
                                                            {last, false}, {last, true}};
    for (const auto& [component, users] : steps) {
      const double before = one_class_objective(counts, worker.part(home), 3, config);
      mf::MatrixFactorization::Step step;
      step.component = component;
      step.users = users;
      const mf::ColumnBlock columns = mf::columns_of(config, component);
      const std::vector<double>& other = users ? items_gram : users_gram;
      step.gram_row.assign(other.begin() + columns.first * 3,
                           other.begin() + (columns.first + columns.span) * 3);
      worker.update(step, 0, home);
      const mf::MatrixFactorization::Partial partial = worker.end_update(step, home);
      mf::MatrixFactorization::Part after = worker.part(home);
      const double objective = one_class_objective(counts, after, 3, config);
      EXPECT_GE(partial.decrease, 0);
      EXPECT_NEAR(before - objective, partial.decrease, 1e-9 * before)
          << component << (users ? " users" : " items");
      std::vector<double>& rows = users ? after.user_factors : after.item_factors;
      std::vector<double>& updated = users ? users_gram : items_gram;
      updated = gram(rows, 3);
      ASSERT_EQ(partial.gram.size(), static_cast<std::size_t>(columns.span) * 3);
      for (std::size_t e = 0; e < partial.gram.size(); ++e)
        EXPECT_NEAR(partial.gram[e], updated[columns.first * 3 + e], 1e-12);
      for (std::size_t row = 0; row * 3 < rows.size(); ++row) {
        for (int c = columns.first; c < columns.first + columns.span; ++c) {
          for (const double nudge : {-1e-4, 1e-4}) {
            rows[row * 3 + c] += nudge;
            EXPECT_GT(one_class_objective(counts, after, 3, config), objective);
            rows[row * 3 + c] -= nudge;
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(BlockSizes, ImplicitCcdRounds, ::testing::Values(1, 2, 3));

INSTANTIATE_TEST_SUITE_P(WithAndWithoutBiases, CcdRounds, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? std::string("biases") : std::string("plain");
                         });

TEST(FactorKernels, SgdMovesBiasesAndKeepsTheFixedOnes) {
  // rank 1 with biases: user row (w, b, 1), item row (h, 1, c).
  std::vector<double> user{0.5, 0.25, 1.0}, item{2.0, 1.0, -0.5};
  std::vector<double> user_sums{1.0}, item_sums{1.0};
  const std::vector<CellRating> cell{{0, 0, 1.5}};
  kernels::sgd_pass(cell, {user.data(), user_sums.data()}, {item.data(), item_sums.data()},
                    kernels::RowLayout{1, true}, 0.1, 0.5);
  const double error = 1.5 - (0.5 * 2.0 + 0.25 + -0.5);
  EXPECT_DOUBLE_EQ(user[0], 0.5 - 0.5 * (0.1 * 0.5 - error * 2.0));
  EXPECT_DOUBLE_EQ(item[0], 2.0 - 0.5 * (0.1 * 2.0 - error * 0.5));
  EXPECT_DOUBLE_EQ(user[1], 0.25 - 0.5 * (0.1 * 0.25 - error));
  EXPECT_DOUBLE_EQ(item[2], -0.5 - 0.5 * (0.1 * -0.5 - error));
  EXPECT_EQ(user[2], 1.0);
  EXPECT_EQ(item[1], 1.0);
  // The AdaGrad sums add the mean over the two moving entries of each row.
  const double gw[2] = {0.1 * 0.5 - error * 2.0, 0.1 * 0.25 - error};
  EXPECT_DOUBLE_EQ(user_sums[0], 1.0 + (gw[0] * gw[0] + gw[1] * gw[1]) / 2);
}

// The best K of the offers, best first, ties to the lower item; fewer offers than K give them all.
TEST(Ranking, TopItemsKeepsTheBestWithTiesToTheLowerItem) {
  mf::TopItems top(3);
  for (const auto& [score, item] : std::vector<std::pair<double, std::uint32_t>>{
           {0.5, 7}, {0.9, 4}, {0.5, 2}, {0.1, 1}, {0.9, 8}, {0.5, 3}})
    top.offer(score, item);
  EXPECT_EQ(top.take(), (std::vector<std::uint32_t>{4, 8, 2}));
  mf::TopItems few(5);
  few.offer(0.2, 3);
  few.offer(0.7, 9);
  EXPECT_EQ(few.take(), (std::vector<std::uint32_t>{9, 3}));
  EXPECT_TRUE(few.take().empty());
}

// One user's metrics by hand: list (5, 1, 7), held out {1, 2, 7, 9}, K = 3.
TEST(Ranking, MetricsOfOneUserByHand) {
  mf::RankingSums sums;
  const std::vector<std::uint32_t> ranked{5, 1, 7}, held_out{1, 2, 7, 9};
  mf::add_ranking(ranked, held_out, 3, sums);
  EXPECT_EQ(sums.users, 1);
  EXPECT_DOUBLE_EQ(sums.precision, 2.0 / 3);
  EXPECT_DOUBLE_EQ(sums.recall, 2.0 / 4);
  const double dcg = 1 / std::log2(3.0) + 1 / std::log2(4.0);
  const double ideal = 1 + 1 / std::log2(3.0) + 1 / std::log2(4.0);
  EXPECT_DOUBLE_EQ(sums.ndcg, dcg / ideal);
  EXPECT_DOUBLE_EQ(sums.average_precision, (1.0 / 2 + 2.0 / 3) / 3);
}

TEST(MfModel, WritesAndReadsLibmfText) {
  testing::ScratchDir dir;
  mf::Model model;
  model.users = 3;
  model.items = 2;
  model.rank = 2;
  model.mean = 3.25;
  model.user_factors = {1, 2, 0, 0, -1.5, 0.125};
  model.user_known = {1, 0, 1};
  model.item_factors = {0.5, 1, 2, -2};
  model.item_known = {1, 1};
  mf::write_model(dir.file("m"), model);
  const mf::Model read = mf::read_model(dir.file("m"));
  EXPECT_EQ(read.users, 3u);
  EXPECT_EQ(read.items, 2u);
  EXPECT_EQ(read.user_factors, model.user_factors);
  EXPECT_EQ(read.item_factors, model.item_factors);
  EXPECT_EQ(read.user_known, model.user_known);
  EXPECT_DOUBLE_EQ(read.predict(0, 1), 1 * 2 + 2 * -2);
  EXPECT_DOUBLE_EQ(read.predict(1, 0), 3.25);  // no factors: the mean
  EXPECT_DOUBLE_EQ(read.predict(7, 0), 3.25);  // beyond the model
  EXPECT_DOUBLE_EQ(read.predict(0, 9), 3.25);
}

TEST(MfModel, RefusesWhatIsNotAModel) {
  testing::ScratchDir dir;
  const std::string header = "f 0\nm 1\nn 1\nk 2\nb 3\n";
  const std::vector<std::pair<std::string, std::string>> cases{
      {"m 1\nn 1\n", ":1: expected 'f <value>'"},
      {"f 1\nm 1\nn 1\nk 2\nb 3\n",
       ":1: loss 1 is neither squared error (f 0) nor one-class squared error (f 12)"},
      {header + "p0 T 1\n", ":6: expected 2 values"},
      {header + "p0 T 1 2 3\n", ":6: more than 2 values"},
      {header + "p1 T 1 2\n", ":6: expected 'p0 T|F values'"},
      {header + "p0 T 1 2\n", ":7: missing the line of q0"},
      {header + "p0 T 1 nan\nq0 T 1 1\n", ":6: expected 2 values"},
      {"f 0\nm -1\nn 1\nk 2\nb 3\n", ":2: m must be between 0 and 4294967295"},
      {"f 0\nm 1\nn 1\nk 0\nb 3\n", ":4: k must be between 1 and 10000"},
      // Sizes the file cannot hold are refused before their memory is asked for.
      {"f 0\nm 60000000\nn 1\nk 2\nb 3\n", ":5: the header's m, n and k ask for more rows than the file's"},
      // A header that counts too few items would leave the rest of the model unread.
      {header + "p0 T 1 2\nq0 T 1 1\nq1 T 1 1\n", ":8: text after the last item's row"},
      // A copy stopped mid-number would read the last factor wrong; the header's last line too.
      {header + "p0 T 1 2\nq0 T 1 1.2", ":7: the file ends mid-line: it was cut short"},
      {"f 0\nm 1\nn 1\nk 2\nb 3", ":5: the file ends mid-line"},
  };
  for (const auto& [content, message] : cases) {
    const std::string path = dir.write("bad", content);
    try {
      mf::read_model(path);
      ADD_FAILURE() << "accepted:\n" << content;
    } catch (const io::InputError& e) {
      EXPECT_NE(std::string(e.what()).find(path + message), std::string::npos) << e.what();
    }
  }
}

TEST(RatingsReader, ReadsTextWithEitherBaseAndMatrixMarket) {
  testing::ScratchDir dir;
  auto read = [](const std::string& path, int base, io::IdBounds bounds = {}) {
    std::vector<io::Rating> ratings;
    io::read_ratings(path, base, bounds, [&](const io::Rating& r) { ratings.push_back(r); });
    return ratings;
  };
  const auto zero = read(dir.write("a", "# header\n0 3 4.5\r\n\n  2 0 -1 # comment\n"), 0);
  ASSERT_EQ(zero.size(), 2u);
  EXPECT_EQ(zero[0].user, 0u);
  EXPECT_EQ(zero[0].item, 3u);
  EXPECT_EQ(zero[0].value, 4.5);
  EXPECT_EQ(io::InputError::at(dir.file("a"), zero[1].source, "").line(), 4u);
  const auto one = read(dir.write("b", "1 4 4.5\n3 1 -1\n"), 1);
  ASSERT_EQ(one.size(), 2u);
  EXPECT_EQ(one[0].item, 3u);
  EXPECT_EQ(one[1].user, 2u);
  const auto market =
      read(dir.write("c", "%%MatrixMarket matrix coordinate real general\n% c\n3 4 2\n1 4 4.5\n3 1 -1\n"), 0);
  ASSERT_EQ(market.size(), 2u);
  EXPECT_EQ(market[0].item, 3u);
  EXPECT_EQ(market[1].user, 2u);
  EXPECT_EQ(io::InputError::at(dir.file("c"), market[1].source, "").line(), 5u);
  EXPECT_THROW(read(dir.file("c"), 0, io::IdBounds{2, 100}), io::InputError);  // declared 3 users
  EXPECT_THROW(read(dir.write("d", "0 3 4\n"), 0, io::IdBounds{10, 3}), io::InputError);
  EXPECT_NO_THROW(read(dir.file("d"), 0, io::IdBounds{1, 4}));
}

}  // namespace
}  // namespace schmp
