// Lasso's pieces: soft-thresholding, the CPU column kernel against dense arithmetic, and the
// incremental dependency filter against the pairwise definition.
#include "lasso.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sstream>

#include "kernels/column_kernel.hpp"
#include "schmp/io.hpp"
#include "test_files.hpp"

namespace schmp {
namespace {

TEST(SoftThreshold, ShrinksTowardZero) {
  EXPECT_EQ(lasso::soft_threshold(3.0, 1.0), 2.0);
  EXPECT_EQ(lasso::soft_threshold(-3.0, 1.0), -2.0);
  EXPECT_EQ(lasso::soft_threshold(0.5, 1.0), 0.0);
  EXPECT_EQ(lasso::soft_threshold(-1.0, 1.0), 0.0);
  EXPECT_EQ(lasso::soft_threshold(2.0, 0.0), 2.0);
}

// A random sparse matrix as rows, and the same as a dense row-major array.
struct RandomMatrix {
  io::SparseRows rows;
  std::vector<double> dense;
  std::size_t columns;
};

RandomMatrix random_matrix(std::size_t rows, std::size_t columns, double density, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> uniform(0, 1);
  std::normal_distribution<double> normal(0, 1);
  RandomMatrix m{{}, std::vector<double>(rows * columns, 0.0), columns};
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t j = 0; j < columns; ++j) {
      if (uniform(random) >= density) continue;
      const double x = normal(random);
      m.rows.index.push_back(static_cast<std::uint32_t>(j));
      m.rows.value.push_back(x);
      m.dense[i * columns + j] = x;
    }
    m.rows.row_start.push_back(m.rows.index.size());
    m.rows.labels.push_back(normal(random));
    m.rows.line.push_back(i + 1);
  }
  return m;
}

TEST(CpuColumnKernel, MatchesDenseArithmetic) {
  // More rows than one chunk holds, so that chunked updates and sums are exercised.
  const std::size_t n = 40000, p = 30;
  RandomMatrix m = random_matrix(n, p, 0.05, 1234);
  auto kernel = kernels::make_cpu_column_kernel(m.rows, p + 2);  // two empty trailing columns
  std::vector<double> v(n);
  std::mt19937_64 random(99);
  std::normal_distribution<double> normal(0, 1);
  for (double& x : v) x = normal(random);
  kernel->set_vector(v);

  std::vector<double> all(p + 2);
  kernel->all_column_dots(all);
  std::vector<double> norms(p + 2);
  kernel->column_norms_squared(norms);
  for (std::size_t j = 0; j < p; ++j) {
    double dot = 0, norm = 0;
    for (std::size_t i = 0; i < n; ++i) {
      dot += m.dense[i * p + j] * v[i];
      norm += m.dense[i * p + j] * m.dense[i * p + j];
    }
    EXPECT_NEAR(all[j], dot, 1e-9 * (1 + std::abs(dot)));
    EXPECT_NEAR(norms[j], norm, 1e-9 * norm);
  }
  EXPECT_EQ(all[p], 0.0);
  EXPECT_EQ(norms[p + 1], 0.0);

  const std::vector<ParamIndex> cols = {3, 17, 3, 29};
  std::vector<double> dots(cols.size());
  kernel->column_dots(cols, dots);
  for (std::size_t k = 0; k < cols.size(); ++k) EXPECT_DOUBLE_EQ(dots[k], all[cols[k]]);

  const std::vector<double> scale = {0.5, -2.0, 0.0, 1.25};
  kernel->add_columns(cols, scale);
  std::vector<double> updated(n);
  kernel->copy_vector(updated);
  for (std::size_t i = 0; i < n; ++i) {
    double expected = v[i];
    for (std::size_t k = 0; k < cols.size(); ++k) expected += scale[k] * m.dense[i * p + cols[k]];
    ASSERT_NEAR(updated[i], expected, 1e-12 * (1 + std::abs(expected))) << "row " << i;
  }
}

TEST(LassoDependency, BlockFilterMatchesPairwiseCosines) {
  const std::size_t n = 60, p = 40;
  RandomMatrix m = random_matrix(n, p, 0.3, 4321);
  testing::ScratchDir dir;
  std::ostringstream text;
  for (std::size_t i = 0; i < n; ++i) {
    text << m.rows.labels[i];
    for (std::size_t e = m.rows.row_start[i]; e < m.rows.row_start[i + 1]; ++e) {
      text << ' ' << m.rows.index[e] + 1 << ':' << m.rows.value[e];
    }
    text << '\n';
  }
  lasso::Config config;
  config.data = dir.write("m.svm", text.str());
  config.rho = 0.2;
  const io::SparseRows rows = io::read_libsvm(config.data);  // the values as written
  auto cosine = [&](std::size_t a, std::size_t b) {
    double ab = 0, aa = 0, bb = 0;
    for (std::size_t i = 0; i < rows.rows(); ++i) {
      double xa = 0, xb = 0;
      for (std::size_t e = rows.row_start[i]; e < rows.row_start[i + 1]; ++e) {
        if (rows.index[e] == a) xa = rows.value[e];
        if (rows.index[e] == b) xb = rows.value[e];
      }
      ab += xa * xb, aa += xa * xa, bb += xb * xb;
    }
    return aa > 0 && bb > 0 ? ab / std::sqrt(aa * bb) : 0.0;
  };
  const ParamRange owned{5, 35};
  lasso::Lasso::Dependency filter(config, owned);
  std::mt19937_64 random(77);
  for (int block = 0; block < 20; ++block) {
    filter.clear();
    std::vector<ParamIndex> kept;
    std::vector<ParamIndex> order;
    for (ParamIndex j = owned.begin; j < owned.end; ++j) order.push_back(j);
    std::shuffle(order.begin(), order.end(), random);
    int rejected = 0;
    for (ParamIndex candidate : order) {
      bool independent = true;
      for (ParamIndex k : kept) independent = independent && std::abs(cosine(candidate, k)) < config.rho;
      ASSERT_EQ(filter.admit(candidate), independent) << "candidate " << candidate;
      if (independent) {
        kept.push_back(candidate);
      } else {
        ++rejected;
      }
    }
    EXPECT_GT(rejected, 0) << "the test data should contain interfering columns";
  }
}

}  // namespace
}  // namespace schmp
