#include "schmp/kernels/factor_kernels.hpp"

#include <cmath>
#include <type_traits>

#include "wide.hpp"

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
// residual, the other side's entries of the block, rating) every rating.
template <class Add, class Prefetch>
void gather(std::span<const CellRating> cell, std::span<double> residuals, FactorColumns users,
            FactorColumns items, bool relift, bool gather_users, Add add, Prefetch prefetch_row) {
  const bool lifted = users.lifted >= 0;
  // The rows a rating meets lie anywhere in memory: a few ratings ahead, ask for them.
  constexpr std::size_t kAhead = 8;
  for (std::size_t e = 0; e < cell.size(); ++e) {
    if (e + kAhead < cell.size()) {
      const CellRating& next = cell[e + kAhead];
      __builtin_prefetch(users.rows + static_cast<std::size_t>(next.user) * users.width + users.component);
      __builtin_prefetch(items.rows + static_cast<std::size_t>(next.item) * items.width + items.component);
      prefetch_row(gather_users ? next.user : next.item);
    }
    const CellRating& rating = cell[e];
    const double* w = users.rows + static_cast<std::size_t>(rating.user) * users.width;
    const double* h = items.rows + static_cast<std::size_t>(rating.item) * items.width;
    double& residual = residuals[e];
    if (relift) {
      if (lifted) {
        for (int c = 0; c < users.lifted_span; ++c) residual -= w[users.lifted + c] * h[items.lifted + c];
      }
      for (int c = 0; c < users.span; ++c) residual += w[users.component + c] * h[items.component + c];
    }
    const double* other = gather_users ? h + items.component : w + users.component;
    add(gather_users ? rating.user : rating.item, residual, other, rating.value);
  }
}

}  // namespace

void ccd_gather(std::span<const CellRating> cell, std::span<double> residuals, FactorColumns users,
                FactorColumns items, bool relift, bool gather_users, double* numerator, double* denominator) {
  gather(
      cell, residuals, users, items, relift, gather_users,
      [&](std::uint32_t row, double residual, const double* other, double) {
        numerator[row] += residual * other[0];
        denominator[row] += other[0] * other[0];
      },
      [](std::uint32_t) {});
}

namespace {

// ccd_gather_one_class for blocks of Span columns (0: any, from `users.span`); a Span known when
// compiling lets the sums unroll and vectorise, four doubles wide where the CPU has AVX2
// (gather_one_class_wide).
template <int Span>
void gather_one_class(std::span<const CellRating> cell, std::span<double> residuals, FactorColumns users,
                      FactorColumns items, bool relift, bool gather_users, double* numerator,
                      double* denominator) {
  const auto span = static_cast<std::size_t>(Span > 0 ? Span : users.span);
  const std::size_t packed = span * (span + 1) / 2;
  gather(
      cell, residuals, users, items, relift, gather_users,
      [&](std::uint32_t row, double residual, const double* other, double extra) {
        double* sums = numerator + row * span;
        double* products = denominator + row * packed;
        const double weight = 1 + extra * residual;
        for (std::size_t c = 0; c < span; ++c) {
          sums[c] += weight * other[c];
          const double scaled = extra * other[c];
          double* column = products + c * (c + 1) / 2;
          for (std::size_t d = 0; d <= c; ++d) column[d] += scaled * other[d];
        }
      },
      [&](std::uint32_t row) {
        const double* products = denominator + row * packed;
        for (std::size_t at = 0; at < packed; at += 8) __builtin_prefetch(products + at, 1);
      });
}

SCHMP_WIDE void gather_one_class_wide(std::span<const CellRating> cell, std::span<double> residuals,
                                      FactorColumns users, FactorColumns items, bool relift,
                                      bool gather_users, double* numerator, double* denominator) {
  const auto run = [&](auto span) {
    gather_one_class<decltype(span)::value>(cell, residuals, users, items, relift, gather_users, numerator,
                                            denominator);
  };
  switch (users.span) {
    case 1:
      return run(std::integral_constant<int, 1>{});
    case 2:
      return run(std::integral_constant<int, 2>{});
    case 4:
      return run(std::integral_constant<int, 4>{});
    case 8:
      return run(std::integral_constant<int, 8>{});
    case 16:
      return run(std::integral_constant<int, 16>{});
    default:
      return run(std::integral_constant<int, 0>{});
  }
}

}  // namespace

void ccd_gather_one_class(std::span<const CellRating> cell, std::span<double> residuals, FactorColumns users,
                          FactorColumns items, bool relift, bool gather_users, double* numerator,
                          double* denominator) {
  gather_one_class_wide(cell, residuals, users, items, relift, gather_users, numerator, denominator);
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
