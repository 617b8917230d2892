// A plain single-process Lasso solver to check schmp-lasso against: cyclic coordinate descent over
// all columns, run until the duality gap is negligible. Independent of the framework on purpose: the
// intercept is a coordinate of its own here, moved to the residual's mean after every sweep, where
// schmp-lasso centres the columns implicitly.
#pragma once

#include <vector>

#include "schmp/io.hpp"

namespace schmp::testing {

struct LassoSolution {
  std::vector<double> beta;
  double intercept = 0;
  double lambda = 0;
  double objective = 0;
};

// Minimises (1/2n) ||y - X beta - b||^2 + lambda ||beta||_1, with b = 0 unless `fit_intercept`.
LassoSolution solve_lasso_reference(const io::SparseRows& rows, double lambda_ratio,
                                    bool fit_intercept = true);

}  // namespace schmp::testing
