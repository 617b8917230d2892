// Lasso's pieces: soft-thresholding, the Gram cache, the CPU column kernel against dense arithmetic,
// and the incremental dependency filter against the pairwise definition.
#include "lasso.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <sstream>

#include "gram_cache.hpp"
#include "random_matrix.hpp"
#include "runtime/column_shares.hpp"
#include "schmp/io.hpp"
#include "schmp/kernels/column_kernel.hpp"
#include "schmp/kernels/correlation_filter.hpp"
#include "schmp/packed_symmetric.hpp"
#include "test_files.hpp"

namespace schmp {
namespace {

// The cache asks the workers only for the columns it lacks, keeps what it holds where it was, and
// starts again when the held and the new would exceed its most.
TEST(GramCache, GrowsByTheColumnsItLacks) {
  const std::size_t n = 200, p = 9;
  const testing::RandomMatrix m = testing::random_matrix(n, p, 0.5, 8);
  auto kernel = kernels::make_cpu_column_kernel(m.rows, p);
  auto fetch = [&](lasso::GramCache& cache, const std::vector<ParamIndex>& wanted) {
    const lasso::GramCache::Request request = cache.request(wanted);
    std::vector<double> block(packed_size(request.cols.size()) - packed_size(request.known));
    double products = 0;
    ASSERT_TRUE(kernel->gram(request.cols, request.known, false, 1e300, block, products));
    cache.receive(request, block);
  };
  auto expect_exact = [&](const lasso::GramCache& cache, const std::vector<ParamIndex>& cols) {
    const Eigen::MatrixXd h = cache.matrix(cols, 0.5);
    for (std::size_t a = 0; a < cols.size(); ++a) {
      for (std::size_t b = 0; b < cols.size(); ++b) {
        double expected = 0;
        for (std::size_t i = 0; i < n; ++i) expected += m.dense[i * p + cols[a]] * m.dense[i * p + cols[b]];
        EXPECT_NEAR(h(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b)), 0.5 * expected, 1e-12);
      }
    }
  };
  lasso::GramCache cache(p, 5);
  EXPECT_TRUE(cache.request({}).cols.empty());
  fetch(cache, {4, 1});
  const lasso::GramCache::Request grow = cache.request({1, 6, 4, 2});
  EXPECT_EQ(grow.cols, (std::vector<ParamIndex>{4, 1, 6, 2}));  // the held first, as held
  EXPECT_EQ(grow.known, 2u);
  fetch(cache, {1, 6, 4, 2});
  EXPECT_TRUE(cache.request({2, 4}).cols.empty());
  EXPECT_TRUE(cache.holds(6));
  EXPECT_FALSE(cache.holds(0));
  expect_exact(cache, {6, 1, 2, 4});
  // Four held and two new exceed five: the request is the wanted columns alone.
  const lasso::GramCache::Request again = cache.request({0, 3, 6});
  EXPECT_EQ(again.cols, (std::vector<ParamIndex>{0, 3, 6}));
  EXPECT_EQ(again.known, 0u);
  fetch(cache, {0, 3, 6});
  EXPECT_FALSE(cache.holds(4));
  expect_exact(cache, {3, 0, 6});
}

TEST(SoftThreshold, ShrinksTowardZero) {
  EXPECT_EQ(lasso::soft_threshold(3.0, 1.0), 2.0);
  EXPECT_EQ(lasso::soft_threshold(-3.0, 1.0), -2.0);
  EXPECT_EQ(lasso::soft_threshold(0.5, 1.0), 0.0);
  EXPECT_EQ(lasso::soft_threshold(-1.0, 1.0), 0.0);
  EXPECT_EQ(lasso::soft_threshold(2.0, 0.0), 2.0);
}

using testing::random_matrix;
using testing::RandomMatrix;

// The kernel keeps no values for rows whose values are all 1: the parameter is how many of the leading
// rows are binary (none, half, all).
class CpuColumnKernelValues : public ::testing::TestWithParam<double> {};

TEST_P(CpuColumnKernelValues, MatchesDenseArithmetic) {
  // More rows than one chunk holds, so that chunked updates and sums are exercised; the first four
  // columns have every row, which the kernel loops over without row indices.
  const std::size_t n = 270003, p = 30;  // the last chunk's rows not a multiple of four
  RandomMatrix m = random_matrix(n, p, 0.05, 1234, static_cast<std::size_t>(GetParam() * n), 4);
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

  const std::vector<ParamIndex> cols = {3, 17, 3, 29, 0};
  std::vector<double> dots(cols.size());
  kernel->column_dots(cols, dots);
  for (std::size_t k = 0; k < cols.size(); ++k) EXPECT_DOUBLE_EQ(dots[k], all[cols[k]]);

  const std::vector<double> scale = {0.5, -2.0, 0.0, 1.25, -0.75};
  kernel->add_columns(cols, scale);
  std::vector<double> updated(n);
  kernel->copy_vector(updated);
  for (std::size_t i = 0; i < n; ++i) {
    double expected = v[i];
    for (std::size_t k = 0; k < cols.size(); ++k) expected += scale[k] * m.dense[i * p + cols[k]];
    ASSERT_NEAR(updated[i], expected, 1e-12 * (1 + std::abs(expected))) << "row " << i;
  }

  // Every column at once: a block big enough for the chunks to be updated in parallel.
  std::vector<ParamIndex> every(p);
  std::vector<double> every_scale(p);
  for (std::size_t j = 0; j < p; ++j) {
    every[j] = static_cast<ParamIndex>(j);
    every_scale[j] = 0.01 * static_cast<double>(j) - 0.1;
  }
  kernel->add_columns(every, every_scale);
  std::vector<double> again(n);
  kernel->copy_vector(again);
  for (std::size_t i = 0; i < n; ++i) {
    double expected = updated[i];
    for (std::size_t j = 0; j < p; ++j) expected += every_scale[j] * m.dense[i * p + j];
    ASSERT_NEAR(again[i], expected, 1e-12 * (1 + std::abs(expected))) << "row " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(BinaryShare, CpuColumnKernelValues, ::testing::Values(0.0, 0.5, 1.0));

// Builds many blocks from random orders and checks every verdict of the filter against the pairwise
// definition, computed from the values as written to the file: once with every pair settled up front
// where the filter finds that cheap, once with each pair settled on demand. With `constant_column`,
// the parameter after the data's last column is 1 on every row (logreg's --bias). Returns whether the
// first filter settled every pair up front.
bool expect_filter_matches_pairwise(const io::SparseRows& data, double rho, ParamRange owned,
                                    std::uint64_t seed, bool constant_column = false, int blocks = 20) {
  testing::ScratchDir dir;
  const std::string file = dir.write("m.svm", testing::libsvm_text(data));
  const io::SparseRows rows = io::read_libsvm(file);
  const std::size_t columns = rows.columns() + (constant_column ? 1 : 0);
  std::vector<std::vector<double>> dense(columns, std::vector<double>(rows.rows(), 0.0));
  for (std::size_t i = 0; i < rows.rows(); ++i) {
    for (std::size_t e = rows.row_start[i]; e < rows.row_start[i + 1]; ++e)
      dense[rows.index[e]][i] = rows.value[e];
  }
  if (constant_column) dense.back().assign(rows.rows(), 1.0);
  auto cosine = [&](std::size_t a, std::size_t b) {
    double ab = 0, aa = 0, bb = 0;
    for (std::size_t i = 0; i < rows.rows(); ++i) {
      ab += dense[a][i] * dense[b][i], aa += dense[a][i] * dense[a][i], bb += dense[b][i] * dense[b][i];
    }
    return aa > 0 && bb > 0 ? ab / std::sqrt(aa * bb) : 0.0;
  };
  // The same matrix as MatrixMarket, its entries column by column: read by the scheduler's own reader.
  std::ostringstream market;
  market.precision(17);
  market << "%%MatrixMarket matrix coordinate real general\n"
         << rows.rows() << ' ' << rows.columns() << ' ' << rows.index.size() << '\n';
  for (std::size_t j = 0; j < rows.columns(); ++j) {
    for (std::size_t i = 0; i < rows.rows(); ++i) {
      if (dense[j][i] != 0) market << i + 1 << ' ' << j + 1 << ' ' << dense[j][i] << '\n';
    }
  }
  const std::string market_file = dir.write("m.mtx", market.str());
  using AllPairs = kernels::CorrelationFilter::AllPairs;
  bool settled_up_front = false;
  for (const auto& [path, all_pairs] :
       {std::pair{file, AllPairs::kWhenCheap}, std::pair{file, AllPairs::kOnDemand},
        std::pair{market_file, AllPairs::kWhenCheap}}) {
    kernels::CorrelationFilter filter(path, rho, owned, constant_column, all_pairs);
    if (all_pairs == AllPairs::kWhenCheap) settled_up_front = filter.settled_all_pairs();
    EXPECT_TRUE(all_pairs == AllPairs::kWhenCheap || !filter.settled_all_pairs());
    std::mt19937_64 random(seed);
    int rejected = 0;
    for (int block = 0; block < blocks; ++block) {
      filter.clear();
      std::vector<ParamIndex> kept;
      std::vector<ParamIndex> order;
      for (ParamIndex j = owned.begin; j < owned.end; ++j) order.push_back(j);
      std::shuffle(order.begin(), order.end(), random);
      for (ParamIndex candidate : order) {
        bool independent = true;
        for (ParamIndex k : kept) independent = independent && std::abs(cosine(candidate, k)) < rho;
        EXPECT_EQ(filter.admit(candidate), independent)
            << "block " << block << " candidate " << candidate << (settled_up_front ? " (all pairs)" : "");
        if (independent) {
          kept.push_back(candidate);
        } else {
          ++rejected;
        }
      }
    }
    EXPECT_GT(rejected, 0) << "the test data should contain interfering columns";
  }
  return settled_up_front;
}

TEST(LassoDependency, BlockFilterMatchesPairwiseCosines) {
  const RandomMatrix m = random_matrix(60, 40, 0.3, 4321);
  EXPECT_TRUE(expect_filter_matches_pairwise(m.rows, 0.2, ParamRange{5, 35}, 77));
}

// A cosine does not depend on its columns' scale: columns of values near 1e200 or 1e-200 (whose squares
// leave the range of a double) get the verdicts of the same columns near 1, on either path.
TEST(LassoDependency, VerdictsDoNotDependOnTheColumnsScale) {
  const RandomMatrix m = random_matrix(60, 40, 0.3, 4321);
  io::SparseRows scaled = m.rows;
  for (std::size_t e = 0; e < scaled.index.size(); ++e)
    scaled.value[e] *= scaled.index[e] % 2 ? 1e200 : 1e-200;
  using AllPairs = kernels::CorrelationFilter::AllPairs;
  const ParamRange owned{0, 40};
  for (const AllPairs all_pairs : {AllPairs::kWhenCheap, AllPairs::kOnDemand}) {
    kernels::CorrelationFilter plain(m.rows, 0.2, owned, false, all_pairs);
    kernels::CorrelationFilter extreme(scaled, 0.2, owned, false, all_pairs);
    std::mt19937_64 random(7);
    int rejected = 0;
    for (int block = 0; block < 20; ++block) {
      plain.clear();
      extreme.clear();
      std::vector<ParamIndex> order(40);
      std::iota(order.begin(), order.end(), ParamIndex{0});
      std::shuffle(order.begin(), order.end(), random);
      for (const ParamIndex candidate : order) {
        const bool admitted = plain.admit(candidate);
        EXPECT_EQ(extreme.admit(candidate), admitted) << "block " << block << " candidate " << candidate;
        rejected += admitted ? 0 : 1;
      }
    }
    EXPECT_GT(rejected, 0) << "the test data should contain interfering columns";
  }
}

TEST(LassoDependency, SettlesEveryPairUpFrontOnlyWhenRowsAreShort) {
  // 60 columns and rows of about 10 owned entries: cheap. The constant column (logreg's --bias) takes
  // part like any other.
  const RandomMatrix sparse = random_matrix(80, 60, 0.15, 8080);
  const ParamIndex with_constant = static_cast<ParamIndex>(sparse.rows.columns() + 1);
  EXPECT_TRUE(expect_filter_matches_pairwise(sparse.rows, 0.2, ParamRange{0, with_constant}, 3, true));
  EXPECT_TRUE(expect_filter_matches_pairwise(sparse.rows, 0.2, ParamRange{10, with_constant}, 4, true));
  // Dense rows of 150 entries: summing every pair row by row would cost more than the tests.
  const RandomMatrix dense = random_matrix(40, 150, 1.0, 9090);
  EXPECT_FALSE(expect_filter_matches_pairwise(dense.rows, 0.2, ParamRange{0, 150}, 5));
}

TEST(LassoDependency, SettlesSparseCandidatesByTheSharedRowBound) {
  // Short columns over many rows rarely meet, so the bound admits most candidates without a cosine;
  // every fourth column copies most of another's rows (with noise) so that some pairs interfere and
  // the exact test still decides those.
  const std::size_t n = 3000, p = 200;
  std::mt19937_64 random(99);
  std::uniform_int_distribution<std::size_t> any_row(0, n - 1);
  std::normal_distribution<double> normal(0, 1);
  std::vector<std::vector<std::pair<std::size_t, double>>> columns(p);
  for (std::size_t j = 0; j < p; ++j) {
    if (j % 4 == 3) {
      for (const auto& [row, value] : columns[j - 2])
        columns[j].emplace_back(row, value + 0.5 * normal(random));
    } else {
      for (int e = 0; e < 12; ++e) columns[j].emplace_back(any_row(random), 1 + normal(random));
    }
  }
  std::vector<std::map<std::size_t, double>> by_row(n);
  for (std::size_t j = 0; j < p; ++j) {
    for (const auto& [row, value] : columns[j]) by_row[row][j] = value;
  }
  io::SparseRows data;
  for (std::size_t i = 0; i < n; ++i) {
    for (const auto& [j, value] : by_row[i]) {
      data.index.push_back(static_cast<std::uint32_t>(j));
      data.value.push_back(value);
    }
    data.row_start.push_back(data.index.size());
    data.labels.push_back(0);
    data.source.push_back(i + 1);
  }
  EXPECT_TRUE(expect_filter_matches_pairwise(data, 0.1, ParamRange{0, static_cast<ParamIndex>(p)}, 11));
}

// Columns that share one of three latent factors (so that some interfere), each entry present with
// the probability its column's parity gives.
io::SparseRows latent_factor_columns(std::size_t n, std::size_t p, double odd_density, double even_density,
                                     std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> uniform(0, 1);
  std::normal_distribution<double> normal(0, 1);
  io::SparseRows data;
  for (std::size_t i = 0; i < n; ++i) {
    const double latent[3] = {normal(random), normal(random), normal(random)};
    for (std::size_t j = 0; j < p; ++j) {
      const double density = j % 2 == 1 ? odd_density : even_density;
      if (uniform(random) >= density) continue;
      data.index.push_back(static_cast<std::uint32_t>(j));
      data.value.push_back(latent[j % 3] + 0.8 * normal(random));
    }
    data.row_start.push_back(data.index.size());
    data.labels.push_back(normal(random));
    data.source.push_back(i + 1);
  }
  return data;
}

TEST(LassoDependency, RemembersVerdictsOnLongColumns) {
  // Odd columns are long (hundreds of entries: their verdicts are memoised), even ones short; long
  // columns of one factor interfere with each other and short ones sometimes do. The same pairs come up
  // again in later blocks, answered from memory.
  const std::size_t p = 30;
  const io::SparseRows data = latent_factor_columns(1500, p, 0.5, 0.03, 2024);
  EXPECT_TRUE(expect_filter_matches_pairwise(data, 0.3, ParamRange{0, static_cast<ParamIndex>(p)}, 5));
}

TEST(LassoDependency, SameVerdictsWhileTheMemoRests) {
  // 400 long columns: the first blocks' lookups nearly all miss (their pairs are new), so the memo rests
  // for the next blocks, then is consulted again.
  const std::size_t p = 400;
  const io::SparseRows data = latent_factor_columns(600, p, 0.5, 0.5, 77);
  expect_filter_matches_pairwise(data, 0.3, ParamRange{0, static_cast<ParamIndex>(p)}, 6, false, 30);
}

// The schedulers take their columns from the workers (runtime/column_shares.hpp): the shares of
// three workers' byte ranges, joined in worker order after a trip through their message, are the block
// a scheduler would have read from the file, whether each worker's rows take one share or several
// (here at most 7 entries or 5 rows each, where the real bounds keep a message under MPI's int count).
TEST(ColumnShares, JoinedInWorkerOrderTheyAreTheBlockReadFromTheFile) {
  testing::ScratchDir dir;
  std::mt19937_64 random(9);
  std::uniform_real_distribution<double> uniform(0, 1);
  std::ostringstream text;
  for (int r = 0; r < 300; ++r) {
    text << (r % 3) - 1;
    for (int c = 1; c <= 40; ++c) {
      if (uniform(random) < 0.15) text << " " << c << ":" << uniform(random) - 0.5;
    }
    text << "\n";
  }
  const std::string path = dir.write("rows.svm", text.str());
  const std::uint64_t size = io::file_size(path);
  for (const ParamRange owned : {ParamRange{0, 13}, ParamRange{13, 40}, ParamRange{38, 45}}) {
    const io::ColumnBlock read = io::read_column_block(path, owned.begin, owned.end);
    for (const std::size_t most : {detail::kMostShareEntries, std::size_t{7}}) {
      io::ColumnBlock joined;
      int shares = 0;
      for (int w = 0; w < 3; ++w) {
        const io::SparseRows rows = io::read_libsvm(path, io::split_range(size, w, 3));
        std::size_t first = 0;
        for (bool last = false; !last; ++shares) {
          detail::ColumnShare share = detail::column_share(rows, owned, first, most, most == 7 ? 5 : most);
          share.columns = rows.columns();
          first += share.rows();
          last = share.last;
          detail::append_share(joined, deserialize<detail::ColumnShare>(serialize(share)));
        }
      }
      SCOPED_TRACE(std::to_string(shares) + " shares");
      EXPECT_EQ(shares > 3, most == 7);
      EXPECT_EQ(joined.columns, read.columns);
      ASSERT_EQ(joined.rows.rows(), read.rows.rows());
      EXPECT_EQ(joined.rows.row_start, read.rows.row_start);
      EXPECT_EQ(joined.rows.index, read.rows.index);
      EXPECT_EQ(joined.rows.value, read.rows.value);
    }
    EXPECT_FALSE(read.rows.index.empty() && owned.begin < 40);
  }
}

}  // namespace
}  // namespace schmp
