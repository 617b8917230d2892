// The Newton step's quadratic model over a few coordinates, minimised by the coordinator itself from the
// Hessian the workers summed, instead of by rounds of coordinate descent over the data:
//   Q(d) = g . d + d' H d / 2 + R(w + d) - R(w).
// A pass over m coordinates costs m^2 here and touches no data, so the model can be solved tightly:
// newGLMNET's inexact inner solves made hundreds of short Newton steps on raw features of mixed scales
// (coil2000), where exact ones take a handful.
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <span>

#include "logreg.hpp"

namespace schmp::logreg {

struct ModelSolution {
  Eigen::VectorXd d;
  std::size_t passes = 0;
  double violation = 0;  // of the last pass, as newton_step's violations summed (1-norm) or 2-norm for L2
  double work = 0;       // multiply-adds spent
};

// Minimises Q by cyclic coordinate descent until a pass's violation is at most `tolerance`, or `work`
// multiply-adds are spent. Every few passes it tries an Anderson extrapolation of their ends, and a step
// to the minimiser over the face of the current support and signs (a linear solve, when its
// factorisation fits in the work left); each is kept when it lowers Q. h is symmetric with a positive
// diagonal; w, g and h cover the same coordinates.
ModelSolution minimise_model(Penalty penalty, const Eigen::VectorXd& w, const Eigen::VectorXd& g,
                             const Eigen::MatrixXd& h, double tolerance, double work);

// Q(d), given h d.
double model_value(Penalty penalty, const Eigen::VectorXd& w, const Eigen::VectorXd& g,
                   const Eigen::VectorXd& d, const Eigen::VectorXd& h_d);

// The symmetric matrix whose upper triangle `packed` holds by rows (kernels::packed_index's order),
// times `scale`.
Eigen::MatrixXd unpack_symmetric(std::span<const double> packed, std::size_t m, double scale);

}  // namespace schmp::logreg
