// Matrix factorization kernels: the work on one cell of the ratings matrix (the ratings of some users
// for some items), with the factor rows of those users and items at hand. Plain arrays: factor rows
// are RowLayout::width() doubles each, row-major; a rating names its user and item by their rows there.
#pragma once

#include <cstdint>
#include <span>

namespace schmp::kernels {

struct CellRating {
  std::uint32_t user = 0;  // row in the users' factors
  std::uint32_t item = 0;  // row in the items' factors
  double value = 0;
};

// A factor row: `rank` latent entries; with biases, a user row then ends in (b_u, 1) and an item row in
// (1, c_j), so that the dot product of whole rows is the latent product plus both biases. The 1s are
// fixed: no kernel moves them.
struct RowLayout {
  int rank = 1;
  bool biases = false;
  int width() const { return rank + (biases ? 2 : 0); }
  int user_bias() const { return rank; }      // the user row's bias; the item row holds 1 there
  int item_bias() const { return rank + 1; }  // the item row's bias; the user row holds 1 there
};

// Factor rows with the AdaGrad sums of squared gradients that scale their steps (one per row).
struct AdaptiveRows {
  double* factors;
  double* gradient_sums;
};

// One pass of stochastic gradient descent over the cell's ratings in order, on
//   (r - w.h)^2 + lambda (|w|^2 + |h|^2)     per rating (the fixed 1s of a biased layout aside),
// with AdaGrad steps per row: step = learning_rate / sqrt(sum of past mean squared gradients), the
// sums starting at 1 (LIBMF's scheme). Returns the sum of squared errors met on the way.
double sgd_pass(std::span<const CellRating> cell, AdaptiveRows users, AdaptiveRows items, RowLayout layout,
                double lambda, double learning_rate);

// CCD++ residuals: each rating keeps r - (the sum over components but the *lifted* one of w.h).
// Moving the lift from one component to the next subtracts the new one out and adds the old one in.
// Factor rows as a round sees them: the rows, their width, and where in a row the round's component
// and the lifted one (-1: none) are. Item rows may be a narrow copy holding those two columns only.
struct FactorColumns {
  const double* rows = nullptr;
  int width = 1;
  int component = 0;
  int lifted = -1;
};

// CCD++ gathering over a cell: when `relift`, first moves each residual's lift to the round's
// component; then adds up, per user (`users`) or per item, numerator += residual * the other side's
// entry and denominator += that entry squared: the sums whose ratio (with the penalty) is the exact
// minimiser of the component's entry.
void ccd_gather(std::span<const CellRating> cell, std::span<double> residuals, FactorColumns users,
                FactorColumns items, bool relift, bool gather_users, double* numerator, double* denominator);

// Sums over the cell of the squared and absolute errors of w.h against the ratings.
struct ErrorSums {
  double squared = 0;
  double absolute = 0;
};
ErrorSums error_sums(std::span<const CellRating> cell, const double* user_factors, const double* item_factors,
                     int width);

}  // namespace schmp::kernels
