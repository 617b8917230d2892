#include "lasso.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <iterator>
#include <limits>
#include <numeric>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "schmp/cross_validation.hpp"
#include "schmp/dataset.hpp"
#include "schmp/kernels/device.hpp"
#include "schmp/output.hpp"
#include "schmp/packed_symmetric.hpp"
#include "schmp/peers.hpp"
#include "schmp/quadratic_model.hpp"
#include "schmp/step_ways.hpp"
#include "schmp/working_set.hpp"

namespace schmp::lasso {

double soft_threshold(double z, double threshold) {
  if (z > threshold) return z - threshold;
  if (z < -threshold) return z + threshold;
  return 0.0;
}

namespace {

// The model's solve goes on until its violation is this fraction of the violation at its start, or
// this many multiply-adds are spent: least squares' model is exact, so a tight solve is a tight step.
constexpr double kModelTolerance = 1e-6;
constexpr double kModelWork = 1 << 28;
// A product of the Gram matrix's row-by-row path costs about three reads of a column entry in a round
// (scattered writes; measured on MovieLens' genre columns), and it starts with a pass over the rows.
constexpr double kRowPathWork = 3;
// Steps from the Gram matrix are taken while the support holds more than this share of the violation:
// the rest belongs to coefficients that must join it first.
constexpr double kSupportShare = 0.99;
// A column whose centred squared norm is below this share of its own is constant to within rounding
// (its spread under 1e-5 of its size): with an intercept it stays at zero.
constexpr double kConstantColumn = 1e-10;
// On a path, screening starts at a lambda's third full evaluation (its coefficients come back at the
// next lambda, at the cost of a full evaluation there).
constexpr std::size_t kFullEvaluationsBeforeScreening = 3;

// Drops `retired` (in index order) from `active` (in index order).
void remove_retired(std::vector<ParamIndex>& active, const std::vector<ParamIndex>& retired) {
  if (retired.empty()) return;
  std::vector<ParamIndex> kept;
  kept.reserve(active.size());
  std::set_difference(active.begin(), active.end(), retired.begin(), retired.end(), std::back_inserter(kept));
  active.swap(kept);
}

// The problem's view of the data's sums (weighted, with --weights), over n = the sum of the weights:
// centred with the intercept (x~_j . y~ = x_j . y - s_j sum(y) / n, ||x~_j||^2 = ||x_j||^2 - s_j^2 / n,
// ||y~||^2 = ||y||^2 - sum(y)^2 / n), then with --standardize scaled by 1 / sd_j, the deviation about
// the column's mean with or without the intercept (sd_j^2 = (||x_j||^2 - s_j^2 / n) / n, glmnet's), so
// that with the intercept every scaled column has ||x~_j||^2 = n.
struct ProblemColumns {
  std::vector<double> xty;
  Eigen::VectorXd norms;  // 0 for a column constant to within rounding, which stays at zero
  Eigen::VectorXd sums;   // zero without the intercept
  Eigen::VectorXd unit;   // 1 / sd_j with --standardize, else 1
  double yy = 0;
};

ProblemColumns problem_columns(const Config& config, const Lasso::Setup& setup) {
  const double n = setup.weight_sum;
  const auto p = static_cast<Eigen::Index>(setup.xty.size());
  ProblemColumns columns;
  columns.xty = setup.xty;
  columns.norms = Eigen::Map<const Eigen::VectorXd>(setup.column_norms.data(), p);
  columns.sums = Eigen::VectorXd::Zero(p);
  columns.unit = Eigen::VectorXd::Ones(p);
  columns.yy = setup.yy;
  // ||x_j - mean(x_j)||^2, 0 for a column constant to within rounding.
  Eigen::VectorXd centred = columns.norms;
  if (!setup.column_sums.empty()) {
    for (Eigen::Index j = 0; j < p; ++j) {
      const double raw = columns.norms[j], sum = setup.column_sums[static_cast<std::size_t>(j)];
      const double spread = raw - sum * sum / n;
      centred[j] = spread > kConstantColumn * raw ? spread : 0.0;
    }
  }
  if (config.fit_intercept) {
    columns.sums = Eigen::Map<const Eigen::VectorXd>(setup.column_sums.data(), p);
    for (Eigen::Index j = 0; j < p; ++j)
      columns.xty[static_cast<std::size_t>(j)] -= columns.sums[j] * setup.y_sum / n;
    columns.norms = centred;
    columns.yy -= setup.y_sum * setup.y_sum / n;
  }
  if (config.standardize) {
    for (Eigen::Index j = 0; j < p; ++j) {
      // A column without spread stays at zero, as in glmnet, intercept or not.
      if (!(centred[j] > 0)) {
        columns.norms[j] = 0;
        continue;
      }
      columns.unit[j] = std::sqrt(n / centred[j]);
      columns.norms[j] *= columns.unit[j] * columns.unit[j];
      columns.sums[j] *= columns.unit[j];
      columns.xty[static_cast<std::size_t>(j)] *= columns.unit[j];
    }
  }
  return columns;
}

// glmnet's lambda_max: the smallest lambda at which every coefficient is zero, for this L1 share.
double lambda_max_of(const Config& config, const ProblemColumns& columns, double n) {
  double max_xty = 0;
  for (std::size_t j = 0; j < columns.xty.size(); ++j) {
    if (columns.norms[static_cast<Eigen::Index>(j)] > 0)
      max_xty = std::max(max_xty, std::abs(columns.xty[j]));
  }
  return config.l1_ratio > 0 ? max_xty / (n * config.l1_ratio) : std::numeric_limits<double>::infinity();
}

// The whole data's sums, as the workers' setup gives them, from its rows (and weights, when given).
Lasso::Setup sums_of(const io::SparseRows& rows, const std::vector<double>& weights, const Config& config) {
  const bool fit_intercept = config.fit_intercept, column_sums = fit_intercept || config.standardize;
  Lasso::Setup sums;
  const std::size_t p = rows.columns();
  sums.xty.assign(p, 0.0);
  sums.column_norms.assign(p, 0.0);
  sums.column_sums.assign(column_sums ? p : 0, 0.0);
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    const double w = weights.empty() ? 1.0 : weights[r], y = rows.labels[r];
    for (std::uint64_t e = rows.row_start[r]; e < rows.row_start[r + 1]; ++e) {
      const std::uint32_t j = rows.index[e];
      const double x = rows.value[e];
      sums.xty[j] += w * x * y;
      sums.column_norms[j] += w * x * x;
      if (column_sums) sums.column_sums[j] += w * x;
    }
    sums.yy += w * y * y;
    if (fit_intercept) sums.y_sum += w * y;
    sums.weight_sum += w;
  }
  sums.rows = static_cast<double>(rows.rows());
  return sums;
}

RowsSource source_of(const Config& config) { return {config.data, config.labels, config.weights, {}}; }

// A fold job's held-out rows (those of its fold, with their weights) and the whole data's sums.
struct FoldRows {
  WeightedRows held_out;
  Lasso::Setup full;
};

FoldRows read_fold(const Config& config) {
  Peers alone;
  const WeightedRows& all = kept_rows(source_of(config), alone);
  FoldRows fold;
  fold.full = sums_of(all.rows, all.weights, config);
  fold.held_out = held_out_rows(all, static_cast<std::uint32_t>(config.cv), config.seed,
                                static_cast<std::uint32_t>(config.fold));
  return fold;
}

}  // namespace

// ---------------------------------------------------------------------------------------------- worker

void check_config(const Config& config) {
  if (config.data.empty()) throw std::runtime_error("--data is required");
  if (!(std::isfinite(config.lambda) && config.lambda >= 0))
    throw std::runtime_error("--lambda must be positive");
  if (config.lambda == 0 && !(std::isfinite(config.lambda_ratio) && config.lambda_ratio > 0)) {
    throw std::runtime_error("--lambda_ratio must be positive");
  }
  if (config.newton_steps != "auto" && config.newton_steps != "rounds" && config.newton_steps != "hessian")
    throw std::runtime_error("--newton_steps must be auto, rounds or hessian");
  if (config.max_hessian < 1) throw std::runtime_error("--max_hessian must be at least 1");
  if (!(config.l1_ratio >= 0 && config.l1_ratio <= 1))
    throw std::runtime_error("--l1_ratio must be in [0, 1]");
  if (config.l1_ratio == 0 && config.lambda == 0)
    throw std::runtime_error(
        "--l1_ratio 0 (ridge) needs --lambda: lambda_max is infinite without an L1 share");
  if (config.cv == 1) throw std::runtime_error("--cv needs at least 2 folds");
  if (config.cv > 0 && config.lambda > 0)
    throw std::runtime_error("--cv picks lambda from a path: drop --lambda");
  if (config.cv > 0 && !config.test.empty())
    throw std::runtime_error("--cv holds out its own rows: drop --test");
  if (config.cv > 0 && config.l1_ratio == 0)
    throw std::runtime_error("--cv needs an L1 share (--l1_ratio above 0): ridge has no lambda_max");
  if (config.path == 1) throw std::runtime_error("--path needs at least 2 lambdas");
  if (config.path > 0 && config.lambda > 0)
    throw std::runtime_error(
        "--path runs from lambda_max down to --lambda_min_ratio times it: drop --lambda");
  if (config.path > 0 && config.l1_ratio == 0)
    throw std::runtime_error("--path needs an L1 share (--l1_ratio above 0): ridge has no lambda_max");
  if (config.lambda_min_ratio != 0 && !(config.lambda_min_ratio > 0 && config.lambda_min_ratio < 1))
    throw std::runtime_error("--lambda_min_ratio must be in (0, 1)");
  if (config.path == 0 && !(config.test.empty() && config.path_table.empty()))
    throw std::runtime_error("--test and --path_table are for a path (--path N); predict scores one model");
}

Lasso::Worker::Worker(const Config& config, const WorkerContext& context)
    : gpu_(kernels::pick_gpu(context)),
      fit_intercept_(config.fit_intercept),
      column_sums_needed_(config.fit_intercept || config.standardize) {
  check_config(config);
  Peers& peers = peers_of(context);
  WeightedRows mine;
  if (config.fold < 0) {
    mine = read_weighted_rows(source_of(config), peers);
    columns_in_data_ = mine.rows.columns();
  } else {
    const WeightedRows& all = kept_rows(source_of(config), peers);
    columns_in_data_ = all.rows.columns();
    mine = training_rows(source_of(config), peers, all, static_cast<std::uint32_t>(config.cv), config.seed,
                         static_cast<std::uint32_t>(config.fold));
  }
  rows_ = std::move(mine.rows);
  if (!mine.weights.empty()) weigh_rows(mine.weights);
  // Memory per feature on the first rank (docs/memory.md): the coordinator's (beta and its value at the last
  // evaluation, column norms and counts, initial changes, X^T r, setup sums, beta and X^T r at the
  // evaluations kept for extrapolation, the working set's choice, the Gram cache's index and the
  // support, column sums), a scheduler's (with sweeps), and with a single worker (one process) the
  // worker's too. A stray huge index is refused at its line, not met by the OOM killer.
  const double sums = config.fit_intercept ? 8 + 8 : 0;
  constexpr double kCoordinator = 56 + 24 + 16 * kExtrapolationDepth + 24 + 12 + 4, kScheduler = 17 + 20 + 12,
                   kWorker = 8 + 4 + 24 + 8;
  io::check_columns_fit(config.data, rows_,
                        kCoordinator + sums + kScheduler + (context.count == 1 ? kWorker + sums / 2 : 0));
}

void Lasso::Worker::weigh_rows(const std::vector<double>& weights) {
  root_weights_.resize(static_cast<Eigen::Index>(weights.size()));
  for (std::size_t r = 0; r < weights.size(); ++r) {
    const double root = std::sqrt(weights[r]);
    root_weights_[static_cast<Eigen::Index>(r)] = root;
    rows_.labels[r] *= root;
    for (std::uint64_t e = rows_.row_start[r]; e < rows_.row_start[r + 1]; ++e) rows_.value[e] *= root;
  }
}

double Lasso::Worker::intercept_dot(const Eigen::VectorXd& v) const {
  return root_weights_.size() > 0 ? root_weights_.dot(v) : v.sum();
}

void Lasso::Worker::start(std::size_t num_params) {
  y_ = Eigen::Map<const Eigen::VectorXd>(rows_.labels.data(), static_cast<Eigen::Index>(rows_.labels.size()));
  column_counts_.assign(num_params, 0.0);
  for (const std::uint32_t j : rows_.index) ++column_counts_[j];
  if (column_sums_needed_) {
    column_sums_.assign(num_params, 0.0);
    for (std::size_t r = 0; r < rows_.rows(); ++r) {
      const double c = root_weights_.size() > 0 ? root_weights_[static_cast<Eigen::Index>(r)] : 1.0;
      for (std::uint64_t e = rows_.row_start[r]; e < rows_.row_start[r + 1]; ++e)
        column_sums_[rows_.index[e]] += c * rows_.value[e];
    }
  }
  kernel_ = kernels::make_column_kernel(gpu_, rows_, num_params);
  kernel_->set_vector({y_.data(), static_cast<std::size_t>(y_.size())});  // beta = 0: the residual is y
  rows_ = io::SparseRows{};
  active_.resize(num_params);
  std::iota(active_.begin(), active_.end(), ParamIndex{0});
}

Lasso::Setup Lasso::Worker::setup() const {
  Setup setup;
  setup.xty.resize(kernel_->columns());
  setup.column_norms.resize(kernel_->columns());
  kernel_->all_column_dots(setup.xty);  // the residual is still y
  first_gradient_ = setup.xty;
  kernel_->column_norms_squared(setup.column_norms);
  setup.column_counts = column_counts_;
  setup.column_sums = column_sums_;
  setup.yy = y_.squaredNorm();
  if (fit_intercept_) setup.y_sum = intercept_dot(y_);
  setup.rows = static_cast<double>(y_.size());
  setup.weight_sum = root_weights_.size() > 0 ? root_weights_.squaredNorm() : setup.rows;
  return setup;
}

void Lasso::Worker::shift_residual() const {
  if (shifted_ == intercept_) return;
  Eigen::VectorXd r(y_.size());
  kernel_->copy_vector({r.data(), static_cast<std::size_t>(r.size())});
  if (root_weights_.size() > 0) {
    r -= (intercept_ - shifted_) * root_weights_;
  } else {
    r.array() -= intercept_ - shifted_;
  }
  kernel_->set_vector({r.data(), static_cast<std::size_t>(r.size())});
  shifted_ = intercept_;
  first_gradient_ = {};
}

Lasso::Stats Lasso::Worker::evaluate() const {
  Stats stats;
  shift_residual();
  const std::vector<ParamIndex>& covered = scope_.empty() ? active_ : scope_;
  if (scope_.empty() && active_.size() == first_gradient_.size()) {
    stats.gradient = std::move(first_gradient_);
  } else {
    stats.gradient.resize(covered.size());
    kernel_->column_dots(covered, stats.gradient);
  }
  first_gradient_ = {};
  Eigen::VectorXd r(y_.size());
  kernel_->copy_vector({r.data(), static_cast<std::size_t>(r.size())});
  stats.rr = r.squaredNorm();
  stats.yr = y_.dot(r);
  stats.r_sum = intercept_dot(r);
  if (scope_.empty()) {
    full_r_ = r;
  } else {
    stats.shift = (r - full_r_).squaredNorm();
  }
  stats.gram = residuals_.push({r.data(), static_cast<std::size_t>(r.size())});
  if (!std::exchange(model_sent_, true)) {
    stats.model_block.assign(packed_size(model_.size()) - packed_size(known_), 0.0);
    constexpr double kAnyCost = std::numeric_limits<double>::infinity();  // the coordinator weighs it
    if (!kernel_->gram(model_, known_, false, kAnyCost, stats.model_block, stats.model_products))
      stats.model_missing = 1;
  }
  return stats;
}

void Lasso::Worker::prefetch(const Schedule& block) const { kernel_->prefetch_columns(block.params); }

Lasso::Partial Lasso::Worker::update(const Schedule& schedule) {
  Partial partial;
  partial.dots.resize(schedule.params.size());
  kernel_->column_dots(schedule.params, partial.dots);
  // The residual the dots need is the kernel's less the intercept's change since it was shifted.
  const double unshifted = intercept_ - shifted_;
  if (unshifted != 0) {
    for (std::size_t k = 0; k < partial.dots.size(); ++k)
      partial.dots[k] -= unshifted * column_sums_[schedule.params[k]];
  }
  return partial;
}

void Lasso::Worker::apply(const Commit& commit) {
  // r = y - X beta, so a change delta of beta_j takes delta * x_j off the residual.
  scale_.resize(commit.delta.size());
  std::transform(commit.delta.begin(), commit.delta.end(), scale_.begin(), [](double d) { return -d; });
  if (commit.from_start) {
    kernel_->set_vector({y_.data(), static_cast<std::size_t>(y_.size())});
    shifted_ = 0;
  }
  intercept_ = commit.intercept;
  if (!commit.params.empty()) first_gradient_ = {};
  kernel_->add_columns(commit.params, scale_);
  remove_retired(active_, commit.retired);
  if (commit.revived) {
    active_.resize(kernel_->columns());
    std::iota(active_.begin(), active_.end(), ParamIndex{0});
  }
  if (commit.rescope) scope_ = commit.scope;
  if (commit.forget) residuals_.clear();
  if (commit.remodel) {
    model_ = commit.model;
    known_ = commit.known;
    model_sent_ = false;
  }
}

// ----------------------------------------------------------------------------------------- coordinator

Lasso::Coordinator::Coordinator(const Config& config, std::size_t num_params, const Setup& setup)
    : config_(config),
      n_(setup.weight_sum),
      rows_(setup.rows),
      yy_(setup.yy),
      beta_(Eigen::VectorXd::Zero(static_cast<Eigen::Index>(num_params))),
      column_norms_(Eigen::Map<const Eigen::VectorXd>(setup.column_norms.data(),
                                                      static_cast<Eigen::Index>(setup.column_norms.size()))),
      column_counts_(Eigen::Map<const Eigen::VectorXd>(
          setup.column_counts.data(), static_cast<Eigen::Index>(setup.column_counts.size()))),
      gram_cache_(num_params, config.max_hessian) {
  if (rows_ < 1) throw std::runtime_error(config.data + ": no data rows");
  if (!config.output.empty()) io::check_writable(config.output);
  ProblemColumns columns = problem_columns(config, setup);
  column_norms_ = std::move(columns.norms);
  column_sums_ = std::move(columns.sums);
  unit_ = std::move(columns.unit);
  const std::vector<double>& xty = columns.xty;
  if (config.fit_intercept) {
    y_sum_ = setup.y_sum;
    intercept_ = y_sum_ / n_;
    // A scale only (the priorities'): kept positive when y is constant.
    yy_ = std::max(columns.yy, std::numeric_limits<double>::min());
  }
  y_length_ = std::sqrt(yy_);
  column_lengths_ = column_norms_.cwiseSqrt();
  lambda_max_ = lambda_max_of(config, columns, n_);
  // A fold's path takes the lambdas of the whole data.
  std::optional<FoldRows> fold;
  double full_rows = rows_;
  if (config.fold >= 0) {
    fold = read_fold(config);
    full_rows = fold->full.rows;
    lambda_max_ = lambda_max_of(config, problem_columns(config, fold->full), fold->full.weight_sum);
  }
  lambda_ = config.lambda > 0 ? config.lambda : config.lambda_ratio * lambda_max_;
  if (config.path > 0) {
    const double ratio = min_ratio_of(config.lambda_min_ratio, full_rows, static_cast<double>(num_params));
    path_ = Path(config.path, lambda_max_, ratio);
    if (!config.test.empty()) path_.hold_out(io::read_rows(config.test, ""), {});
    if (fold) path_.hold_out(std::move(fold->held_out.rows), std::move(fold->held_out.weights));
    if (!config.fold_results.empty())
      path_.cross_validated(CrossValidation(path_.lambdas(), config.fold_results));
    lambda_ = path_.lambda();
  }
  if (std::isinf(lambda_))
    throw std::runtime_error("--lambda_ratio times lambda_max overflows: give --lambda");
  if (!(lambda_ > 0)) {
    throw std::runtime_error(config.data + (config.fit_intercept
                                                ? ": lambda_max is 0 (y is constant, or uncorrelated with "
                                                  "every feature); give --lambda"
                                                : ": lambda_max is 0 (y is orthogonal to every feature); "
                                                  "give --lambda"));
  }
  set_lambda(lambda_);
  // Seed the priorities with the change each coefficient would make from zero: only the coefficients
  // that would leave zero start ahead; the others wait on eta.
  initial_changes_.resize(num_params);
  for (std::size_t j = 0; j < num_params; ++j) {
    const double norm = column_norms_[static_cast<Eigen::Index>(j)];
    const double beta = norm > 0 ? soft_threshold(xty[j], n_ * l1_) / norm : 0.0;
    initial_changes_[j] = fitted_change(static_cast<ParamIndex>(j), beta);
  }
  active_.resize(num_params);
  std::iota(active_.begin(), active_.end(), ParamIndex{0});
  retired_.assign(num_params, false);
}

void Lasso::Coordinator::set_lambda(double lambda) {
  lambda_ = lambda;
  l1_ = lambda * config_.l1_ratio;
  const double ridge = n_ * lambda * (1 - config_.l1_ratio);
  if (ridge != ridge_) {
    for (Eigen::Index j = 0; j < beta_.size(); ++j) {
      if (column_norms_[j] > 0) column_norms_[j] += ridge - ridge_;
    }
    column_lengths_ = column_norms_.cwiseSqrt();
  }
  ridge_ = ridge;
}

void Lasso::Coordinator::next_lambda(const Report& converged, Priorities& priorities) {
  PathPoint point;
  point.lambda = lambda_;
  point.objective = converged.objective;
  point.gap = converged.columns[0];
  point.relative_gap = converged.columns[1];
  point.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  point.intercept = intercept_;
  path_.record(std::move(point), original_beta());
  if (path_.points().size() == path_.size()) return;
  set_lambda(path_.lambda());
  // What the evaluations at the last lambda taught holds no more: its dual values, its gaps, its
  // iterates for extrapolation, its working set and the rounds' pace there.
  best_dual_ = -std::numeric_limits<double>::infinity();
  full_gap_ = std::numeric_limits<double>::infinity();
  pace_from_next_ = true;
  at_floor_ = false;
  last_objective_ = std::numeric_limits<double>::infinity();
  last_beta_ = beta_;
  forget_ = true;
  rescope_ = true;
  next_scope_.clear();
  full_evaluations_ = 0;
  revive_retired(priorities);
}

void Lasso::Coordinator::start_lambda(double rr, double yr, const std::vector<double>& gradient,
                                      Priorities& priorities) {
  // That evaluation covered every live coefficient at the point the new lambda starts from: a second
  // full one there would say the same (on the generated 10,000 x 50,000 path, half the full ones).
  const DualPoint dual = dual_point(rr, yr, gradient);
  const double rounding = rounding_of(rr, yr);
  best_dual_ = dual.value - rounding;
  const double primal = rr / (2 * n_) + l1_ * beta_.lpNorm<1>();
  full_gap_ = primal > 0 ? std::max(rounding, primal - best_dual_) / primal : 0.0;
  for (std::size_t k = 0; k < active_.size(); ++k) {
    if (!retired_[active_[k]]) reprioritise(active_[k], gradient[k], priorities);
  }
  next_scope_ = working_set(gradient, dual.s);
  rescope_ = !next_scope_.empty();
}

double Lasso::Coordinator::rounding_of(double rr, double yr) const {
  return n_ * std::numeric_limits<double>::epsilon() * (rr / n_ + std::abs(yr) / n_);
}

void Lasso::Coordinator::reprioritise(ParamIndex j, double gradient, Priorities& priorities) const {
  const double norm = column_norms_[j];
  if (!(norm > 0)) return;
  const double step = soft_threshold(beta_[j] * norm + gradient, n_ * l1_) / norm - beta_[j];
  priorities.set(j, fitted_change(j, step));
}

std::vector<std::string> Lasso::Coordinator::trace_columns() const {
  std::vector<std::string> columns = {"duality_gap", "relative_gap", "nnz", "active", "evaluated"};
  if (path_.active()) columns.push_back("lambda");
  return columns;
}

std::vector<double> Lasso::Coordinator::initial_changes() const { return initial_changes_; }

double Lasso::Coordinator::fitted_change(ParamIndex j, double delta) const {
  // Relative to ||y||, so that --eta means the same whatever the scale of X and y. (Square roots taken
  // apart: the ratio of the squares overflows when X's values are 1e77 times y's.)
  return std::abs(delta) * column_lengths_[j] / y_length_;
}

Lasso::Commit Lasso::Coordinator::aggregate(const Schedule& schedule, const Partial& summed,
                                            Priorities& priorities) {
  if (std::exchange(last_round_, schedule.round) != schedule.round) rented_ += StepWays::kRoundWork;
  rented_ += columns_work(schedule.params);  // the workers' x_j . r
  Commit commit;
  if (go_back_) {
    // The block was computed from the coefficients that ran away: it is dropped, priorities and all.
    go_back_ = false;
    beta_ = last_beta_;
    intercept_ = intercept_for(beta_);
    commit.from_start = 1;
    for (Eigen::Index j = 0; j < beta_.size(); ++j) {
      if (beta_[j] == 0) continue;
      commit.params.push_back(static_cast<ParamIndex>(j));
      commit.delta.push_back(beta_[j]);
    }
  } else if (std::exchange(jumped_, false)) {
    // The block was computed from the residual before the jump: it is dropped, as above.
    for (Eigen::Index j = 0; j < beta_.size(); ++j) {
      if (beta_[j] == jump_from_[j]) continue;
      commit.params.push_back(static_cast<ParamIndex>(j));
      commit.delta.push_back(beta_[j] - jump_from_[j]);
    }
  } else {
    update_block(schedule, summed, priorities, commit);
  }
  if (std::exchange(forget_, false)) {
    commit.forget = 1;
    gram_.clear();
    betas_.clear();
    gradients_.clear();
    yr_.clear();
    means_.clear();
  }
  if (std::exchange(revived_, false)) {
    ship_revival(commit);
  } else {
    ship_retirements(commit);
  }
  if (std::exchange(rescope_, false)) {
    // The gradients kept for extrapolation covered the old scope: the dual extrapolation starts again.
    commit.rescope = 1;
    commit.scope = next_scope_;
    checked_scope_ = next_scope_.empty() ? scope_.size() : 0;
    scope_ = std::move(next_scope_);
    next_scope_.clear();
    gradients_.clear();
  }
  if (asked_ == Asked::kToShip) {
    commit.remodel = 1;
    commit.model = request_.cols;
    commit.known = request_.known;
    asked_ = Asked::kShipped;
  }
  commit.intercept = shipped_intercept_ = intercept_;
  if (config_.standardize) {
    // The workers hold the data's own columns.
    for (std::size_t k = 0; k < commit.params.size(); ++k) commit.delta[k] *= unit_[commit.params[k]];
  }
  rented_ += columns_work(commit.params);  // their residuals' updates
  return commit;
}

void Lasso::Coordinator::update_block(const Schedule& schedule, const Partial& summed, Priorities& priorities,
                                      Commit& commit) {
  const std::size_t size = schedule.params.size();
  block_seen_ = std::max<std::size_t>(size, 1);
  // Mostly every position moves: the positions are listed only when some wait (after interference),
  // since one process updating in order calls this once a parameter.
  const bool all = parallel_ >= size;
  const std::vector<std::size_t> some =
      all ? std::vector<std::size_t>{} : spread_positions(schedule, parallel_);
  // The dots are relative to the intercept last shipped; the block's steps move the intercept after it.
  const double unshipped = intercept_ - shipped_intercept_;
  double moved = 0;
  for (std::size_t i = 0; i < (all ? size : some.size()); ++i) {
    const std::size_t k = all ? i : some[i];
    const ParamIndex j = schedule.params[k];
    const double norm = column_norms_[j];
    // A block built before a retirement reached the schedulers may still hold the retired
    // coefficient: it stays at zero, where the screening rule proved it belongs.
    if (retired_[j]) continue;
    if (norm <= 0) {
      priorities.set(j, 0.0);
      continue;
    }
    // The plain Lasso's dot is the workers' own: the arrays of the other terms stay out of the cache.
    double dot = summed.dots[k];
    if (config_.standardize) dot *= unit_[j];
    if (config_.fit_intercept) dot -= unshipped * column_sums_[j];
    if (ridge_ > 0) dot -= ridge_ * beta_[j];
    const double updated = soft_threshold(beta_[j] * norm + dot, n_ * l1_) / norm;
    const double delta = updated - beta_[j];
    priorities.set(j, fitted_change(j, delta));
    if (delta == 0) continue;
    beta_[j] = updated;
    if (config_.fit_intercept) moved += column_sums_[j] * delta;
    commit.params.push_back(j);
    commit.delta.push_back(delta);
  }
  intercept_ -= moved / n_;
}

double Lasso::Coordinator::intercept_for(const Eigen::VectorXd& beta) const {
  if (!config_.fit_intercept) return 0;
  return (y_sum_ - column_sums_.dot(beta)) / n_;
}

Lasso::Stats Lasso::Coordinator::centred(const Stats& summed) {
  Stats stats;
  stats.gradient = summed.gradient;
  stats.rr = summed.rr;
  stats.yr = summed.yr;
  stats.gram = summed.gram;
  stats.shift = summed.shift;
  stats.r_sum = summed.r_sum;  // the residual's as the workers keep it, which extrapolation combines
  const std::vector<ParamIndex>& covered = scope_.empty() ? active_ : scope_;
  if (config_.standardize) {
    for (std::size_t k = 0; k < covered.size(); ++k) stats.gradient[k] *= unit_[covered[k]];
  }
  if (config_.fit_intercept) {
    // r - mean(r): x_j . r less s_j mean(r), ||r||^2 less n mean(r)^2, y . r less sum(y) mean(r). The
    // intercept that gives it is the best for this beta.
    const double mean = summed.r_sum / n_;
    for (std::size_t k = 0; k < covered.size(); ++k) stats.gradient[k] -= mean * column_sums_[covered[k]];
    stats.rr -= n_ * mean * mean;
    stats.yr -= y_sum_ * mean;
    intercept_ = shipped_intercept_ + mean;
  }
  if (ridge_ > 0) {
    // The ridge's rows: their residual is -sqrt(m) beta.
    for (std::size_t k = 0; k < covered.size(); ++k) stats.gradient[k] -= ridge_ * beta_[covered[k]];
    stats.rr += ridge_ * beta_.squaredNorm();
  }
  return stats;
}

double Lasso::Coordinator::conjugate_dual(const Stats& augmented) const {
  // With u_j = x_j . r / n, the penalty's conjugate is sum_j (|u_j| - lambda a)_+^2 / (2 lambda (1 - a)).
  double penalty = 0;
  for (std::size_t k = 0; k < active_.size(); ++k) {
    const ParamIndex j = active_[k];
    const double excess = std::abs(augmented.gradient[k] + ridge_ * beta_[j]) / n_ - l1_;
    if (excess > 0) penalty += excess * excess;
  }
  const double rr = augmented.rr - ridge_ * beta_.squaredNorm();
  return (augmented.yr - rr / 2) / n_ - n_ * penalty / (2 * ridge_);
}

void Lasso::Coordinator::revive_retired(Priorities& priorities) {
  newly_retired_.clear();
  for (std::size_t j = 0; j < retired_.size(); ++j) {
    if (!retired_[j]) continue;
    retired_[j] = false;
    priorities.revive(static_cast<ParamIndex>(j));
    revived_ = true;
  }
}

void Lasso::Coordinator::ship_revival(Commit& commit) {
  // As with retirements, the workers' list and the coordinator's change together; the gradients kept
  // for extrapolation, of fewer coefficients, go.
  commit.revived = 1;
  active_.resize(retired_.size());
  std::iota(active_.begin(), active_.end(), ParamIndex{0});
  gradients_.clear();
}

void Lasso::Coordinator::ship_retirements(Commit& commit) {
  // The workers drop the retired coefficients from their evaluations when they apply this commit;
  // the coordinator's list changes at the same moment, so that both index Stats::gradient alike. The
  // gradients kept for extrapolation drop them too.
  if (newly_retired_.empty()) return;
  std::sort(newly_retired_.begin(), newly_retired_.end());
  for (std::vector<double>& gradient : gradients_) {
    std::size_t kept = 0, r = 0;
    for (std::size_t k = 0; k < active_.size(); ++k) {
      while (r < newly_retired_.size() && newly_retired_[r] < active_[k]) ++r;
      if (r < newly_retired_.size() && newly_retired_[r] == active_[k]) continue;
      gradient[kept++] = gradient[k];
    }
    gradient.resize(kept);
  }
  remove_retired(active_, newly_retired_);
  commit.retired = std::move(newly_retired_);
  newly_retired_.clear();
}

Lasso::Coordinator::DualPoint Lasso::Coordinator::dual_point(double rr, double yr,
                                                             const std::vector<double>& gradient,
                                                             double left_out) const {
  // theta = r / s, with s = max(n lambda, max_j |x_j . r|) over the coefficients not retired (the
  // retired ones are zero at the optimum, so the problem without them has the same solution), is
  // feasible; its dual value is (1/n) (n lambda y.r / s - (n lambda)^2 ||r||^2 / (2 s^2)).
  const double scaled_lambda = n_ * l1_;
  double largest = left_out;
  for (double g : gradient) largest = std::max(largest, std::abs(g));
  DualPoint point;
  point.s = std::max(scaled_lambda, largest);
  point.gradient = &gradient;
  // n lambda / s is at most 1: taken first, it keeps (n lambda)^2 ||r||^2, which overflows for data
  // values past about 1e50, out of the sum. (When n lambda itself overflows, it is 1.)
  const double shrink = scaled_lambda < point.s ? scaled_lambda / point.s : 1.0;
  point.value = (shrink * yr - shrink * shrink * rr / 2) / n_;
  return point;
}

double Lasso::Coordinator::left_out_bound(double shift) const {
  // |x_j . r - x_j . r'| <= ||x_j|| ||r - r'||, for the live coefficients outside the scope.
  const double moved = std::sqrt(shift);
  double largest = 0;
  auto next = scope_.begin();  // both in index order
  for (const ParamIndex j : active_) {
    if (next != scope_.end() && *next == j) {
      ++next;
      continue;
    }
    // With the ridge, x_j . r also moves by m times beta_j's move.
    const double ridge_move = ridge_ > 0 ? ridge_ * std::abs(beta_[j] - full_beta_[j]) : 0.0;
    largest = std::max(largest, std::abs(full_gradient_[j]) + column_lengths_[j] * moved + ridge_move);
  }
  return largest;
}

Lasso::Coordinator::Extrapolated Lasso::Coordinator::extrapolate(const Stats& summed) {
  std::vector<double> row = summed.gram;
  if (ridge_ > 0) {
    // The ridge's rows of r . r_k: m beta . beta_k, over the evaluations the workers still keep.
    const std::size_t kept = row.size() - 1;
    for (std::size_t k = 0; k < kept; ++k) row[k] += ridge_ * beta_.dot(betas_[betas_.size() - kept + k]);
    row.back() += ridge_ * beta_.squaredNorm();
  }
  gram_.push(row);
  if (betas_.size() == kExtrapolationDepth) {
    betas_.pop_front();
    yr_.pop_front();
    means_.pop_front();
  }
  if (gradients_.size() == kExtrapolationDepth) gradients_.pop_front();
  betas_.push_back(beta_);
  gradients_.push_back(summed.gradient);
  yr_.push_back(summed.yr);
  means_.push_back(config_.fit_intercept ? summed.r_sum / n_ : 0.0);
  Extrapolated point;
  point.weights = gram_.weights();
  if (point.weights.empty()) return point;
  // The kept residuals as the workers hold them, so the combination less its mean m: ||r - m||^2 =
  // ||r||^2 - n m^2. (The gradients and y . r kept are centred already, each by its own mean.)
  double mean = 0;
  for (std::size_t k = 0; k < point.weights.size(); ++k) mean += point.weights[k] * means_[k];
  point.rr = gram_.norm_squared(point.weights) - n_ * mean * mean;
  point.rounding = gram_.rounding(point.weights) / 2;
  for (std::size_t k = 0; k < point.weights.size(); ++k) {
    point.yr += point.weights[k] * yr_[k];
    point.rounding += 4 * std::numeric_limits<double>::epsilon() * std::abs(point.weights[k] * yr_[k]);
  }
  // The gradient only when every kept evaluation covered the same coefficients (no rescope between).
  if (gradients_.size() != point.weights.size()) return point;
  point.gradient.assign(summed.gradient.size(), 0.0);
  for (std::size_t k = 0; k < point.weights.size(); ++k) {
    for (std::size_t i = 0; i < point.gradient.size(); ++i)
      point.gradient[i] += point.weights[k] * gradients_[k][i];
  }
  return point;
}

bool Lasso::Coordinator::jump(const Extrapolated& point, double& primal) {
  // Only from a full history: from fewer evaluations the combination is too rough to be worth a commit
  // that touches every coefficient that moved.
  if (point.weights.empty() || !gram_.full()) return false;
  Eigen::VectorXd beta = Eigen::VectorXd::Zero(beta_.size());
  for (std::size_t k = 0; k < point.weights.size(); ++k) beta += point.weights[k] * betas_[k];
  // A coefficient retired since an earlier iterate stays at zero: a combination that moves it is
  // not taken.
  for (Eigen::Index j = 0; j < beta.size(); ++j) {
    if (retired_[static_cast<std::size_t>(j)] && beta[j] != 0) return false;
  }
  // Taken with its rounding error against it, so that the objective reported is never below the true one.
  const double extrapolated = (point.rr / 2 + point.rounding) / n_ + l1_ * beta.lpNorm<1>();
  if (!(extrapolated < primal)) return false;
  primal = extrapolated;
  jump_from_ = beta_;
  beta_ = beta;
  intercept_ = intercept_for(beta_);
  jumped_ = true;
  // The kept points no longer lead to the new one: extrapolation starts again from it.
  forget_ = true;
  return true;
}

Report Lasso::Coordinator::report(const Stats& evaluated, Priorities& priorities) {
  const bool full = scope_.empty();
  const std::vector<ParamIndex>& covered = full ? active_ : scope_;
  if (evaluated.gradient.size() != covered.size())
    throw std::logic_error("lasso: evaluation of the wrong length");
  const Stats summed = centred(evaluated);
  // Primal: (1/2n) ||r||^2 + lambda ||beta||_1.
  double primal = summed.rr / (2 * n_) + l1_ * beta_.lpNorm<1>();
  // Kept at every full evaluation, as the workers keep their residual: the two go together.
  if (full) {
    if (full_gradient_.size() != beta_.size()) full_gradient_ = Eigen::VectorXd::Zero(beta_.size());
    for (std::size_t k = 0; k < covered.size(); ++k) full_gradient_[covered[k]] = summed.gradient[k];
    if (ridge_ > 0) full_beta_ = beta_;
  }
  // Over the working set only; feasible for the whole problem with the bound on the rest.
  DualPoint dual = dual_point(summed.rr, summed.yr, summed.gradient);
  const DualPoint whole =
      full ? dual : dual_point(summed.rr, summed.yr, summed.gradient, left_out_bound(summed.shift));
  if (!std::isfinite(primal) || !std::isfinite(dual.value)) {
    throw std::runtime_error(
        "the objective is no longer finite: the parallel updates diverged (lower --rho "
        "or --schedule_size)");
  }
  // Steps of columns that interfere, taken together, may raise the objective for a while (different
  // schedulers' columns are never compared, and --rho compares two at a time) and still converge.
  // One that more than doubles between evaluations is running away: the block overshoots as a whole.
  constexpr double kRunaway = 2;
  if (primal > kRunaway * last_objective_ && std::min(parallel_, block_seen_) > 1) {
    parallel_ = std::min(parallel_, block_seen_) / 2;
    std::fprintf(stderr,
                 "schmp-lasso: warning: parallel updates interfered (the objective went from %.6g to %.6g); "
                 "moving at most %zu coefficients per round from now on (a smaller --rho keeps them apart)\n",
                 last_objective_, primal, parallel_);
    go_back_ = true;
    forget_ = true;
  }
  // The extrapolated residual gives a second dual point, often much the better; and the extrapolated
  // coefficients a second primal point, taken when lower.
  const std::vector<double>* gradient = &summed.gradient;  // x_j . r at beta, for the priorities
  Extrapolated point;
  if (!go_back_) {
    point = extrapolate(summed);
    if (!point.gradient.empty()) {
      DualPoint extrapolated = dual_point(point.rr, point.yr, point.gradient);
      extrapolated.value -= point.rounding / n_;  // a bound must not gain from rounding
      if (extrapolated.value > dual.value) dual = extrapolated;
    }
    if (jump(point, primal) && !point.gradient.empty()) gradient = &point.gradient;
    last_objective_ = primal;
    last_beta_ = beta_;
  }
  // Sums over n rows carry a rounding error of up to n ulps of their terms' total, in the primal and in
  // the dual: a gap within it proves nothing, and the reported gap never falls below it.
  const double rounding = rounding_of(summed.rr, summed.yr);
  best_dual_ = std::max(best_dual_, (full ? dual : whole).value - rounding);
  if (full && ridge_ > 0 && !go_back_) best_dual_ = std::max(best_dual_, conjugate_dual(summed) - rounding);
  const double gap = std::max(rounding, primal - best_dual_ + rounding);
  const double relative = primal > 0 ? gap / primal : 0.0;
  // A gap within the rounding of its sums cannot fall further: --tol below it is out of reach. (A --tol
  // below a double's precision asks for no stop but --max_rounds or --max_seconds.)
  constexpr double kRoundingFloor = 3;
  at_floor_ = relative > config_.tol && config_.tol >= std::numeric_limits<double>::epsilon() &&
              gap <= kRoundingFloor * rounding;

  // Gap-safe screening, at full evaluations: in the problem scaled by n, the optimal dual point lies
  // within sqrt(2 n gap) / (n lambda) of theta, with the gap of theta itself, so |x_j . theta| + ||x_j||
  // radius < 1 proves beta_j = 0 at the optimum. Only coefficients at zero now are retired: they need
  // no correcting commit.
  //
  // The evaluation also knows x_j . r for every coefficient it covered, hence the step each would take
  // now: those become their priorities, so that coefficients the sampler has not visited lately but
  // that would move are found at once, and those that would not move wait on eta.
  //
  // Neither is done at a point the run is about to leave: a coefficient zero there may not be zero
  // where it goes back to, and retired it could never move again.
  //
  // On a path the retired coefficients come back at the next lambda, and the evaluation that starts
  // it must then cover them: screening pays at a lambda that takes many full evaluations only. Most
  // take one or two (on the generated 10,000 x 50,000 path, 89 of 95 lambdas one), whose next lambda
  // starts from that last evaluation as it is.
  if (full) ++full_evaluations_;
  const bool screen = full && (!path_.active() || (full_evaluations_ >= kFullEvaluationsBeforeScreening &&
                                                   relative > config_.tol && !at_floor_));
  const double scaled_lambda = n_ * l1_;
  const double radius =
      full ? std::sqrt(2 * n_ * std::max(rounding, primal - dual.value + rounding)) / scaled_lambda : 0.0;
  const std::size_t judged = go_back_ ? 0 : covered.size();
  for (std::size_t k = 0; k < judged; ++k) {
    const ParamIndex j = covered[k];
    if (retired_[j]) continue;
    if (screen && beta_[j] == 0 && std::abs((*dual.gradient)[k]) / dual.s + column_lengths_[j] * radius < 1) {
      retired_[j] = true;
      newly_retired_.push_back(j);
      priorities.retire(j);
      continue;
    }
    reprioritise(j, (*gradient)[k], priorities);
  }
  receive_gram(evaluated);
  // The gap over the coefficients evaluated: between full evaluations the pace of the rounds on the
  // working set, which the whole gap shows only at the next full one.
  const double inner = std::max(rounding, primal - dual.value + rounding) / primal;
  if (!go_back_) {
    rented_ += columns_work(covered) + rows_;
    if (gram_step(covered, *gradient, inner, priorities)) restart_pace(inner);
  }
  if (!go_back_) {
    if (full) {
      full_gap_ = relative;
      scoped_evaluations_ = 0;
      next_scope_ = working_set(*gradient, dual.s);
      rescope_ = !next_scope_.empty();
    } else {
      ++scoped_evaluations_;
      rescope_ = relative <= config_.tol || working_set_solved(inner, full_gap_, scoped_evaluations_);
      if (rescope_) next_scope_.clear();
    }
  }
  Report report;
  report.objective = primal;
  const auto live = static_cast<double>(active_.size() - newly_retired_.size());
  report.columns = {gap, relative, static_cast<double>((beta_.array() != 0).count()), live,
                    static_cast<double>(covered.size())};
  report.converged = relative <= config_.tol || at_floor_;
  if (path_.active()) {
    report.columns.push_back(lambda_);
    if (report.converged && !go_back_) {
      next_lambda(report, priorities);
      report.converged = path_.points().size() == path_.size();
      // The ridge's rows of r move with lambda: the elastic net starts each lambda with a full evaluation.
      // So does a lambda whose coefficients come back from screening: the last one did not cover them.
      if (!report.converged && full && ridge_ == 0 && !revived_) {
        const bool moved = gradient == &point.gradient;
        start_lambda(moved ? point.rr : summed.rr, moved ? point.yr : summed.yr, *gradient, priorities);
      }
    }
  }
  return report;
}

std::size_t Lasso::Coordinator::evaluation_size() const {
  // A working set's evaluation waits for about four sweeps over it (celer checks its inner gap every ten
  // epochs): after one, its gap has often fallen just far enough to call for a full evaluation that
  // finds little solved (on the generated 10,000 x 50,000 path, 1.08 s against 0.80). So does the full
  // evaluation that checks a solved set: the rounds meanwhile gain nothing outside it. Paced for every
  // live coefficient instead, correlated sets waited 60 sweeps of the
  // set (leukemia's path 0.37 s against 0.12).
  constexpr std::size_t kSweepsPerEvaluation = 4;
  const std::vector<ParamIndex>& next = rescope_ ? next_scope_ : scope_;
  const std::size_t size = next.empty() ? checked_scope_ : next.size();
  return size == 0 ? active_.size() : std::min(active_.size(), kSweepsPerEvaluation * size);
}

std::vector<ParamIndex> Lasso::Coordinator::working_set(const std::vector<double>& gradient, double s) const {
  // As celer grows its working sets: the coefficients nonzero or about to move, then as many again (at
  // least kSmallest in all) of the others, nearest first to moving: |x_j . theta| nearest 1, in units
  // of ||x_j||.
  const double scaled_lambda = n_ * l1_;
  std::vector<ParamIndex> scope;
  std::vector<std::pair<double, ParamIndex>>& others = working_others_;
  others.clear();
  std::size_t live = 0;
  for (std::size_t k = 0; k < active_.size(); ++k) {
    const ParamIndex j = active_[k];
    if (retired_[j] || !(column_norms_[j] > 0)) continue;
    ++live;
    if (beta_[j] != 0 || std::abs(gradient[k]) > scaled_lambda) {
      scope.push_back(j);
    } else {
      others.emplace_back((s - std::abs(gradient[k])) / column_lengths_[j], j);
    }
  }
  return choose_working_set(std::move(scope), others, live);
}

void Lasso::Coordinator::prefetch(const Schedule& block) const {
  for (const ParamIndex j : block.params) {
    for (const Eigen::VectorXd* values : {&beta_, &column_norms_, &column_lengths_, &column_counts_})
      __builtin_prefetch(values->data() + j);
  }
}

double Lasso::Coordinator::columns_work(std::span<const ParamIndex> cols) const {
  double work = 0;
  for (const ParamIndex j : cols) work += column_counts_[j];
  return work;
}

void Lasso::Coordinator::keep_support() {
  support_.clear();
  for (Eigen::Index j = 0; j < beta_.size(); ++j) {
    if (beta_[j] != 0) support_.push_back(static_cast<ParamIndex>(j));
  }
}

double Lasso::Coordinator::request_work(const GramCache::Request& request) const {
  // Rows are taken to hold the columns independently of one another: a new column meets on its rows
  // the others' entries in proportion to their counts, each pair once. Pairs of dense columns go by
  // matrix products (StepWays::kDenseWork a product); a dense column meets a sparse one along the
  // sparse one; the rest go row by row, kRowPathWork a product, after a pass over the rows.
  double sparse_held = 0, sparse_fresh = 0, dense_held = 0, dense_fresh = 0;
  for (std::size_t k = 0; k < request.cols.size(); ++k) {
    const double count = column_counts_[request.cols[k]];
    const bool dense = count >= rows_, held = k < request.known;
    (dense ? (held ? dense_held : dense_fresh) : (held ? sparse_held : sparse_fresh)) += dense ? 1 : count;
  }
  double work = 0;
  for (std::size_t k = request.known; k < request.cols.size(); ++k) {
    const double count = column_counts_[request.cols[k]];
    if (count >= rows_) {
      work += StepWays::kDenseWork * rows_ * (dense_held + dense_fresh / 2) + sparse_held + sparse_fresh;
    } else {
      work += kRowPathWork * count * (1 + (sparse_held + sparse_fresh / 2) / rows_) +
              count * (dense_held + dense_fresh);
    }
  }
  if (sparse_held + sparse_fresh > 0) work += kRowPathWork * rows_;
  return work;
}

double Lasso::Coordinator::solve_work(std::size_t m) {
  // A few passes and a factorisation.
  const auto size = static_cast<double>(m);
  return StepWays::dense_work(size * size * size / 3 + 4 * size * size, m);
}

void Lasso::Coordinator::receive_gram(const Stats& summed) {
  if (asked_ != Asked::kShipped) return;
  asked_ = Asked::kNothing;
  if (summed.model_missing > 0) {
    gram_missing_ = true;
    return;
  }
  gram_cache_.receive(request_, summed.model_block);
  arrived_ = true;
}

void Lasso::Coordinator::restart_pace(double gap) {
  rented_ = 0;
  rent_gap_ = gap;
  rent_evaluations_ = 0;
}

double Lasso::Coordinator::rounds_remaining(double gap) {
  // Measured from the evaluation at which the scope last changed (gaps over different scopes do not
  // compare), or the last step from the Gram matrix; unknown (none) until two evaluations have followed,
  // and before the first working set: until the support and the coefficients about to move fit in one,
  // the support is far from its final one (on strongly correlated columns it holds most of them), and
  // steps over it were wasted (2 to 4 times slower on the generated correlated sets). The support may
  // change meanwhile: the step's solve moves coefficients in and out of it. A set of fewer than 400 live
  // coefficients forms no working set (choose_working_set): there a support that two evaluations
  // running found the same starts the pace (cox2 crept 3,695 rounds without steps, 55 with them).
  const bool same_scope = scope_ == rent_scope_;
  rent_scope_ = scope_;
  const bool settled = std::isinf(rent_gap_) && !support_.empty() && support_ == rent_support_;
  rent_support_ = support_;
  if (!same_scope || settled || std::exchange(pace_from_next_, false)) restart_pace(gap);
  ++rent_evaluations_;
  if (!(gap > config_.tol)) return 0;
  if (rent_evaluations_ < 3) return std::isnan(path_pace_) ? 0.0 : std::log10(gap / config_.tol) * path_pace_;
  const double digits = std::log10(rent_gap_ / gap);
  if (!(digits > 0)) return std::numeric_limits<double>::infinity();
  if (path_.active()) path_pace_ = rented_ / digits;
  return std::log10(gap / config_.tol) * rented_ / digits;
}

bool Lasso::Coordinator::gram_step(const std::vector<ParamIndex>& covered,
                                   const std::vector<double>& gradient, double gap, Priorities& priorities) {
  const bool arrived = std::exchange(arrived_, false);
  keep_support();
  const double remaining = rounds_remaining(gap);
  // Ridge regression (no L1 share) has no model of this form; its rounds converge linearly anyway.
  if (gram_missing_ || config_.newton_steps == "rounds" || !(l1_ > 0)) return false;
  if (support_.empty() || support_.size() > config_.max_hessian) return false;
  // The Gram matrix over the support (what the cache lacks of it) is asked for when it and its solve
  // cost less than the rounds still need; the step is taken when it arrives, or when its solve alone
  // costs less.
  const bool always = config_.newton_steps == "hessian";
  const GramCache::Request request = gram_cache_.request(support_);
  const double solve = solve_work(support_.size());
  if (!request.cols.empty() && asked_ == Asked::kNothing &&
      (always || request_work(request) + solve < remaining)) {
    request_ = request;
    asked_ = Asked::kToShip;
  }
  if (!(always || arrived || (request.cols.empty() && solve < remaining))) return false;
  return solve_support(covered, gradient, priorities);
}

bool Lasso::Coordinator::solve_support(const std::vector<ParamIndex>& covered,
                                       const std::vector<double>& gradient, Priorities& priorities) {
  // The model of the objective over the support's coefficients held, the others where they are,
  // divided by lambda:
  //   Q(d) = g . d + d' H d / 2 + ||beta + d||_1 - ||beta||_1,  g = -X'r / (n lambda), H = X'X / (n lambda),
  // is the objective's change itself: its minimiser is the exact step.
  const double scale = 1 / (n_ * l1_);
  std::vector<ParamIndex> held;
  std::vector<double> held_gradient;
  double total = 0;  // the violation over every coefficient covered
  for (std::size_t k = 0, e = 0; k < covered.size(); ++k) {
    const ParamIndex j = covered[k];
    total += std::abs(violation(Penalty::kL1, beta_[j], -gradient[k] * scale));
    while (e < support_.size() && support_[e] < j) ++e;
    if (e < support_.size() && support_[e] == j && gram_cache_.holds(j)) {
      held.push_back(j);
      held_gradient.push_back(-gradient[k] * scale);
    }
  }
  const auto m = static_cast<Eigen::Index>(held.size());
  const Eigen::VectorXd g = Eigen::Map<const Eigen::VectorXd>(held_gradient.data(), m);
  Eigen::VectorXd w(m);
  double start = 0;
  for (Eigen::Index k = 0; k < m; ++k) {
    w[k] = beta_[held[static_cast<std::size_t>(k)]];
    start += std::abs(violation(Penalty::kL1, w[k], g[k]));
  }
  // A support already solved, or coefficients that should join it, are the rounds' to settle: the
  // step would move little, and it drops the round scheduled meanwhile.
  if (m == 0 || !(start > kSupportShare * total)) return false;
  Eigen::MatrixXd h = gram_cache_.matrix(held, scale);
  if (config_.standardize) {
    Eigen::VectorXd units(m);
    for (Eigen::Index k = 0; k < m; ++k) units[k] = unit_[held[static_cast<std::size_t>(k)]];
    h = units.asDiagonal() * h * units.asDiagonal();
  }
  if (config_.fit_intercept) {
    // The centred columns' Gram matrix: X'X - s s' / n.
    Eigen::VectorXd sums(m);
    for (Eigen::Index k = 0; k < m; ++k) sums[k] = column_sums_[held[static_cast<std::size_t>(k)]];
    h.noalias() -= (scale / n_) * sums * sums.transpose();
  }
  h.diagonal().array() += ridge_ * scale;  // the ridge's rows
  const ModelSolution solution = minimise_model(Penalty::kL1, w, g, h, kModelTolerance * start, kModelWork);
  const Eigen::VectorXd h_d = h * solution.d;
  if (!(model_value(Penalty::kL1, w, g, solution.d, h_d) < 0)) return false;
  // Shipped as a jump is (jump()): the round scheduled meanwhile belongs to the point left.
  if (!std::exchange(jumped_, true)) jump_from_ = beta_;
  forget_ = true;
  for (Eigen::Index k = 0; k < m; ++k) {
    const ParamIndex j = held[static_cast<std::size_t>(k)];
    beta_[j] += solution.d[k];
    // Its gradient moved by H d: the step it would take now, nearly none.
    const double step = coordinate_step(Penalty::kL1, beta_[j], g[k] + h_d[k], h(k, k));
    priorities.set(j, fitted_change(j, step));
  }
  intercept_ = intercept_for(beta_);
  return true;
}

Lasso::Saved Lasso::Coordinator::save() const {
  Saved saved;
  saved.lambda = lambda_;
  saved.l1_ratio = config_.l1_ratio;
  saved.standardize = config_.standardize ? 1 : 0;
  saved.beta.assign(beta_.data(), beta_.data() + beta_.size());
  for (std::size_t j = 0; j < retired_.size(); ++j) {
    if (retired_[j]) saved.retired.push_back(static_cast<ParamIndex>(j));
  }
  if (path_.active()) saved.path = path_.serialised();
  return saved;
}

Lasso::Commit Lasso::Coordinator::restore(const Saved& saved, Priorities& priorities) {
  if (path_.active() != !saved.path.empty()) {
    throw std::runtime_error(saved.path.empty() ? "the checkpoint is of one lambda: drop --path"
                                                : "the checkpoint is of a path: give --path");
  }
  if (path_.active()) {
    // The solved lambdas are kept, and the solve goes on at the one it was at; the seconds go on too.
    path_.resume(Path::deserialised(saved.path));
    set_lambda(path_.lambda());
    if (!path_.points().empty()) {
      start_ -= std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(path_.points().back().seconds));
    }
  }
  // lambda_max is a sum over workers, so it may differ in its last bits with another rank count.
  if (saved.standardize != (config_.standardize ? 1 : 0))
    throw std::runtime_error(std::string("the checkpoint was fitted ") +
                             (saved.standardize != 0 ? "with" : "without") + " --standardize");
  if (saved.l1_ratio != config_.l1_ratio) {
    throw std::runtime_error("the checkpoint was fitted for --l1_ratio " + std::to_string(saved.l1_ratio) +
                             ", this run asks for " + std::to_string(config_.l1_ratio));
  }
  if (std::abs(saved.lambda - lambda_) > 1e-9 * lambda_) {
    throw std::runtime_error("the checkpoint was fitted for lambda " + std::to_string(saved.lambda) +
                             ", this run asks for " + std::to_string(lambda_));
  }
  if (saved.beta.size() != static_cast<std::size_t>(beta_.size()))
    throw std::runtime_error("the checkpoint has " + std::to_string(saved.beta.size()) + " coefficients");
  // The workers start from beta = 0 (r = y): the commit moves them to the saved coefficients and drops
  // the retired ones, as a commit of the run itself would have.
  Commit commit;
  for (std::size_t j = 0; j < saved.beta.size(); ++j) {
    beta_[static_cast<Eigen::Index>(j)] = saved.beta[j];
    if (saved.beta[j] == 0) continue;
    commit.params.push_back(static_cast<ParamIndex>(j));
    commit.delta.push_back(saved.beta[j] * unit_[static_cast<Eigen::Index>(j)]);
  }
  if (!std::is_sorted(saved.retired.begin(), saved.retired.end()))
    throw std::runtime_error("the checkpoint's retired coefficients are out of order");
  for (ParamIndex j : saved.retired) {
    if (j >= retired_.size() || retired_[j])
      throw std::runtime_error("the checkpoint retires a bad coefficient");
    retired_[j] = true;
    priorities.retire(j);
  }
  commit.retired = saved.retired;
  remove_retired(active_, commit.retired);
  commit.intercept = shipped_intercept_ = intercept_ = intercept_for(beta_);
  commit.rescope = 1;  // every evaluation full until the first picks a working set
  scope_.clear();
  return commit;
}

std::vector<double> Lasso::Coordinator::result() const {
  if (config_.refit_beside) {
    std::vector<double> result{lambda_max_, static_cast<double>(beta_.size())};
    const std::vector<double> path = path_.serialised();
    result.insert(result.end(), path.begin(), path.end());
    return result;
  }
  if (config_.fold < 0) return {};
  std::vector<double> result{path_.test_weight()};
  const std::vector<PathPoint>& points = path_.points();
  for (std::size_t k = 0; k < path_.lambdas().size(); ++k)
    result.push_back(k < points.size() ? points[k].test_mse : std::numeric_limits<double>::quiet_NaN());
  return result;
}

void Lasso::Coordinator::finish(const Summary& summary) {
  // A fold job, or a refit beside the folds, says nothing: its result() goes to main().
  if (config_.fold >= 0 || config_.refit_beside) return;
  const double gap = summary.last.columns[0];
  const double relative = summary.last.columns[1];
  const auto nonzeros = static_cast<long long>(summary.last.columns[2]);
  if (path_.active()) {
    finish_path(summary);
    return;
  }
  if (!config_.output.empty()) {
    io::write_file_atomically(config_.output, [&](std::ostream& out) {
      out << "# schmp-lasso model: minimises " << objective_text(config_) << "\n"
          << std::setprecision(17) << "# lambda " << lambda_ << " (" << lambda_ / lambda_max_
          << " lambda_max)\n";
      if (config_.l1_ratio != 1) out << "# l1_ratio a " << config_.l1_ratio << "\n";
      out << std::setprecision(17) << "# features " << beta_.size() << " nonzeros " << nonzeros << "\n"
          << "# objective " << summary.last.objective << " duality_gap " << gap << "\n"
          << "# intercept b, then index value (1-based, nonzero coefficients only)\n"
          << "intercept " << intercept_ << "\n";
      const Eigen::VectorXd beta = original_beta();
      for (Eigen::Index j = 0; j < beta.size(); ++j) {
        if (beta[j] != 0) out << j + 1 << ' ' << beta[j] << '\n';
      }
    });
  }
  std::printf("schmp-lasso: %s after %llu rounds, %.3f s\n", summary.stopped_by.c_str(),
              static_cast<unsigned long long>(summary.rounds), summary.seconds);
  std::printf("objective %.12g  duality gap %.3g (relative %.3g)  nonzeros %lld of %lld\n",
              summary.last.objective, gap, relative, nonzeros, static_cast<long long>(beta_.size()));
  std::printf("lambda %.6g", lambda_);
  if (std::isfinite(lambda_max_)) std::printf(" (%.4g lambda_max)", lambda_ / lambda_max_);
  if (config_.l1_ratio != 1) std::printf("  l1_ratio %g", config_.l1_ratio);
  if (config_.fit_intercept) std::printf("  intercept %.12g", intercept_);
  std::printf("\n");
  if (at_floor_) {
    std::printf(
        "the gap is down to the rounding of its sums over %.0f rows: --tol %g is below what doubles "
        "resolve here\n",
        rows_, config_.tol);
  }
  if (!config_.output.empty()) std::printf("model: %s\n", config_.output.c_str());
  if (!config_.trace.empty()) std::printf("trace: %s\n", config_.trace.c_str());
  std::fflush(stdout);
}

std::string objective_text(const Config& config) {
  std::string text = config.weights.empty() ? "(1/2n)||y - X beta - b||^2"
                                            : "sum_i w_i (y_i - x_i beta - b)^2 / (2 sum_i w_i)";
  text += config.l1_ratio == 1 ? " + lambda ||beta||_1" : " + lambda (a ||beta||_1 + (1 - a)/2 ||beta||^2)";
  if (!config.fit_intercept) text += ", b = 0 (no intercept)";
  if (config.standardize) text += ", the penalty on sd_j beta_j (--standardize)";
  text += "\n# data " + config.data;
  if (!config.weights.empty()) text += "\n# weights " + config.weights;
  return text;
}

void write_path(const Config& config, const Path& path, double lambda_max, std::size_t features) {
  const std::size_t solved = path.points().size();
  path.print();
  if (!config.path_table.empty()) {
    path.write_table(config.path_table);
    std::printf("path table: %s\n", config.path_table.c_str());
  }
  if (!config.output.empty()) {
    std::ostringstream header;
    header << std::setprecision(17) << "# schmp-lasso path: minimises " << objective_text(config)
           << " at each lambda\n"
           << "# lambda_max " << lambda_max << " lambdas " << path.size() << " solved " << solved << "\n";
    if (config.l1_ratio != 1) header << "# l1_ratio a " << config.l1_ratio << "\n";
    if (const auto& cv = path.cross_validation()) {
      header << "# cv " << config.cv << " folds: lambda_min " << cv->lambdas[cv->best] << " lambda_1se "
             << cv->lambdas[cv->one_se] << " (the last model is lambda_min's)\n";
    }
    header << "# features " << features << "\n"
           << "# each model: lambda L, intercept b, then index value (1-based, nonzero coefficients only)\n";
    path.write_models(config.output, header.str());
    std::printf("models: %s\n", config.output.c_str());
  }
  std::fflush(stdout);
}

void Lasso::Coordinator::finish_path(const Summary& summary) {
  std::printf("schmp-lasso: %s after %llu rounds, %.3f s: %zu of %zu lambdas solved\n",
              summary.stopped_by.c_str(), static_cast<unsigned long long>(summary.rounds), summary.seconds,
              path_.points().size(), path_.size());
  write_path(config_, path_, lambda_max_, static_cast<std::size_t>(beta_.size()));
  if (!config_.trace.empty()) std::printf("trace: %s\n", config_.trace.c_str());
  std::fflush(stdout);
}

}  // namespace schmp::lasso
