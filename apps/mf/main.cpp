// schmp-mf: the command line of the matrix factorization program. Framework flags (--seed,
// --max_rounds, --max_seconds, --threads, --priority, --eta, --trace, ...) are shared by every app;
// the flags below are matrix factorization's own.
//
//   mpirun -np N schmp-mf --data TRAIN [--test TEST] [--algorithm ccd|sgd] [--rank K] [--output MODEL]
//   schmp-mf predict --model MODEL --data RATINGS [--output PREDICTIONS]        (one process)
//   schmp-mf predict --model IMPLICIT_MODEL --data HELD_OUT --exclude TRAIN [--top K]
//   schmp-mf recommend --model MODEL --user U [--top K] [--exclude TRAIN]       (one process)
#include <cstdio>
#include <stdexcept>

#include "mf.hpp"
#include "model.hpp"
#include "predict.hpp"
#include "schmp/output.hpp"
#include "schmp/schmp.hpp"

using schmp::any;
using schmp::at_least;

// The flags' defaults are the Config's, written once, there.
const schmp::mf::Config kDefaults;

SCHMP_FLAG(string, data, "", any(),
           "Ratings: 'user item rating' lines (LIBMF's text format) or a MatrixMarket coordinate file");
SCHMP_FLAG(string, test, "", any(), "Held-out ratings, same format: their RMSE and MAE join the trace");
SCHMP_FLAG(int32, index_base, kDefaults.index_base, schmp::one_of({0.0, 1.0}),
           "Ids in text ratings files count from 0 (LIBMF) or 1 (MatrixMarket is always 1)");
SCHMP_FLAG(uint64, users, kDefaults.bounds.users, any(), "Refuse user ids at or beyond this bound (0-based)");
SCHMP_FLAG(uint64, items, kDefaults.bounds.items, any(), "Refuse item ids at or beyond this bound (0-based)");
SCHMP_FLAG(string, algorithm, "ccd", schmp::one_of({"ccd", "sgd"}),
           "ccd: CCD++ rank-one coordinate descent; sgd: block-rotation SGD");
SCHMP_FLAG(int32, rank, kDefaults.rank, schmp::between(1, schmp::mf::kLargestRank),
           "Number of latent factors k");
SCHMP_FLAG(double, lambda, kDefaults.lambda, at_least(0),
           "Penalty per rating on the squared factor norms, LIBMF's -l2: lambda (sum_u n_u |w_u|^2 + sum_j "
           "n_j |h_j|^2); with --implicit lambda (sum_u |w_u|^2 + sum_j |h_j|^2)");
SCHMP_FLAG(int32, iterations, kDefaults.iterations, at_least(1),
           "sgd: epochs; ccd: sweeps (rank component updates each)");
SCHMP_FLAG(int32, inner, kDefaults.inner, at_least(1),
           "ccd: item-then-user round pairs per component update");
SCHMP_FLAG(double, learning_rate, kDefaults.learning_rate, schmp::positive(),
           "sgd: AdaGrad base step, LIBMF's -r");
SCHMP_FLAG(
    bool, biases, kDefaults.biases, any(),
    "Predict mean + b_u + c_j + w_u.h_j, the biases penalised like the factors (two more factor columns)");
SCHMP_FLAG(bool, implicit, kDefaults.implicit, any(),
           "Implicit feedback: the ratings are counts of interactions, every other cell a 0 of weight 1 "
           "(Hu, Koren and Volinsky); no biases");
SCHMP_FLAG(
    double, alpha, kDefaults.alpha, schmp::positive(),
    "--implicit: an interaction counted r times weighs 1 + alpha r (or 1 + alpha log(1 + r / epsilon))");
SCHMP_FLAG(
    string, confidence, "linear", schmp::one_of({"linear", "log"}),
    "--implicit: how a count becomes a weight, 1 + alpha r (linear) or 1 + alpha log(1 + r / epsilon)");
SCHMP_FLAG(double, epsilon, kDefaults.epsilon, schmp::positive(),
           "--implicit --confidence log: the count's unit");
SCHMP_FLAG(int32, block_size, kDefaults.block_size, at_least(1),
           "--implicit: factor columns each row solves at once (1: one at a time as CCD++; --rank: ALS's "
           "exact solve); each row gathers about block_size^2 / 2 sums");
SCHMP_FLAG(double, tol, kDefaults.tol, at_least(0),
           "Stop when an iteration lowers the objective by at most this, relatively (0: never)");
SCHMP_FLAG(
    int32, early_stop, kDefaults.early_stop, at_least(0),
    "Stop when the test RMSE has not improved for this many iterations; write the best model (0: off)");
SCHMP_FLAG(string, output, "", any(),
           "Training: write the model here (LIBMF's text format). predict: one "
           "prediction per line");
SCHMP_FLAG(string, model, "", any(), "predict, recommend: the model (LIBMF's text format)");
SCHMP_FLAG(int64, user, -1, any(), "recommend: the user (id counted from --index_base)");
SCHMP_FLAG(
    uint64, top, kDefaults.top, at_least(1),
    "recommend: how many items; --implicit with --test, and predict of an implicit model: the K of the "
    "ranking metrics");
SCHMP_FLAG(string, exclude, "", any(), "recommend: leave out the items the user rated in this ratings file");
DECLARE_bool(priority);

namespace {

// An implicit model's ranking metrics on held-out interactions.
int rank_held_out(const schmp::mf::Model& model) {
  if (const std::string unread = schmp::unread_flag({"output"}, "by predict of an implicit model");
      !unread.empty())
    throw std::runtime_error(unread);
  if (FLAGS_exclude.empty())
    throw std::runtime_error(
        "predict of an implicit model ranks items: --exclude names the training interactions");
  const schmp::mf::RankingSums sums =
      schmp::mf::rank_held_out(model, FLAGS_data, FLAGS_exclude, FLAGS_index_base, FLAGS_top);
  std::printf("users %.0f  %s\n", sums.users, schmp::mf::ranking_line(sums.means(), FLAGS_top).c_str());
  return 0;
}

int predict() {
  if (FLAGS_model.empty() || FLAGS_data.empty()) throw std::runtime_error("predict needs --model and --data");
  if (const std::string unread = schmp::unread_flag({"test", "user"}, "by predict"); !unread.empty())
    throw std::runtime_error(unread);
  schmp::io::refuse_overwriting({{"--output", FLAGS_output}},
                                {{"--data", FLAGS_data}, {"--model", FLAGS_model}});
  const schmp::mf::Model model = schmp::mf::read_model(FLAGS_model);
  if (model.loss == schmp::mf::kOneClassLoss) return rank_held_out(model);
  if (const std::string unread = schmp::unread_flag({"exclude", "top"}, "by predict of a rating model");
      !unread.empty())
    throw std::runtime_error(unread);
  const auto report = schmp::mf::predict(model, FLAGS_data, FLAGS_index_base, FLAGS_output);
  std::printf("ratings %zu  RMSE %.7g  MAE %.7g\n", report.ratings, report.rmse, report.mae);
  if (!FLAGS_output.empty()) std::printf("predictions: %s\n", FLAGS_output.c_str());
  return 0;
}

int recommend() {
  if (const std::string unread = schmp::unread_flag({"data", "test", "output"}, "by recommend");
      !unread.empty())
    throw std::runtime_error(unread);
  if (FLAGS_model.empty() || FLAGS_user < FLAGS_index_base)
    throw std::runtime_error("recommend needs --model and --user (at least --index_base)");
  const schmp::mf::Model model = schmp::mf::read_model(FLAGS_model);
  const auto user = static_cast<std::uint64_t>(FLAGS_user - FLAGS_index_base);
  if (user >= model.users)
    throw std::runtime_error("user " + std::to_string(FLAGS_user) + " is beyond the model's " +
                             std::to_string(model.users) + " users");
  for (const auto& pick : schmp::mf::recommend(model, static_cast<std::uint32_t>(user), FLAGS_top,
                                               FLAGS_exclude, FLAGS_index_base)) {
    std::printf("%llu %.7g\n", static_cast<unsigned long long>(pick.item) + FLAGS_index_base, pick.score);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (schmp::take_subcommand(argc, argv, "predict")) {
    return schmp::run_tool(
        argc, argv,
        "usage: schmp-mf predict --model MODEL --data RATINGS [--output PREDICTIONS]\n"
        "       schmp-mf predict --model IMPLICIT_MODEL --data HELD_OUT --exclude TRAIN [--top K]",
        predict);
  }
  if (schmp::take_subcommand(argc, argv, "recommend")) {
    return schmp::run_tool(argc, argv,
                           "usage: schmp-mf recommend --model MODEL --user U [--top K] [--exclude TRAIN]",
                           recommend);
  }
  schmp::Job job(argc, argv,
                 "Matrix factorization (CCD++ or block-rotation SGD) with a static rotation schedule.\n"
                 "usage: mpirun -np N schmp-mf --data RATINGS [--test HELD_OUT] [--algorithm ccd|sgd] "
                 "[--rank K] [--lambda L] [--output MODEL] [--trace FILE]");
  if (const std::string unread = schmp::unread_flag({"model", "exclude", "user"}, "in training");
      !unread.empty())
    return job.refuse(unread);
  if (FLAGS_implicit && FLAGS_test.empty()) {
    if (const std::string unread = schmp::unread_flag({"top"}, "in training without --test"); !unread.empty())
      return job.refuse(unread);
  }
  if (!FLAGS_implicit) {
    if (const std::string unread = schmp::unread_flag({"alpha", "confidence", "epsilon", "top", "block_size"},
                                                      "in training without --implicit");
        !unread.empty())
      return job.refuse(unread);
  }
  schmp::mf::Config config;
  config.data = FLAGS_data;
  config.test = FLAGS_test;
  config.index_base = FLAGS_index_base;
  config.bounds = schmp::io::IdBounds{FLAGS_users, FLAGS_items};
  config.rank = FLAGS_rank;
  config.lambda = FLAGS_lambda;
  config.iterations = FLAGS_iterations;
  config.inner = FLAGS_inner;
  config.learning_rate = FLAGS_learning_rate;
  // An implicit model has no biases: --biases's default gives way to --implicit, a --biases given is refused.
  config.implicit = FLAGS_implicit;
  config.biases =
      FLAGS_biases && !(FLAGS_implicit && gflags::GetCommandLineFlagInfoOrDie("biases").is_default);
  config.alpha = FLAGS_alpha;
  config.confidence =
      FLAGS_confidence == "log" ? schmp::mf::Confidence::kLog : schmp::mf::Confidence::kLinear;
  config.epsilon = FLAGS_epsilon;
  config.top = FLAGS_top;
  config.block_size = FLAGS_block_size;
  config.tol = FLAGS_tol;
  config.early_stop = FLAGS_early_stop;
  config.priority = FLAGS_priority;
  config.output = FLAGS_output;
  if (FLAGS_algorithm == "sgd") config.algorithm = schmp::mf::Algorithm::kSgd;
  return job.run<schmp::mf::MatrixFactorization>(config);
}
