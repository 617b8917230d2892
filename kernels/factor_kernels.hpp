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

// Which factor a CCD++ round updates, and what it first does to the residuals: each rating keeps
// residual = r - sum over components but `lifted` of w.h; moving the lift from component `lifted` to
// `component` subtracts that one back in and adds this one out.
struct RankOneStep {
  int component = 0;
  int lifted = -1;    // -1: residuals are full residuals
  bool users = true;  // gather sums for the users' factor (else for the items')
};

// CCD++ gathering over a cell: brings each residual to `step.component`'s lift, then adds up, per
// user (step.users) or per item, numerator += residual * other factor and denominator += factor^2,
// the sums whose ratio (with the penalty) is the exact coordinate minimiser. Components are columns of
// rows `width` wide, bias columns included.
void ccd_gather(std::span<const CellRating> cell, std::span<double> residuals, const double* user_factors,
                const double* item_factors, int width, const RankOneStep& step, double* numerator,
                double* denominator);

// Sums over the cell of the squared and absolute errors of w.h against the ratings.
struct ErrorSums {
  double squared = 0;
  double absolute = 0;
};
ErrorSums error_sums(std::span<const CellRating> cell, const double* user_factors, const double* item_factors,
                     int width);

}  // namespace schmp::kernels
