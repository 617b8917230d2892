// A plain single-process solver for liblinear's logistic regression objectives, to check
// schmp-logreg against: cyclic coordinate descent with a Newton step per coordinate, run until the
// optimality residual is negligible. Independent of the framework on purpose.
#pragma once

#include <cstddef>
#include <vector>

#include "schmp/io.hpp"

namespace schmp::testing {

struct LogregSolution {
  std::vector<double> w;
  double objective = 0;
};

// Objective: R(w) + C * sum_i log(1 + exp(-y_i w.x_i)), R = a ||w||_1 + (1 - a)/2 ||w||^2 when l1 (a the
// l1_ratio: 1 the Lasso's penalty, below 1 the elastic net), else 0.5 ||w||^2.
// Labels must be +1 or -1. `columns` is the number of weights (may exceed the columns present in
// rows); std::invalid_argument if w.size() != columns or a row holds a column >= columns. With
// `intercept`, w has one weight more, for a constant feature 1 that R leaves out.
double logreg_objective(const io::SparseRows& rows, std::size_t columns, const std::vector<double>& w,
                        double C, bool l1, bool intercept = false, double l1_ratio = 1);
LogregSolution solve_logreg_reference(const io::SparseRows& rows, std::size_t columns, double C, bool l1,
                                      bool intercept = false, double l1_ratio = 1);

// The softmax objective of K classes, sum_l R(w_l) + C sum_i (log sum_l exp(w_l . x_i) - w_{y_i} . x_i),
// R as above, with the classes the sorted distinct labels of `rows`, and w[l] class l's weights (one
// more, the unpenalised intercept, with `intercept`).
struct MultinomialSolution {
  std::vector<std::vector<double>> w;
  double objective = 0;
};
double multinomial_objective(const io::SparseRows& rows, std::size_t columns,
                             const std::vector<std::vector<double>>& w, double C, bool intercept,
                             double l1_ratio = 1);
// Cyclic coordinate descent over every class's weights, a backtracked Newton step per coordinate.
MultinomialSolution solve_multinomial_reference(const io::SparseRows& rows, std::size_t columns, double C,
                                                bool intercept, double l1_ratio = 1);

}  // namespace schmp::testing
