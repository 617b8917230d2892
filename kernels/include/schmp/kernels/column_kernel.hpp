// The worker kernel of the sparse linear models (Lasso, logistic regression): a worker's rows of a
// sparse design matrix X, stored by column, and one dense vector v over the same rows kept beside it
// (the residual for least squares, the margins for logistic regression). A GPU implementation keeps X
// and v resident on the device; callers see only these operations.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <stdexcept>

#include "schmp/io.hpp"
#include "schmp/packed_symmetric.hpp"
#include "schmp/program.hpp"

namespace schmp::kernels {

class ColumnKernel {
 public:
  virtual ~ColumnKernel() = default;
  virtual std::size_t rows() const = 0;
  virtual std::size_t columns() const = 0;

  virtual void set_vector(std::span<const double> v) = 0;
  virtual void copy_vector(std::span<double> out) const = 0;

  // out[k] = x_{cols[k]} . v
  virtual void column_dots(std::span<const ParamIndex> cols, std::span<double> out) const = 0;
  // out[j] = x_j . v for every column j
  virtual void all_column_dots(std::span<double> out) const = 0;
  // v += sum_k scale[k] * x_{cols[k]}
  virtual void add_columns(std::span<const ParamIndex> cols, std::span<const double> scale) = 0;
  // out[j] = ||x_j||^2 for every column j
  virtual void column_norms_squared(std::span<double> out) const = 0;
  // X_c^T W X_c over the columns `cols`: its entries (a, b), a <= b, b >= known, packed by columns of
  // the upper triangle (entry (a, b) at packed_index(a, b) - packed_size(known)), so that a caller who
  // holds the matrix over the first `known` columns is sent only the new columns' part. W is the
  // identity, or with `weighted` the logistic loss's D at the current margins (below): least squares'
  // Hessian, or the logistic loss's. `products` gets the multiply-adds it takes (about sum_i (k_i (k_i +
  // 1) - o_i (o_i + 1)) / 2 for rows of k_i entries among the columns, o_i among the first `known`). False,
  // with `out` left alone, when that exceeds `budget` or when this kernel does not compute it (then
  // `products` is left alone too).
  virtual bool gram(std::span<const ParamIndex> cols, std::size_t known, bool weighted, double budget,
                    std::span<double> out, double& products) const {
    (void)cols;
    (void)known;
    (void)weighted;
    (void)budget;
    (void)out;
    (void)products;
    return false;
  }

  // Newton steps on the logistic loss l(z) = log(1 + exp(-z)) at z_i = y_i v_i, with v the margins
  // w . x_i. Once labels y (+1 or -1 per row) are set, the kernel keeps q_i = -l'(z_i) =
  // 1 / (1 + exp(z_i)) at the margins (refreshed only by step_along_direction: add_columns leaves it
  // stale), and a direction u = X d with its Hessian image s = D u, D_ii = l''(z_i) = q_i (1 - q_i),
  // so that the quadratic model of the loss around v needs no exponentials.
  virtual void set_labels(std::span<const double> y) = 0;
  // Row weights c_i (one per row, 0 or more): the loss becomes sum_i c_i l(z_i), and every derivative,
  // D and loss change below weighs row i by c_i. The stock kernel has none, and refuses them.
  virtual void set_row_weights(std::span<const double> c) {
    if (!c.empty())
      throw std::runtime_error("this kernel does not weigh rows: run on the CPU (--device cpu)");
  }
  // For j = cols[k]: gradient[k] = sum_i x_ij y_i l'(z_i), curvature[k] = sum_i x_ij^2 l''(z_i).
  virtual void logistic_derivatives(std::span<const ParamIndex> cols, std::span<double> gradient,
                                    std::span<double> curvature) const = 0;
  // A hint that these columns are read next, one at a time: their first bytes are fetched now, so that
  // the cache misses overlap. The stock kernel ignores it.
  virtual void prefetch_columns(std::span<const ParamIndex> /*cols*/) const {}
  // out[k] = x_{cols[k]} . s = (X^T D X d)_{cols[k]}
  virtual void direction_dots(std::span<const ParamIndex> cols, std::span<double> out) const = 0;
  // d += sum_k scale[k] e_{cols[k]}: u and s follow
  virtual void add_to_direction(std::span<const ParamIndex> cols, std::span<const double> scale) = 0;
  // v += t u; q and D, and so s = D u, move to the new margins (u is kept, so that a step can be
  // shortened)
  virtual void step_along_direction(double t) = 0;
  // u = s = 0
  virtual void clear_direction() = 0;
  // sum_i l(y_i v_i) - l(y_i (v_i - t u_i)): how much the loss changed over the last t along u,
  // computed row by row so that a change far below the loss itself is not lost to rounding.
  virtual double loss_change_along_direction(double t) const = 0;
};

// The oneTBB implementation. Rows are cut into fixed-size chunks so that column updates run in
// parallel without races and every sum is taken in the same order whatever the thread count: results
// do not depend on --threads. `columns` may exceed the columns present in `rows`.
std::unique_ptr<ColumnKernel> make_cpu_column_kernel(const io::SparseRows& rows, std::size_t columns);

// The CUDA implementation on GPU `gpu`: X, v and the Newton step's row state stay resident there; per
// call only column indices, scales and per-column results cross the bus. Results match the CPU kernel
// up to summation order (kernels/cuda/column_kernel.cu). Throws std::runtime_error naming --device in
// a build without CUDA kernels.
std::unique_ptr<ColumnKernel> make_gpu_column_kernel(const io::SparseRows& rows, std::size_t columns,
                                                     int gpu);

// The kernel for a worker whose GPU is `gpu` as pick_gpu (schmp/kernels/device.hpp) returned it: the CPU
// kernel for -1, the GPU one otherwise.
std::unique_ptr<ColumnKernel> make_column_kernel(int gpu, const io::SparseRows& rows, std::size_t columns);

}  // namespace schmp::kernels
