#include "multinomial.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

#include "schmp/dataset.hpp"

namespace schmp::logreg {

namespace {

// The result's fields before the columns' scales and w (of one length): the block's objective,
// relative gap and nonzeros, then its objective, the softmax objective and the dual value where it
// started.
constexpr std::size_t kBlockFields = 6;
// A step solves its class to this share of the last sweep's gain (relative, at most kLoosest).
constexpr double kStepShare = 0.1;
constexpr double kLoosest = 0.1;
// The most sweeps over the classes before the fit gives up.
constexpr std::size_t kMostSweeps = 1000;
// Sweeps from which an Anderson extrapolation is tried (schmp/extrapolation.hpp).
constexpr std::size_t kDepth = 5;

// The penalty a |v| + (1 - a)/2 v^2 summed over `values` moved by s, on the reported scale (a = 0: L2).
double shifted_penalty(const std::vector<double>& values, double s, double a) {
  double sum = 0;
  for (const double v : values) sum += a * std::abs(v + s) + 0.5 * (1 - a) * (v + s) * (v + s);
  return sum;
}

// The s that minimises shifted_penalty (0 unless another is strictly lower): the penalty is convex and
// piecewise quadratic in s, so its minimum is at a kink -v_l or at a piece's stationary point.
double best_shift(const std::vector<double>& values, double a) {
  const auto classes = static_cast<double>(values.size());
  double sum = 0;
  for (const double v : values) sum += v;
  std::vector<double> candidates;
  for (const double v : values) candidates.push_back(-v);
  for (std::size_t above = 0; above <= values.size() && a < 1; ++above) {
    // With `above` of the v_l + s positive: a (2 above - K) + (1 - a)(sum + K s) = 0.
    candidates.push_back((-a * (2 * static_cast<double>(above) - classes) / (1 - a) - sum) / classes);
  }
  double best = 0, lowest = shifted_penalty(values, 0, a);
  for (const double s : candidates) {
    const double value = shifted_penalty(values, s, a);
    if (value < lowest * (1 - 1e-15)) {
      lowest = value;
      best = s;
    }
  }
  return best;
}

// The softmax loss does not change when every class's weights move by one vector: the penalty alone
// decides where they sit along it. Moves them there (and the intercepts to sum 0), and returns how
// far the objective fell. `unit` is the columns' scale (Config::standardize; the weights penalised are
// w_j / unit_j).
double centre_classes(std::vector<std::vector<double>>& weights, const std::vector<double>& unit,
                      const Config& config) {
  const double a = penalty_of(config) == Penalty::kL1 ? config.l1_ratio : 0.0;
  const std::size_t params = unit.size(), penalised = params - (config.fit_intercept ? 1 : 0);
  double fell = 0;
  std::vector<double> values(weights.size());
  for (std::size_t j = 0; j < penalised; ++j) {
    for (std::size_t l = 0; l < weights.size(); ++l) values[l] = weights[l][j] / unit[j];
    const double s = best_shift(values, a);
    if (s == 0) continue;
    fell += shifted_penalty(values, 0, a) - shifted_penalty(values, s, a);
    for (std::vector<double>& w : weights) w[j] += s * unit[j];
  }
  if (config.fit_intercept) {
    double mean = 0;
    for (const std::vector<double>& w : weights) mean += w.back() / static_cast<double>(weights.size());
    for (std::vector<double>& w : weights) w.back() -= mean;
  }
  return fell;
}

double nonzeros(const std::vector<double>& w, bool intercept) {
  const auto last = w.end() - (intercept ? 1 : 0);
  return static_cast<double>(std::count_if(w.begin(), last, [](double v) { return v != 0; }));
}

}  // namespace

Config block_job(const Config& config, const std::vector<double>& classes, std::size_t k,
                 const std::vector<std::vector<double>>& weights, double tol) {
  Config job = config;
  job.multiclass = job.multinomial = false;
  job.silent = true;
  job.positive_label = label_text(classes[k]);
  job.block = static_cast<std::int64_t>(k);
  job.classes = classes;
  job.class_weights = weights;
  job.tol = tol;
  job.output.clear();
  job.test.clear();
  job.test_labels.clear();
  return job;
}

BlockResult block_result(const std::vector<double>& result) {
  if (result.size() < kBlockFields) throw std::logic_error("logreg: a multinomial step's result is short");
  BlockResult block;
  block.objective = result[0];
  block.start_objective = result[3];
  block.softmax_objective = result[4];
  block.softmax_dual = result[5];
  const auto params = static_cast<std::ptrdiff_t>((result.size() - kBlockFields) / 2);
  block.unit.assign(result.begin() + kBlockFields, result.begin() + kBlockFields + params);
  block.w.assign(result.begin() + kBlockFields + params, result.end());
  return block;
}

namespace {

// The fit's state between steps: every class's weights, the objective there and the best dual value.
class SoftmaxDescent {
 public:
  SoftmaxDescent(Job& job, const Config& config, const std::vector<double>& classes)
      : job_(job), config_(config), classes_(classes) {}

  // Sweeps over the classes until the gap meets --tol (or the sweeps run out); the exit status.
  int run();
  const std::vector<std::vector<double>>& weights() const { return weights_; }
  double objective() const { return objective_; }
  double relative_gap() const { return relative_gap_; }
  std::size_t steps() const { return steps_; }

 private:
  // Class k's step from `start`: its result, or none when the job failed (status_ says how).
  std::optional<BlockResult> step(std::size_t k, const std::vector<std::vector<double>>& start);
  void take(std::size_t k, const BlockResult& block);
  void set_objective(double objective);  // and the relative gap to the best dual value
  // Every kDepth sweeps, the Anderson extrapolation of the sweeps' weights, or none.
  std::optional<std::vector<std::vector<double>>> extrapolated();
  // A line on stderr from the first rank every --progress_seconds: a fit may take many steps.
  void report_progress(std::size_t sweep);
  double seconds() const;  // since the fit began
  // Whether --max_seconds, which bounds each step too, has passed for the whole fit.
  bool out_of_time() const;

  Job& job_;
  const Config& config_;
  const std::vector<double>& classes_;
  std::vector<std::vector<double>> weights_;
  std::vector<double> unit_;
  double best_dual_ = -std::numeric_limits<double>::infinity();
  double objective_ = 0, relative_gap_ = 1;
  double tol_ = kLoosest;  // of the next step
  std::size_t steps_ = 0;
  int status_ = 0;
  std::vector<Eigen::VectorXd> sweeps_;  // the weights after each sweep since the last extrapolation
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  double next_progress_ = 0;  // seconds
};

double SoftmaxDescent::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

bool SoftmaxDescent::out_of_time() const {
  return config_.max_seconds > 0 && seconds() >= config_.max_seconds;
}

void SoftmaxDescent::report_progress(std::size_t sweep) {
  const double seconds = this->seconds();
  if (!(config_.progress_seconds > 0) || seconds < next_progress_ || !job_.first_rank()) return;
  next_progress_ = seconds + config_.progress_seconds;
  std::fprintf(stderr, "schmp-logreg: sweep %zu  %.1f s  objective %.12g  relative gap %.3g\n", sweep + 1,
               seconds, objective_, relative_gap_);
  std::fflush(stderr);
}

std::optional<BlockResult> SoftmaxDescent::step(std::size_t k,
                                                const std::vector<std::vector<double>>& start) {
  const EachRun each = job_.run_each<Logreg>({block_job(config_, classes_, k, start, tol_)});
  ++steps_;
  status_ = each.status;
  if (status_ != 0) return std::nullopt;
  return block_result(each.results.at(0));
}

void SoftmaxDescent::take(std::size_t k, const BlockResult& block) {
  // A class not yet solved is all zero, as the steps take it.
  if (weights_.empty()) weights_.assign(classes_.size(), std::vector<double>(block.w.size(), 0.0));
  weights_[k] = block.w;
  unit_ = block.unit;
  best_dual_ = std::max(best_dual_, block.softmax_dual);
  set_objective(block.end_objective());
}

void SoftmaxDescent::set_objective(double objective) {
  objective_ = objective;
  relative_gap_ = objective_ > 0 ? (objective_ - best_dual_) / objective_ : 0.0;
}

std::optional<std::vector<std::vector<double>>> SoftmaxDescent::extrapolated() {
  Eigen::VectorXd flat(static_cast<Eigen::Index>(classes_.size() * unit_.size()));
  for (std::size_t l = 0; l < classes_.size(); ++l) {
    flat.segment(static_cast<Eigen::Index>(l * unit_.size()), static_cast<Eigen::Index>(unit_.size())) =
        Eigen::Map<const Eigen::VectorXd>(weights_[l].data(), static_cast<Eigen::Index>(unit_.size()));
  }
  sweeps_.push_back(flat);
  if (sweeps_.size() < kDepth) return std::nullopt;
  const std::optional<Eigen::VectorXd> found = anderson_point(sweeps_);
  sweeps_.clear();
  if (!found) return std::nullopt;
  const Eigen::VectorXd& point = *found;
  std::vector<std::vector<double>> weights(classes_.size());
  for (std::size_t l = 0; l < classes_.size(); ++l) {
    const auto part =
        point.segment(static_cast<Eigen::Index>(l * unit_.size()), static_cast<Eigen::Index>(unit_.size()));
    weights[l].assign(part.begin(), part.end());
  }
  return weights;
}

int SoftmaxDescent::run() {
  std::optional<std::vector<std::vector<double>>> jump;
  for (std::size_t sweep = 0; sweep < kMostSweeps && relative_gap_ > config_.tol && !out_of_time(); ++sweep) {
    const double sweep_start = steps_ == 0 ? std::numeric_limits<double>::infinity() : objective_;
    for (std::size_t k = 0; k < classes_.size() && relative_gap_ > config_.tol; ++k) {
      std::optional<BlockResult> block;
      if (k == 0 && jump) {
        // The extrapolated point is taken when it is better than the sweeps' last; the step from it
        // shows which.
        block = step(k, *jump);
        if (block) best_dual_ = std::max(best_dual_, block->softmax_dual);  // a bound wherever it was found
        if (block && block->softmax_objective < objective_) {
          weights_ = std::move(*jump);
        } else {
          block.reset();
        }
        jump.reset();
        if (status_ != 0) return status_;
      }
      if (!block) block = step(k, weights_);
      if (!block) return status_;
      take(k, *block);
    }
    if (relative_gap_ <= config_.tol) break;
    set_objective(objective_ - centre_classes(weights_, unit_, config_));
    jump = extrapolated();
    report_progress(sweep);
    // The next steps solve each class to a tenth of what this sweep gained (or of the gap, when that is
    // less): a step far tighter than the sweeps' progress is wasted when the other classes move next,
    // and a sweep that gained nothing makes the next tight enough to move.
    const double gained = std::isfinite(sweep_start) ? (sweep_start - objective_) / objective_ : 1.0;
    tol_ = std::clamp(kStepShare * std::min(gained, relative_gap_), kStepShare * config_.tol, kLoosest);
  }
  return 0;
}

}  // namespace

int fit_multinomial(Job& job, const Config& config, const std::vector<double>& classes) {
  SoftmaxDescent descent(job, config, classes);
  const int status = descent.run();
  forget_kept_rows();
  if (status != 0 || !job.first_rank()) return status;
  const std::vector<std::vector<double>>& weights = descent.weights();
  const double objective = descent.objective(), relative_gap = descent.relative_gap();
  const std::size_t steps = descent.steps();
  std::vector<ClassFit> fits;
  const double sweeps = static_cast<double>(steps) / static_cast<double>(classes.size());
  for (std::size_t k = 0; k < classes.size(); ++k) {
    fits.push_back({classes[k], class_text(config, classes[k]), objective, relative_gap,
                    nonzeros(weights[k], config.fit_intercept), weights[k]});
  }
  LinearModel model = one_vs_rest_model(config, fits);
  model.softmax = true;
  if (!config.output.empty()) write_liblinear_model(config.output, solver_type(config), model);
  std::printf("schmp-logreg: multinomial over %zu classes, %zu class steps (%.1f sweeps)\n", classes.size(),
              steps, sweeps);
  std::printf("%-10s %s\n", "class", "nonzeros");
  for (const ClassFit& fit : fits) std::printf("%-10s %.0f\n", fit.text.c_str(), fit.nonzeros);
  std::printf("objective %.12g  relative gap %.3g%s\n", objective, relative_gap,
              relative_gap <= config.tol ? "" : "  (not converged: --max_seconds or the sweeps ran out)");
  print_held_out(config, model);
  return 0;
}

}  // namespace schmp::logreg
