// A plain single-process Lasso solver to check schmp-lasso against: cyclic coordinate descent over
// all columns, run until the duality gap is negligible. Independent of the framework on purpose.
#pragma once

#include <vector>

#include "schmp/io.hpp"

namespace schmp::testing {

struct LassoSolution {
  std::vector<double> beta;
  double lambda = 0;
  double objective = 0;
};

LassoSolution solve_lasso_reference(const io::SparseRows& rows, double lambda_ratio);

}  // namespace schmp::testing
