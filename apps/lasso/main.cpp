// schmp-lasso: the command line of the Lasso program. Framework flags (--schedulers, --staleness,
// --threads, --schedule_size, --priority, --eta, --seed, --max_rounds, --max_seconds, --trace, ...)
// are shared by every app; the flags below are Lasso's own.
//   schmp-lasso predict --model MODEL --data FILE [--output PREDICTIONS]   (one process)
#include <cstdio>
#include <stdexcept>

#include "lasso.hpp"
#include "predict.hpp"
#include "schmp/output.hpp"
#include "schmp/schmp.hpp"

using schmp::any;

// The flags' defaults are the Config's, written once, there.
const schmp::lasso::Config kDefaults;

SCHMP_FLAG(string, data, "", any(),
           "Training data: LIBSVM (1-based indices) or MatrixMarket coordinate file");
SCHMP_FLAG(string, labels, "", any(),
           "Labels of a MatrixMarket matrix: MatrixMarket array or one number per line");
SCHMP_FLAG(string, weights, "", any(),
           "Row weights: plain text, one non-negative number per row of --data in its order; the loss is "
           "sum_i w_i (y_i - x_i beta - b)^2 / (2 sum_i w_i)");
SCHMP_FLAG(
    double, lambda, kDefaults.lambda, any(),
    "Penalty weight lambda; when 0, --lambda_ratio times lambda_max = ||X~^T y~||_inf / (n a), X~ and y~ "
    "centred with the intercept, a = --l1_ratio. predict: of a path's models, the one nearest this lambda "
    "(0: the last)");
SCHMP_FLAG(double, lambda_ratio, kDefaults.lambda_ratio, any(),
           "lambda as a fraction of lambda_max (used when --lambda is 0)");
SCHMP_FLAG(double, tol, kDefaults.tol, schmp::positive(),
           "Stop when the duality gap relative to the objective is at most this");
SCHMP_FLAG(double, l1_ratio, kDefaults.l1_ratio, schmp::between(0, 1),
           "The L1 share a of the penalty lambda (a ||beta||_1 + (1 - a)/2 ||beta||^2): 1 the Lasso, below 1 "
           "the elastic net (scikit-learn's l1_ratio), 0 ridge regression (needs --lambda)");
SCHMP_FLAG(bool, fit_intercept, kDefaults.fit_intercept, any(),
           "Fit an unpenalised intercept b (implicit centering: X stays sparse); false holds b at 0");
SCHMP_FLAG(
    bool, standardize, kDefaults.standardize, any(),
    "Penalise the coefficients of columns scaled to unit variance (glmnet's standardize; X stays as it "
    "is); the model is written on the data's scale");
SCHMP_FLAG(double, rho, kDefaults.rho, schmp::above_up_to(0, 1),
           "Dependency check: never update together columns with |cosine| >= rho (1: off)");
SCHMP_FLAG(string, newton_steps, kDefaults.newton_steps, schmp::one_of({"auto", "rounds", "hessian"}),
           "Steps from the Gram matrix: at an evaluation, the coordinator moves the nonzero coefficients "
           "(at most --max_hessian) to their exact minimiser from X'X over them, which the workers sum "
           "once per column; auto (when the rounds would take longer), "
           "rounds (never) or hessian (at every evaluation)");
SCHMP_FLAG(uint64, max_hessian, kDefaults.max_hessian, schmp::between(1, 8192),
           "The most coefficients a step from the Gram matrix may move (the coordinator holds 8 bytes "
           "times its square)");
SCHMP_FLAG(string, output, "", any(),
           "Training: the model ('# comments', 'intercept b', then 'index value' per nonzero, 1-based). "
           "predict: one prediction per row");
SCHMP_FLAG(string, model, "", any(), "predict: the model to apply");
SCHMP_FLAG(uint64, path, kDefaults.path, any(),
           "Solve a path of this many lambdas from lambda_max down to --lambda_min_ratio times it, each "
           "warm-started from the last (0: one lambda)");
SCHMP_FLAG(double, lambda_min_ratio, kDefaults.lambda_min_ratio, any(),
           "The path's last lambda over lambda_max (0: glmnet's, 1e-4 with more rows than features, else "
           "1e-2)");
SCHMP_FLAG(string, test, "", any(), "A path's held-out rows (LIBSVM): their MSE at each lambda");
SCHMP_FLAG(uint64, cv, kDefaults.cv, any(),
           "Cross-validate the path (--path, 100 lambdas unless given) on this many folds of the rows, "
           "assigned by --seed, side by side on the ranks; then refit on all rows down to lambda_min");
SCHMP_FLAG(string, path_table, "", any(),
           "Write the path's table here (CSV: lambda, objective, gap, nonzeros, seconds, test MSE)");
DECLARE_string(trace);
DECLARE_uint64(seed);

namespace {

int predict() {
  if (FLAGS_model.empty() || FLAGS_data.empty()) throw std::runtime_error("predict needs --model and --data");
  if (const std::string unread = schmp::unread_flag({"labels", "weights"}, "by predict"); !unread.empty())
    throw std::runtime_error(unread);
  schmp::io::refuse_overwriting({{"--output", FLAGS_output}},
                                {{"--data", FLAGS_data}, {"--model", FLAGS_model}});
  double lambda = 0;
  const auto report = schmp::lasso::predict(FLAGS_model, FLAGS_data, FLAGS_output, FLAGS_lambda, lambda);
  if (lambda > 0) std::printf("lambda %.9g (of a path)\n", lambda);
  std::printf("rows %zu  MSE %.9g  R^2 %.9g\n", report.rows, report.mse, report.r_squared);
  if (!FLAGS_output.empty()) std::printf("predictions: %s\n", FLAGS_output.c_str());
  return 0;
}

// --cv K: the folds' paths side by side on the ranks, then the refit on every row down to lambda_min,
// which writes the model and the table with the folds' mean held-out MSE.
int cross_validate(schmp::Job& job, schmp::lasso::Config config) {
  if (config.path == 0) config.path = 100;
  std::vector<schmp::lasso::Config> jobs;
  for (std::uint64_t k = 0; k < config.cv; ++k) {
    schmp::lasso::Config fold = config;
    fold.fold = static_cast<std::int64_t>(k);
    fold.output.clear();
    fold.path_table.clear();
    jobs.push_back(fold);
  }
  // On several ranks the refit runs beside the folds, on the whole path: it fills a group's turn that
  // would otherwise wait. In one process it follows them, and stops at lambda_min.
  const bool beside = job.ranks() > 1;
  if (beside) {
    schmp::lasso::Config refit = config;
    refit.refit_beside = true;
    jobs.push_back(refit);
  }
  schmp::EachRun each = job.run_each<schmp::lasso::Lasso>(jobs);
  schmp::forget_kept_rows();
  if (each.status != 0) return each.status;
  if (!beside) {
    config.fold_results = std::move(each.results);
    return job.run<schmp::lasso::Lasso>(config);
  }
  if (!job.first_rank()) return 0;
  const std::vector<double> refit = std::move(each.results.back());
  each.results.pop_back();
  schmp::lasso::Path path = schmp::lasso::Path::deserialised({refit.data() + 2, refit.size() - 2});
  path.cross_validated(schmp::CrossValidation(path.lambdas(), each.results));
  std::printf("schmp-lasso: %llu folds and the refit beside them: %zu of %zu lambdas solved\n",
              static_cast<unsigned long long>(config.cv), path.points().size(), path.size());
  schmp::lasso::write_path(config, path, refit[0], static_cast<std::size_t>(refit[1]));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (schmp::take_subcommand(argc, argv, "predict")) {
    return schmp::run_tool(
        argc, argv,
        "usage: schmp-lasso predict --model MODEL --data FILE [--lambda L] [--output PREDICTIONS]", predict);
  }
  // Each evaluation resets every coefficient's priority to the step it would take (lasso.hpp), so no
  // coefficient that would move can starve between evaluations, and eta need only keep the others
  // drawable: a floor far below any change that matters sends the rounds where the changes are
  // (2-3x fewer rounds on sparse data, 20x on leukemia than with the framework's 1e-4).
  schmp::set_default("eta", "1e-8");
  // Cyclic sweeps over the moving coefficients repeat one fixed map, whose iterates the coordinator
  // extrapolates (lasso.hpp): against drawing by weight, 1.5 to 4 times faster to the same gap on
  // correlated dense data, leukemia and the generated sparse problems, and as fast on MovieLens.
  schmp::set_default("sweeps", "true");
  schmp::set_default("cyclic", "true");
  schmp::Job job(
      argc, argv,
      "Lasso by scheduled model-parallel coordinate descent.\n"
      "usage: mpirun -np N schmp-lasso --data FILE [--lambda_ratio R | --lambda L] [--output FILE] "
      "[--trace FILE]\n"
      "       schmp-lasso predict --model MODEL --data FILE [--output PREDICTIONS]");
  if (const std::string unread = schmp::unread_flag({"model"}, "in training"); !unread.empty())
    return job.refuse(unread);
  schmp::lasso::Config config;
  config.data = FLAGS_data;
  config.labels = FLAGS_labels;
  config.weights = FLAGS_weights;
  config.lambda = FLAGS_lambda;
  config.lambda_ratio = FLAGS_lambda_ratio;
  config.l1_ratio = FLAGS_l1_ratio;
  config.tol = FLAGS_tol;
  config.fit_intercept = FLAGS_fit_intercept;
  config.standardize = FLAGS_standardize;
  config.rho = FLAGS_rho;
  config.newton_steps = FLAGS_newton_steps;
  config.max_hessian = FLAGS_max_hessian;
  config.output = FLAGS_output;
  config.path = FLAGS_path;
  config.lambda_min_ratio = FLAGS_lambda_min_ratio;
  config.test = FLAGS_test;
  config.path_table = FLAGS_path_table;
  config.trace = FLAGS_trace;
  config.cv = FLAGS_cv;
  config.seed = FLAGS_seed;
  if (config.cv > 0) return cross_validate(job, config);
  return job.run<schmp::lasso::Lasso>(config);
}
