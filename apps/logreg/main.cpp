// schmp-logreg: the command line of the logistic regression program. Framework flags (--schedulers,
// --staleness, --threads, --schedule_size, --priority, --eta, --seed, --max_rounds, --max_seconds,
// --trace, ...) are shared by every app; the flags below are logistic regression's own.
//
//   mpirun -np N schmp-logreg --data TRAIN [--penalty l1|l2] [--C C] [--output MODEL]   (training)
//   schmp-logreg predict --model MODEL --data FILE [--positive_label L] [--output P]   (one process)
#include <cstdio>
#include <optional>
#include <stdexcept>

#include "logreg.hpp"
#include "multiclass.hpp"
#include "multinomial.hpp"
#include "predict.hpp"
#include "schmp/dataset.hpp"
#include "schmp/output.hpp"
#include "schmp/schmp.hpp"

using schmp::any;

// The flags' defaults are the Config's, written once, there.
const schmp::logreg::Config kDefaults;

SCHMP_FLAG(string, data, "", any(),
           "Training data: LIBSVM (1-based indices; labels +1/-1 or 1/0) or MatrixMarket");
SCHMP_FLAG(string, labels, "", any(),
           "Labels of a MatrixMarket matrix: MatrixMarket array or one number per line");
SCHMP_FLAG(string, weights, "", any(),
           "Row weights: plain text, one non-negative number per row of --data in its order; the loss is "
           "C sum_i w_i l(y_i (w . x_i + b))");
SCHMP_FLAG(string, penalty, "l1", schmp::one_of({"l1", "l2"}),
           "l1: ||w||_1 (liblinear -s 6); l2: ||w||^2 / 2 (liblinear -s 0)");
SCHMP_FLAG(double, l1_ratio, kDefaults.l1_ratio, schmp::between(0, 1),
           "With --penalty l1, its L1 share a: the penalty a ||w||_1 + (1 - a)/2 ||w||^2 (scikit-learn's "
           "elastic net; 0 is --penalty l2)");
SCHMP_FLAG(double, C, kDefaults.C, schmp::positive(),
           "Weight of the summed logistic loss against the penalty (liblinear -c)");
SCHMP_FLAG(bool, bias, kDefaults.bias, any(),
           "Append a constant feature 1, penalised, as liblinear -B 1 does (turns --fit_intercept off)");
SCHMP_FLAG(bool, fit_intercept, kDefaults.fit_intercept, any(),
           "Fit an unpenalised intercept (the weight of a constant feature 1 in the model file)");
SCHMP_FLAG(bool, standardize, kDefaults.standardize, any(),
           "Penalise the weights of columns scaled to unit variance (glmnet's standardize; X stays as it "
           "is); the model is written on the data's scale");
SCHMP_FLAG(string, positive_label, "", any(),
           "The label of the positive class; every other label is negative (training and predict)");
SCHMP_FLAG(bool, multiclass, kDefaults.multiclass, any(),
           "One-vs-rest over every label of the data (liblinear's multiclass): a binary problem per class, "
           "side by side on the ranks, and liblinear's multiclass model");
SCHMP_FLAG(bool, multinomial, kDefaults.multinomial, any(),
           "Training: the softmax over every label of the data (scikit-learn's multinomial), class by class "
           "until its duality gap meets --tol, or along --path and --cv; two classes are the binary model. "
           "predict: the model is a multinomial fit's (its probabilities are the softmax of the classes' "
           "scores; a multinomial path's models file says so itself)");
SCHMP_FLAG(double, tol, kDefaults.tol, schmp::positive(),
           "Stop when the duality gap relative to the objective is at most this");
SCHMP_FLAG(double, rho, kDefaults.rho, schmp::above_up_to(0, 1),
           "Dependency check: never update together columns with |cosine| >= rho (1: off)");
SCHMP_FLAG(string, newton_steps, kDefaults.newton_steps, schmp::one_of({"auto", "rounds", "hessian"}),
           "How a Newton step is found: rounds (coordinate descent over the data), hessian (the coordinator "
           "solves the model from the Hessian the workers sum, when it has at most --max_hessian "
           "coordinates), or auto (rounds until they creep, then the Hessian while it does better)");
SCHMP_FLAG(uint64, max_hessian, kDefaults.max_hessian, schmp::between(1, 8192),
           "The most coordinates a Newton step found from the Hessian may move (the coordinator holds 28 "
           "bytes times its square); a softmax's joint step moves at most 1024 or this many");
SCHMP_FLAG(string, test, "", any(),
           "Held-out rows, labelled as --data: their log-loss, accuracy and AUC join the trace");
SCHMP_FLAG(string, test_labels, "", any(), "Labels of a MatrixMarket --test matrix");
SCHMP_FLAG(
    string, output, "", any(),
    "Training: the model, in liblinear's text format. predict: the positive label's probability per row");
SCHMP_FLAG(string, model, "", any(),
           "predict: the model to apply (liblinear's text format, or a path's --path_models file)");
SCHMP_FLAG(double, lambda, 0, schmp::at_least(0),
           "predict: of a path's models, the one whose lambda is nearest this (0: the last)");
SCHMP_FLAG(uint64, path, kDefaults.path, any(),
           "Solve a path of this many lambdas from lambda_max down to --lambda_min_ratio times it, each "
           "warm-started from the last, at C = 1 / (lambda sum_i w_i) (glmnet's lambda; 0: one C)");
SCHMP_FLAG(double, lambda_min_ratio, kDefaults.lambda_min_ratio, any(),
           "The path's last lambda over lambda_max (0: glmnet's, 1e-4 with more rows than features, else "
           "1e-2)");
SCHMP_FLAG(uint64, cv, kDefaults.cv, any(),
           "Cross-validate the path (--path, 100 lambdas unless given) on this many folds of the rows, "
           "assigned by --seed, side by side on the ranks; then refit on all rows down to lambda_min");
SCHMP_FLAG(string, path_table, "", any(),
           "Write the path's table here (CSV: lambda, C, objective, gap, nonzeros, seconds, test log-loss "
           "and accuracy, CV deviance)");
SCHMP_FLAG(string, path_models, "", any(),
           "Write every model of the path here ('lambda L C c', then 'index value' per nonzero weight, "
           "of --multinomial a value per class); --output gets the last (with --cv: lambda_min's)");
DECLARE_string(trace);
DECLARE_uint64(seed);
DECLARE_double(progress_seconds);
DECLARE_double(max_seconds);

namespace {

int predict() {
  if (FLAGS_model.empty() || FLAGS_data.empty()) throw std::runtime_error("predict needs --model and --data");
  if (const std::string unread =
          schmp::unread_flag({"labels", "weights", "test", "test_labels"}, "by predict");
      !unread.empty())
    throw std::runtime_error(unread);
  schmp::io::refuse_overwriting({{"--output", FLAGS_output}},
                                {{"--data", FLAGS_data}, {"--model", FLAGS_model}});
  std::optional<double> positive_label;
  if (!FLAGS_positive_label.empty()) positive_label = schmp::logreg::positive_label_of(FLAGS_positive_label);
  double lambda = 0;
  const auto report = schmp::logreg::predict(FLAGS_model, FLAGS_data, FLAGS_output, positive_label,
                                             FLAGS_lambda, lambda, FLAGS_multinomial);
  if (lambda > 0) std::printf("lambda %.9g (of a path)\n", lambda);
  std::printf("rows %zu  accuracy %.6f  log-loss %.6g", report.rows, report.accuracy, report.log_loss);
  if (report.classes == 2) std::printf("  AUC %.6f", report.auc);
  std::printf("\n");
  if (!FLAGS_output.empty()) std::printf("probabilities: %s\n", FLAGS_output.c_str());
  return 0;
}

// The data's classes, increasing (classes by name: their names' indices, the names into `config`);
// std::runtime_error for data of one class, or an --output that cannot be written.
std::vector<double> data_classes(schmp::logreg::Config& config) {
  schmp::io::refuse_overwriting({{"--output", config.output}, {"--trace", config.trace}},
                                {{"--data", config.data}, {"--test", config.test}});
  for (const std::string& file : {config.output, config.trace}) {
    if (!file.empty()) schmp::io::check_writable(file);
  }
  // Classes by name are numbered in the names' order; classes by number are their labels.
  std::vector<double> classes;
  config.label_names = schmp::io::read_label_names(config.data);
  for (std::size_t c = 0; c < config.label_names.size(); ++c) classes.push_back(static_cast<double>(c));
  if (config.label_names.empty()) classes = schmp::io::read_label_set(config.data, config.labels);
  if (classes.size() < 2) {
    throw std::runtime_error(
        config.data + ": one class only (label " +
        (classes.empty() ? std::string("none") : schmp::logreg::class_text(config, classes[0])) +
        "): nothing to tell apart");
  }
  return classes;
}

// --multiclass without --cv: a binary problem per class, then the model of them all.
int one_vs_rest(schmp::Job& job, const schmp::logreg::Config& config, const std::vector<double>& classes) {
  const schmp::EachRun each = job.run_each<schmp::logreg::Logreg>(schmp::logreg::class_jobs(config, classes));
  schmp::forget_kept_rows();
  if (each.status != 0) return each.status;
  if (!job.first_rank()) return 0;
  const auto fits = schmp::logreg::class_fits(config, classes, each.results);
  if (!config.output.empty()) {
    write_liblinear_model(config.output, schmp::logreg::solver_type(config),
                          schmp::logreg::one_vs_rest_model(config, fits));
  }
  schmp::logreg::print_one_vs_rest(config, fits);
  return 0;
}

// --cv K: the folds' paths side by side on the ranks, then the refit on every row down to lambda_min,
// which writes the model and the table with the folds' mean held-out deviance.
// The jobs of `config`'s folds.
std::vector<schmp::logreg::Config> fold_jobs(const schmp::logreg::Config& config) {
  std::vector<schmp::logreg::Config> jobs;
  for (std::uint64_t k = 0; k < config.cv; ++k) {
    schmp::logreg::Config fold = config;
    fold.fold = static_cast<std::int64_t>(k);
    fold.output.clear();
    fold.path_table.clear();
    fold.path_models.clear();
    jobs.push_back(fold);
  }
  return jobs;
}

int cross_validate(schmp::Job& job, schmp::logreg::Config config) {
  std::vector<schmp::logreg::Config> jobs = fold_jobs(config);
  // On several ranks the refit runs beside the folds, on the whole path: it fills a group's turn that
  // would otherwise wait. In one process it follows them, and stops at lambda_min.
  const bool beside = job.ranks() > 1;
  if (beside) {
    schmp::logreg::Config refit = config;
    refit.refit_beside = true;
    jobs.push_back(refit);
  }
  schmp::EachRun each = job.run_each<schmp::logreg::Logreg>(jobs);
  schmp::forget_kept_rows();
  if (each.status != 0) return each.status;
  if (!beside) {
    config.fold_results = std::move(each.results);
    return job.run<schmp::logreg::Logreg>(config);
  }
  if (!job.first_rank()) return 0;
  const std::vector<double> refit = std::move(each.results.back());
  each.results.pop_back();
  schmp::logreg::Refit found = schmp::logreg::refit_of(refit);
  schmp::logreg::Path& path = found.path;
  path.cross_validated(schmp::CrossValidation(path.lambdas(), each.results));
  std::printf("schmp-logreg: %llu folds and the refit beside them: %zu of %zu lambdas solved\n",
              static_cast<unsigned long long>(config.cv), path.points().size(),
              path.cross_validation()->best + 1);
  schmp::logreg::write_path(config, path, found.lambda_max, found.shape);
  return 0;
}

// --multiclass --cv K: each class's folds and its refit beside them, all side by side on the ranks (in
// one process, one after another); each class's model is its refit's at its own lambda_min, as
// scikit-learn's LogisticRegressionCV picks C per class one-vs-rest.
int cross_validate_classes(schmp::Job& job, const schmp::logreg::Config& config,
                           const std::vector<double>& classes) {
  std::vector<schmp::logreg::Config> jobs;
  for (schmp::logreg::Config& positive : schmp::logreg::class_jobs(config, classes)) {
    const std::vector<schmp::logreg::Config> folds = fold_jobs(positive);
    jobs.insert(jobs.end(), folds.begin(), folds.end());
    positive.refit_beside = true;
    jobs.push_back(positive);
  }
  schmp::EachRun each = job.run_each<schmp::logreg::Logreg>(jobs);
  schmp::forget_kept_rows();
  if (each.status != 0) return each.status;
  if (!job.first_rank()) return 0;
  std::vector<schmp::logreg::ClassCv> fits;
  const std::size_t per_class = config.cv + 1;
  for (std::size_t c = 0; c < classes.size(); ++c) {
    const auto first = each.results.begin() + static_cast<std::ptrdiff_t>(c * per_class);
    fits.push_back(schmp::logreg::class_cv(config, classes[c],
                                           {first, first + static_cast<std::ptrdiff_t>(config.cv)},
                                           *(first + static_cast<std::ptrdiff_t>(config.cv))));
  }
  schmp::logreg::write_class_cv(config, fits);
  return 0;
}

// --multiclass: one-vs-rest over the data's classes, cross-validated with --cv; --multinomial: the
// softmax over them. Two classes are the binary problem, the later one positive.
int multiclass(schmp::Job& job, schmp::logreg::Config config) {
  std::vector<double> classes;
  try {
    classes = data_classes(config);
  } catch (const std::exception& e) {
    return job.refuse(e.what());
  }
  config.multiclass = false;
  if (classes.size() == 2) {
    config.multinomial = false;
    config.positive_label = schmp::logreg::label_text(classes[1]);
    return config.cv > 0 ? cross_validate(job, config) : job.run<schmp::logreg::Logreg>(config);
  }
  // Their fits are many quiet jobs: none is checkpointed, and one-vs-rest's classes have no common trace.
  if (const std::string unread = schmp::unread_flag(
          {"checkpoint", "resume"}, config.multinomial ? "by --multinomial" : "by --multiclass");
      !unread.empty())
    return job.refuse(unread);
  if (const std::string unread = schmp::unread_flag({"trace"}, "by --multiclass (--multinomial writes one)");
      !config.multinomial && !unread.empty())
    return job.refuse(unread);
  if (config.multinomial) return schmp::logreg::fit_multinomial(job, config, classes);
  if (config.cv > 0) return cross_validate_classes(job, config, classes);
  return config.path > 0 ? schmp::logreg::one_vs_rest_path(job, config, classes)
                         : one_vs_rest(job, config, classes);
}

}  // namespace

int main(int argc, char** argv) {
  if (schmp::take_subcommand(argc, argv, "predict")) {
    return schmp::run_tool(
        argc, argv,
        "usage: schmp-logreg predict --model MODEL --data FILE [--positive_label L] [--output PROBABILITIES]",
        predict);
  }
  // As in Lasso, each evaluation refreshes every priority, so eta need only keep the rest drawable.
  schmp::set_default("eta", "1e-8");
  // The inner rounds of a Newton step are short (no exponentials), so building the next blocks while
  // the workers compute halves a round when blocks go through the dependency check (several workers,
  // or --in_order=false); priorities two rounds old pick as well as fresh ones.
  schmp::set_default("staleness", "2");
  // Each Newton step restarts every priority, which brings back the coordinates that stopped moving:
  // sweeps over the moving ones took about a quarter fewer updates to liblinear's objective than
  // drawing by weight on the generated problem at C = 1 and 10 (docs/benchmarks.md).
  schmp::set_default("sweeps", "true");
  schmp::Job job(argc, argv,
                 "Logistic regression (L1 or L2; one-vs-rest with --multiclass) by scheduled model-parallel "
                 "coordinate descent.\n"
                 "usage: mpirun -np N schmp-logreg --data FILE [--penalty l1|l2] [--C C] [--bias] "
                 "[--test HELD_OUT] [--output MODEL] [--trace FILE]");
  if (const std::string unread = schmp::unread_flag({"model", "lambda"}, "in training"); !unread.empty())
    return job.refuse(unread);
  schmp::logreg::Config config;
  config.data = FLAGS_data;
  config.labels = FLAGS_labels;
  config.weights = FLAGS_weights;
  config.penalty = FLAGS_penalty;
  config.C = FLAGS_C;
  config.l1_ratio = FLAGS_l1_ratio;
  config.bias = FLAGS_bias;
  // --bias asks for liblinear's penalised constant feature instead of the intercept on by default.
  config.fit_intercept =
      FLAGS_fit_intercept && !(FLAGS_bias && gflags::GetCommandLineFlagInfoOrDie("fit_intercept").is_default);
  config.positive_label = FLAGS_positive_label;
  config.standardize = FLAGS_standardize;
  config.tol = FLAGS_tol;
  config.rho = FLAGS_rho;
  config.newton_steps = FLAGS_newton_steps;
  config.max_hessian = FLAGS_max_hessian;
  config.test = FLAGS_test;
  config.test_labels = FLAGS_test_labels;
  config.output = FLAGS_output;
  config.trace = FLAGS_trace;
  config.progress_seconds = FLAGS_progress_seconds;
  config.max_seconds = FLAGS_max_seconds;
  config.multinomial = FLAGS_multinomial;
  config.multiclass = FLAGS_multiclass || FLAGS_multinomial;
  config.path = FLAGS_path;
  config.lambda_min_ratio = FLAGS_lambda_min_ratio;
  config.path_table = FLAGS_path_table;
  config.path_models = FLAGS_path_models;
  config.cv = FLAGS_cv;
  config.seed = FLAGS_seed;
  if ((config.path > 0 || config.cv > 0) && !gflags::GetCommandLineFlagInfoOrDie("C").is_default)
    return job.refuse("--path and --cv set C from each lambda: drop --C");
  if (config.cv > 0) {
    if (config.path == 0) config.path = 100;
    try {
      schmp::logreg::check_config(config);
    } catch (const std::exception& e) {
      return job.refuse(e.what());
    }
    return config.multiclass ? multiclass(job, config) : cross_validate(job, config);
  }
  if (config.multiclass) {
    try {
      schmp::logreg::check_config(config);
    } catch (const std::exception& e) {
      return job.refuse(e.what());
    }
    return multiclass(job, config);
  }
  return job.run<schmp::logreg::Logreg>(config);
}
