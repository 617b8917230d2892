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
#include <limits>
#include <span>
#include <stdexcept>
#include <vector>

#include "schmp/extrapolation.hpp"
#include "schmp/packed_symmetric.hpp"

namespace schmp {

// kNone: a coordinate free of any penalty (an unpenalised intercept). The coordinate functions take
// it; minimise_model does not (a program eliminates its free coordinates first).
enum class Penalty { kL1, kL2, kNone };

// The coordinate step: minimises g d + h d^2 / 2 + R(w + d) - R(w) over d (for L2 the penalty's
// curvature is added to h here).
inline double coordinate_step(Penalty penalty, double w, double g, double h) {
  if (!(h > 0)) return 0.0;
  if (penalty == Penalty::kNone) return -g / h;
  if (penalty == Penalty::kL2) return -(g + w) / (h + 1);
  // Minimise g d + h d^2 / 2 + |w + d|: soft-threshold the Newton point.
  if (g + 1 <= h * w) return -(g + 1) / h;
  if (g - 1 >= h * w) return -(g - 1) / h;
  return -w;
}

// The minimum-norm subgradient of g d + R(w + d) at d = 0: how far coordinate w is from optimal when
// g is the derivative of the smooth part.
inline double violation(Penalty penalty, double w, double g) {
  if (penalty == Penalty::kNone) return g;
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
  double violation = 0;  // at the end, as add_violation sums it, under violation_norm
  double work = 0;       // multiply-adds spent
};

namespace detail {

// Pass ends extrapolated together (celer's and skglm's K), and passes made whatever the work allowed.
inline constexpr std::size_t kModelExtrapolationDepth = 5, kFewestModelPasses = 2;
// A solve whose violation has not fallen below a fraction kModelProgress of its lowest for this many
// passes (four rounds of extrapolation and face steps) is at the rounding floor of its sums: near the
// optimum a tolerance relative to a tiny start is out of reach, and the passes left would spend the
// whole budget for nothing (2^28 multiply-adds: 0.4 s on a model of 14 coordinates).
inline constexpr std::size_t kStalledModelPasses = 4 * kModelExtrapolationDepth;
inline constexpr double kModelProgress = 0.999;
// A factorisation's multiply-adds, blocked and in cache, run 2 to 6 times as fast as a pass's column
// updates (m = 300 to 2,000): each counts as a quarter of one.
inline constexpr double kFactorisationWork = 0.25;

// The Cholesky factor L (H_FF = L L') of a principal submatrix of h over a face F that grows and
// shrinks one coordinate at a time, each change O(|F|^2) where a new factorisation costs O(|F|^3).
class FaceFactor {
 public:
  explicit FaceFactor(Eigen::Index m) : l_(m, m) {}
  const std::vector<Eigen::Index>& face() const { return face_; }

  // Factors the face `face` at once (blocked, far faster than adding its coordinates one by one); false
  // (and an empty face) when its matrix is not positive definite.
  bool reset(const Eigen::MatrixXd& h, const std::vector<Eigen::Index>& face) {
    const auto f = static_cast<Eigen::Index>(face.size());
    Eigen::MatrixXd system(f, f);
    for (Eigen::Index a = 0; a < f; ++a) {
      for (Eigen::Index b = 0; b < f; ++b)
        system(a, b) = h(face[static_cast<std::size_t>(a)], face[static_cast<std::size_t>(b)]);
    }
    const Eigen::LLT<Eigen::MatrixXd> factors(system);
    face_.clear();
    if (factors.info() != Eigen::Success) return false;
    l_.topLeftCorner(f, f) = factors.matrixL();
    face_ = face;
    return true;
  }

  // Adds coordinate j last; false (and no change) when h_jj is no more than its rounding beyond the
  // face's span: the face's system would be singular.
  bool add(const Eigen::MatrixXd& h, Eigen::Index j) {
    const auto f = static_cast<Eigen::Index>(face_.size());
    Eigen::VectorXd row(f);
    for (Eigen::Index a = 0; a < f; ++a) row[a] = h(face_[static_cast<std::size_t>(a)], j);
    l_.topLeftCorner(f, f).triangularView<Eigen::Lower>().solveInPlace(row);
    const double pivot = h(j, j) - row.squaredNorm();
    if (!(pivot > kSingular * h(j, j))) return false;
    l_.row(f).head(f) = row.transpose();
    l_(f, f) = std::sqrt(pivot);
    face_.push_back(j);
    return true;
  }

  // Takes out the coordinate at position a of the face: the rows below it lose that column, which a
  // rank-one update of the trailing factor makes up for.
  void remove(std::size_t a) {
    const auto f = static_cast<Eigen::Index>(face_.size()), k = static_cast<Eigen::Index>(a);
    Eigen::VectorXd x = l_.col(k).segment(k + 1, f - k - 1);
    for (Eigen::Index i = 0; i < x.size(); ++i) {
      const Eigen::Index r = k + 1 + i;
      const double diagonal = l_(r, r), radius = std::hypot(diagonal, x[i]);
      const double c = radius / diagonal, s = x[i] / diagonal;
      l_(r, r) = radius;
      for (Eigen::Index q = i + 1; q < x.size(); ++q) {
        const Eigen::Index row = k + 1 + q;
        l_(row, r) = (l_(row, r) + s * x[q]) / c;
        x[q] = c * x[q] - s * l_(row, r);
      }
    }
    for (Eigen::Index r = k; r + 1 < f; ++r) {
      l_.row(r).head(k) = l_.row(r + 1).head(k);
      l_.row(r).segment(k, r - k + 1) = l_.row(r + 1).segment(k + 1, r - k + 1);
    }
    face_.erase(face_.begin() + static_cast<std::ptrdiff_t>(a));
  }

  // Solves H_FF z = rhs in place.
  void solve(Eigen::VectorXd& rhs) const {
    const auto f = static_cast<Eigen::Index>(face_.size());
    const auto lower = l_.topLeftCorner(f, f).triangularView<Eigen::Lower>();
    lower.solveInPlace(rhs);
    lower.transpose().solveInPlace(rhs);
  }

 private:
  static constexpr double kSingular = 1e-12;
  Eigen::MatrixXd l_;
  std::vector<Eigen::Index> face_;
};

// Minimises Q for L1 by active sets, from d: on the face F of the coordinates nonzero (with their
// signs) Q is quadratic, and its minimiser solves H_FF s_F = -(g + H d + sign)_F. The step stops where
// the first coordinate of F reaches zero, which then leaves F; at the face's minimiser the coordinate at
// zero that violates most joins F, on the side it would move to (Lee, Battle, Raina and Ng's
// feature-sign search). Each change updates the factor of H_FF, so the coordinates may come and go by
// the hundred where coordinate descent creeps (raw features of mixed scales, correlated columns).
// Runs until Q's violation at a face's minimiser (into `reached`) is at most `tolerance`, or `work` is
// spent; true when it got there.
inline bool active_set_steps(const Eigen::VectorXd& w, const Eigen::VectorXd& g, const Eigen::MatrixXd& h,
                             double tolerance, Eigen::VectorXd& d, Eigen::VectorXd& h_d, double& work,
                             double& reached) {
  const Eigen::Index m = w.size();
  const auto size = static_cast<double>(m);
  FaceFactor factor(m);
  std::vector<Eigen::Index> support;
  for (Eigen::Index j = 0; j < m; ++j) {
    if (w[j] + d[j] != 0) support.push_back(j);
  }
  const auto start = static_cast<double>(support.size());
  work -= kFactorisationWork * start * start * start / 3;
  std::vector<bool> refused(static_cast<std::size_t>(m), false);  // would make H_FF singular
  if (!factor.reset(h, support)) {
    for (const Eigen::Index j : support) {
      if (!factor.add(h, j)) refused[static_cast<std::size_t>(j)] = true;
    }
  }
  std::vector<double> signs;
  for (const Eigen::Index j : factor.face()) signs.push_back(w[j] + d[j] > 0 ? 1.0 : -1.0);
  Eigen::Index joined = -1;  // the coordinate that joined last
  while (work > 0) {
    const std::vector<Eigen::Index>& face = factor.face();
    const auto f = static_cast<Eigen::Index>(face.size());
    Eigen::VectorXd step(f);
    for (Eigen::Index a = 0; a < f; ++a) {
      const Eigen::Index j = face[static_cast<std::size_t>(a)];
      step[a] = -(g[j] + h_d[j] + signs[static_cast<std::size_t>(a)]);
    }
    factor.solve(step);
    if (!step.allFinite()) return false;
    double t = 1;
    std::ptrdiff_t blocking = -1;
    for (Eigen::Index a = 0; a < f; ++a) {
      const Eigen::Index j = face[static_cast<std::size_t>(a)];
      const double x = w[j] + d[j];
      if (signs[static_cast<std::size_t>(a)] * (x + step[a]) < 0 && -x / step[a] < t) {
        t = -x / step[a];
        blocking = a;
      }
    }
    for (Eigen::Index a = 0; a < f; ++a) {
      const Eigen::Index j = face[static_cast<std::size_t>(a)];
      d[j] += t * step[a];
      h_d += (t * step[a]) * h.col(j);
    }
    work -= static_cast<double>(f * f) + size * static_cast<double>(f);
    if (blocking >= 0) {
      const Eigen::Index j = face[static_cast<std::size_t>(blocking)];
      // Rounding can turn a newcomer's step the wrong way: it would join and leave without end.
      if (j == joined && t == 0) refused[static_cast<std::size_t>(j)] = true;
      d[j] = -w[j];
      factor.remove(static_cast<std::size_t>(blocking));
      signs.erase(signs.begin() + blocking);
      work -= static_cast<double>(f * f);
      continue;
    }
    // At the face's minimiser: done, or the worst violator at zero joins.
    double sum = 0, worst = 0;
    Eigen::Index joining = -1;
    for (Eigen::Index j = 0; j < m; ++j) {
      const double x = w[j] + d[j], gradient = g[j] + h_d[j];
      const double v = violation(Penalty::kL1, x, gradient);
      sum = add_violation(Penalty::kL1, sum, v);
      if (x == 0 && !refused[static_cast<std::size_t>(j)] && std::abs(v) > worst) {
        worst = std::abs(v);
        joining = j;
      }
    }
    work -= size;
    reached = sum;
    if (sum <= tolerance) return true;
    if (joining < 0) return false;
    if (factor.add(h, joining)) {
      signs.push_back(g[joining] + h_d[joining] < 0 ? 1.0 : -1.0);
      joined = joining;
    } else {
      refused[static_cast<std::size_t>(joining)] = true;
    }
    work -= static_cast<double>(f * f);
  }
  return false;
}

// For L2 every coordinate is on the face: one linear solve, (H + I) s = -(g + H d + w + d), is the
// minimiser.
inline void l2_step(const Eigen::VectorXd& w, const Eigen::VectorXd& g, const Eigen::MatrixXd& h,
                    Eigen::VectorXd& d, Eigen::VectorXd& h_d, double& work) {
  const auto size = static_cast<double>(w.size());
  const double cost = kFactorisationWork * size * size * size / 3;
  if (cost > work) return;
  work -= cost + 2 * size * size;
  Eigen::MatrixXd system = h;
  system.diagonal().array() += 1;
  const Eigen::LLT<Eigen::MatrixXd> factors(system);
  const Eigen::VectorXd step = factors.solve(-(g + h_d + w + d));
  if (factors.info() != Eigen::Success || !step.allFinite()) return;
  d += step;
  h_d += h * step;
}

}  // namespace detail

// Minimises Q until its violation is at most `tolerance`, or `work` multiply-adds are spent: a few
// passes of cyclic coordinate descent, then linear solves on faces (active_set_steps; for L2 one solve),
// and an Anderson extrapolation of the pass ends, kept when it lowers Q; again while work is left. h is
// symmetric with a positive diagonal; w, g and h cover the same coordinates.
inline ModelSolution minimise_model(Penalty penalty, const Eigen::VectorXd& w, const Eigen::VectorXd& g,
                                    const Eigen::MatrixXd& h, double tolerance, double work) {
  const Eigen::Index m = w.size();
  if (g.size() != m || h.rows() != m || h.cols() != m)
    throw std::logic_error("quadratic model: w, g and h of different sizes");
  if (penalty == Penalty::kNone)
    throw std::logic_error("quadratic model: free coordinates are eliminated first");
  ModelSolution solution;
  solution.d = Eigen::VectorXd::Zero(m);
  Eigen::VectorXd& d = solution.d;
  Eigen::VectorXd h_d = Eigen::VectorXd::Zero(m);
  std::vector<Eigen::VectorXd> ends;
  Extrapolation extrapolation(detail::kModelExtrapolationDepth);
  const auto size = static_cast<double>(m);
  const double budget = work;
  double lowest = std::numeric_limits<double>::infinity();
  std::size_t stalled = 0;
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
    if (solution.violation < detail::kModelProgress * lowest) {
      lowest = solution.violation;
      stalled = 0;
    } else if (++stalled >= detail::kStalledModelPasses) {
      break;
    }
    // The pass ends of cyclic descent follow a fixed map: their extrapolation is often far nearer
    // the minimiser, and Q tells at once whether it is.
    std::vector<double> row;
    for (const Eigen::VectorXd& end : ends) row.push_back(d.dot(end));
    row.push_back(d.squaredNorm());
    extrapolation.push(row);
    ends.push_back(d);
    if (ends.size() < detail::kModelExtrapolationDepth) continue;
    // Cyclic descent creeps where the model is ill-conditioned (raw features of mixed scales,
    // correlated columns); linear solves on its faces do not.
    if (penalty == Penalty::kL2) {
      detail::l2_step(w, g, h, d, h_d, work);
    } else if (detail::active_set_steps(w, g, h, tolerance, d, h_d, work, solution.violation)) {
      break;
    }
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
