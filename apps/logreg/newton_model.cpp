#include "newton_model.hpp"

#include <Eigen/Cholesky>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "schmp/extrapolation.hpp"
#include "schmp/kernels/column_kernel.hpp"

namespace schmp::logreg {

namespace {

// Pass ends extrapolated together (celer's and skglm's K).
constexpr std::size_t kExtrapolationDepth = 5;
// Passes made whatever the work allowed.
constexpr std::size_t kFewestPasses = 2;

double penalty_term(Penalty penalty, double x) { return penalty == Penalty::kL2 ? 0.5 * x * x : std::abs(x); }

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

}  // namespace

double model_value(Penalty penalty, const Eigen::VectorXd& w, const Eigen::VectorXd& g,
                   const Eigen::VectorXd& d, const Eigen::VectorXd& h_d) {
  double value = g.dot(d) + 0.5 * d.dot(h_d);
  for (Eigen::Index j = 0; j < w.size(); ++j) {
    if (d[j] != 0) value += penalty_term(penalty, w[j] + d[j]) - penalty_term(penalty, w[j]);
  }
  return value;
}

ModelSolution minimise_model(Penalty penalty, const Eigen::VectorXd& w, const Eigen::VectorXd& g,
                             const Eigen::MatrixXd& h, double tolerance, double work) {
  const Eigen::Index m = w.size();
  if (g.size() != m || h.rows() != m || h.cols() != m)
    throw std::logic_error("logreg: model of mismatched sizes");
  ModelSolution solution;
  solution.d = Eigen::VectorXd::Zero(m);
  Eigen::VectorXd& d = solution.d;
  Eigen::VectorXd h_d = Eigen::VectorXd::Zero(m);
  std::vector<Eigen::VectorXd> ends;
  FaceStep face_step;
  Extrapolation extrapolation(kExtrapolationDepth);
  const auto size = static_cast<double>(m);
  const double budget = work;
  while (solution.passes < kFewestPasses || work > 0) {
    ++solution.passes;
    work -= size;
    double sum = 0;
    bool moved = false;
    for (Eigen::Index j = 0; j < m; ++j) {
      const double x = w[j] + d[j], gradient = g[j] + h_d[j];
      sum = add_violation(penalty, sum, violation(penalty, x, gradient));
      const double delta = newton_step(penalty, x, gradient, h(j, j));
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
    if (ends.size() < kExtrapolationDepth) continue;
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

Eigen::MatrixXd unpack_symmetric(std::span<const double> packed, std::size_t m, double scale) {
  if (packed.size() != m * (m + 1) / 2) throw std::logic_error("logreg: packed Hessian of the wrong size");
  Eigen::MatrixXd h(static_cast<Eigen::Index>(m), static_cast<Eigen::Index>(m));
  for (std::size_t a = 0; a < m; ++a) {
    for (std::size_t b = a; b < m; ++b) {
      const double value = scale * packed[kernels::packed_index(m, a, b)];
      h(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b)) = value;
      h(static_cast<Eigen::Index>(b), static_cast<Eigen::Index>(a)) = value;
    }
  }
  return h;
}

}  // namespace schmp::logreg
