#include "schmp/kernels/factor_kernels.hpp"

#include <cmath>

namespace schmp::kernels {

namespace {

double dot(const double* a, const double* b, int width) {
  double sum = 0;
  for (int d = 0; d < width; ++d) sum += a[d] * b[d];
  return sum;
}

}  // namespace

double sgd_pass(std::span<const CellRating> cell, AdaptiveRows users, AdaptiveRows items, RowLayout layout,
                double lambda, double learning_rate) {
  const int rank = layout.rank;
  const int width = layout.width();
  // The AdaGrad sum adds the mean over the entries that move: the latent ones and the row's bias.
  const double inverse_moving = 1.0 / (rank + (layout.biases ? 1 : 0));
  double squared_error = 0;
  for (const CellRating& rating : cell) {
    double* w = users.factors + static_cast<std::size_t>(rating.user) * width;
    double* h = items.factors + static_cast<std::size_t>(rating.item) * width;
    double& w_sum = users.gradient_sums[rating.user];
    double& h_sum = items.gradient_sums[rating.item];
    const double error = rating.value - dot(w, h, width);
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
    if (layout.biases) {
      // Each bias meets a fixed 1 on the other side.
      const double w_gradient = lambda * w[layout.user_bias()] - error;
      const double h_gradient = lambda * h[layout.item_bias()] - error;
      w[layout.user_bias()] -= w_step * w_gradient;
      h[layout.item_bias()] -= h_step * h_gradient;
      w_squares += w_gradient * w_gradient;
      h_squares += h_gradient * h_gradient;
    }
    w_sum += w_squares * inverse_moving;
    h_sum += h_squares * inverse_moving;
  }
  return squared_error;
}

namespace {

// The gathering both objectives share: moves each residual's lift when `relift`, then hands add(row,
// residual, other entry, rating) every rating.
template <class Add>
void gather(std::span<const CellRating> cell, std::span<double> residuals, FactorColumns users,
            FactorColumns items, bool relift, bool gather_users, Add add) {
  const bool lifted = users.lifted >= 0;
  for (std::size_t e = 0; e < cell.size(); ++e) {
    const CellRating& rating = cell[e];
    const double* w = users.rows + static_cast<std::size_t>(rating.user) * users.width;
    const double* h = items.rows + static_cast<std::size_t>(rating.item) * items.width;
    double& residual = residuals[e];
    if (relift) {
      if (lifted) residual -= w[users.lifted] * h[items.lifted];
      residual += w[users.component] * h[items.component];
    }
    const double other = gather_users ? h[items.component] : w[users.component];
    add(gather_users ? rating.user : rating.item, residual, other, rating.value);
  }
}

}  // namespace

void ccd_gather(std::span<const CellRating> cell, std::span<double> residuals, FactorColumns users,
                FactorColumns items, bool relift, bool gather_users, double* numerator, double* denominator) {
  gather(cell, residuals, users, items, relift, gather_users,
         [&](std::uint32_t row, double residual, double other, double) {
           numerator[row] += residual * other;
           denominator[row] += other * other;
         });
}

void ccd_gather_one_class(std::span<const CellRating> cell, std::span<double> residuals, FactorColumns users,
                          FactorColumns items, bool relift, bool gather_users, double* numerator,
                          double* denominator) {
  gather(cell, residuals, users, items, relift, gather_users,
         [&](std::uint32_t row, double residual, double other, double extra) {
           numerator[row] += (1 + extra * residual) * other;
           denominator[row] += extra * other * other;
         });
}

double one_class_loss(std::span<const CellRating> cell, const double* user_factors,
                      const double* item_factors, int width) {
  double sum = 0;
  for (const CellRating& rating : cell) {
    const double fit = dot(user_factors + static_cast<std::size_t>(rating.user) * width,
                           item_factors + static_cast<std::size_t>(rating.item) * width, width);
    sum += (1 + rating.value) * (1 - fit) * (1 - fit) - fit * fit;
  }
  return sum;
}

ErrorSums error_sums(std::span<const CellRating> cell, const double* user_factors, const double* item_factors,
                     int width) {
  ErrorSums sums;
  for (const CellRating& rating : cell) {
    const double error =
        rating.value - dot(user_factors + static_cast<std::size_t>(rating.user) * width,
                           item_factors + static_cast<std::size_t>(rating.item) * width, width);
    sums.squared += error * error;
    sums.absolute += std::abs(error);
  }
  return sums;
}

}  // namespace schmp::kernels
