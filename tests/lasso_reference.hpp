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

// Minimises (1/2n) ||y - X beta - b||^2 + lambda (a ||beta||_1 + (1 - a)/2 ||beta||^2), a = l1_ratio, with
// b = 0 unless `fit_intercept`; lambda is `lambda` when positive, else lambda_ratio times glmnet's
// lambda_max. With `weights` (one per row) the loss is sum_i w_i (y_i - x_i beta - b)^2 / (2 sum_i w_i):
// every sum is weighted, b is the residual's weighted mean.
LassoSolution solve_lasso_reference(const io::SparseRows& rows, double lambda_ratio,
                                    bool fit_intercept = true, double l1_ratio = 1, double lambda = 0,
                                    const std::vector<double>& weights = {});

}  // namespace schmp::testing
