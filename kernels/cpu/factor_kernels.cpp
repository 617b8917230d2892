#include "kernels/factor_kernels.hpp"

#include <cmath>

namespace schmp::kernels {

namespace {

double dot(const double* a, const double* b, int rank) {
  double sum = 0;
  for (int d = 0; d < rank; ++d) sum += a[d] * b[d];
  return sum;
}

}  // namespace

double sgd_pass(std::span<const CellRating> cell, AdaptiveRows users, AdaptiveRows items, int rank,
                double lambda, double learning_rate) {
  double squared_error = 0;
  const double inverse_rank = 1.0 / rank;
  for (const CellRating& rating : cell) {
    double* w = users.factors + static_cast<std::size_t>(rating.user) * rank;
    double* h = items.factors + static_cast<std::size_t>(rating.item) * rank;
    double& w_sum = users.gradient_sums[rating.user];
    double& h_sum = items.gradient_sums[rating.item];
    const double error = rating.value - dot(w, h, rank);
    squared_error += error * error;
    const double w_step = learning_rate / std::sqrt(w_sum);
    const double h_step = learning_rate / std::sqrt(h_sum);
    double w_squares = 0;
    double h_squares = 0;
    for (int d = 0; d < rank; ++d) {
      const double w_gradient = lambda * w[d] - error * h[d];
      const double h_gradient = lambda * h[d] - error * w[d];
      w[d] -= w_step * w_gradient;
      h[d] -= h_step * h_gradient;
      w_squares += w_gradient * w_gradient;
      h_squares += h_gradient * h_gradient;
    }
    w_sum += w_squares * inverse_rank;
    h_sum += h_squares * inverse_rank;
  }
  return squared_error;
}

void ccd_gather(std::span<const CellRating> cell, std::span<double> residuals, const double* user_factors,
                const double* item_factors, int rank, const RankOneStep& step, double* numerator,
                double* denominator) {
  const int t = step.component;
  const bool relift = step.lifted != t;
  for (std::size_t e = 0; e < cell.size(); ++e) {
    const CellRating& rating = cell[e];
    const double* w = user_factors + static_cast<std::size_t>(rating.user) * rank;
    const double* h = item_factors + static_cast<std::size_t>(rating.item) * rank;
    double& residual = residuals[e];
    if (relift) {
      if (step.lifted >= 0) residual -= w[step.lifted] * h[step.lifted];
      residual += w[t] * h[t];
    }
    const double other = step.users ? h[t] : w[t];
    const std::uint32_t row = step.users ? rating.user : rating.item;
    numerator[row] += residual * other;
    denominator[row] += other * other;
  }
}

ErrorSums error_sums(std::span<const CellRating> cell, const double* user_factors, const double* item_factors,
                     int rank) {
  ErrorSums sums;
  for (const CellRating& rating : cell) {
    const double error =
        rating.value - dot(user_factors + static_cast<std::size_t>(rating.user) * rank,
                           item_factors + static_cast<std::size_t>(rating.item) * rank, rank);
    sums.squared += error * error;
    sums.absolute += std::abs(error);
  }
  return sums;
}

}  // namespace schmp::kernels
