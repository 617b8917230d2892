// Multiclass logistic regression, one-vs-rest as liblinear's -s 0 and -s 6: one binary problem per
// class (its rows positive, every other row negative), the problems played side by side on the ranks
// (Job::run_each), and liblinear's multiclass model file, one column of weights per class.
#pragma once

#include <string>
#include <vector>

#include "logreg.hpp"
#include "path.hpp"
#include "predict.hpp"
#include "schmp/run.hpp"

namespace schmp::logreg {

// The jobs of a one-vs-rest fit of `classes` (the data's labels, increasing): `config` with each
// class's label as --positive_label, silent.
std::vector<Config> class_jobs(const Config& config, const std::vector<double>& classes);

// What each class's job found (Coordinator::result()).
struct ClassFit {
  double label = 0;
  std::string text;  // as the data writes it (class_text)
  double objective = 0;
  double relative_gap = 0;
  double nonzeros = 0;
  std::vector<double> w;  // the constant feature's weight last, with --bias or --fit_intercept
};
std::vector<ClassFit> class_fits(const Config& config, const std::vector<double>& classes,
                                 const std::vector<std::vector<double>>& results);

// The model of the classes' fits: liblinear's of more than two classes, a column of weights per class.
LinearModel one_vs_rest_model(const Config& config, const std::vector<ClassFit>& fits);

// --multiclass --path N: a probe finds each class's lambda_max against the rest; every class's path
// then runs from the largest of them (Config::lambda_max), side by side on the ranks, so that each
// lambda's class columns make one multiclass model. Writes the path as write_path does: objective, gap
// and seconds are the classes' sums, rel_gap the largest class's, nonzeros every class's weights, and
// the test scores the multiclass model's. Returns the exit status.
int one_vs_rest_path(Job& job, const Config& config, const std::vector<double>& classes);

// One line per class on stdout, then print_held_out.
void print_one_vs_rest(const Config& config, const std::vector<ClassFit>& fits);
// The held-out accuracy and log-loss of a model of more classes with --test, and the --output line.
void print_held_out(const Config& config, const LinearModel& model);

// A class's cross-validation (--multiclass --cv): its fit at its own lambda_min, and the folds' choice.
struct ClassCv {
  ClassFit fit;
  double lambda_min = 0, lambda_1se = 0;
  double deviance = 0, se = 0;  // the folds' mean held-out deviance at lambda_min, and its SE
};
// From the class's fold results and its refit's result (Config::refit_beside).
ClassCv class_cv(const Config& config, double label, const std::vector<std::vector<double>>& folds,
                 const std::vector<double>& refit);

// One line per class on stdout, and the model of the classes' fits to --output.
void write_class_cv(const Config& config, const std::vector<ClassCv>& classes);

}  // namespace schmp::logreg
