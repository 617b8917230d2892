// Logistic regression's pieces: the loss, the label rules, the coordinate step, the kernel's Newton-step
// operations against dense arithmetic, and the coordinator's Newton step and line search.
#include "logreg.hpp"

#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "predict.hpp"
#include "random_matrix.hpp"
#include "schmp/io.hpp"
#include "schmp/kernels/column_kernel.hpp"
#include "schmp/step_ways.hpp"
#include "test_files.hpp"

namespace schmp {
namespace {

TEST(LogisticLoss, IsStableAtBothEnds) {
  EXPECT_DOUBLE_EQ(logreg::logistic_loss(0), std::log(2.0));
  EXPECT_NEAR(logreg::logistic_loss(800), 0.0, 1e-300);
  EXPECT_DOUBLE_EQ(logreg::logistic_loss(-800), 800.0);
  EXPECT_NEAR(logreg::logistic_loss(1.5), std::log1p(std::exp(-1.5)), 1e-15);
}

// A row's softmax terms against their definitions: the loss log sum exp(z) - z_y, the gradient
// c (p - e) x per class, the class sums, and the entropy of e + t (p - e) at every dual scale t.
TEST(SoftmaxSums, AddARowAsDefined) {
  const std::vector<double> z = {0.3, -1.2, 2.5, 0.0};
  const std::size_t y = 1, classes = z.size(), params = 3;
  const double c = 1.5;
  const std::vector<std::uint32_t> index = {0, 2};
  const std::vector<double> value = {2.0, -0.5};
  logreg::SoftmaxSums sums;
  sums.resize(classes, params);
  sums.add_row(z, y, c, index, value);
  double total = 0;
  for (const double v : z) total += std::exp(v);
  std::vector<double> p;
  for (const double v : z) p.push_back(std::exp(v) / total);
  EXPECT_NEAR(sums.loss, c * (std::log(total) - z[y]), 1e-12);
  for (std::size_t l = 0; l < classes; ++l) {
    const double u = c * (p[l] - (l == y ? 1.0 : 0.0));
    EXPECT_NEAR(sums.gradient[l * params + 0], u * 2.0, 1e-12);
    EXPECT_EQ(sums.gradient[l * params + 1], 0.0);
    EXPECT_NEAR(sums.gradient[l * params + 2], u * -0.5, 1e-12);
    EXPECT_NEAR(sums.class_sums[y * classes + l], u, 1e-12);
    EXPECT_NEAR(sums.class_squares[y * classes + l], u * u, 1e-12);
    EXPECT_NEAR(sums.class_gradient[(y * classes + l) * params + 2], u * -0.5, 1e-12);
    EXPECT_EQ(sums.class_sums[((y + 1) % classes) * classes + l], 0.0);
  }
  for (std::size_t k = 0; k < logreg::kDualScales.size(); ++k) {
    const double t = logreg::kDualScales[k];
    double entropy = 0;
    for (std::size_t l = 0; l < classes; ++l) {
      const double q = (l == y ? 1.0 : 0.0) + t * (p[l] - (l == y ? 1.0 : 0.0));
      if (q > 0) entropy -= q * std::log(q);
    }
    EXPECT_NEAR(sums.entropy[y * logreg::kDualScales.size() + k], c * entropy, 1e-12) << "t " << t;
  }
}

TEST(BinaryLabel, AcceptsPlusMinusOneAndOneZero) {
  EXPECT_EQ(logreg::binary_label(1, NAN, "f", 1), 1.0);
  EXPECT_EQ(logreg::binary_label(-1, NAN, "f", 1), -1.0);
  EXPECT_EQ(logreg::binary_label(0, NAN, "f", 1), -1.0);
  EXPECT_EQ(logreg::binary_label(7, 7, "f", 1), 1.0);
  EXPECT_EQ(logreg::binary_label(1, 7, "f", 1), -1.0);
  // The message names the label's line, found from where it starts in the file.
  testing::ScratchDir dir;
  const std::string data = dir.write("data.svm", "1 1:1\n2 1:1\n");
  try {
    logreg::binary_label(2, NAN, data, 6);
    FAIL() << "label 2 was accepted";
  } catch (const io::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              data +
                  ":2: label 2 is not binary (+1/-1 or 1/0); give --positive_label to name the "
                  "positive class");
  }
}

// The step minimises g d + h d^2 / 2 + R(w + d) - R(w): no d nearby does better.
TEST(NewtonStep, MinimisesTheModel) {
  std::mt19937_64 random(3);
  std::normal_distribution<double> normal(0, 1);
  for (auto penalty : {Penalty::kL1, Penalty::kL2}) {
    auto regulariser = [&](double w) { return penalty == Penalty::kL1 ? std::abs(w) : 0.5 * w * w; };
    for (int trial = 0; trial < 200; ++trial) {
      const double w = trial % 3 == 0 ? 0.0 : normal(random), g = 2 * normal(random),
                   h = std::abs(normal(random)) + 0.01;
      const double d = coordinate_step(penalty, w, g, h);
      auto model = [&](double step) { return g * step + h * step * step / 2 + regulariser(w + step); };
      for (double nudge : {-1e-3, 1e-3, -0.1, 0.1, -w - d}) {
        EXPECT_LE(model(d), model(d + nudge) + 1e-12) << "w " << w << " g " << g << " h " << h;
      }
    }
  }
}

// A worker may hold no rows (more ranks than lines): its labels are the empty set, and every
// logistic operation contributes nothing rather than refusing.
TEST(CpuColumnKernel, LogisticOperationsOnAWorkerWithoutRows) {
  const std::size_t p = 3;
  io::SparseRows empty;
  auto kernel = kernels::make_cpu_column_kernel(empty, p);
  kernel->set_labels({});
  const std::vector<ParamIndex> all{0, 1, 2};
  std::vector<double> gradient(p, 1), curvature(p, 1), hessian_d(p, 1);
  kernel->add_to_direction(all, std::vector<double>{0.5, -1, 2});
  kernel->logistic_derivatives(all, gradient, curvature);
  kernel->direction_dots(all, hessian_d);
  kernel->step_along_direction(1);
  EXPECT_EQ(kernel->loss_change_along_direction(1), 0.0);
  EXPECT_EQ(gradient, std::vector<double>(p, 0.0));
  EXPECT_EQ(curvature, std::vector<double>(p, 0.0));
  EXPECT_EQ(hessian_d, std::vector<double>(p, 0.0));
}

// Gram matrices over dense columns go in panels of columns, in parallel: the whole and a grown part
// against dense arithmetic.
TEST(CpuColumnKernel, GramOfManyDenseColumns) {
  const std::size_t n = 3000, p = 48;
  const testing::RandomMatrix m = testing::random_matrix(n, p, 1.0, 21, 0, p);
  auto kernel = kernels::make_cpu_column_kernel(m.rows, p);
  std::vector<ParamIndex> cols(p);
  for (std::size_t j = 0; j < p; ++j) cols[j] = static_cast<ParamIndex>((j * 7) % p);  // not in index order
  for (const std::size_t known : {std::size_t{0}, std::size_t{10}}) {
    std::vector<double> part(packed_size(p) - packed_size(known));
    double products = 0;
    ASSERT_TRUE(kernel->gram(cols, known, false, std::numeric_limits<double>::infinity(), part, products));
    for (std::size_t b = known; b < p; ++b) {
      for (std::size_t a = 0; a <= b; ++a) {
        double expected = 0;
        for (std::size_t i = 0; i < n; ++i) expected += m.dense[i * p + cols[a]] * m.dense[i * p + cols[b]];
        EXPECT_NEAR(part[packed_index(a, b) - packed_size(known)], expected, 1e-9 * (1 + std::abs(expected)))
            << "entry " << a << ", " << b << ", known " << known;
      }
    }
  }
}

// The Newton-step operations against dense arithmetic: the direction's Hessian image at the current
// margins, a full step along it, a shortened step, and the derivatives at each point.
// The parameter is the share of leading rows whose values are all 1, which the kernel keeps no values for.
class CpuColumnKernelNewton : public ::testing::TestWithParam<double> {};

TEST_P(CpuColumnKernelNewton, OperationsMatchDenseArithmetic) {
  // More rows than one chunk, so that chunked sums and updates are exercised; the first three columns
  // have every row, which the kernel loops over without row indices.
  const std::size_t n = 270000, p = 12;
  const testing::RandomMatrix m =
      testing::random_matrix(n, p, 0.2, 11, static_cast<std::size_t>(GetParam() * n), 3);
  const std::vector<double>& dense = m.dense;
  std::vector<double> y(n);
  for (std::size_t i = 0; i < n; ++i) y[i] = m.rows.labels[i] > 0 ? 1.0 : -1.0;  // classes at random
  auto kernel = kernels::make_cpu_column_kernel(m.rows, p);
  kernel->set_labels(y);
  std::vector<ParamIndex> all(p);
  for (std::size_t j = 0; j < p; ++j) all[j] = static_cast<ParamIndex>(j);
  auto direction = [&](std::size_t i) { return 0.8 * dense[i * p + 2] - 1.3 * dense[i * p + 7]; };

  // d = 0.8 e_2 - 1.3 e_7, added in two commits; at margins 0 every D_ii is 1/4.
  kernel->add_to_direction(std::vector<ParamIndex>{2}, std::vector<double>{0.8});
  kernel->add_to_direction(std::vector<ParamIndex>{7}, std::vector<double>{-1.3});
  std::vector<double> hessian_d(p);
  kernel->direction_dots(all, hessian_d);
  for (std::size_t j = 0; j < p; ++j) {
    double expected = 0;
    for (std::size_t i = 0; i < n; ++i) expected += dense[i * p + j] * 0.25 * direction(i);
    EXPECT_NEAR(hessian_d[j], expected, 1e-9 * (1 + std::abs(expected))) << "column " << j;
  }

  auto expect_derivatives_at = [&](double t) {
    std::vector<double> gradient(p), curvature(p), margins(n);
    kernel->logistic_derivatives(all, gradient, curvature);
    kernel->copy_vector(margins);
    for (std::size_t j = 0; j < p; ++j) {
      double g = 0, h = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const double q = 1 / (1 + std::exp(y[i] * t * direction(i)));  // -l'(y_i margin)
        g -= dense[i * p + j] * y[i] * q;
        h += dense[i * p + j] * dense[i * p + j] * q * (1 - q);
      }
      EXPECT_NEAR(gradient[j], g, 1e-9 * (1 + std::abs(g))) << "column " << j << ", step " << t;
      EXPECT_NEAR(curvature[j], h, 1e-9 * (1 + h)) << "column " << j << ", step " << t;
    }
    for (std::size_t i = 0; i < n; i += 997) EXPECT_NEAR(margins[i], t * direction(i), 1e-12);
  };
  // The loss change along the direction, from margins 0 to t u.
  auto expected_change = [&](double t) {
    double change = 0;
    for (std::size_t i = 0; i < n; ++i)
      change += logreg::logistic_loss(y[i] * t * direction(i)) - std::log(2.0);
    return change;
  };
  kernel->step_along_direction(1);
  expect_derivatives_at(1);
  EXPECT_NEAR(kernel->loss_change_along_direction(1), expected_change(1), 1e-9 * n);
  kernel->step_along_direction(-0.75);  // shortened to a quarter of the step
  expect_derivatives_at(0.25);
  EXPECT_NEAR(kernel->loss_change_along_direction(0.25), expected_change(0.25), 1e-9 * n);
  // A step so short that the loss moves far less than its sum's rounding: summed row by row, the
  // change still agrees with its second-order expansion, -t/2 sum y u + t^2/8 sum u^2.
  kernel->step_along_direction(-0.25 + 1e-9);
  double first = 0, second = 0;
  for (std::size_t i = 0; i < n; ++i) {
    first += -0.5 * y[i] * direction(i);
    second += 0.125 * direction(i) * direction(i);
  }
  const double tiny = 1e-9 * first + 1e-18 * second;
  EXPECT_NEAR(kernel->loss_change_along_direction(1e-9), tiny, 1e-6 * std::abs(tiny));
  kernel->step_along_direction(0.25 - 1e-9);  // back to a quarter of the step

  // The Hessian over some columns (in any order), packed: sum_i x_ia D_ii x_ib at the margins.
  const std::vector<ParamIndex> some = {5, 0, 11, 3, 7};
  std::vector<double> packed(packed_size(some.size()));
  double products = 0;
  EXPECT_FALSE(kernel->gram(some, 0, true, 1000, packed, products));  // over the budget
  ASSERT_TRUE(kernel->gram(some, 0, true, std::numeric_limits<double>::infinity(), packed, products));
  for (std::size_t a = 0; a < some.size(); ++a) {
    for (std::size_t b = a; b < some.size(); ++b) {
      double expected = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const double q = 1 / (1 + std::exp(y[i] * 0.25 * direction(i)));
        expected += dense[i * p + some[a]] * q * (1 - q) * dense[i * p + some[b]];
      }
      EXPECT_NEAR(packed[packed_index(a, b)], expected, 1e-9 * (1 + std::abs(expected)))
          << "entry " << a << ", " << b;
    }
  }
  // Unweighted: X'X, least squares' Hessian.
  std::vector<double> plain(packed.size());
  ASSERT_TRUE(kernel->gram(some, 0, false, std::numeric_limits<double>::infinity(), plain, products));
  for (std::size_t a = 0; a < some.size(); ++a) {
    for (std::size_t b = a; b < some.size(); ++b) {
      double expected = 0;
      for (std::size_t i = 0; i < n; ++i) expected += dense[i * p + some[a]] * dense[i * p + some[b]];
      EXPECT_NEAR(plain[packed_index(a, b)], expected, 1e-9 * (1 + std::abs(expected)));
    }
  }
  double expected_products = 0;  // sum over rows of k (k + 1) / 2, k the row's entries among the columns
  for (std::size_t i = 0; i < n; ++i) {
    double k = 0;
    for (const ParamIndex j : some) k += dense[i * p + j] != 0 ? 1 : 0;
    expected_products += k * (k + 1) / 2;
  }
  EXPECT_EQ(products, expected_products);
  // Grown by two columns: only their part comes back, the same numbers as in the whole.
  const std::size_t known = 3;
  std::vector<double> grown(packed_size(some.size()) - packed_size(known));
  double grown_products = 0;
  ASSERT_TRUE(
      kernel->gram(some, known, false, std::numeric_limits<double>::infinity(), grown, grown_products));
  for (std::size_t b = known; b < some.size(); ++b) {
    for (std::size_t a = 0; a <= b; ++a)
      EXPECT_NEAR(grown[packed_index(a, b) - packed_size(known)], plain[packed_index(a, b)], 1e-12);
  }
  double old_products = 0;  // the first `known` columns' own part
  for (std::size_t i = 0; i < n; ++i) {
    double k = 0;
    for (std::size_t a = 0; a < known; ++a) k += dense[i * p + some[a]] != 0 ? 1 : 0;
    old_products += k * (k + 1) / 2;
  }
  EXPECT_EQ(grown_products, expected_products - old_products);
  Eigen::MatrixXd whole = unpack_symmetric(plain, some.size(), 2.0);
  Eigen::MatrixXd filled =
      Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(some.size()), static_cast<Eigen::Index>(some.size()));
  const auto corner = static_cast<Eigen::Index>(known);
  filled.topLeftCorner(corner, corner) = whole.topLeftCorner(corner, corner);
  unpack_columns(grown, known, 2.0, filled);
  EXPECT_LT((filled - whole).cwiseAbs().maxCoeff(), 1e-12);
  // Dense columns (0, 1, 2) old and new among sparse ones, weighted: every kind of pair.
  const std::vector<ParamIndex> mixed = {5, 1, 11, 0, 2, 7};
  std::vector<double> part(packed_size(mixed.size()) - packed_size(2));
  ASSERT_TRUE(kernel->gram(mixed, 2, true, std::numeric_limits<double>::infinity(), part, products));
  for (std::size_t b = 2; b < mixed.size(); ++b) {
    for (std::size_t a = 0; a <= b; ++a) {
      double expected = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const double q = 1 / (1 + std::exp(y[i] * 0.25 * direction(i)));
        expected += dense[i * p + mixed[a]] * q * (1 - q) * dense[i * p + mixed[b]];
      }
      EXPECT_NEAR(part[packed_index(a, b) - packed_size(2)], expected, 1e-9 * (1 + std::abs(expected)))
          << "entry " << a << ", " << b;
    }
  }

  // A direction over every column at once: a block big enough for rows to be updated in parallel.
  kernel->clear_direction();
  std::vector<double> everywhere(p);
  for (std::size_t j = 0; j < p; ++j) everywhere[j] = 0.1 * static_cast<double>(j + 1);
  kernel->add_to_direction(all, everywhere);
  kernel->direction_dots(all, hessian_d);
  for (std::size_t j = 0; j < p; ++j) {
    double expected = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double q = 1 / (1 + std::exp(y[i] * 0.25 * direction(i)));
      double u = 0;
      for (std::size_t k = 0; k < p; ++k) u += everywhere[k] * dense[i * p + k];
      expected += dense[i * p + j] * q * (1 - q) * u;
    }
    EXPECT_NEAR(hessian_d[j], expected, 1e-9 * (1 + std::abs(expected))) << "column " << j;
  }

  // A new direction at the new margins: D_ii = q_i (1 - q_i) there.
  kernel->clear_direction();
  kernel->add_to_direction(std::vector<ParamIndex>{5}, std::vector<double>{2.0});
  kernel->direction_dots(all, hessian_d);
  for (std::size_t j = 0; j < p; ++j) {
    double expected = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double q = 1 / (1 + std::exp(y[i] * 0.25 * direction(i)));
      expected += dense[i * p + j] * q * (1 - q) * 2.0 * dense[i * p + 5];
    }
    EXPECT_NEAR(hessian_d[j], expected, 1e-9 * (1 + std::abs(expected))) << "column " << j;
  }
}

INSTANTIATE_TEST_SUITE_P(BinaryShare, CpuColumnKernelNewton, ::testing::Values(0.0, 0.5, 1.0));

// An evaluation's entropy sums with the same value at every dual scale, all of it the positive rows'.
void set_entropy(logreg::Logreg::Stats& stats, double value) {
  stats.entropy.assign(2 * logreg::kDualScales.size(), 0.0);
  std::fill(stats.entropy.begin(), stats.entropy.begin() + logreg::kDualScales.size(), value);
}

// One Newton step by hand, on two coordinates: the inner solve runs its two passes, the full step and
// the halved one are rejected by the line search, the quarter step is accepted.
TEST(LogregCoordinator, LineSearchHalvesARejectedStepAndAcceptsTheShorterOne) {
  using Logreg = logreg::Logreg;
  Logreg::Config config;
  config.data = "unused";
  config.fit_intercept = false;  // two weights by hand, no constant column
  Logreg::Setup setup;
  setup.gradient = {-4, 0};  // at w = 0: only coordinate 0 is free to move (|G_0| > 1)
  setup.column_norms = {4, 4};
  setup.rows = 4;
  setup.positives = 2;
  Logreg::Coordinator coordinator(config, 2, setup);
  Priorities priorities;
  const double loss0 = 4 * std::log(2.0);
  Logreg::Stats at_zero;
  at_zero.gradient = {-4, 0};
  at_zero.curvature = {1, 1};
  at_zero.loss = loss0;
  set_entropy(at_zero, 0.0);  // a dual value of 0: far from converged
  const Report start = coordinator.report(at_zero, priorities);
  EXPECT_DOUBLE_EQ(start.objective, loss0);
  EXPECT_FALSE(coordinator.wants_evaluation());

  Schedule block;
  block.params = {0};
  Logreg::Partial partial;
  partial.hessian_d = {0};  // d = 0 so far
  const Logreg::Commit first = coordinator.aggregate(block, partial, priorities);
  EXPECT_TRUE(first.new_direction);
  ASSERT_EQ(first.delta.size(), 1u);
  EXPECT_NEAR(first.delta[0], 3, 1e-9);  // soft-thresholded Newton step: -(G + 1) / H
  EXPECT_EQ(first.step, 0);
  EXPECT_FALSE(coordinator.wants_evaluation());  // one pass is never enough

  partial.hessian_d = {3};  // (X'DX d)_0 with d_0 = 3, H = 1: the model is now optimal
  const Logreg::Commit second = coordinator.aggregate(block, partial, priorities);
  EXPECT_FALSE(second.new_direction);
  EXPECT_TRUE(second.delta.empty());
  EXPECT_EQ(second.step, 1);  // the workers move to w + d
  EXPECT_TRUE(coordinator.wants_evaluation());

  // The model promised F to fall by 9 (G.d + |3| - |0| = -12 + 3); at w + d the loss rose by 1 instead.
  Logreg::Stats worse = at_zero;
  worse.loss_change = 1;
  worse.loss = loss0 + 1;
  const Report rejected = coordinator.report(worse, priorities);
  EXPECT_DOUBLE_EQ(rejected.objective, loss0);  // still the accepted w = 0
  EXPECT_FALSE(rejected.converged);
  EXPECT_FALSE(coordinator.wants_evaluation());  // the shortening travels with the next round's commit
  const Logreg::Commit retreat = coordinator.aggregate(block, partial, priorities);
  EXPECT_FALSE(retreat.new_direction);  // the workers keep u = X d to step back along it
  EXPECT_TRUE(retreat.delta.empty());
  EXPECT_EQ(retreat.step, -0.5);  // back to w + d / 2
  EXPECT_TRUE(coordinator.wants_evaluation());

  // Still no decrease at w + d / 2: halved again, to w + d / 4.
  EXPECT_DOUBLE_EQ(coordinator.report(worse, priorities).objective, loss0);
  EXPECT_EQ(coordinator.aggregate(block, partial, priorities).step, -0.25);

  // At w + d / 4 the loss fell by 1.5, the penalty rose by 0.75: sufficient decrease, accepted.
  Logreg::Stats better = at_zero;
  better.loss_change = -1.5;
  better.loss = loss0 - 1.5;
  better.gradient = {-1, 0};  // optimal for L1: |G_0 + sign(w_0)| = 0
  // ... and a dual value equal to the objective there: a gap of 0.
  set_entropy(better, 0.75 + loss0 - 1.5);
  const Report accepted = coordinator.report(better, priorities);
  EXPECT_NEAR(accepted.objective, 0.75 + loss0 - 1.5, 1e-9);
  EXPECT_EQ(accepted.columns[0], 1);  // one nonzero weight
  EXPECT_TRUE(accepted.converged);    // the gap is the rounding of sums over 4 rows
  EXPECT_FALSE(coordinator.wants_evaluation());
}

// A random symmetric positive definite matrix of condition about 1e8, as raw features of mixed scales give.
Eigen::MatrixXd ill_conditioned(Eigen::Index m, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::normal_distribution<double> normal;
  Eigen::MatrixXd x(3 * m, m);
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    double previous = normal(random);
    for (Eigen::Index j = 0; j < m; ++j) {
      previous = 0.99 * previous + 0.14 * normal(random);  // neighbouring columns correlated 0.99
      x(i, j) = previous * std::pow(10.0, static_cast<double>(j % 4) - 1.5);
    }
  }
  return x.transpose() * x;
}

// A model's starting point and gradient: a third of the coordinates nonzero.
void random_start(Eigen::Index m, std::uint64_t seed, Eigen::VectorXd& w, Eigen::VectorXd& g) {
  std::mt19937_64 random(seed);
  std::normal_distribution<double> normal;
  w.resize(m);
  g.resize(m);
  for (Eigen::Index j = 0; j < m; ++j) {
    w[j] = j % 3 == 0 ? normal(random) : 0.0;
    g[j] = 3 * normal(random);
  }
}

// The L1 model's summed violations at w + d.
double l1_violations(const Eigen::VectorXd& w, const Eigen::VectorXd& g, const Eigen::MatrixXd& h,
                     const Eigen::VectorXd& d) {
  const Eigen::VectorXd gradient = g + h * d;
  double sum = 0;
  for (Eigen::Index j = 0; j < w.size(); ++j)
    sum += std::abs(violation(Penalty::kL1, w[j] + d[j], gradient[j]));
  return sum;
}

// The coordinator's own solve of a Newton step's model: the exact minimiser for L2 (a linear system),
// and for L1 a point where every coordinate's violation (the coordinate step's optimality) is negligible.
TEST(NewtonModel, MinimisesIllConditionedModels) {
  const Eigen::Index m = 40;
  const Eigen::MatrixXd h = ill_conditioned(m, 4);
  Eigen::VectorXd w, g;
  random_start(m, 5, w, g);
  const ModelSolution l2 = minimise_model(Penalty::kL2, w, g, h, 1e-10, 1e8);
  const Eigen::MatrixXd shifted = h + Eigen::MatrixXd::Identity(m, m);
  const Eigen::VectorXd exact = shifted.ldlt().solve(-(g + w));
  EXPECT_LE((l2.d - exact).norm(), 1e-8 * exact.norm());
  EXPECT_LE(l2.violation, 1e-10);

  // To near the rounding of the model's terms (H's entries reach 1e4).
  const ModelSolution l1 = minimise_model(Penalty::kL1, w, g, h, 1e-8, 1e8);
  EXPECT_LT(l1.passes, 1000u);
  EXPECT_LE(l1_violations(w, g, h, l1.d), 1e-8);
  EXPECT_LT(model_value(Penalty::kL1, w, g, l1.d, h * l1.d), 0.0);
  // Plain cyclic descent, many times as many passes, gets no lower.
  Eigen::VectorXd d = Eigen::VectorXd::Zero(m), h_d = Eigen::VectorXd::Zero(m);
  for (int pass = 0; pass < 20000; ++pass) {
    for (Eigen::Index j = 0; j < m; ++j) {
      const double delta = coordinate_step(Penalty::kL1, w[j] + d[j], g[j] + h_d[j], h(j, j));
      d[j] += delta;
      h_d += delta * h.col(j);
    }
  }
  const double descent = model_value(Penalty::kL1, w, g, d, h_d);
  EXPECT_LE(model_value(Penalty::kL1, w, g, l1.d, h * l1.d), descent + 1e-12 * std::abs(descent));
}

// A tolerance below the rounding of the model's sums (a tiny gradient against H's entries of 1e4, as
// at the end of a solve) cannot be met: the solve stops once its passes stop lowering the violation,
// not after spending its whole budget, and its point is as good as the budget's.
TEST(NewtonModel, StopsAtTheRoundingFloor) {
  const Eigen::Index m = 40;
  const Eigen::MatrixXd h = ill_conditioned(m, 4);
  Eigen::VectorXd w, g;
  random_start(m, 5, w, g);
  for (const Penalty penalty : {Penalty::kL1, Penalty::kL2}) {
    const ModelSolution solution = minimise_model(penalty, w, g, h, 1e-300, 1e9);
    EXPECT_LT(solution.work, 1e7);
    EXPECT_LT(solution.passes, 1000u);
    EXPECT_LE(solution.violation, 1e-8);
  }
}

// Hundreds of coordinates that must leave or join the support, on an ill-conditioned model: cyclic
// descent with single face steps ended 1e4 from optimal within this work.
TEST(NewtonModel, SolvesLargeIllConditionedModels) {
  constexpr Eigen::Index kBlock = 40, kBlocks = 15, m = kBlock * kBlocks;
  Eigen::MatrixXd h = Eigen::MatrixXd::Zero(m, m);
  for (Eigen::Index b = 0; b < kBlocks; ++b)
    h.block(b * kBlock, b * kBlock, kBlock, kBlock) =
        ill_conditioned(kBlock, 10 + static_cast<std::uint64_t>(b));
  Eigen::VectorXd w, g;
  random_start(m, 6, w, g);
  const ModelSolution l1 = minimise_model(Penalty::kL1, w, g, h, 1e-6, 1e9);
  EXPECT_LE(l1_violations(w, g, h, l1.d), 1e-6);
}

// The face's factor, grown and shrunk a coordinate at a time, solves as a factorisation made afresh.
TEST(NewtonModel, FaceFactorFollowsItsFace) {
  const Eigen::MatrixXd h = ill_conditioned(12, 7);
  detail::FaceFactor factor(12);
  for (const Eigen::Index j : {3, 0, 7, 11, 5, 9, 1}) ASSERT_TRUE(factor.add(h, j));
  factor.remove(2);  // 7
  factor.remove(0);  // 3
  ASSERT_TRUE(factor.add(h, 4));
  factor.remove(3);  // 9
  const std::vector<Eigen::Index> face = {0, 11, 5, 1, 4};
  ASSERT_EQ(factor.face(), face);
  Eigen::MatrixXd system(5, 5);
  Eigen::VectorXd rhs(5);
  for (Eigen::Index a = 0; a < 5; ++a) {
    rhs[a] = static_cast<double>(a) - 1.5;
    for (Eigen::Index b = 0; b < 5; ++b) system(a, b) = h(face[a], face[b]);
  }
  const Eigen::VectorXd exact = system.ldlt().solve(rhs);
  Eigen::VectorXd solved = rhs;
  factor.solve(solved);
  EXPECT_LE((solved - exact).norm(), 1e-6 * exact.norm());
  // A coordinate in the span of the face is refused.
  Eigen::MatrixXd rank_one = Eigen::MatrixXd::Ones(3, 3);
  detail::FaceFactor singular(3);
  EXPECT_TRUE(singular.add(rank_one, 0));
  EXPECT_FALSE(singular.add(rank_one, 1));
}

// Once a Newton step has named its model (--newton_steps hessian), the next evaluation's Hessian over it
// gives the coordinator the next step whole, shipped in one commit; a worker that cannot compute the Hessian
// (a GPU kernel) sends the steps back to rounds.
TEST(LogregCoordinator, AHessianGivesTheNewtonStepInOneCommit) {
  using Logreg = logreg::Logreg;
  for (const bool missing : {false, true}) {
    SCOPED_TRACE(missing ? "Hessian missing" : "Hessian given");
    Logreg::Config config;
    config.data = "unused";
    config.fit_intercept = false;
    config.newton_steps = "hessian";
    Logreg::Setup setup;
    setup.gradient = {-4, 0};
    setup.column_norms = {4, 4};
    setup.rows = 4;
    setup.positives = 2;
    Logreg::Coordinator coordinator(config, 2, setup);
    Priorities priorities;
    Logreg::Stats at_zero;
    at_zero.gradient = {-4, 0};
    at_zero.curvature = {1, 1};
    at_zero.loss = 4 * std::log(2.0);
    set_entropy(at_zero, 0.0);
    coordinator.report(at_zero, priorities);
    // The first step, by rounds: nothing names a model before it.
    Schedule block;
    block.params = {0};
    Logreg::Partial partial;
    partial.hessian_d = {0};
    coordinator.aggregate(block, partial, priorities);
    partial.hessian_d = {3};
    const Logreg::Commit step = coordinator.aggregate(block, partial, priorities);
    EXPECT_EQ(step.step, 1);
    EXPECT_EQ(step.remodel, 1);
    EXPECT_EQ(step.model, std::vector<ParamIndex>{0});  // moving; coordinate 1 is far from moving
    // Accepted at w = (3, 0), where the loss's gradient is -0.5 and its Hessian 2 over coordinate 0.
    Logreg::Stats there = at_zero;
    there.gradient = {-0.5, 0};
    there.curvature = {2, 1};
    there.loss_change = -12;
    there.loss = at_zero.loss - 12;
    there.hessian = {missing ? 0.0 : 2.0};
    there.hessian_missing = missing ? 1 : 0;
    coordinator.report(there, priorities);
    const Logreg::Commit next = coordinator.aggregate(block, partial, priorities);
    EXPECT_TRUE(next.new_direction);
    if (missing) {
      EXPECT_EQ(next.step, 0);  // a round of coordinate descent
      EXPECT_FALSE(coordinator.wants_evaluation());
    } else {
      // min -0.5 d + d^2 + |3 + d|: d = -0.25 (the loss's slope -0.5 and the penalty's 1 need 2 d = -0.5).
      ASSERT_EQ(next.delta.size(), 1u);
      EXPECT_NEAR(next.delta[0], -0.25, 1e-12);
      EXPECT_EQ(next.step, 1);
      EXPECT_TRUE(coordinator.wants_evaluation());
    }
  }
}

// A StepWays and a step of it: `work` spent, `digits` gained.
class StepWaysTest : public ::testing::Test {
 protected:
  void step(StepWays::Way way, double work, double digits) {
    ways.spend(work);
    ways.step_ended(way, digits);
  }
  StepWays ways;
};

// The choice between steps by rounds and steps from the Hessian: rounds while they gain enough digits a
// step, the Hessian once they creep and for as long as it does better per unit of work, and a way given
// up not tried again for 8 steps.
TEST_F(StepWaysTest, RoundsUntilTheyCreepThenTheHessianWhileItDoesBetter) {
  using Ways = StepWays;
  for (int k = 0; k < 3; ++k) {
    step(Ways::kRounds, 100, 0.1);
    EXPECT_FALSE(ways.hessian_next()) << "step " << k;  // too few steps to judge
  }
  step(Ways::kRounds, 100, 0.1);
  EXPECT_TRUE(ways.hessian_next());  // creeping: 0.1 digits a step
  step(Ways::kHessian, 1000, 2);     // 0.002 digits a unit, against the rounds' 0.001
  EXPECT_TRUE(ways.hessian_next());
  step(Ways::kHessian, 1000, 0.5);  // 0.0005: worse than the rounds
  EXPECT_FALSE(ways.hessian_next());
  for (int k = 0; k < 7; ++k) {
    step(Ways::kRounds, 400, 0.25);  // 0.000625 digits a unit: better than the Hessian's last
    EXPECT_FALSE(ways.hessian_next()) << "step " << k;  // the Hessian waits 8 steps
  }
  step(Ways::kRounds, 400, 0.25);
  EXPECT_TRUE(ways.hessian_next());
  step(Ways::kRounds, 100, 0.9);
  step(Ways::kRounds, 100, 0.9);
  EXPECT_FALSE(ways.hessian_next());  // 0.5 digits a step on average: no longer creeping
  step(Ways::kRounds, 100, NAN);      // a step of unknown gain counts for nothing
  EXPECT_FALSE(ways.hessian_next());
}

// After rounds that no longer creep (a path's warm starts), the Hessian is taken again at once when its
// last step did better per unit of work than the rounds' last.
TEST_F(StepWaysTest, BackToTheHessianWhenItsLastStepDidBetter) {
  for (int k = 0; k < 4; ++k) step(StepWays::kRounds, 100, 0.1);
  ASSERT_TRUE(ways.hessian_next());
  step(StepWays::kHessian, 100, 3);    // 0.03 digits a unit
  step(StepWays::kRounds, 1000, 0.9);  // taken anyway (a model too large): 0.0009, and 0.3 digits a step
  EXPECT_TRUE(ways.hessian_next());
  step(StepWays::kHessian, 10000, 0.1);  // 0.00001: worse than the rounds' last
  EXPECT_FALSE(ways.hessian_next());
}

// A Hessian step many times as costly as the rounds' is tried again only once the rounds have spent
// twice what it cost, and the rounds are judged over their last four steps, not by one cut short.
TEST_F(StepWaysTest, RetriesACostlyHessianOnlyAfterTwiceItsCost) {
  for (int k = 0; k < 4; ++k) step(StepWays::kRounds, 100, 0.1);
  ASSERT_TRUE(ways.hessian_next());
  step(StepWays::kHessian, 10000, 0.5);  // 0.00005 digits a unit, against the rounds' 0.001
  EXPECT_FALSE(ways.hessian_next());
  int retried = 0;
  for (int k = 1; k <= 300 && retried == 0; ++k) {
    // One step in four loses digits; the window still scores the rounds at 0.00075 a unit.
    step(StepWays::kRounds, 100, k % 4 == 0 ? -0.1 : 0.1);
    if (ways.hessian_next()) retried = k;
  }
  EXPECT_EQ(retried, 200);  // 200 steps of 100: twice the Hessian's 10000
}

// Near the end of a solve a step from the Hessian gains every digit left, but costs what it always does:
// it pays only while the rounds, at their pace, would spend more on those digits.
TEST_F(StepWaysTest, TheHessianPaysOnlyForTheDigitsLeft) {
  EXPECT_TRUE(ways.hessian_pays(1e9, 0.1));                        // no pace of the rounds yet
  for (int k = 0; k < 4; ++k) step(StepWays::kRounds, 100, 0.25);  // 0.0025 digits a unit
  EXPECT_TRUE(ways.hessian_pays(1000, 6));                         // the rounds: 2400 for six digits
  EXPECT_FALSE(ways.hessian_pays(1000, 2));                        // 800 for two
  EXPECT_FALSE(ways.hessian_pays(1, -1));                          // nothing left
  StepWays hessian(StepWays::Mode::kHessian);
  EXPECT_TRUE(hessian.hessian_pays(1e9, 0.1));  // --newton_steps hessian takes it whenever it can
}

// A model's dense arithmetic: cheap while its matrix fits a core's cache, a worker's rate beyond.
TEST(StepWays, DenseWorkCostsMoreOnceTheMatrixSpillsTheCache) {
  EXPECT_DOUBLE_EQ(StepWays::dense_work(1e6, 100), StepWays::kDenseWork * 1e6);
  EXPECT_DOUBLE_EQ(StepWays::dense_work(1e6, 2000), 1e6);
}

// The dual value from the grid of scales: below the exact sum of entropies wherever t falls, and close;
// from a part of the grid, below the whole grid's.
TEST(LogregDual, TheChordOfTheGridBoundsTheEntropySumFromBelow) {
  std::mt19937_64 random(3);
  std::normal_distribution<double> normal;
  std::vector<double> alpha(500);
  for (double& a : alpha) a = logreg::margin_terms(3 * normal(random)).alpha;
  const auto exact = [&](double t) {
    double sum = 0;
    for (double a : alpha) sum += logreg::binary_entropy(t * a, std::log(t * a));
    return sum;
  };
  std::vector<double> sums;
  for (double t : logreg::kDualScales) sums.push_back(exact(t));
  for (double t : {1.0, 1 - 1e-9, 0.9999, 0.99, 0.95, 0.8, 0.5, 0.3, 0.1, 0.01, 1e-5, 1e-8}) {
    const double bound = logreg::entropy_at(t, sums);
    EXPECT_LE(bound, exact(t) * (1 + 1e-12)) << "t " << t;
    // Loose only far from 1, where t is early in a solve, when the gap is large anyway.
    if (t >= 0.01) {
      EXPECT_GE(bound, exact(t) * 0.95) << "t " << t;
    }
  }
  // Summed at scales_near(t) only (NaN elsewhere), the chord is the full grid's where t falls, and
  // still a bound, looser, where it has moved off them.
  for (const double near : {1.0, 0.99, 0.5, 0.01, 1e-8}) {
    std::vector<double> some(sums.size(), NAN);
    for (const std::uint8_t k : logreg::scales_near({near, near * 0.9})) some[k] = sums[k];
    EXPECT_EQ(some[0], sums[0]);
    EXPECT_DOUBLE_EQ(logreg::entropy_at(near, some), logreg::entropy_at(near, sums)) << "t " << near;
    for (double t : {1.0, 0.9999, 0.9, 0.5, 0.1, 1e-3, 1e-7}) {
      EXPECT_LE(logreg::entropy_at(t, some), logreg::entropy_at(t, sums) * (1 + 1e-12))
          << near << ", t " << t;
      EXPECT_GE(logreg::entropy_at(t, some), 0) << near << ", t " << t;
    }
  }
  EXPECT_NEAR(logreg::binary_entropy(0.5, std::log(0.5)), std::log(2.0), 1e-15);
  EXPECT_EQ(logreg::binary_entropy(0.0, -INFINITY), 0.0);
  EXPECT_EQ(logreg::binary_entropy(1.0, 0.0), 0.0);
  EXPECT_NEAR(logreg::margin_terms(800).alpha, std::exp(-800.0), 1e-300);  // no overflow either way
  EXPECT_EQ(logreg::margin_terms(-800).alpha, 1.0);
}

// A run stopped with its weights settled and its gap far off, on features of very different scales, says
// why; in any other case it says nothing.
TEST(LogregFinish, HintsAtALaggingGapOnlyWhereScalesDiffer) {
  Eigen::VectorXd norms(4);
  norms << 1.0, 0.0, 40.0, 5.2e8;
  const std::string hint = logreg::lagging_gap_hint(9.5e-7, 0.04, 1e-4, norms, 300, 2048);
  EXPECT_NE(hint.find("optimality 9.5e-07"), std::string::npos) << hint;
  EXPECT_NE(hint.find("from 1 to 5.2e+08"), std::string::npos) << hint;
  EXPECT_NE(hint.find("scaled"), std::string::npos) << hint;
  // Where the model set was too large for the Hessian, the remedy is a larger bound.
  const std::string bound = logreg::lagging_gap_hint(9.5e-7, 0.04, 1e-4, norms, 1352, 1024);
  EXPECT_NE(bound.find("1352 coordinates moving exceed --max_hessian 1024"), std::string::npos) << bound;
  EXPECT_EQ(logreg::lagging_gap_hint(3e-4, 0.04, 1e-4, norms, 300, 2048), "");    // the weights still move
  EXPECT_EQ(logreg::lagging_gap_hint(9.5e-7, 5e-5, 1e-4, norms, 300, 2048), "");  // the gap is down
  Eigen::VectorXd narrow(3);
  narrow << 1.0, 30.0, 1e4;
  EXPECT_EQ(logreg::lagging_gap_hint(9.5e-7, 0.04, 1e-4, narrow, 300, 2048), "");
}

TEST(AreaUnderCurve, CountsCorrectlyOrderedPairs) {
  std::mt19937_64 random(8);
  std::uniform_int_distribution<int> score(0, 9);  // coarse scores: many ties
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<double> scores(60);
    std::vector<bool> positive(60);
    for (std::size_t r = 0; r < scores.size(); ++r) {
      scores[r] = score(random);
      positive[r] = score(random) < 4;
    }
    double ordered = 0, pairs = 0;
    for (std::size_t a = 0; a < scores.size(); ++a) {
      for (std::size_t b = 0; b < scores.size(); ++b) {
        if (!positive[a] || positive[b]) continue;
        ++pairs;
        ordered += scores[a] > scores[b] ? 1.0 : scores[a] == scores[b] ? 0.5 : 0.0;
      }
    }
    EXPECT_NEAR(logreg::area_under_curve(scores, positive), ordered / pairs, 1e-12);
  }
  EXPECT_TRUE(std::isnan(logreg::area_under_curve({1, 2}, {true, true})));
}

}  // namespace
}  // namespace schmp
