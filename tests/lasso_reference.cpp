#include "lasso_reference.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace schmp::testing {

LassoSolution solve_lasso_reference(const io::SparseRows& rows, double lambda_ratio, bool fit_intercept,
                                    double l1_ratio, double lambda, const std::vector<double>& weights) {
  const std::size_t rows_count = rows.rows();
  const std::vector<double> w = weights.empty() ? std::vector<double>(rows_count, 1.0) : weights;
  // The loss's normaliser: n without weights.
  const double n = std::accumulate(w.begin(), w.end(), 0.0);
  const std::size_t p = rows.columns();
  // Columns of X.
  std::vector<std::vector<std::pair<std::size_t, double>>> columns(p);
  for (std::size_t i = 0; i < rows_count; ++i) {
    for (std::size_t e = rows.row_start[i]; e < rows.row_start[i + 1]; ++e) {
      columns[rows.index[e]].emplace_back(i, rows.value[e]);
    }
  }
  auto column_dot = [&](std::size_t j, const std::vector<double>& v) {
    double sum = 0;
    for (const auto& [i, x] : columns[j]) sum += w[i] * x * v[i];
    return sum;
  };
  LassoSolution solution;
  std::vector<double> r = rows.labels;
  // The residual's mean taken off r and put into the intercept: b's exact coordinate step.
  auto fit_mean = [&] {
    if (!fit_intercept) return;
    const double mean = std::inner_product(w.begin(), w.end(), r.begin(), 0.0) / n;
    for (double& v : r) v -= mean;
    solution.intercept += mean;
  };
  fit_mean();
  double lambda_max = 0;
  for (std::size_t j = 0; j < p; ++j) lambda_max = std::max(lambda_max, std::abs(column_dot(j, r)) / n);
  solution.lambda = lambda > 0 ? lambda : lambda_ratio * lambda_max / l1_ratio;
  const double l1 = solution.lambda * l1_ratio, l2 = solution.lambda * (1 - l1_ratio);
  solution.beta.assign(p, 0.0);
  std::vector<double> norms(p, 0.0);
  for (std::size_t j = 0; j < p; ++j) {
    for (const auto& [i, x] : columns[j]) norms[j] += w[i] * x * x;
  }
  const double threshold = n * l1;
  auto objective = [&] {
    double rr = 0, sum = 0, squares = 0;
    for (std::size_t i = 0; i < rows_count; ++i) rr += w[i] * r[i] * r[i];
    for (double b : solution.beta) sum += std::abs(b), squares += b * b;
    return rr / (2.0 * n) + l1 * sum + l2 * squares / 2;
  };
  // The duality gap, with r summing to zero when b is fitted (the dual's constraint for an unpenalised
  // intercept). For the Lasso the dual point is r / max(n lambda, ||X^T r||_inf); with a ridge share,
  // r itself, against the penalty's conjugate sum_j (|x_j . r| / n - lambda a)_+^2 / (2 lambda (1 - a)).
  auto relative_gap = [&] {
    fit_mean();
    double rr = 0, yr = 0, largest = 0, conjugate = 0;
    for (std::size_t i = 0; i < rows_count; ++i) rr += w[i] * r[i] * r[i], yr += w[i] * rows.labels[i] * r[i];
    for (std::size_t j = 0; j < p; ++j) {
      const double dot = std::abs(column_dot(j, r));
      largest = std::max(largest, dot);
      const double excess = std::max(0.0, dot / n - l1);
      conjugate += excess * excess;
    }
    double dual = 0;
    if (l2 > 0) {
      dual = (yr - rr / 2) / n - conjugate / (2 * l2);
    } else {
      const double s = std::max(threshold, largest);
      dual = (threshold * yr / s - threshold * threshold * rr / (2 * s * s)) / n;
    }
    const double primal = objective();
    return (primal - dual) / primal;
  };
  for (int sweep = 0; sweep < 1000000; ++sweep) {
    for (std::size_t j = 0; j < p; ++j) {
      if (norms[j] == 0) continue;
      const double z = solution.beta[j] * norms[j] + column_dot(j, r);
      const double updated = (z > threshold    ? z - threshold
                              : z < -threshold ? z + threshold
                                               : 0.0) /
                             (norms[j] + n * l2);
      const double delta = updated - solution.beta[j];
      if (delta == 0) continue;
      for (const auto& [i, x] : columns[j]) r[i] -= x * delta;
      solution.beta[j] = updated;
    }
    fit_mean();
    if (sweep % 10 == 9 && relative_gap() < 1e-12) break;
  }
  solution.objective = objective();
  return solution;
}

}  // namespace schmp::testing
