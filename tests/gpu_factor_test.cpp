// The matrix-factorization CUDA kernels (kernels::FactorDevice) against the CPU functions on random
// cells drawn afresh each run, and schmp-mf --device gpu against --device cpu under mpirun. Every test
// needs a GPU and skips, saying why, without one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <ostream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "e2e.hpp"
#include "gpu.hpp"
#include "schmp/kernels/factor_kernels.hpp"
#include "test_files.hpp"

namespace schmp::testing {
namespace {

using kernels::CellRating;
using kernels::RowLayout;

// |got - want| within `tolerance` relative to |want|, or absolute below 1 (sums that nearly cancel).
void expect_close(double got, double want, double tolerance, const std::string& what) {
  EXPECT_LE(std::abs(got - want), tolerance * std::max(1.0, std::abs(want)))
      << what << ": " << got << " vs " << want;
}

void expect_all_close(const std::vector<double>& got, const std::vector<double>& want, double tolerance,
                      const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i)
    expect_close(got[i], want[i], tolerance, what + "[" + std::to_string(i) + "]");
}

// Factor rows of a layout: random entries, the fixed 1s of a biased layout in place.
std::vector<double> random_rows(std::mt19937_64& random, std::uint32_t rows, RowLayout layout, bool user) {
  std::uniform_real_distribution<double> entry(-1.0, 1.0);
  const auto width = static_cast<std::size_t>(layout.width());
  std::vector<double> factors(rows * width);
  for (double& value : factors) value = entry(random);
  if (layout.biases) {
    for (std::size_t row = 0; row < rows; ++row)
      factors[row * width + static_cast<std::size_t>(user ? layout.item_bias() : layout.user_bias())] = 1.0;
  }
  return factors;
}

RowLayout random_layout(std::mt19937_64& random) {
  // Ranks past a warp's 32 lanes too: the kernels stride over row entries.
  return RowLayout{std::uniform_int_distribution<int>(1, 70)(random), random() % 2 == 0};
}

// `count` distinct (user, item) ratings sorted by user then item, as a worker's cells hold them.
std::vector<CellRating> random_cell(std::mt19937_64& random, std::uint32_t users, std::uint32_t items,
                                    std::size_t count) {
  std::uniform_int_distribution<std::uint32_t> user(0, users - 1);
  std::uniform_int_distribution<std::uint32_t> item(0, items - 1);
  std::normal_distribution<double> value(0.0, 1.0);
  std::set<std::pair<std::uint32_t, std::uint32_t>> pairs;
  while (pairs.size() < count) pairs.emplace(user(random), item(random));
  std::vector<CellRating> cell;
  for (const auto& [u, j] : pairs) cell.push_back(CellRating{u, j, value(random)});
  return cell;
}

std::vector<double> counts_of(const std::vector<CellRating>& cell, std::uint32_t users) {
  std::vector<double> counts(users, 0.0);
  for (const CellRating& rating : cell) counts[rating.user] += 1;
  return counts;
}

TEST(GpuFactorKernels, ErrorSumsMatchTheCpu) {
  SCHMP_REQUIRE_GPU();
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_note(seed));
  std::mt19937_64 random(seed);
  for (int trial = 0; trial < 4; ++trial) {
    const RowLayout layout = random_layout(random);
    SCOPED_TRACE("rank " + std::to_string(layout.rank) + (layout.biases ? " with biases" : ""));
    const std::uint32_t users = 300;
    const std::uint32_t items = 200;
    const std::vector<std::vector<CellRating>> train{random_cell(random, users, items, 5000)};
    const std::vector<std::vector<CellRating>> test{random_cell(random, users, items, 700)};
    const std::vector<double> user_factors = random_rows(random, users, layout, true);
    const std::vector<double> item_factors = random_rows(random, items, layout, false);
    const auto device =
        kernels::make_factor_device(test_gpu(), layout, train, test, counts_of(train[0], users));
    device->set_users(user_factors, {});
    const auto [train_sums, test_sums] = device->error_sums(0, item_factors);
    const kernels::ErrorSums cpu_train =
        kernels::error_sums(train[0], user_factors.data(), item_factors.data(), layout.width());
    const kernels::ErrorSums cpu_test =
        kernels::error_sums(test[0], user_factors.data(), item_factors.data(), layout.width());
    expect_close(train_sums.squared, cpu_train.squared, 1e-9, "train squared");
    expect_close(train_sums.absolute, cpu_train.absolute, 1e-9, "train absolute");
    expect_close(test_sums.squared, cpu_test.squared, 1e-9, "test squared");
    expect_close(test_sums.absolute, cpu_test.absolute, 1e-9, "test absolute");
  }
}

// A CCD++ component update as the worker runs it, on the CPU and on the GPU side by side: a gather on
// one side (relifting the residuals or not), then, for the users, the solve; the other side follows
// without relift, so that it reads the residuals the first gather left behind.
TEST(GpuFactorKernels, CcdGatherMatchesTheCpu) {
  SCHMP_REQUIRE_GPU();
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_note(seed));
  std::mt19937_64 random(seed);
  const double lambda = 0.05;
  for (const bool users_first : {true, false}) {
    for (const bool narrow : {false, true}) {
      for (const bool relift : {false, true}) {
        for (const bool with_lifted : {false, true}) {
          const RowLayout layout = random_layout(random);
          const int width = layout.width();
          const int component = std::uniform_int_distribution<int>(0, width - 1)(random);
          const int lifted = with_lifted && width > 1 ? (component + 1) % width : -1;
          SCOPED_TRACE("rank " + std::to_string(layout.rank) + (layout.biases ? " with biases" : "") +
                       (users_first ? ", users first" : ", items first") + (narrow ? ", narrow items" : "") +
                       (relift ? ", relift" : "") + ", lifted " + std::to_string(lifted));
          const std::uint32_t users = 400;
          const std::uint32_t items = 150;
          const std::vector<std::vector<CellRating>> train{random_cell(random, users, items, 6000)};
          const std::vector<std::vector<CellRating>> test{{}};
          const std::vector<double> counts = counts_of(train[0], users);
          std::vector<double> cpu_users = random_rows(random, users, layout, true);
          const std::vector<double> full_items = random_rows(random, items, layout, false);
          // The home block's narrow copy: the component's column, then the lifted one.
          std::vector<double> item_rows = full_items;
          kernels::FactorColumns item_columns{nullptr, width, component, lifted};
          if (narrow) {
            const int columns = lifted >= 0 ? 2 : 1;
            item_rows.clear();
            for (std::uint32_t row = 0; row < items; ++row) {
              item_rows.push_back(full_items[row * static_cast<std::size_t>(width) + component]);
              if (lifted >= 0)
                item_rows.push_back(full_items[row * static_cast<std::size_t>(width) + lifted]);
            }
            item_columns = kernels::FactorColumns{nullptr, columns, 0, lifted >= 0 ? 1 : -1};
          }
          item_columns.rows = item_rows.data();
          std::vector<double> cpu_residuals(train[0].size());
          std::normal_distribution<double> normal(0.0, 1.0);
          for (double& residual : cpu_residuals) residual = normal(random);

          const auto device = kernels::make_factor_device(test_gpu(), layout, train, test, counts);
          device->set_users(cpu_users, {});
          device->set_residuals(std::vector<std::vector<double>>{cpu_residuals});

          auto gather_items = [&](bool relift_now) {
            // The travelling sums already hold other workers' parts: the gather adds to them.
            std::vector<double> cpu_numerator(items);
            std::vector<double> cpu_denominator(items);
            for (double& value : cpu_numerator) value = normal(random);
            for (double& value : cpu_denominator) value = std::abs(normal(random));
            std::vector<double> gpu_numerator = cpu_numerator;
            std::vector<double> gpu_denominator = cpu_denominator;
            kernels::ccd_gather(train[0], cpu_residuals, {cpu_users.data(), width, component, lifted},
                                item_columns, relift_now, false, cpu_numerator.data(),
                                cpu_denominator.data());
            device->ccd_gather(0, component, lifted, item_columns, items, relift_now, false, gpu_numerator,
                               gpu_denominator);
            expect_all_close(gpu_numerator, cpu_numerator, 1e-9, "item numerator");
            expect_all_close(gpu_denominator, cpu_denominator, 1e-9, "item denominator");
          };
          auto gather_and_solve_users = [&](bool relift_now) {
            std::vector<double> numerator(users, 0.0);
            std::vector<double> denominator(users, 0.0);
            kernels::ccd_gather(train[0], cpu_residuals, {cpu_users.data(), width, component, lifted},
                                item_columns, relift_now, true, numerator.data(), denominator.data());
            device->ccd_gather(0, component, lifted, item_columns, items, relift_now, true, {}, {});
            double cpu_decrease = 0;
            for (std::size_t row = 0; row < users; ++row) {
              if (counts[row] == 0) continue;
              const double curvature = lambda * counts[row] + denominator[row];
              double& factor = cpu_users[row * static_cast<std::size_t>(width) + component];
              const double solved = numerator[row] / curvature;
              cpu_decrease += curvature * (factor - solved) * (factor - solved);
              factor = solved;
            }
            expect_close(device->ccd_solve_users(component, lambda), cpu_decrease, 1e-9, "decrease");
            expect_all_close(device->user_factors(), cpu_users, 1e-9, "user factors");
          };
          if (users_first) {
            gather_and_solve_users(relift);
            gather_items(false);
          } else {
            gather_items(relift);
            gather_and_solve_users(false);
          }
        }
      }
    }
  }
}

// One SGD pass over a cell whose ratings each have a user and an item of their own: no two steps share
// a row, so the GPU's parallel order gives the CPU's serial result.
TEST(GpuFactorKernels, SgdPassMatchesTheCpuWhereNoTwoRatingsShareARow) {
  SCHMP_REQUIRE_GPU();
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_note(seed));
  std::mt19937_64 random(seed);
  for (int trial = 0; trial < 6; ++trial) {
    const RowLayout layout = random_layout(random);
    SCOPED_TRACE("rank " + std::to_string(layout.rank) + (layout.biases ? " with biases" : ""));
    const std::uint32_t users = 3000;
    const std::uint32_t items = 2500;
    std::vector<std::uint32_t> item_order(items);
    std::iota(item_order.begin(), item_order.end(), 0u);
    std::shuffle(item_order.begin(), item_order.end(), random);
    std::normal_distribution<double> value(0.0, 1.0);
    std::vector<CellRating> cell;
    for (std::uint32_t user = 0; user < users && cell.size() < items; user += 1 + random() % 2)
      cell.push_back(CellRating{user, item_order[cell.size()], value(random)});
    const std::vector<std::vector<CellRating>> train{cell};
    const std::vector<std::vector<CellRating>> test{{}};

    // Small factors and a small rate keep the steps in a sensible range; sums from 1 up, as AdaGrad's.
    std::vector<double> cpu_users = random_rows(random, users, layout, true);
    std::vector<double> cpu_items = random_rows(random, items, layout, false);
    std::uniform_real_distribution<double> sum(1.0, 3.0);
    std::vector<double> cpu_user_sums(users);
    std::vector<double> cpu_item_sums(items);
    for (double& s : cpu_user_sums) s = sum(random);
    for (double& s : cpu_item_sums) s = sum(random);
    const double lambda = 0.05;
    const double learning_rate = 0.1;

    const auto device = kernels::make_factor_device(test_gpu(), layout, train, test, counts_of(cell, users));
    device->set_users(cpu_users, cpu_user_sums);
    std::vector<double> gpu_items = cpu_items;
    std::vector<double> gpu_item_sums = cpu_item_sums;
    const double gpu_error = device->sgd_pass(0, gpu_items, gpu_item_sums, lambda, learning_rate);
    const double cpu_error =
        kernels::sgd_pass(cell, {cpu_users.data(), cpu_user_sums.data()},
                          {cpu_items.data(), cpu_item_sums.data()}, layout, lambda, learning_rate);
    expect_close(gpu_error, cpu_error, 1e-12, "squared error");
    expect_all_close(device->user_factors(), cpu_users, 1e-12, "user factors");
    expect_all_close(device->user_gradient_sums(), cpu_user_sums, 1e-12, "user sums");
    expect_all_close(gpu_items, cpu_items, 1e-12, "item factors");
    expect_all_close(gpu_item_sums, cpu_item_sums, 1e-12, "item sums");
  }
}

// End to end: schmp-mf --device gpu against --device cpu on generated data.
struct MfRun {
  std::string algorithm;
  int ranks;
  bool biases = false;
};
void PrintTo(const MfRun& r, std::ostream* os) {
  *os << r.algorithm << " np " << r.ranks << (r.biases ? " with biases" : "");
}

class GpuMfEndToEnd : public ::testing::TestWithParam<MfRun> {};

// The last row's value of a trace column.
double last_of(const Trace& trace, const std::string& column) {
  std::vector<std::string> names;
  std::istringstream header(trace.header);
  for (std::string name; std::getline(header, name, ',');) names.push_back(name);
  const auto at = std::find(names.begin(), names.end(), column);
  if (at == names.end() || trace.rows.empty()) return NAN;
  return trace.rows.back().at(static_cast<std::size_t>(at - names.begin()));
}

TEST_P(GpuMfEndToEnd, GpuAgreesWithTheCpu) {
  SCHMP_REQUIRE_GPU();
  const MfRun& r = GetParam();
  const ScratchDir dir;
  const Output made =
      run(std::string(SCHMP_GENERATE_BIN) + " mf --users 600 --items 300 --rank 3 --ratings 40000" +
          " --test_ratings 4000 --noise 0.3 --seed 5 --out " + dir.file("ratings.txt"));
  ASSERT_EQ(made.status, 0) << made.text;
  auto train = [&](const std::string& device) {
    const std::string trace = dir.file(device + ".csv");
    const Output out = run(
        mpirun(r.ranks) + SCHMP_MF_BIN + " --data " + dir.file("ratings.txt") + " --test " +
        dir.file("ratings.txt.test") + " --rank 3 --lambda 0.02 --iterations 20 --algorithm " + r.algorithm +
        (r.biases ? " --biases" : "") + " --progress_seconds 0 --device " + device + " --trace " + trace +
        // Components in a fixed order: with priorities, two nearly equal decreases could swap places
        // between the devices by a rounding and send the runs down different paths.
        " --priority=false");
    EXPECT_EQ(out.status, 0) << out.text;
    return read_trace(trace);
  };
  const Trace cpu = train("cpu");
  const Trace gpu = train("gpu");
  if (r.algorithm == "ccd") {
    // Exact coordinate steps: the GPU's sums differ from the CPU's by rounding only.
    expect_close(last_of(gpu, "train_rmse"), last_of(cpu, "train_rmse"), 1e-6, "train RMSE");
  } else {
    // Hogwild within a cell takes another path: the model must be as good, not the same.
    EXPECT_NEAR(last_of(gpu, "test_rmse"), last_of(cpu, "test_rmse"), 0.01 * last_of(cpu, "test_rmse"));
  }
}

INSTANTIATE_TEST_SUITE_P(AlgorithmsAndRanks, GpuMfEndToEnd,
                         ::testing::Values(MfRun{"ccd", 1}, MfRun{"ccd", 3}, MfRun{"ccd", 3, true},
                                           MfRun{"sgd", 1}, MfRun{"sgd", 3}, MfRun{"sgd", 3, true}));

}  // namespace
}  // namespace schmp::testing
