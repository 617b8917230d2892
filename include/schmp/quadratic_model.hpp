// A quadratic model with an L1 or L2 penalty over a few coordinates, minimised from its dense matrix:
//   Q(d) = g . d + d' H d / 2 + R(w + d) - R(w),   R = ||.||_1 or ||.||^2 / 2.
// It is a Newton step's model (logistic regression: H the loss's Hessian over the coordinates moving),
// or the exact objective of least squares over a working set (Lasso: H = X_F' X_F / (n lambda)). A
// program's workers sum H row by row (schmp/kernels/column_kernel.hpp's gram); its coordinator then
// solves here, touching no data: a pass over m coordinates costs m^2, so the model can be solved
// tightly, where coordinate descent over the data creeps (raw features of mixed scales, correlated
// columns).
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <vector>

#include "schmp/extrapolation.hpp"
#include "schmp/packed_symmetric.hpp"

namespace schmp {

enum class Penalty { kL1, kL2 };

// The coordinate step: minimises g d + h d^2 / 2 + R(w + d) - R(w) over d (for L2 the penalty's
// curvature is added to h here).
inline double coordinate_step(Penalty penalty, double w, double g, double h) {
  if (!(h > 0)) return 0.0;
  if (penalty == Penalty::kL2) return -(g + w) / (h + 1);
  // Minimise g d + h d^2 / 2 + |w + d|: soft-threshold the Newton point.
  if (g + 1 <= h * w) return -(g + 1) / h;
  if (g - 1 >= h * w) return -(g - 1) / h;
  return -w;
}

// The minimum-norm subgradient of g d + R(w + d) at d = 0: how far coordinate w is from optimal when
// g is the derivative of the smooth part.
inline double violation(Penalty penalty, double w, double g) {
  if (penalty == Penalty::kL2) return g + w;
  if (w > 0) return g + 1;
  if (w < 0) return g - 1;
  return std::max(0.0, std::abs(g) - 1);
}

// Violations add up as the stopping measures do: absolute values for L1, squares for L2; the norm of
// such a sum.
inline double add_violation(Penalty penalty, double sum, double v) {
  return penalty == Penalty::kL1 ? sum + std::abs(v) : sum + v * v;
}
inline double violation_norm(Penalty penalty, double sum) {
  return penalty == Penalty::kL1 ? sum : std::sqrt(sum);
}

// Fills the columns `known` to h.cols() - 1 of the symmetric h, and their mirror rows, from `packed`
// (schmp/packed_symmetric.hpp), which holds the entries (a, b), a <= b, b >= known, from
// packed_index(0, known) on, times `scale`; the rest of h is left alone. A Gram matrix over a growing set
// of columns is sent only the new columns' part.
inline void unpack_columns(std::span<const double> packed, std::size_t known, double scale,
                           Eigen::MatrixXd& h) {
  const auto m = static_cast<std::size_t>(h.cols());
  if (known > m || packed.size() != packed_size(m) - packed_size(known))
    throw std::logic_error("quadratic model: packed matrix of the wrong size");
  for (std::size_t b = known; b < m; ++b) {
    for (std::size_t a = 0; a <= b; ++a) {
      const double value = scale * packed[packed_index(a, b) - packed_size(known)];
      h(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b)) = value;
      h(static_cast<Eigen::Index>(b), static_cast<Eigen::Index>(a)) = value;
    }
  }
}

// The m x m symmetric matrix that `packed` holds, times `scale`.
inline Eigen::MatrixXd unpack_symmetric(std::span<const double> packed, std::size_t m, double scale) {
  Eigen::MatrixXd h(static_cast<Eigen::Index>(m), static_cast<Eigen::Index>(m));
  unpack_columns(packed, 0, scale, h);
  return h;
}

// Q(d), given h d.
inline double model_value(Penalty penalty, const Eigen::VectorXd& w, const Eigen::VectorXd& g,
                          const Eigen::VectorXd& d, const Eigen::VectorXd& h_d) {
  const auto term = [penalty](double x) { return penalty == Penalty::kL2 ? 0.5 * x * x : std::abs(x); };
  double value = g.dot(d) + 0.5 * d.dot(h_d);
  for (Eigen::Index j = 0; j < w.size(); ++j) {
    if (d[j] != 0) value += term(w[j] + d[j]) - term(w[j]);
  }
  return value;
}

struct ModelSolution {
  Eigen::VectorXd d;
  std::size_t passes = 0;
  double violation = 0;  // of the last pass, as add_violation sums it, under violation_norm
  double work = 0;       // multiply-adds spent
};

namespace detail {

// Pass ends extrapolated together (celer's and skglm's K), and passes made whatever the work allowed.
inline constexpr std::size_t kModelExtrapolationDepth = 5, kFewestModelPasses = 2;

// Moves d towards the minimiser of Q over the face where w + d keeps its support and signs. There Q is
// quadratic: the step s on the support solves H_FF s_F = -(g + H d + R'(w + d))_F, the coordinates off
// it (w_j + d_j = 0) staying put (for L2 every coordinate is on it, and H_FF carries R''s identity).
// Q falls all the way along the step while the signs hold: d goes to the face's minimiser, or to where
// the first coordinate of the support reaches zero (an active-set step). Taken from the current
// residual, repeated steps on one face refine the solve, its factorisation kept.
class FaceStep {
 public:
  // `work` is what the solve may still spend, in multiply-adds: a new factorisation is made only
  // within it.
  void operator()(Penalty penalty, const Eigen::VectorXd& w, const Eigen::VectorXd& g,
                  const Eigen::MatrixXd& h, Eigen::VectorXd& d, Eigen::VectorXd& h_d, double& work) {
    const Eigen::Index m = w.size();
    std::vector<Eigen::Index> support;
    std::vector<bool> positive;
    for (Eigen::Index j = 0; j < m; ++j) {
      if (penalty == Penalty::kL1 && w[j] + d[j] == 0) continue;
      support.push_back(j);
      positive.push_back(w[j] + d[j] > 0);
    }
    const auto f = static_cast<Eigen::Index>(support.size());
    if (f == 0) return;
    if (support != support_ || positive != positive_) {
      const double cost = static_cast<double>(f) * static_cast<double>(f) * static_cast<double>(f) / 3;
      if (cost > work) return;
      work -= cost;
      Eigen::MatrixXd system(f, f);
      for (Eigen::Index a = 0; a < f; ++a) {
        for (Eigen::Index b = 0; b < f; ++b) system(a, b) = h(support[a], support[b]);
        if (penalty == Penalty::kL2) system(a, a) += 1;
      }
      factors_.compute(system);
      support_ = support;
      positive_ = positive;
    }
    Eigen::VectorXd residual(f);
    for (Eigen::Index a = 0; a < f; ++a) {
      const Eigen::Index j = support[a];
      const double slope = penalty == Penalty::kL2 ? w[j] + d[j] : (positive[a] ? 1.0 : -1.0);
      residual[a] = g[j] + h_d[j] + slope;
    }
    const Eigen::VectorXd solved = factors_.solve(-residual);
    if (factors_.info() != Eigen::Success || !solved.allFinite()) return;
    Eigen::VectorXd change = Eigen::VectorXd::Zero(m);
    double t = 1;
    Eigen::Index blocking = -1;
    for (Eigen::Index a = 0; a < f; ++a) {
      const Eigen::Index j = support[a];
      change[j] = solved[a];
      const double x = w[j] + d[j];
      if (penalty == Penalty::kL1 && (positive[a] ? x + change[j] < 0 : x + change[j] > 0) &&
          -x / change[j] < t) {
        t = -x / change[j];
        blocking = j;
      }
    }
    Eigen::VectorXd candidate = d + t * change;
    if (blocking >= 0) candidate[blocking] = -w[blocking];
    const Eigen::VectorXd h_candidate = h * candidate;
    work -= static_cast<double>(f * f + m * m);
    if (model_value(penalty, w, g, candidate, h_candidate) <= model_value(penalty, w, g, d, h_d)) {
      d = candidate;
      h_d = h_candidate;
    }
  }

 private:
  std::vector<Eigen::Index> support_;
  std::vector<bool> positive_;
  Eigen::LLT<Eigen::MatrixXd> factors_;
};

}  // namespace detail

// Minimises Q by cyclic coordinate descent until a pass's violation is at most `tolerance`, or `work`
// multiply-adds are spent. Every few passes it tries an Anderson extrapolation of their ends, and a step
// to the minimiser over the face of the current support and signs (a linear solve, when its
// factorisation fits in the work left); each is kept when it lowers Q. h is symmetric with a positive
// diagonal; w, g and h cover the same coordinates.
inline ModelSolution minimise_model(Penalty penalty, const Eigen::VectorXd& w, const Eigen::VectorXd& g,
                                    const Eigen::MatrixXd& h, double tolerance, double work) {
  const Eigen::Index m = w.size();
  if (g.size() != m || h.rows() != m || h.cols() != m)
    throw std::logic_error("quadratic model: w, g and h of different sizes");
  ModelSolution solution;
  solution.d = Eigen::VectorXd::Zero(m);
  Eigen::VectorXd& d = solution.d;
  Eigen::VectorXd h_d = Eigen::VectorXd::Zero(m);
  std::vector<Eigen::VectorXd> ends;
  detail::FaceStep face_step;
  Extrapolation extrapolation(detail::kModelExtrapolationDepth);
  const auto size = static_cast<double>(m);
  const double budget = work;
  while (solution.passes < detail::kFewestModelPasses || work > 0) {
    ++solution.passes;
    work -= size;
    double sum = 0;
    bool moved = false;
    for (Eigen::Index j = 0; j < m; ++j) {
      const double x = w[j] + d[j], gradient = g[j] + h_d[j];
      sum = add_violation(penalty, sum, violation(penalty, x, gradient));
      const double delta = coordinate_step(penalty, x, gradient, h(j, j));
      if (delta == 0) continue;
      d[j] += delta;
      h_d += delta * h.col(j);
      work -= size;
      moved = true;
    }
    solution.violation = violation_norm(penalty, sum);
    if (solution.violation <= tolerance || !moved) break;
    // The pass ends of cyclic descent follow a fixed map: their extrapolation is often far nearer
    // the minimiser, and Q tells at once whether it is.
    std::vector<double> row;
    for (const Eigen::VectorXd& end : ends) row.push_back(d.dot(end));
    row.push_back(d.squaredNorm());
    extrapolation.push(row);
    ends.push_back(d);
    if (ends.size() < detail::kModelExtrapolationDepth) continue;
    // Once its support and signs settle, the minimiser solves one linear system: cyclic descent
    // creeps there where the model is ill-conditioned (raw features of mixed scales).
    face_step(penalty, w, g, h, d, h_d, work);
    const std::vector<double> weights = extrapolation.weights();
    extrapolation.clear();
    Eigen::VectorXd extrapolated = Eigen::VectorXd::Zero(m);
    for (std::size_t k = 0; k < weights.size(); ++k) extrapolated += weights[k] * ends[k];
    ends.clear();
    if (weights.empty() || !extrapolated.allFinite()) continue;
    const Eigen::VectorXd h_extrapolated = h * extrapolated;
    work -= size * size;
    if (model_value(penalty, w, g, extrapolated, h_extrapolated) < model_value(penalty, w, g, d, h_d)) {
      d = extrapolated;
      h_d = h_extrapolated;
    }
  }
  solution.work = budget - work;
  return solution;
}

}  // namespace schmp
