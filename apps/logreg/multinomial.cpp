#include "multinomial.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iomanip>
#include <limits>
#include <numeric>
#include <optional>

#include "schmp/dataset.hpp"
#include "schmp/quadratic_model.hpp"

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
// A fit whose gap has not fallen below kStallShare of its lowest in kStalledSweeps sweeps stops: its
// weights no longer move (on raw features of very different scales the dual bound stalls above the
// objective's rounding, as the binary's does).
constexpr double kStallShare = 0.999;
constexpr std::size_t kStalledSweeps = 20;
// Joint Newton steps (SoftmaxDescent): from kSweepsBeforeJoint sweeps on, while the classes' weights of
// the features in play number at most kMostJoint and --max_hessian (the Hessian's side m; its message
// is 4 m^2 bytes). Above about a thousand the model's solve costs more than the sweeps it saves (a
// generated 5000 x 1000 set, three classes: the path took 21 s with up to 2048, 81 s with 4096, 19 s
// with 1024). A step is halved at most kHalvings times before the sweeps take over again for
// kSweepsBetween sweeps.
constexpr std::size_t kSweepsBeforeJoint = 2, kMostJoint = 1024, kHalvings = 4, kSweepsBetween = 3;
// A zero weight whose loss gradient is above this share of the penalty's (1) is near moving: its
// feature joins the next joint step.
constexpr double kNearMoving = 0.9;
// The joint model is solved to this share of its violation at zero, within this many multiply-adds.
constexpr double kJointModelTolerance = 1e-4;
constexpr double kJointModelWork = 1 << 28;

// The penalty a |v| + (1 - a)/2 v^2 summed over `values` moved by s, on the reported scale (a = 0: L2).
double shifted_penalty(const std::vector<double>& values, double s, double a) {
  double sum = 0;
  for (const double v : values) sum += a * std::abs(v + s) + 0.5 * (1 - a) * (v + s) * (v + s);
  return sum;
}

// The s that minimises shifted_penalty (0 unless another is strictly lower): the penalty is convex and
// piecewise quadratic in s, so its minimum is at a kink -v_l or at a piece's stationary point. The L1
// penalty alone (a = 1) is flat between the middle kinks of an even count of classes: there the kink
// nearest the minimum found, which makes a weight zero.
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
  if (a < 1 || std::find(candidates.begin(), candidates.end(), best) != candidates.end()) return best;
  double kink = best;
  for (const double s : candidates) {
    if (shifted_penalty(values, s, a) <= lowest * (1 + 1e-15) &&
        (kink == best || std::abs(s - best) < std::abs(kink - best)))
      kink = s;
  }
  return kink;
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
  // A path and its folds are the driver's (fit_multinomial): a step solves one C.
  job.path = 0;
  job.path_table.clear();
  job.path_models.clear();
  job.fold_results.clear();
  return job;
}

Config joint_job(const Config& config, const std::vector<double>& classes,
                 const std::vector<std::vector<double>>& weights,
                 const std::vector<std::uint32_t>& features) {
  Config job = block_job(config, classes, 0, weights, config.tol);
  job.joint = features;
  return job;
}

JointResult joint_result(const std::vector<double>& result, std::size_t classes, std::size_t params,
                         std::size_t features) {
  const std::size_t m = classes * features;
  if (result.size() != 2 + params + classes * params + packed_size(m))
    throw std::logic_error("logreg: a joint step's result is of the wrong length");
  JointResult joint;
  joint.softmax_objective = result[0];
  joint.softmax_dual = result[1];
  auto at = result.begin() + 2;
  joint.unit.assign(at, at + static_cast<std::ptrdiff_t>(params));
  at += static_cast<std::ptrdiff_t>(params);
  joint.gradient.assign(at, at + static_cast<std::ptrdiff_t>(classes * params));
  at += static_cast<std::ptrdiff_t>(classes * params);
  joint.hessian.assign(at, result.end());
  return joint;
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

// A softmax fit at one C as a sequence of steps, played by whoever holds it (play): next() names the
// job of the next step, take() hears what it found. First sweeps of class steps; then, while few
// weights are in play, joint Newton steps over every class's weights of the features in play
// (multinomial.hpp), each tried where the last one's model puts the minimum and halved until F falls;
// sweeps again for a while when none does.
class SoftmaxDescent {
 public:
  // From `start` (every class's weights; empty: all zero), until the gap meets --tol, the sweeps run
  // out, or `deadline` passes.
  SoftmaxDescent(const Config& config, const std::vector<double>& classes,
                 std::vector<std::vector<double>> start, std::chrono::steady_clock::time_point deadline)
      : config_(config),
        classes_(classes),
        weights_(std::move(start)),
        deadline_(deadline),
        joint_after_(weights_.empty() ? kSweepsBeforeJoint : 0) {}

  // The next step's job, or none once the fit is done.
  std::optional<Config> next();
  void take(const std::vector<double>& result);  // next()'s job's result
  const std::vector<std::vector<double>>& weights() const { return weights_; }
  double objective() const { return objective_; }
  double gap() const { return objective_ - best_dual_; }
  double relative_gap() const { return relative_gap_; }
  std::size_t steps() const { return steps_; }  // class steps and joint ones
  std::size_t joint_steps() const { return joint_steps_; }
  std::size_t sweeps() const { return sweep_; }  // sweeps over the classes and joint steps taken
  bool stalled() const { return stalled_sweeps_ >= kStalledSweeps; }
  std::size_t nonzeros() const;  // of every class's weights, the intercepts left out
  // `sweep` hears of each sweep's end, and of the step that meets --tol within one.
  void on_sweep(std::function<void(const SoftmaxDescent&)> sweep) { on_sweep_ = std::move(sweep); }

 private:
  bool done() const;
  std::size_t most_joint() const { return std::min<std::size_t>(kMostJoint, config_.max_hessian); }
  void take_step(const BlockResult& block);
  void take_class(const BlockResult& block);  // class k_'s weights, and F and the gap from them
  // Joint steps: whether the next job is one (and then its features), what it found, the sweeps again.
  bool start_joint();
  void take_joint(const JointResult& joint);
  void leave_joint();
  void end_joint_step();
  // The features whose weights are in play at `weights` (with a joint step's gradient there: those
  // near moving too), the constant feature last when fitted.
  std::vector<std::uint32_t> in_play(const std::vector<std::vector<double>>& weights,
                                     const JointResult* at) const;
  // The minimum of the Newton model at weights_ over every class's weights of features_, as a step in
  // the weights, or none (nothing to move, or a model that cannot be solved).
  std::optional<std::vector<std::vector<double>>> joint_direction(const JointResult& at) const;
  void set_objective(double objective);  // and the relative gap to the best dual value
  void end_sweep();
  void count_sweep();  // and whether the gap stalls
  // Every kDepth sweeps, the Anderson extrapolation of the sweeps' weights, or none.
  std::optional<std::vector<std::vector<double>>> extrapolated();

  Config config_;
  const std::vector<double>& classes_;
  std::vector<std::vector<double>> weights_;
  std::chrono::steady_clock::time_point deadline_;
  std::vector<double> unit_;
  double best_dual_ = -std::numeric_limits<double>::infinity();
  double objective_ = 0, relative_gap_ = 1;
  double sweep_start_ = std::numeric_limits<double>::infinity();  // F where the sweep began
  double tol_ = kLoosest;                                         // of the next step
  std::size_t steps_ = 0, sweep_ = 0, k_ = 0;                     // k_: the class stepped next
  std::optional<std::vector<std::vector<double>>> jump_;          // an extrapolated point to try
  bool from_jump_ = false;                                        // the step asked for starts at jump_
  std::vector<Eigen::VectorXd> sweeps_;  // the weights after each sweep since the last extrapolation
  double lowest_gap_ = std::numeric_limits<double>::infinity();
  std::size_t stalled_sweeps_ = 0;  // since the gap last fell below kStallShare of its lowest
  std::function<void(const SoftmaxDescent&)> on_sweep_;
  // Joint steps: from weights_ (F there) along `direction` times `length`, halved `halvings` times.
  struct JointStep {
    double objective = 0;
    std::vector<std::vector<double>> direction;
    double length = 1;
    std::size_t halvings = 0;
  };
  bool joint_ = false;  // the steps are joint ones
  std::size_t joint_steps_ = 0;
  // The sweep from which they may start: a fit from zero first finds the features in play by sweeps,
  // one from a path's last solution has them.
  std::size_t joint_after_;
  std::vector<std::uint32_t> features_;     // of the next joint step
  std::optional<JointStep> step_;           // the one being tried
  std::vector<std::vector<double>> trial_;  // where the next joint job is
};

std::size_t SoftmaxDescent::nonzeros() const {
  double count = 0;
  for (const std::vector<double>& w : weights_) count += logreg::nonzeros(w, config_.fit_intercept);
  return static_cast<std::size_t>(count);
}

bool SoftmaxDescent::done() const {
  return relative_gap_ <= config_.tol ||
         (k_ == 0 && (sweep_ >= kMostSweeps || stalled() || std::chrono::steady_clock::now() >= deadline_));
}

std::optional<Config> SoftmaxDescent::next() {
  if (done()) return std::nullopt;
  if (joint_ || start_joint()) return joint_job(config_, classes_, trial_, features_);
  from_jump_ = k_ == 0 && jump_.has_value();
  return block_job(config_, classes_, k_, from_jump_ ? *jump_ : weights_, tol_);
}

void SoftmaxDescent::take(const std::vector<double>& result) {
  if (joint_) {
    take_joint(joint_result(result, classes_.size(), weights_.front().size(), features_.size()));
  } else {
    take_step(block_result(result));
  }
}

bool SoftmaxDescent::start_joint() {
  if (k_ != 0 || sweep_ < joint_after_ || weights_.empty()) return false;
  features_ = in_play(weights_, nullptr);
  if (features_.empty() || classes_.size() * features_.size() > most_joint()) {
    joint_after_ = sweep_ + kSweepsBetween;
    return false;
  }
  joint_ = true;
  trial_ = weights_;
  step_.reset();
  jump_.reset();
  return true;
}

void SoftmaxDescent::take_joint(const JointResult& joint) {
  ++steps_;
  ++joint_steps_;
  best_dual_ = std::max(best_dual_, joint.softmax_dual);
  if (step_ && !(joint.softmax_objective < step_->objective)) {
    // F did not fall: a shorter step, or the sweeps.
    set_objective(objective_);
    if (++step_->halvings > kHalvings) return leave_joint();
    step_->length /= 2;
    for (std::size_t l = 0; l < classes_.size(); ++l) {
      for (std::size_t j = 0; j < trial_[l].size(); ++j)
        trial_[l][j] = weights_[l][j] + step_->length * step_->direction[l][j];
    }
    return;
  }
  const bool moved = step_.has_value();
  weights_ = trial_;
  unit_ = joint.unit;
  // The loss, its gradient and its Hessian do not change with a common shift of the classes' weights:
  // the centred weights keep them, at a penalty no higher.
  set_objective(joint.softmax_objective - centre_classes(weights_, unit_, config_));
  trial_ = weights_;
  if (moved) {
    end_joint_step();
  } else if (relative_gap_ <= config_.tol && on_sweep_) {
    on_sweep_(*this);  // met --tol where it started
  }
  if (relative_gap_ <= config_.tol) return;
  std::optional<std::vector<std::vector<double>>> direction = joint_direction(joint);
  if (!direction) return leave_joint();
  step_ = JointStep{objective_, std::move(*direction)};
  for (std::size_t l = 0; l < classes_.size(); ++l) {
    for (std::size_t j = 0; j < trial_[l].size(); ++j) trial_[l][j] += step_->direction[l][j];
  }
  features_ = in_play(trial_, &joint);
  if (classes_.size() * features_.size() > most_joint()) leave_joint();
}

void SoftmaxDescent::leave_joint() {
  joint_ = false;
  step_.reset();
  joint_after_ = sweep_ + kSweepsBetween;
  k_ = 0;
  sweep_start_ = objective_;
  sweeps_.clear();
  tol_ = std::clamp(kStepShare * relative_gap_, kStepShare * config_.tol, kLoosest);
}

void SoftmaxDescent::end_joint_step() {
  count_sweep();
  if (on_sweep_) on_sweep_(*this);
}

void SoftmaxDescent::count_sweep() {
  ++sweep_;
  if (relative_gap_ < kStallShare * lowest_gap_) {
    lowest_gap_ = relative_gap_;
    stalled_sweeps_ = 0;
  } else {
    ++stalled_sweeps_;
  }
}

std::vector<std::uint32_t> SoftmaxDescent::in_play(const std::vector<std::vector<double>>& weights,
                                                   const JointResult* at) const {
  const std::size_t params = weights.front().size(), classes = classes_.size();
  const std::size_t penalised = params - (config_.fit_intercept ? 1 : 0);
  const bool every = penalty_of(config_) == Penalty::kL2;
  std::vector<std::uint32_t> features;
  for (std::size_t j = 0; j < penalised; ++j) {
    bool moving = every;
    for (std::size_t l = 0; l < classes && !moving; ++l) {
      moving = weights[l][j] != 0 || (at && std::abs(at->gradient[l * params + j]) > kNearMoving);
    }
    if (moving) features.push_back(static_cast<std::uint32_t>(j));
  }
  if (config_.fit_intercept) features.push_back(static_cast<std::uint32_t>(params - 1));
  return features;
}

std::optional<std::vector<std::vector<double>>> SoftmaxDescent::joint_direction(const JointResult& at) const {
  const std::size_t classes = classes_.size(), params = weights_.front().size();
  const std::size_t features = features_.size(), m = classes * features;
  const Penalty penalty = penalty_of(config_);
  const double ridge = penalty == Penalty::kL1 ? (1 - config_.l1_ratio) / config_.l1_ratio : 0.0;
  // The intercepts of all classes but the last are free; the last one's is held, as a common shift
  // of every class's scores changes nothing.
  std::vector<Eigen::Index> held, free;
  for (std::size_t s = 0; s < m; ++s) {
    const bool intercept = config_.fit_intercept && s % features == features - 1;
    if (!intercept) {
      held.push_back(static_cast<Eigen::Index>(s));
    } else if (s / features + 1 < classes) {
      free.push_back(static_cast<Eigen::Index>(s));
    }
  }
  const Eigen::MatrixXd h = unpack_symmetric(at.hessian, m, 1.0);
  const auto coordinate = [&](Eigen::Index s) {
    const auto u = static_cast<std::size_t>(s);
    return std::pair{u / features, static_cast<std::size_t>(features_[u % features])};
  };
  const auto p = static_cast<Eigen::Index>(held.size()), b = static_cast<Eigen::Index>(free.size());
  Eigen::VectorXd v(p), g(p), g_free(b);
  for (Eigen::Index k = 0; k < p; ++k) {
    const auto [l, j] = coordinate(held[static_cast<std::size_t>(k)]);
    v[k] = weights_[l][j] / at.unit[j];
    g[k] = at.gradient[l * params + j] + ridge * v[k];
  }
  for (Eigen::Index k = 0; k < b; ++k) {
    const auto [l, j] = coordinate(free[static_cast<std::size_t>(k)]);
    g_free[k] = at.gradient[l * params + j];
  }
  Eigen::MatrixXd h_held = h(held, held), h_cross = h(held, free);
  h_held.diagonal().array() += ridge;
  // The free intercepts, eliminated exactly: for any d of the others their best step is
  // -H_bb^-1 (g_b + H_bh d), and the model over the others has the Schur complement.
  Eigen::LDLT<Eigen::MatrixXd> intercepts;
  if (b > 0) {
    intercepts.compute(h(free, free));
    if (intercepts.info() != Eigen::Success) return std::nullopt;
  }
  if (b > 0 && p > 0) {  // Eigen's solves take no empty right-hand side
    g -= h_cross * intercepts.solve(g_free);
    h_held -= h_cross * intercepts.solve(h_cross.transpose());
  }
  // With L1 alone the loss is flat along a common shift of a feature's weights in every class: a
  // floor keeps the model's faces solvable.
  const double floor = p > 0 ? 1e-12 * h_held.diagonal().cwiseAbs().maxCoeff() : 0.0;
  h_held.diagonal().array() += floor + std::numeric_limits<double>::min();
  double start = 0;
  for (Eigen::Index k = 0; k < p; ++k) start = add_violation(penalty, start, violation(penalty, v[k], g[k]));
  start = violation_norm(penalty, start);
  if (!(start > 0) && (b == 0 || g_free.isZero())) return std::nullopt;
  Eigen::VectorXd d = Eigen::VectorXd::Zero(p);
  if (p > 0 && start > 0)
    d = minimise_model(penalty, v, g, h_held, kJointModelTolerance * start, kJointModelWork).d;
  Eigen::VectorXd d_free = g_free;
  if (p > 0) d_free += h_cross.transpose() * d;
  if (b > 0) d_free = -intercepts.solve(d_free);
  if (!d.allFinite() || !d_free.allFinite()) return std::nullopt;
  std::vector<std::vector<double>> direction(classes, std::vector<double>(params, 0.0));
  for (Eigen::Index k = 0; k < p; ++k) {
    const auto [l, j] = coordinate(held[static_cast<std::size_t>(k)]);
    direction[l][j] = d[k] * at.unit[j];
  }
  for (Eigen::Index k = 0; k < b; ++k) {
    const auto [l, j] = coordinate(free[static_cast<std::size_t>(k)]);
    direction[l][j] = d_free[k] * at.unit[j];
  }
  return direction;
}

void SoftmaxDescent::take_step(const BlockResult& block) {
  ++steps_;
  if (from_jump_) {
    // The extrapolated point is taken when it is better than the sweeps' last; the step from it shows
    // which. Its dual value is a bound wherever it was found.
    from_jump_ = false;
    best_dual_ = std::max(best_dual_, block.softmax_dual);
    const bool better = block.softmax_objective < objective_;
    if (better) weights_ = std::move(*jump_);
    jump_.reset();
    if (!better) return;  // class 0 steps again, from the sweeps' point
  }
  take_class(block);
  if (relative_gap_ <= config_.tol) {
    if (on_sweep_) on_sweep_(*this);
    return;
  }
  if (++k_ < classes_.size()) return;
  end_sweep();
  if (on_sweep_) on_sweep_(*this);
}

void SoftmaxDescent::take_class(const BlockResult& block) {
  // A class not yet solved is all zero, as the steps take it.
  if (weights_.empty()) weights_.assign(classes_.size(), std::vector<double>(block.w.size(), 0.0));
  weights_[k_] = block.w;
  unit_ = block.unit;
  best_dual_ = std::max(best_dual_, block.softmax_dual);
  set_objective(block.end_objective());
}

void SoftmaxDescent::set_objective(double objective) {
  objective_ = objective;
  relative_gap_ = objective_ > 0 ? (objective_ - best_dual_) / objective_ : 0.0;
}

void SoftmaxDescent::end_sweep() {
  set_objective(objective_ - centre_classes(weights_, unit_, config_));
  jump_ = extrapolated();
  // The next steps solve each class to a tenth of what this sweep gained (or of the gap, when that is
  // less): a step far tighter than the sweeps' progress is wasted when the other classes move next, and
  // a sweep that gained nothing makes the next tight enough to move.
  const double gained = std::isfinite(sweep_start_) ? (sweep_start_ - objective_) / objective_ : 1.0;
  tol_ = std::clamp(kStepShare * std::min(gained, relative_gap_), kStepShare * config_.tol, kLoosest);
  sweep_start_ = objective_;
  k_ = 0;
  count_sweep();
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

// Plays the steps of `fits` (each with next() and take(), as SoftmaxDescent) side by side on the ranks
// (Job::run_each) until none has one left, calling `between` after each turn; the exit status.
template <class Fit>
int play(Job& job, const std::vector<Fit*>& fits, const std::function<void()>& between) {
  for (;;) {
    std::vector<Config> jobs;
    std::vector<Fit*> asking;
    for (Fit* fit : fits) {
      if (std::optional<Config> next = fit->next()) {
        jobs.push_back(std::move(*next));
        asking.push_back(fit);
      }
    }
    if (jobs.empty()) return 0;
    const EachRun each = job.run_each<Logreg>(jobs);
    if (each.status != 0) return each.status;
    for (std::size_t f = 0; f < asking.size(); ++f) asking[f]->take(each.results.at(f));
    between();
  }
}

std::chrono::steady_clock::time_point deadline_of(const Config& config) {
  const auto now = std::chrono::steady_clock::now();
  if (!(config.max_seconds > 0)) return std::chrono::steady_clock::time_point::max();
  return now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                   std::chrono::duration<double>(config.max_seconds));
}

// A line on stderr every --progress_seconds from the first rank: a fit may take many steps.
class Progress {
 public:
  Progress(const Job& job, const Config& config)
      : speaks_(job.first_rank() && config.progress_seconds > 0), every_(config.progress_seconds) {}
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  // Whether a line is due (and then the next one's time is set).
  bool due() {
    if (!speaks_ || seconds() < next_) return false;
    next_ = seconds() + every_;
    return true;
  }

 private:
  bool speaks_;
  double every_;
  double next_ = every_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// --trace of a softmax fit (first rank): a row per sweep over the classes, and one where the fit meets
// --tol, each flushed. Its columns are the trace's first three (round: the steps so far) and the
// fit's own; schmp-trace reads it as any trace.
class SoftmaxTrace {
 public:
  SoftmaxTrace(const Job& job, const Config& config, bool path) : path_(path) {
    if (!job.first_rank() || config.trace.empty()) return;
    out_.open(config.trace);
    if (!out_) throw std::runtime_error(config.trace + ": cannot write the trace");
    out_ << "round,seconds,objective,relative_gap,nnz,sweep" << (path ? ",lambda" : "") << '\n'
         << std::setprecision(17);
    out_.flush();
  }
  // `steps` counts the steps before the descent's own; `lambda` is the path's.
  void row(const SoftmaxDescent& descent, std::size_t steps, double lambda) {
    if (!out_.is_open()) return;
    out_ << steps + descent.steps() << ',' << seconds() << ',' << descent.objective() << ','
         << descent.relative_gap() << ',' << descent.nonzeros() << ',' << descent.sweeps();
    if (path_) out_ << ',' << lambda;
    out_ << '\n';
    out_.flush();
  }

 private:
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  bool path_;
  std::ofstream out_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// Why a fit's gap stalled, for its closing line: the dual bound stops closing above the objective's
// rounding on features of very different scales, which --standardize evens out; without an intercept
// they keep their means, which it does not remove.
std::string stall_hint(const Config& config) {
  if (!config.standardize)
    return "  (the gap stalled, as on raw features of very different scales: try --standardize)";
  return config.fit_intercept ? "  (the gap stalled)"
                              : "  (the gap stalled, as on columns far from centred without an intercept)";
}

// The softmax at --C: one descent, its classes' lines, --test and --output.
int fit_one(Job& job, const Config& config, const std::vector<double>& classes) {
  SoftmaxDescent descent(config, classes, {}, deadline_of(config));
  SoftmaxTrace trace(job, config, false);
  descent.on_sweep([&trace](const SoftmaxDescent& at) { trace.row(at, 0, 0); });
  Progress progress(job, config);
  const int status = play<SoftmaxDescent>(job, {&descent}, [&] {
    if (!progress.due()) return;
    std::fprintf(stderr, "schmp-logreg: sweep %zu  %.1f s  objective %.12g  relative gap %.3g\n",
                 descent.sweeps() + 1, progress.seconds(), descent.objective(), descent.relative_gap());
    std::fflush(stderr);
  });
  forget_kept_rows();
  if (status != 0 || !job.first_rank()) return status;
  const std::vector<std::vector<double>>& weights = descent.weights();
  const double objective = descent.objective(), relative_gap = descent.relative_gap();
  const std::size_t steps = descent.steps(), joint = descent.joint_steps();
  std::vector<ClassFit> fits;
  for (std::size_t k = 0; k < classes.size(); ++k) {
    fits.push_back({classes[k], class_text(config, classes[k]), objective, relative_gap,
                    nonzeros(weights[k], config.fit_intercept), weights[k]});
  }
  LinearModel model = one_vs_rest_model(config, fits);
  model.softmax = true;
  if (!config.output.empty()) write_liblinear_model(config.output, solver_type(config), model);
  std::printf("schmp-logreg: multinomial over %zu classes, %zu class steps and %zu joint steps\n",
              classes.size(), steps - joint, joint);
  std::printf("%-10s %s\n", "class", "nonzeros");
  for (const ClassFit& fit : fits) std::printf("%-10s %.0f\n", fit.text.c_str(), fit.nonzeros);
  std::printf("objective %.12g  relative gap %.3g%s\n", objective, relative_gap,
              relative_gap <= config.tol ? ""
              : descent.stalled()        ? stall_hint(config).c_str()
                                         : "  (not converged: --max_seconds or the sweeps ran out)");
  print_held_out(config, model);
  if (!config.trace.empty()) std::printf("trace: %s\n", config.trace.c_str());
  return 0;
}

// The weights of `classes` at W = 0 with each intercept at the log of its class's weight (centred): the
// solution at lambda_max. Without an intercept, all zero.
std::vector<std::vector<double>> path_start(const Config& config, const Probe& probe) {
  const std::size_t params = static_cast<std::size_t>(probe.features) + (constant_feature(config) ? 1 : 0);
  std::vector<std::vector<double>> weights(probe.class_weights.size(), std::vector<double>(params, 0.0));
  if (!config.fit_intercept) return weights;
  double mean = 0;
  for (const double c : probe.class_weights) mean += std::log(c) / static_cast<double>(weights.size());
  for (std::size_t l = 0; l < weights.size(); ++l)
    weights[l].back() = std::log(probe.class_weights[l]) - mean;
  return weights;
}

// A softmax path: a descent per lambda, each from the last one's weights. Each lambda's solution goes
// to `solved` (the lambda's index, its point, and the weights as a liblinear model lists them, row by
// row).
class SoftmaxPath {
 public:
  using Solved = std::function<void(std::size_t, PathPoint, const std::vector<double>&)>;
  SoftmaxPath(const Config& config, const std::vector<double>& classes, const std::vector<double>& lambdas,
              const Probe& probe, Solved solved, SoftmaxTrace* trace = nullptr)
      : trace_(trace),
        config_(config),
        classes_(classes),
        lambdas_(lambdas),
        weight_sum_(std::accumulate(probe.class_weights.begin(), probe.class_weights.end(), 0.0)),
        start_(path_start(config, probe)),
        solved_(std::move(solved)),
        deadline_(deadline_of(config)) {}

  std::optional<Config> next();
  void take(const std::vector<double>& result) { descent_->take(result); }
  std::size_t solved() const { return at_; }
  std::size_t steps() const { return steps_ + (descent_ ? descent_->steps() : 0); }

 private:
  void record();  // the current lambda's solution, to solved_

  SoftmaxTrace* trace_;  // the path on every row's, or none
  Config config_;
  const std::vector<double>& classes_;
  const std::vector<double>& lambdas_;
  double weight_sum_;
  std::vector<std::vector<double>> start_;  // of the next lambda's descent
  Solved solved_;
  std::chrono::steady_clock::time_point deadline_;
  std::optional<SoftmaxDescent> descent_;
  std::size_t at_ = 0;     // the lambda being solved
  std::size_t steps_ = 0;  // of the lambdas solved
  std::chrono::steady_clock::time_point begun_ = std::chrono::steady_clock::now();
};

std::optional<Config> SoftmaxPath::next() {
  while (at_ < lambdas_.size()) {
    if (!descent_) {
      if (std::chrono::steady_clock::now() >= deadline_)
        return std::nullopt;  // --max_seconds: the path so far
      Config at = config_;
      at.C = 1 / (lambdas_[at_] * weight_sum_);
      descent_.emplace(at, classes_, std::move(start_), deadline_);
      if (trace_) {
        descent_->on_sweep(
            [this](const SoftmaxDescent& sweep) { trace_->row(sweep, steps_, lambdas_[at_]); });
      }
    }
    if (std::optional<Config> job = descent_->next()) return job;
    record();
    steps_ += descent_->steps();
    start_ = descent_->weights();
    descent_.reset();
    ++at_;
  }
  return std::nullopt;
}

void SoftmaxPath::record() {
  const std::vector<std::vector<double>>& weights = descent_->weights();
  PathPoint point;
  point.lambda = lambdas_[at_];
  point.C = 1 / (point.lambda * weight_sum_);
  point.objective = descent_->objective();
  point.gap = descent_->gap();
  point.relative_gap = descent_->relative_gap();
  point.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begun_).count();
  const std::size_t classes = weights.size(), params = weights.front().size();
  std::vector<double> rows(classes * params);
  for (std::size_t l = 0; l < classes; ++l) {
    point.nonzeros += static_cast<std::size_t>(nonzeros(weights[l], config_.fit_intercept));
    for (std::size_t j = 0; j < params; ++j) rows[j * classes + l] = weights[l][j];
  }
  solved_(at_, std::move(point), rows);
}

// What the first rank scores the path's models with: the model's shape (labels, nr_feature, bias), the
// --test rows, and each fold's held-out rows.
struct Scoring {
  LinearModel shape;
  io::SparseRows test;
  std::vector<WeightedRows> folds;
  // Model `rows` (as SoftmaxPath::Solved has them) on `held`, weighted by `weights` (empty: 1 each).
  PredictionReport score(const std::vector<double>& rows, const std::string& file, const io::SparseRows& held,
                         const std::vector<double>& weights) const {
    LinearModel model = shape;
    model.w = rows;
    return predict_classes(model, file, held, "", weights);
  }
};

Scoring scoring_of(const Job& job, const Config& config, const std::vector<double>& classes,
                   const Probe& probe) {
  Scoring scoring;
  if (!job.first_rank()) return scoring;
  for (const double label : classes) {
    scoring.shape.labels.push_back(label);
    scoring.shape.label_texts.push_back(class_text(config, label));
  }
  scoring.shape.features = static_cast<std::size_t>(probe.features);
  scoring.shape.bias = constant_feature(config) ? 1 : -1;
  scoring.shape.softmax = true;
  if (!config.test.empty()) scoring.test = io::read_libsvm(config.test, {}, config.label_names);
  if (config.cv > 0) {
    // The held-out rows come from the whole data, read here once for every fold.
    Peers alone;
    const WeightedRows all = read_weighted_rows(rows_source(config), alone);
    for (std::uint64_t k = 0; k < config.cv; ++k) {
      scoring.folds.push_back(held_out_rows(all, static_cast<std::uint32_t>(config.cv), config.seed,
                                            static_cast<std::uint32_t>(k)));
    }
  }
  return scoring;
}

// Why a probe's classes cannot be fitted (a class whose rows weigh nothing: its intercept would fall
// without end), or empty.
std::string unfit_classes(const Config& config, const std::vector<double>& classes, const Probe& probe,
                          std::int64_t fold) {
  for (std::size_t l = 0; l < classes.size(); ++l) {
    if (probe.class_weights.at(l) > 0) continue;
    if (fold < 0)
      return config.weights + ": the rows of class " + class_text(config, classes[l]) + " weigh nothing";
    return "--cv " + std::to_string(config.cv) + ": fold " + std::to_string(fold + 1) +
           " holds out every row of class " + class_text(config, classes[l]) +
           " with weight: use fewer folds";
  }
  return {};
}

}  // namespace

int probe_classes(Job& job, const Config& config, const std::vector<double>& classes,
                  std::vector<Probe>& found) {
  std::vector<Config> probes;
  for (std::int64_t fold = -1; fold < static_cast<std::int64_t>(config.cv); ++fold) {
    Config probe = block_job(config, classes, 0, {}, config.tol);
    probe.probe = true;
    probe.fold = fold;
    probes.push_back(std::move(probe));
  }
  const EachRun probed = job.run_each<Logreg>(probes);
  if (probed.status != 0) return probed.status;
  for (std::size_t f = 0; f < probes.size(); ++f) {
    found.push_back(Probe::deserialised(probed.results.at(f)));
    if (const std::string why = unfit_classes(config, classes, found.back(), probes[f].fold); !why.empty())
      return job.refuse(why);
  }
  return 0;
}

namespace {

// The path on every row: on the first rank, each lambda's model into `path`, scored on --test.
SoftmaxPath::Solved keep_in(Path& path, const Scoring& scoring, const Job& job, const Config& config) {
  return [&path, &scoring, &job, &config](std::size_t, PathPoint point, const std::vector<double>& rows) {
    if (!job.first_rank()) return;
    if (scoring.test.rows() > 0) {
      const PredictionReport tested = scoring.score(rows, config.test, scoring.test, {});
      point.test_log_loss = tested.log_loss;
      point.test_accuracy = tested.accuracy;
    }
    path.record(std::move(point), rows, constant_feature(config));
  };
}

// Fold k's path: on the first rank, each lambda's deviance on the fold's held-out rows (glmnet's
// multinomial deviance, twice the mean log-loss) into `result`, as CrossValidation takes it: the rows'
// weight, then the deviance at each lambda (NaN where the path stopped short).
SoftmaxPath::Solved score_fold(std::vector<double>& result, std::size_t lambdas, std::size_t k,
                               const Scoring& scoring, const Job& job, const Config& config) {
  result.assign(lambdas + 1, std::numeric_limits<double>::quiet_NaN());
  return [&result, k, &scoring, &job, &config](std::size_t at, const PathPoint&,
                                               const std::vector<double>& rows) {
    if (!job.first_rank()) return;
    const WeightedRows& held = scoring.folds[k];
    result[0] = held.weights.empty() ? static_cast<double>(held.rows.rows())
                                     : std::accumulate(held.weights.begin(), held.weights.end(), 0.0);
    result[at + 1] = 2 * scoring.score(rows, config.data, held.rows, held.weights).log_loss;
  };
}

// A line on stderr: the lambdas each path has solved.
void report_paths(const Progress& progress, const std::vector<SoftmaxPath>& paths, std::size_t lambdas) {
  std::fprintf(stderr, "schmp-logreg: %.1f s  lambdas solved: %zu of %zu", progress.seconds(),
               paths.front().solved(), lambdas);
  if (paths.size() > 1) {
    std::fprintf(stderr, " (the folds':");
    for (std::size_t f = 1; f < paths.size(); ++f) std::fprintf(stderr, " %zu", paths[f].solved());
    std::fprintf(stderr, ")");
  }
  std::fprintf(stderr, "\n");
  std::fflush(stderr);
}

// What a path's run prints and writes (write_path), after a line on its paths.
void finish_path(const Config& config, const std::vector<SoftmaxPath>& paths, std::size_t lambdas,
                 const Path& path, double lambda_max, const LinearModel& shape) {
  std::size_t steps = 0;
  for (const SoftmaxPath& p : paths) steps += p.steps();
  std::printf("schmp-logreg: multinomial path over %zu classes, %zu of %zu lambdas solved",
              shape.labels.size(), paths.front().solved(), lambdas);
  if (config.cv > 0) std::printf(", with %llu folds beside", static_cast<unsigned long long>(config.cv));
  std::printf(": %zu steps\n", steps);
  write_path(config, path, lambda_max, shape);
  if (!config.trace.empty()) std::printf("trace: %s\n", config.trace.c_str());
  const auto loose = std::count_if(path.points().begin(), path.points().end(),
                                   [&](const PathPoint& p) { return p.relative_gap > config.tol; });
  if (loose > 0) {
    std::printf("%lld lambdas stopped above --tol (rel_gap)%s\n", static_cast<long long>(loose),
                stall_hint(config).c_str());
  }
}

// --multinomial --path N (and --cv K): the probes, then the path on every row and each fold's, side by
// side, each fold's models scored on its held-out rows as they come.
int fit_path(Job& job, const Config& config, const std::vector<double>& classes) {
  std::vector<Probe> found;
  if (const int status = probe_classes(job, config, classes, found); status != 0) {
    forget_kept_rows();
    return status;
  }
  const Probe& whole = found.front();
  if (!(whole.lambda_max > 0)) {
    forget_kept_rows();
    return job.refuse(config.data + ": lambda_max is 0 (no feature tells the classes apart)");
  }
  const double ratio = min_ratio_of(config.lambda_min_ratio, whole.rows, whole.features);
  const std::vector<double> lambdas = path_lambdas(config.path, whole.lambda_max, ratio);
  const Scoring scoring = scoring_of(job, config, classes, whole);
  Path path(config.path, whole.lambda_max, ratio,
            std::accumulate(whole.class_weights.begin(), whole.class_weights.end(), 0.0));
  path.set_columns(classes.size(), scoring.test.rows() > 0);
  std::vector<SoftmaxPath> paths;
  paths.reserve(found.size());
  SoftmaxTrace trace(job, config, true);
  paths.emplace_back(config, classes, lambdas, whole, keep_in(path, scoring, job, config), &trace);
  std::vector<std::vector<double>> fold_results(config.cv);
  for (std::size_t k = 0; k < config.cv; ++k) {
    Config fold = config;
    fold.fold = static_cast<std::int64_t>(k);
    paths.emplace_back(fold, classes, lambdas, found[k + 1],
                       score_fold(fold_results[k], lambdas.size(), k, scoring, job, config));
  }
  std::vector<SoftmaxPath*> playing;
  for (SoftmaxPath& p : paths) playing.push_back(&p);
  Progress progress(job, config);
  const int status = play<SoftmaxPath>(job, playing, [&] {
    if (progress.due()) report_paths(progress, paths, lambdas.size());
  });
  forget_kept_rows();
  if (status != 0 || !job.first_rank()) return status;
  if (config.cv > 0) path.cross_validated(CrossValidation(lambdas, fold_results));
  finish_path(config, paths, lambdas.size(), path, whole.lambda_max, scoring.shape);
  return 0;
}

}  // namespace

int fit_multinomial(Job& job, const Config& config, const std::vector<double>& classes) {
  return config.path > 0 ? fit_path(job, config, classes) : fit_one(job, config, classes);
}

}  // namespace schmp::logreg
