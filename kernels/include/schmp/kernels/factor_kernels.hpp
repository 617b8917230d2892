// Matrix factorization kernels: the work on one cell of the ratings matrix (the ratings of some users
// for some items), with the factor rows of those users and items at hand. Plain arrays: factor rows
// are RowLayout::width() doubles each, row-major; a rating names its user and item by their rows there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

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
// The one-class rounds take a block of components at once: `span` columns from `component`, and the
// lifted block's `lifted_span` from `lifted`.
struct FactorColumns {
  const double* rows = nullptr;
  int width = 1;
  int component = 0;
  int lifted = -1;
  int span = 1;
  int lifted_span = 1;
};

// CCD++ gathering over a cell: when `relift`, first moves each residual's lift to the round's
// component; then adds up, per user (`users`) or per item, numerator += residual * the other side's
// entry and denominator += that entry squared: the sums whose ratio (with the penalty) is the exact
// minimiser of the component's entry.
void ccd_gather(std::span<const CellRating> cell, std::span<double> residuals, FactorColumns users,
                FactorColumns items, bool relift, bool gather_users, double* numerator, double* denominator);

// The one-class (implicit feedback) gathering over a block of components: each rating's value is its
// confidence less 1, c - 1, and its residual is 1 - (w.h less the lifted block). When `relift`, first
// moves the lift to the round's block; then adds, per row (span values each), numerator += (1 + (c - 1)
// residual) x and denominator += (c - 1) x x' (packed, span (span + 1) / 2 values each, as
// schmp/packed_symmetric.hpp lays it out), x the other side's entries of the block: the observed cells'
// share of the block's exact minimiser; the Gram matrix adds every cell's (mf.hpp).
void ccd_gather_one_class(std::span<const CellRating> cell, std::span<double> residuals, FactorColumns users,
                          FactorColumns items, bool relift, bool gather_users, double* numerator,
                          double* denominator);

// The observed cells' share of the one-class loss: the sum over the cell of c (1 - w.h)^2 - (w.h)^2, c
// = 1 + value. The Gram matrices give every cell's (w.h)^2.
double one_class_loss(std::span<const CellRating> cell, const double* user_factors,
                      const double* item_factors, int width);

// Sums over the cell of the squared and absolute errors of w.h against the ratings.
struct ErrorSums {
  double squared = 0;
  double absolute = 0;
};
ErrorSums error_sums(std::span<const CellRating> cell, const double* user_factors, const double* item_factors,
                     int width);

// The GPU side of one matrix-factorization worker (--device gpu). Uploaded once and resident there: the
// worker's cells of training and test ratings, the CCD++ residuals, the worker's user rows with their
// AdaGrad sums (SGD) or their CCD++ sums (numerator and denominator of a user round). The item rows
// travel between workers over MPI in host memory (Open MPI here is not CUDA-aware), so each call stages
// them in through pinned memory and copies back out what it changed. Every call has finished its GPU
// work when it returns; an object must not be used by two threads at once.
//
// The kernels keep the CPU functions' semantics but not their order of operations: sums are added up
// in parallel (atomics and tree reductions: equal up to rounding), and sgd_pass is parallel within the
// cell, Hogwild-style as cuMF_SGD runs it: the same steps on the same objective, but ratings of
// different users for one item are taken at the same time, so a step may read an item row that another
// is writing and one of two overlapping updates may be lost. Each warp takes a contiguous run of the
// cell's ratings, which are sorted by user, so one user's ratings are nearly always taken in order.
class FactorDevice {
 public:
  virtual ~FactorDevice() = default;

  // The user rows (width() doubles each) and, for SGD, their AdaGrad sums (empty for CCD++).
  virtual void set_users(std::span<const double> factors, std::span<const double> gradient_sums) = 0;
  // Copies of them as they stand.
  virtual std::vector<double> user_factors() const = 0;
  virtual std::vector<double> user_gradient_sums() const = 0;
  // CCD++: a residual per training rating, cell by cell (as ccd_gather keeps them).
  virtual void set_residuals(std::span<const std::vector<double>> residuals) = 0;

  // sgd_pass over training cell `cell` with the user rows here and these item rows.
  virtual double sgd_pass(std::size_t cell, std::span<double> item_factors,
                          std::span<double> item_gradient_sums, double lambda, double learning_rate) = 0;
  // ccd_gather over training cell `cell`: the user rows here, with the round's `component` and `lifted`
  // columns, and `item_count` item rows as `items` says (items.rows in host memory). Gathering users, the
  // sums stay here for ccd_solve_users; gathering items, they are added to item_numerator and
  // item_denominator (item_count each; untouched when gathering users).
  virtual void ccd_gather(std::size_t cell, int component, int lifted, FactorColumns items,
                          std::size_t item_count, bool relift, bool gather_users,
                          std::span<double> item_numerator, std::span<double> item_denominator) = 0;
  // The end of a CCD++ user round: every user with ratings gets the exact minimiser of its entry
  // `component`, numerator / (lambda n + denominator), n its rating count; the sums return to zero.
  // Returns the objective decrease, sum of (lambda n + denominator) (old - new)^2.
  virtual double ccd_solve_users(int component, double lambda) = 0;
  // error_sums of training cell `cell` and of test cell `cell` against these (full) item rows.
  virtual std::pair<ErrorSums, ErrorSums> error_sums(std::size_t cell,
                                                     std::span<const double> item_factors) = 0;
};

// A FactorDevice on GPU `gpu` (kernels::pick_gpu) for a worker whose cells are `train` and `test`
// (the same cell indices) and whose users have `user_counts` training ratings each. Throws
// std::runtime_error when this build has no CUDA kernels or a CUDA call fails.
std::unique_ptr<FactorDevice> make_factor_device(int gpu, RowLayout layout,
                                                 std::span<const std::vector<CellRating>> train,
                                                 std::span<const std::vector<CellRating>> test,
                                                 std::span<const double> user_counts);

}  // namespace schmp::kernels
