#include "logreg_reference.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace schmp::testing {

namespace {

// log(1 + exp(-z)) without overflow for very negative z nor loss of precision for large z.
double logistic_loss(double z) { return z >= 0 ? std::log1p(std::exp(-z)) : -z + std::log1p(std::exp(z)); }

// 1 / (1 + exp(z)) = 1 - sigma(z): the probability the model gives the wrong label at margin z.
double wrong_probability(double z) { return 1.0 / (1.0 + std::exp(z)); }

// The penalty a |w| + r w^2 / 2 of one weight: (a, r) = (l1_ratio, 1 - l1_ratio) for L1, (0, 1) for L2.
struct Shares {
  double a;
  double r;
};
Shares shares_of(bool l1, double l1_ratio) { return l1 ? Shares{l1_ratio, 1 - l1_ratio} : Shares{0, 1}; }
double regularizer(double w, Shares s) { return s.a * std::abs(w) + 0.5 * s.r * w * w; }

}  // namespace

double logreg_objective(const io::SparseRows& rows, std::size_t columns, const std::vector<double>& w,
                        double C, bool l1, bool intercept, double l1_ratio) {
  if (w.size() != columns + (intercept ? 1 : 0) || rows.columns() > columns)
    throw std::invalid_argument("logreg_objective: weights do not match the columns");
  double loss = 0, penalty = 0;
  for (std::size_t i = 0; i < rows.rows(); ++i) {
    double margin = intercept ? w[columns] : 0.0;
    for (std::size_t e = rows.row_start[i]; e < rows.row_start[i + 1]; ++e)
      margin += w[rows.index[e]] * rows.value[e];
    loss += logistic_loss(rows.labels[i] * margin);
  }
  for (std::size_t j = 0; j < columns; ++j) penalty += regularizer(w[j], shares_of(l1, l1_ratio));
  return penalty + C * loss;
}

LogregSolution solve_logreg_reference(const io::SparseRows& rows, std::size_t columns, double C, bool l1,
                                      bool intercept, double l1_ratio) {
  const Shares shares = shares_of(l1, l1_ratio);
  const double a = shares.a, r = shares.r;
  if (rows.columns() > columns) throw std::invalid_argument("solve_logreg_reference: too few columns");
  const std::size_t n = rows.rows();
  const std::vector<double>& y = rows.labels;
  // The intercept is the weight of a constant column after the others, free of the penalty.
  const std::size_t weights = columns + (intercept ? 1 : 0);
  auto penalised = [&](std::size_t j) { return j < columns; };
  // Columns of X, holding y_i x_ij so that the margins y_i w.x_i update directly.
  std::vector<std::vector<std::pair<std::size_t, double>>> by_column(weights);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t e = rows.row_start[i]; e < rows.row_start[i + 1]; ++e)
      by_column[rows.index[e]].emplace_back(i, y[i] * rows.value[e]);
    if (intercept) by_column[columns].emplace_back(i, y[i]);
  }
  // margin[i] = y_i w.x_i and wrong[i] = 1 - sigma(margin[i]), kept in step with w.
  std::vector<double> w(weights, 0.0), margin(n, 0.0), wrong(n);
  // Margins from scratch, so that rounding from many incremental updates never accumulates.
  auto refresh = [&] {
    for (std::size_t i = 0; i < n; ++i) {
      double m = intercept ? w[columns] : 0.0;
      for (std::size_t e = rows.row_start[i]; e < rows.row_start[i + 1]; ++e)
        m += w[rows.index[e]] * rows.value[e];
      margin[i] = y[i] * m;
      wrong[i] = wrong_probability(margin[i]);
    }
  };
  // Derivative of the loss term along w_j.
  auto gradient = [&](std::size_t j) {
    double g = 0;
    for (const auto& [i, yx] : by_column[j]) g -= yx * wrong[i];
    return C * g;
  };
  // Largest entry of the minimum-norm subgradient: zero exactly at the optimum.
  auto residual = [&] {
    double worst = 0;
    for (std::size_t j = 0; j < weights; ++j) {
      const double g = gradient(j) + (penalised(j) ? r * w[j] : 0.0);
      const double v = !penalised(j) ? std::abs(g)
                       : w[j] != 0   ? std::abs(g + std::copysign(a, w[j]))
                                     : std::max(0.0, std::abs(g) - a);
      worst = std::max(worst, v);
    }
    return worst;
  };
  refresh();
  const double tolerance = 1e-10 * std::max(1.0, residual());
  for (int sweep = 0; sweep < 100000 && residual() > tolerance; ++sweep) {
    for (std::size_t j = 0; j < weights; ++j) {
      if (by_column[j].empty()) continue;
      double g = 0, h = 0;
      for (const auto& [i, yx] : by_column[j]) {
        g -= yx * wrong[i];
        h += yx * yx * wrong[i] * (1 - wrong[i]);
      }
      g *= C;
      h = C * h + 1e-12;  // keeps the step finite where every example is fitted with certainty
      // Newton step on the quadratic model (liblinear's CDN) with the ridge's derivatives,
      // soft-thresholded by the L1 share.
      const double gr = penalised(j) ? g + r * w[j] : g, hr = penalised(j) ? h + r : h;
      double d = !penalised(j)         ? -g / h
                 : gr + a <= hr * w[j] ? -(gr + a) / hr
                 : gr - a >= hr * w[j] ? -(gr - a) / hr
                                       : -w[j];
      // Armijo backtracking on the exact change of the objective, so that it never increases. Each
      // loss change log(1 + exp(-m - t)) - log(1 + exp(-m)) is log1p(p * expm1(-t)) with p the
      // wrong-label probability: accurate however small the step, so steps keep being accepted
      // right up to the optimum.
      bool accepted = false;
      for (int halving = 0; halving < 60 && d != 0 && !accepted; ++halving) {
        const double penalty_change =
            penalised(j) ? regularizer(w[j] + d, shares) - regularizer(w[j], shares) : 0.0;
        double loss_change = 0;
        for (const auto& [i, yx] : by_column[j]) loss_change += std::log1p(wrong[i] * std::expm1(-yx * d));
        accepted = penalty_change + C * loss_change <= 0.01 * (g * d + penalty_change);
        if (!accepted) d /= 2;
      }
      if (!accepted) continue;
      w[j] += d;
      for (const auto& [i, yx] : by_column[j]) {
        margin[i] += yx * d;
        wrong[i] = wrong_probability(margin[i]);
      }
    }
    refresh();
  }
  LogregSolution solution;
  solution.objective = logreg_objective(rows, columns, w, C, l1, intercept, l1_ratio);
  solution.w = std::move(w);
  return solution;
}

namespace {

// Each row's class: the index of its label among the sorted distinct labels.
std::vector<std::size_t> class_indices(const io::SparseRows& rows, std::size_t& classes) {
  std::vector<double> labels = rows.labels;
  std::sort(labels.begin(), labels.end());
  labels.erase(std::unique(labels.begin(), labels.end()), labels.end());
  classes = labels.size();
  std::vector<std::size_t> y;
  for (const double label : rows.labels)
    y.push_back(
        static_cast<std::size_t>(std::lower_bound(labels.begin(), labels.end(), label) - labels.begin()));
  return y;
}

// log sum_l exp(z_l).
double log_sum_exp(const std::vector<double>& z) {
  const double top = *std::max_element(z.begin(), z.end());
  double sum = 0;
  for (const double v : z) sum += std::exp(v - top);
  return top + std::log(sum);
}

}  // namespace

double multinomial_objective(const io::SparseRows& rows, std::size_t columns,
                             const std::vector<std::vector<double>>& w, double C, bool intercept,
                             double l1_ratio) {
  std::size_t classes = 0;
  const std::vector<std::size_t> y = class_indices(rows, classes);
  if (w.size() != classes) throw std::invalid_argument("multinomial_objective: a weight vector per class");
  double loss = 0, penalty = 0;
  std::vector<double> z(classes);
  for (std::size_t i = 0; i < rows.rows(); ++i) {
    for (std::size_t l = 0; l < classes; ++l) {
      z[l] = intercept ? w[l].at(columns) : 0.0;
      for (std::size_t e = rows.row_start[i]; e < rows.row_start[i + 1]; ++e)
        z[l] += w[l].at(rows.index[e]) * rows.value[e];
    }
    loss += log_sum_exp(z) - z[y[i]];
  }
  for (const std::vector<double>& weights : w) {
    for (std::size_t j = 0; j < columns; ++j) penalty += regularizer(weights[j], shares_of(true, l1_ratio));
  }
  return penalty + C * loss;
}

MultinomialSolution solve_multinomial_reference(const io::SparseRows& rows, std::size_t columns, double C,
                                                bool intercept, double l1_ratio) {
  const Shares shares = shares_of(true, l1_ratio);
  std::size_t classes = 0;
  const std::vector<std::size_t> y = class_indices(rows, classes);
  const std::size_t n = rows.rows(), weights = columns + (intercept ? 1 : 0);
  std::vector<std::vector<std::pair<std::size_t, double>>> by_column(weights);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t e = rows.row_start[i]; e < rows.row_start[i + 1]; ++e)
      by_column[rows.index[e]].emplace_back(i, rows.value[e]);
    if (intercept) by_column[columns].emplace_back(i, 1.0);
  }
  std::vector<std::vector<double>> w(classes, std::vector<double>(weights, 0.0));
  // The scores z_il and probabilities p_il, kept in step with w.
  std::vector<std::vector<double>> z(n, std::vector<double>(classes, 0.0)), p = z;
  const auto probabilities = [&](std::size_t i) {
    const double lse = log_sum_exp(z[i]);
    for (std::size_t l = 0; l < classes; ++l) p[i][l] = std::exp(z[i][l] - lse);
  };
  for (std::size_t i = 0; i < n; ++i) probabilities(i);
  const auto penalised = [&](std::size_t j) { return j < columns; };
  const auto gradient = [&](std::size_t l, std::size_t j) {
    double g = 0;
    for (const auto& [i, x] : by_column[j]) g += x * (p[i][l] - (y[i] == l ? 1.0 : 0.0));
    return C * g;
  };
  const auto residual = [&] {
    double worst = 0;
    for (std::size_t l = 0; l < classes; ++l) {
      for (std::size_t j = 0; j < weights; ++j) {
        const double g = gradient(l, j) + (penalised(j) ? shares.r * w[l][j] : 0.0);
        const double v = !penalised(j)  ? std::abs(g)
                         : w[l][j] != 0 ? std::abs(g + std::copysign(shares.a, w[l][j]))
                                        : std::max(0.0, std::abs(g) - shares.a);
        worst = std::max(worst, v);
      }
    }
    return worst;
  };
  const double tolerance = 1e-10 * std::max(1.0, residual());
  for (int sweep = 0; sweep < 100000 && residual() > tolerance; ++sweep) {
    for (std::size_t l = 0; l < classes; ++l) {
      for (std::size_t j = 0; j < weights; ++j) {
        if (by_column[j].empty()) continue;
        double g = 0, h = 0;
        for (const auto& [i, x] : by_column[j]) {
          g += x * (p[i][l] - (y[i] == l ? 1.0 : 0.0));
          h += x * x * p[i][l] * (1 - p[i][l]);
        }
        g *= C;
        h = C * h + 1e-12;
        const double x0 = w[l][j];
        const double gr = penalised(j) ? g + shares.r * x0 : g, hr = penalised(j) ? h + shares.r : h;
        const double a = shares.a;
        double d = !penalised(j)       ? -g / h
                   : gr + a <= hr * x0 ? -(gr + a) / hr
                   : gr - a >= hr * x0 ? -(gr - a) / hr
                                       : -x0;
        // Backtracking on the exact change: row i's loss moves by log(1 + p_il expm1(d x)) - d x [y_i = l].
        bool accepted = false;
        for (int halving = 0; halving < 60 && d != 0 && !accepted; ++halving) {
          const double penalty_change =
              penalised(j) ? regularizer(x0 + d, shares) - regularizer(x0, shares) : 0.0;
          double loss_change = 0;
          for (const auto& [i, x] : by_column[j])
            loss_change += std::log1p(p[i][l] * std::expm1(d * x)) - (y[i] == l ? d * x : 0.0);
          accepted = penalty_change + C * loss_change <= 0.01 * (g * d + penalty_change);
          if (!accepted) d /= 2;
        }
        if (!accepted) continue;
        w[l][j] += d;
        for (const auto& [i, x] : by_column[j]) {
          z[i][l] += d * x;
          probabilities(i);
        }
      }
    }
  }
  MultinomialSolution solution;
  solution.objective = multinomial_objective(rows, columns, w, C, intercept, l1_ratio);
  solution.w = std::move(w);
  return solution;
}

}  // namespace schmp::testing
