// Anderson extrapolation of a converging sequence, as celer and skglm use it for coordinate descent.
//
// Given the last iterates x_0 .. x_m of a method that converges like a fixed-point iteration, weights c
// summing to 1 are found that make sum_k c_k (x_k - x_{k-1}) smallest; the point sum_k c_k x_k is then
// often far nearer the limit than x_m. A program takes the weights from vectors that its workers hold
// row by row, e.g. residuals r_k = y - X beta_k: the workers keep the last few in a Snapshots and return
// their inner products with each new one, summed like any message; the coordinator keeps the summed
// Gram matrix in an Extrapolation and gets the weights from it. Where the workers' vector is an affine
// image of the parameters (r = y - X beta), the weights apply to both: sum c_k beta_k has the residual
// sum c_k r_k, whose squared norm the Gram matrix gives without another pass over the data.
//
// Both sides must push at the same moments (every evaluation, say) and clear at the same moments (a
// commit that says so), so that they keep the same vectors.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <deque>
#include <limits>
#include <numeric>
#include <span>
#include <stdexcept>
#include <vector>

namespace schmp {

// The worker's side: the last `depth` vectors.
class Snapshots {
 public:
  explicit Snapshots(std::size_t depth) : depth_(std::max<std::size_t>(depth, 1)) {}

  // Keeps `v` in place of the oldest when `depth` are kept, and returns its inner products with the
  // vectors kept before it, oldest first, then with itself: the row to sum and hand to Extrapolation.
  std::vector<double> push(std::span<const double> v) {
    // The oldest vector's storage takes the new one: a fresh allocation of a long vector would come
    // from the system, page by page, at every push.
    std::vector<double> storage;
    if (kept_.size() == depth_) {
      storage = std::move(kept_.front());
      kept_.pop_front();
    }
    std::vector<double> row;
    row.reserve(kept_.size() + 1);
    for (const std::vector<double>& old : kept_) row.push_back(dot(v, old));
    row.push_back(dot(v, v));
    storage.assign(v.begin(), v.end());
    kept_.push_back(std::move(storage));
    return row;
  }
  void clear() { kept_.clear(); }

 private:
  // In four sums taken in turn: one sum would wait on each addition before the next (four times
  // slower on long vectors).
  static double dot(std::span<const double> a, std::span<const double> b) {
    double sums[4] = {0, 0, 0, 0};
    std::size_t i = 0;
    for (; i + 4 <= a.size(); i += 4) {
      for (std::size_t lane = 0; lane < 4; ++lane) sums[lane] += a[i + lane] * b[i + lane];
    }
    for (; i < a.size(); ++i) sums[0] += a[i] * b[i];
    return (sums[0] + sums[1]) + (sums[2] + sums[3]);
  }

  std::size_t depth_;
  std::deque<std::vector<double>> kept_;
};

// The coordinator's side: the Gram matrix of the last `depth` vectors, from the rows Snapshots::push
// returned, summed over the workers.
class Extrapolation {
 public:
  explicit Extrapolation(std::size_t depth) : depth_(std::max<std::size_t>(depth, 1)) {}

  // Takes the newest vector's row; throws std::logic_error when its length shows that the workers keep
  // other vectors than this side does.
  void push(const std::vector<double>& row) {
    if (gram_.size() == depth_) {
      gram_.pop_front();
      for (std::vector<double>& kept : gram_) kept.erase(kept.begin());
    }
    if (row.size() != gram_.size() + 1)
      throw std::logic_error("extrapolation: the workers keep other vectors than the coordinator");
    for (std::size_t k = 0; k < gram_.size(); ++k) gram_[k].push_back(row[k]);
    gram_.push_back(row);
  }
  void clear() { gram_.clear(); }
  std::size_t size() const { return gram_.size(); }
  bool full() const { return gram_.size() == depth_; }

  // Weights c over the kept vectors, oldest first, summing to 1 (the oldest's is 0), that make
  // ||sum_k c_k (v_k - v_{k-1})|| smallest. Empty with fewer than three vectors, or when the
  // differences are all zero. Differences that are (nearly) dependent, as near convergence, are met
  // with a ridge of 1e-10 times the largest squared difference.
  std::vector<double> weights() const {
    const std::size_t m = gram_.size();
    if (m < 3) return {};
    const std::size_t k = m - 1;  // differences u_i = v_{i+1} - v_i
    std::vector<double> a(k * k);
    for (std::size_t i = 0; i < k; ++i) {
      for (std::size_t j = 0; j < k; ++j)
        a[i * k + j] = g(i + 1, j + 1) - g(i + 1, j) - g(i, j + 1) + g(i, j);
    }
    double largest = 0;
    for (std::size_t i = 0; i < k; ++i) largest = std::max(largest, a[i * k + i]);
    if (!(largest > 0) || !std::isfinite(largest)) return {};
    for (std::size_t i = 0; i < k; ++i) a[i * k + i] += kRidge * largest;
    std::vector<double> z(k, 1.0);
    if (!solve(a, z)) return {};
    const double sum = std::accumulate(z.begin(), z.end(), 0.0);
    if (!(std::abs(sum) > 0) || !std::isfinite(sum)) return {};
    std::vector<double> c(m, 0.0);
    for (std::size_t i = 0; i < k; ++i) c[i + 1] = z[i] / sum;
    return c;
  }

  // A bound on the rounding error of norm_squared(c): the Gram matrix's entries carry a relative error
  // of a few ulps, which large weights of both signs magnify.
  double rounding(const std::vector<double>& c) const {
    double sum = 0;
    for (std::size_t i = 0; i < gram_.size(); ++i) sum += std::abs(c[i]) * std::sqrt(std::max(g(i, i), 0.0));
    return 8 * std::numeric_limits<double>::epsilon() * sum * sum;
  }

  // ||sum_k c_k v_k||^2, from the Gram matrix.
  double norm_squared(const std::vector<double>& c) const {
    double sum = 0;
    for (std::size_t i = 0; i < gram_.size(); ++i) {
      for (std::size_t j = 0; j < gram_.size(); ++j) sum += c[i] * c[j] * g(i, j);
    }
    return std::max(sum, 0.0);
  }

 private:
  double g(std::size_t i, std::size_t j) const { return gram_[i][j]; }

  // Solves a z = b in place (a is k x k, row-major) by Gaussian elimination with partial pivoting;
  // false when a pivot is negligible beside the matrix's largest diagonal entry.
  static bool solve(std::vector<double>& a, std::vector<double>& b) {
    const std::size_t k = b.size();
    double scale = 0;
    for (std::size_t i = 0; i < k; ++i) scale = std::max(scale, std::abs(a[i * k + i]));
    if (!(scale > 0)) return false;
    for (std::size_t col = 0; col < k; ++col) {
      std::size_t pivot = col;
      for (std::size_t row = col + 1; row < k; ++row) {
        if (std::abs(a[row * k + col]) > std::abs(a[pivot * k + col])) pivot = row;
      }
      if (!(std::abs(a[pivot * k + col]) > 1e-14 * scale)) return false;
      if (pivot != col) {
        for (std::size_t j = 0; j < k; ++j) std::swap(a[col * k + j], a[pivot * k + j]);
        std::swap(b[col], b[pivot]);
      }
      for (std::size_t row = col + 1; row < k; ++row) {
        const double factor = a[row * k + col] / a[col * k + col];
        for (std::size_t j = col; j < k; ++j) a[row * k + j] -= factor * a[col * k + j];
        b[row] -= factor * b[col];
      }
    }
    for (std::size_t col = k; col-- > 0;) {
      for (std::size_t j = col + 1; j < k; ++j) b[col] -= a[col * k + j] * b[j];
      b[col] /= a[col * k + col];
    }
    return true;
  }

  static constexpr double kRidge = 1e-10;

  std::size_t depth_;
  std::deque<std::vector<double>> gram_;  // gram_[i][j] = v_i . v_j, oldest first
};

}  // namespace schmp
