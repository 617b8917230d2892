// The CUDA ColumnKernel against the CPU one: every operation on random sparse shards (empty rows, empty
// columns, columns beyond the data, one column in every row), alone and in the sequences the apps
// run; and schmp-lasso and schmp-logreg with --device gpu reaching --device cpu's objective. Every
// test needs a GPU and skips without one.
//
// The shards are drawn fresh each run: the seed is printed with every failure, and SCHMP_TEST_SEED
// replays it. Tolerance: the kernels sum in different orders (and the GPU fuses multiply-adds, and its
// exp, log1p and expm1 may differ in the last bit), so each result may differ by a few rounding errors
// per term summed: |gpu - cpu| <= 1e-12 times the result's magnitude, a bound on the sum of the absolute
// values of its terms, which also carries the rounding of the state (v, u, s) the terms were built from.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "e2e.hpp"
#include "gpu.hpp"
#include "schmp/kernels/column_kernel.hpp"
#include "schmp/kernels/device.hpp"
#include "test_files.hpp"

namespace schmp {
namespace {

constexpr double kTolerance = 1e-12;

// Rows of which about a tenth are empty; column 0 is in every other row, every fifth column is empty,
// the rest hold entries with probability `density`; values and labels standard normal.
io::SparseRows random_shard(std::mt19937_64& random, std::size_t rows, std::size_t columns, double density) {
  std::uniform_real_distribution<double> uniform(0, 1);
  std::normal_distribution<double> normal(0, 1);
  io::SparseRows shard;
  for (std::size_t i = 0; i < rows; ++i) {
    if (uniform(random) >= 0.1) {
      for (std::size_t j = 0; j < columns; ++j) {
        if (j % 5 == 2 || (j > 0 && uniform(random) >= density)) continue;
        shard.index.push_back(static_cast<std::uint32_t>(j));
        shard.value.push_back(normal(random));
      }
    }
    shard.row_start.push_back(shard.index.size());
    shard.labels.push_back(normal(random));
    shard.source.push_back(i + 1);
  }
  return shard;
}

// The state both kernels should hold, followed on the host, and how large each row's values can be
// after the rounding of every update so far: the yardstick of the tolerances.
class Magnitudes {
 public:
  Magnitudes(const io::SparseRows& rows, std::size_t columns) : by_column_(columns), rows_(rows.rows()) {
    for (std::size_t i = 0; i < rows.rows(); ++i) {
      for (std::size_t e = rows.row_start[i]; e < rows.row_start[i + 1]; ++e)
        by_column_[rows.index[e]].push_back({i, rows.value[e]});
    }
    for (std::vector<double>* row_values : {&v_, &u_, &s_, &q_, &values_, &direction_})
      row_values->assign(rows_, 0);
  }

  void set_vector(std::span<const double> v) {
    for (std::size_t i = 0; i < rows_; ++i) v_[i] = std::abs(v[i]);
    values_ = std::vector<double>(v.begin(), v.end());
    refresh_q();
  }
  void set_labels(std::span<const double> y) {
    y_ = std::vector<double>(y.begin(), y.end());
    clear_direction();
    refresh_q();
  }
  void add_columns(std::span<const ParamIndex> cols, std::span<const double> scale) {
    for_entries(cols, scale, [&](std::size_t i, double change) {
      v_[i] += std::abs(change);
      values_[i] += change;
    });
  }
  void add_to_direction(std::span<const ParamIndex> cols, std::span<const double> scale) {
    for_entries(cols, scale, [&](std::size_t i, double change) {
      u_[i] += std::abs(change);
      s_[i] += weight(i) * std::abs(change);
      direction_[i] += change;
    });
  }
  void step(double t) {
    for (std::size_t i = 0; i < rows_; ++i) {
      v_[i] += std::abs(t) * u_[i];
      values_[i] += t * direction_[i];
    }
    s_.assign(rows_, 0);
    refresh_q();
  }
  void clear_direction() {
    u_.assign(rows_, 0);
    s_.assign(rows_, 0);
    direction_.assign(rows_, 0);
  }

  // Bounds on the sums of absolute terms of each operation's result for column j.
  double dot(ParamIndex j) const {
    return column_sum(j, [&](std::size_t i, double x) { return std::abs(x) * v_[i]; });
  }
  double norm(ParamIndex j) const {
    return column_sum(j, [&](std::size_t, double x) { return x * x; });
  }
  double gradient(ParamIndex j) const {
    return column_sum(j, [&](std::size_t i, double x) { return std::abs(x) * (q_[i] + v_[i]); });
  }
  double curvature(ParamIndex j) const {
    return column_sum(j, [&](std::size_t i, double x) { return x * x * (weight(i) + v_[i]); });
  }
  double direction_dot(ParamIndex j) const {
    return column_sum(j,
                      [&](std::size_t i, double x) { return std::abs(x) * (s_[i] + u_[i] * (1 + v_[i])); });
  }
  double vector(std::size_t i) const { return v_[i]; }
  // Each row's loss change moves with its margin and its step (l' is at most 1 in size).
  double loss_change(double t) const {
    double sum = 0;
    for (std::size_t i = 0; i < rows_; ++i) {
      const double z = y_[i] * values_[i], dz = y_[i] * t * direction_[i];
      sum +=
          std::abs(std::log1p(std::exp(-(z - dz))) - std::log1p(std::exp(-z))) + v_[i] + std::abs(t) * u_[i];
    }
    return sum;
  }

 private:
  struct Entry {
    std::size_t row;
    double value;
  };

  template <class Update>
  void for_entries(std::span<const ParamIndex> cols, std::span<const double> scale, const Update& update) {
    for (std::size_t k = 0; k < cols.size(); ++k) {
      for (const Entry& entry : by_column_[cols[k]]) update(entry.row, scale[k] * entry.value);
    }
  }
  template <class Term>
  double column_sum(ParamIndex j, const Term& term) const {
    double sum = 0;
    for (const Entry& entry : by_column_[j]) sum += term(entry.row, entry.value);
    return sum;
  }
  void refresh_q() {
    if (y_.empty()) return;
    for (std::size_t i = 0; i < rows_; ++i) q_[i] = 1 / (1 + std::exp(y_[i] * values_[i]));
  }
  double weight(std::size_t i) const { return q_[i] * (1 - q_[i]); }

  std::vector<std::vector<Entry>> by_column_;
  std::size_t rows_;
  std::vector<double> v_, u_, s_;  // magnitudes
  std::vector<double> q_;
  std::vector<double> values_, direction_, y_;  // v and u themselves, and the labels
};

// A CPU and a GPU kernel over the same shard, driven alike and compared after each operation.
class KernelPair {
 public:
  KernelPair(const io::SparseRows& rows, std::size_t columns)
      : cpu_(kernels::make_cpu_column_kernel(rows, columns)),
        gpu_(kernels::make_column_kernel(testing::test_gpu(), rows, columns)),
        magnitudes_(rows, columns) {}

  std::size_t rows() const { return cpu_->rows(); }
  std::size_t columns() const { return cpu_->columns(); }

  void set_vector(std::span<const double> v) {
    cpu_->set_vector(v);
    gpu_->set_vector(v);
    magnitudes_.set_vector(v);
  }
  void set_labels(std::span<const double> y) {
    cpu_->set_labels(y);
    gpu_->set_labels(y);
    magnitudes_.set_labels(y);
  }
  void add_columns(std::span<const ParamIndex> cols, std::span<const double> scale) {
    cpu_->add_columns(cols, scale);
    gpu_->add_columns(cols, scale);
    magnitudes_.add_columns(cols, scale);
  }
  void add_to_direction(std::span<const ParamIndex> cols, std::span<const double> scale) {
    cpu_->add_to_direction(cols, scale);
    gpu_->add_to_direction(cols, scale);
    magnitudes_.add_to_direction(cols, scale);
  }
  void step_along_direction(double t) {
    cpu_->step_along_direction(t);
    gpu_->step_along_direction(t);
    magnitudes_.step(t);
  }
  void clear_direction() {
    cpu_->clear_direction();
    gpu_->clear_direction();
    magnitudes_.clear_direction();
  }

  void expect_vectors_match() const {
    std::vector<double> cpu(rows()), gpu(rows());
    cpu_->copy_vector(cpu);
    gpu_->copy_vector(gpu);
    for (std::size_t i = 0; i < rows(); ++i)
      EXPECT_NEAR(gpu[i], cpu[i], kTolerance * magnitudes_.vector(i)) << "row " << i;
  }
  void expect_column_dots_match(std::span<const ParamIndex> cols) const {
    std::vector<double> cpu(cols.size()), gpu(cols.size());
    cpu_->column_dots(cols, cpu);
    gpu_->column_dots(cols, gpu);
    expect_match("column_dots", cols, cpu, gpu, [&](ParamIndex j) { return magnitudes_.dot(j); });
  }
  void expect_all_column_dots_match() const {
    std::vector<double> cpu(columns()), gpu(columns());
    cpu_->all_column_dots(cpu);
    gpu_->all_column_dots(gpu);
    expect_match("all_column_dots", all(), cpu, gpu, [&](ParamIndex j) { return magnitudes_.dot(j); });
  }
  void expect_norms_match() const {
    std::vector<double> cpu(columns()), gpu(columns());
    cpu_->column_norms_squared(cpu);
    gpu_->column_norms_squared(gpu);
    expect_match("column_norms_squared", all(), cpu, gpu, [&](ParamIndex j) { return magnitudes_.norm(j); });
  }
  void expect_derivatives_match(std::span<const ParamIndex> cols) const {
    std::vector<double> cpu_gradient(cols.size()), cpu_curvature(cols.size());
    std::vector<double> gpu_gradient(cols.size()), gpu_curvature(cols.size());
    cpu_->logistic_derivatives(cols, cpu_gradient, cpu_curvature);
    gpu_->logistic_derivatives(cols, gpu_gradient, gpu_curvature);
    expect_match("gradient", cols, cpu_gradient, gpu_gradient,
                 [&](ParamIndex j) { return magnitudes_.gradient(j); });
    expect_match("curvature", cols, cpu_curvature, gpu_curvature,
                 [&](ParamIndex j) { return magnitudes_.curvature(j); });
  }
  void expect_direction_dots_match(std::span<const ParamIndex> cols) const {
    std::vector<double> cpu(cols.size()), gpu(cols.size());
    cpu_->direction_dots(cols, cpu);
    gpu_->direction_dots(cols, gpu);
    expect_match("direction_dots", cols, cpu, gpu,
                 [&](ParamIndex j) { return magnitudes_.direction_dot(j); });
  }
  void expect_loss_change_matches(double t) const {
    EXPECT_NEAR(gpu_->loss_change_along_direction(t), cpu_->loss_change_along_direction(t),
                kTolerance * magnitudes_.loss_change(t))
        << "t " << t;
  }

  std::vector<ParamIndex> all() const {
    std::vector<ParamIndex> cols(columns());
    for (std::size_t j = 0; j < cols.size(); ++j) cols[j] = static_cast<ParamIndex>(j);
    return cols;
  }

 private:
  template <class Magnitude>
  static void expect_match(const char* operation, std::span<const ParamIndex> cols,
                           const std::vector<double>& cpu, const std::vector<double>& gpu,
                           const Magnitude& magnitude) {
    for (std::size_t k = 0; k < cols.size(); ++k)
      EXPECT_NEAR(gpu[k], cpu[k], kTolerance * magnitude(cols[k])) << operation << ", column " << cols[k];
  }

  std::unique_ptr<kernels::ColumnKernel> cpu_;
  std::unique_ptr<kernels::ColumnKernel> gpu_;
  Magnitudes magnitudes_;
};

// A block of `size` columns drawn from all of them (repeats allowed), with their scales; about one scale
// in eight is 0, which both kernels skip.
struct Block {
  std::vector<ParamIndex> cols;
  std::vector<double> scale;
};
Block random_block(std::mt19937_64& random, std::size_t columns, std::size_t size) {
  std::uniform_int_distribution<std::size_t> column(0, columns - 1);
  std::uniform_int_distribution<int> eighth(0, 7);
  std::normal_distribution<double> normal(0, 1);
  Block block;
  for (std::size_t k = 0; k < size; ++k) {
    block.cols.push_back(static_cast<ParamIndex>(column(random)));
    block.scale.push_back(eighth(random) == 0 ? 0.0 : normal(random));
  }
  return block;
}

std::vector<double> random_vector(std::mt19937_64& random, std::size_t size, double spread) {
  std::normal_distribution<double> normal(0, spread);
  std::vector<double> v(size);
  for (double& x : v) x = normal(random);
  return v;
}

std::vector<double> random_labels(std::mt19937_64& random, std::size_t size) {
  std::bernoulli_distribution positive(0.5);
  std::vector<double> y(size);
  for (double& label : y) label = positive(random) ? 1.0 : -1.0;
  return y;
}

// Shards of 2,000 rows (column 0 about 1,800 entries long: 2 n eps stays under the tolerance) over 300
// data columns, and 7 more columns the data never reaches.
constexpr std::size_t kRows = 2000, kDataColumns = 300, kColumns = kDataColumns + 7;

TEST(GpuColumnKernel, LeastSquaresOperationsMatchTheCpu) {
  SCHMP_REQUIRE_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(testing::seed_note(seed));
  std::mt19937_64 random(seed);
  const io::SparseRows shard = random_shard(random, kRows, kDataColumns, 0.05);
  KernelPair kernels(shard, kColumns);
  kernels.expect_vectors_match();  // v starts at 0
  kernels.set_vector(shard.labels);
  kernels.expect_norms_match();
  kernels.expect_all_column_dots_match();
  // Empty columns (2, 7), the long column 0 and columns beyond the data.
  const std::vector<ParamIndex> special = {0, 2, 7, kDataColumns, kColumns - 1, 0};
  kernels.expect_column_dots_match(special);
  kernels.expect_column_dots_match({});
  for (int round = 0; round < 20; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const Block block = random_block(random, kColumns, 32);
    kernels.add_columns(block.cols, block.scale);
    kernels.expect_column_dots_match(random_block(random, kColumns, 32).cols);
  }
  // A block holding all of X goes through the sparse product X d.
  const Block everything = random_block(random, kColumns, 4 * kColumns);
  kernels.add_columns(everything.cols, everything.scale);
  kernels.expect_vectors_match();
  kernels.expect_all_column_dots_match();
  kernels.expect_column_dots_match(kernels.all());
}

TEST(GpuColumnKernel, NewtonStepOperationsMatchTheCpu) {
  SCHMP_REQUIRE_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(testing::seed_note(seed));
  std::mt19937_64 random(seed);
  const io::SparseRows shard = random_shard(random, kRows, kDataColumns, 0.05);
  KernelPair kernels(shard, kColumns);
  const std::vector<ParamIndex> all = kernels.all();
  kernels.set_labels(random_labels(random, kRows));
  kernels.expect_derivatives_match(all);  // margins 0
  kernels.set_vector(random_vector(random, kRows, 3));
  kernels.expect_derivatives_match(all);
  for (int iteration = 0; iteration < 4; ++iteration) {
    SCOPED_TRACE("Newton iteration " + std::to_string(iteration));
    kernels.clear_direction();
    for (int round = 0; round < 10; ++round) {
      const Block block = random_block(random, kColumns, 32);
      kernels.expect_direction_dots_match(block.cols);
      kernels.add_to_direction(block.cols, block.scale);
    }
    kernels.expect_direction_dots_match(all);
    // The line search: the full step, then halved, as logistic regression tries them.
    kernels.step_along_direction(1);
    kernels.expect_loss_change_matches(1);
    kernels.step_along_direction(-0.5);
    kernels.expect_loss_change_matches(0.5);
    kernels.expect_loss_change_matches(0);
    kernels.expect_vectors_match();
    kernels.expect_derivatives_match(all);
  }
  // A restart from a whole w: the margins X w through the sparse product.
  kernels.clear_direction();
  const std::vector<double> w = random_vector(random, kColumns, 0.1);
  kernels.add_to_direction(all, w);
  kernels.expect_direction_dots_match(all);
  kernels.set_vector(std::vector<double>(kRows, 0.0));
  kernels.step_along_direction(1);
  kernels.clear_direction();
  kernels.expect_vectors_match();
  kernels.expect_derivatives_match(all);
}

// A worker may get no rows (more workers than rows), or rows without entries.
TEST(GpuColumnKernel, EmptyShardsWork) {
  SCHMP_REQUIRE_GPU();
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(testing::seed_note(seed));
  std::mt19937_64 random(seed);
  {
    SCOPED_TRACE("no rows");
    KernelPair kernels(io::SparseRows{}, 5);
    kernels.set_vector({});
    kernels.expect_all_column_dots_match();
    kernels.expect_norms_match();
    kernels.expect_column_dots_match(kernels.all());
    kernels.add_columns(kernels.all(), std::vector<double>(5, 1.0));
    kernels.expect_vectors_match();
  }
  {
    SCOPED_TRACE("no entries");
    const io::SparseRows shard = random_shard(random, 50, 0, 0.0);
    KernelPair kernels(shard, 5);
    const std::vector<ParamIndex> all = kernels.all();
    kernels.set_vector(shard.labels);
    kernels.expect_all_column_dots_match();
    kernels.expect_norms_match();
    kernels.add_columns(all, std::vector<double>(5, 1.0));
    kernels.expect_column_dots_match(all);
    kernels.set_labels(random_labels(random, 50));
    kernels.expect_derivatives_match(all);
    kernels.add_to_direction(all, std::vector<double>(5, 1.0));
    kernels.expect_direction_dots_match(all);
    kernels.step_along_direction(1);
    kernels.expect_loss_change_matches(1);
    kernels.expect_vectors_match();
  }
}

TEST(GpuColumnKernel, RefusesWhatTheCpuKernelRefuses) {
  SCHMP_REQUIRE_GPU();
  std::mt19937_64 random(testing::fresh_seed());
  const io::SparseRows shard = random_shard(random, 20, 10, 0.3);
  const int gpu = testing::test_gpu();
  EXPECT_THROW(kernels::make_column_kernel(gpu, shard, shard.columns() - 1), std::invalid_argument);
  const auto kernel = kernels::make_column_kernel(gpu, shard, 12);
  std::vector<double> out(1);
  EXPECT_THROW(kernel->column_dots(std::vector<ParamIndex>{12}, out), std::out_of_range);
  EXPECT_THROW(kernel->direction_dots(std::vector<ParamIndex>{0}, out), std::logic_error);
  EXPECT_THROW(kernel->set_vector(std::vector<double>(19)), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------- end to end

class GpuEndToEnd : public ::testing::TestWithParam<int> {
 protected:
  // The objectives printed by the same run on the CPU and on the GPU.
  static void expect_same_objective(const std::string& command) {
    const testing::Output cpu = testing::run(testing::mpirun(GetParam()) + command + " --device cpu");
    const testing::Output gpu = testing::run(testing::mpirun(GetParam()) + command + " --device gpu");
    ASSERT_EQ(cpu.status, 0) << cpu.text;
    ASSERT_EQ(gpu.status, 0) << gpu.text;
    EXPECT_NE(gpu.text.find("converged after"), std::string::npos) << gpu.text;
    const double objective = testing::objective_of(cpu);
    EXPECT_NEAR(testing::objective_of(gpu), objective, 1e-6 * std::abs(objective)) << gpu.text;
  }

  // Sparse data from schmp-generate for `app` (lasso or logreg), in `dir`.
  static std::string generated(const testing::ScratchDir& dir, const std::string& app) {
    const std::string path = dir.file(app + ".svm");
    const testing::Output made =
        testing::run(std::string(SCHMP_GENERATE_BIN) + " " + app +
                     " --rows 600 --cols 1200 --density 0.02 --support 40 --seed 3 --out " + path);
    EXPECT_EQ(made.status, 0) << made.text;
    return path;
  }
};

TEST_P(GpuEndToEnd, LassoReachesTheCpuObjective) {
  SCHMP_REQUIRE_GPU();
  const testing::ScratchDir dir;
  const std::string flags = " --tol 1e-10 --progress_seconds 0";
  expect_same_objective(std::string(SCHMP_LASSO_BIN) +
                        " --layout all --data " SCHMP_SOURCE_DIR "/data/diabetes.svm" +
                        " --lambda_ratio 0.01" + flags);
  expect_same_objective(std::string(SCHMP_LASSO_BIN) + " --layout all --data " + generated(dir, "lasso") +
                        " --lambda_ratio 0.05" + flags);
}

TEST_P(GpuEndToEnd, LogregReachesTheCpuObjective) {
  SCHMP_REQUIRE_GPU();
  const testing::ScratchDir dir;
  const std::string flags = " --tol 1e-10 --progress_seconds 0";
  for (const char* penalty : {"l1", "l2"}) {
    SCOPED_TRACE(penalty);
    expect_same_objective(std::string(SCHMP_LOGREG_BIN) +
                          " --data " SCHMP_SOURCE_DIR "/data/heart_scale.svm" + " --C 1 --penalty " +
                          penalty + flags);
    expect_same_objective(std::string(SCHMP_LOGREG_BIN) + " --layout all --data " + generated(dir, "logreg") +
                          " --C 0.5 --penalty " + penalty + flags);
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, GpuEndToEnd, ::testing::Values(1, 3));

}  // namespace
}  // namespace schmp
