// How a program with Newton-type steps finds its next one: by rounds of coordinate descent over the
// data, or by the coordinator from the Hessian (or Gram matrix) the workers sum, with
// schmp/quadratic_model.hpp. Neither wins everywhere. Where coordinate descent does well (one-hot and
// text features), each step by rounds gains half a digit or more of optimality and costs a few passes
// over the data; the Hessian's products grow with the square of a row's entries among the coordinates
// moving, and its exact steps gain little more until the end. Where coordinate descent creeps (raw
// features of mixed scales, correlated columns), its steps gain a tenth of a digit or less, while exact
// Newton steps converge in a handful.
//
// So the steps go by rounds while those gain at least kCreeping digits each on average, over the last
// kWindow of them; then from the Hessian, as long as its steps gain at least as many digits per unit of
// work as the rounds' last kWindow did (work is counted, not timed, so that a run does not depend on the
// machine's load). A way given up is not tried again for kRetryAfter steps, nor the Hessian before the
// rounds have spent kRetryShare times what its last step cost.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>

namespace schmp {

class StepWays {
 public:
  enum Way { kRounds = 0, kHessian = 1 };
  // auto chooses as above; rounds and hessian (the apps' --newton_steps) take that way whenever they can.
  enum class Mode { kAuto, kRounds, kHessian };

  // What a round costs beside its columns (messages, the scheduler), in multiply-adds; and the
  // coordinator's dense arithmetic (a model's solve) per multiply-add, which runs about ten times as
  // fast as the workers' gathers from sparse columns.
  static constexpr double kRoundWork = 2000, kDenseWork = 0.1;

  // The work of `multiply_adds` on an order x order dense matrix (a model's Hessian or Gram matrix): at
  // kDenseWork each while the matrix fits a core's cache, else at a worker's rate, as each pass then
  // waits on memory (a logistic model of 1,700 coordinates ran 6 times slower per multiply-add than
  // one of 100).
  static double dense_work(double multiply_adds, std::size_t order) {
    constexpr double kCacheBytes = 2 << 20, kSpilledWork = 1;
    const double bytes = sizeof(double) * static_cast<double>(order) * static_cast<double>(order);
    return (bytes <= kCacheBytes ? kDenseWork : kSpilledWork) * multiply_adds;
  }

  explicit StepWays(Mode mode = Mode::kAuto) : mode_(mode) {}

  // Work done for the current step, in multiply-adds (or their equivalent).
  void spend(double work) { spent_ += work; }
  // Work done for round `round` of the current step, beside the columns: a round's fixed cost, charged
  // once a round however many times the round's updates are counted.
  void spend_round(std::uint64_t round) {
    if (round == last_round_) return;
    last_round_ = round;
    spent_ += kRoundWork;
  }

  // The current step, taken `way`, gained `digits` of optimality (log10 of how far the violations fell;
  // NaN when unknown, as for the start). The next step starts.
  void step_ended(Way way, double digits) {
    if (way == kHessian) {
      hessian_spent_ = spent_;
      since_hessian_ = 0;
    } else {
      since_hessian_ += spent_;
    }
    if (std::isnan(digits)) {
      spent_ = 0;
      return;
    }
    if (way == kRounds) {
      rounds_.push_back({digits, spent_});
      if (rounds_.size() > kWindow) rounds_.pop_front();
      // Over the window: one step's gain is noisy (a step cut short at a path's change of lambda may
      // lose digits), and one such step must not hand the steps to a Hessian many times as costly.
      double gained = 0, spent = 0;
      for (const Step& r : rounds_) {
        gained += std::max(r.digits, 0.0);
        spent += r.spent;
      }
      if (spent > 0) score_[kRounds] = gained / spent;
    } else if (spent_ > 0) {
      score_[kHessian] = std::max(digits, 0.0) / spent_;
    }
    same_in_a_row_ = way == last_ ? same_in_a_row_ + 1 : 1;
    last_ = way;
    spent_ = 0;
  }

  // Whether the next step should come from the Hessian (where one can be had).
  bool hessian_next() const {
    if (mode_ != Mode::kAuto) return mode_ == Mode::kHessian;
    if (last_ == kHessian) return std::isnan(score_[kRounds]) || score_[kHessian] >= score_[kRounds];
    if (rounds_.size() < kWindow) return false;
    // The Hessian's last step did better per unit of work than the rounds' last ones: back to it,
    // creeping or not (on a path each lambda's rounds gain many digits from a warm start, yet cost more).
    if (score_[kHessian] > score_[kRounds]) return true;
    // A retry costs a Hessian step: it waits until the rounds have spent kRetryShare times that.
    if (!std::isnan(score_[kHessian]) &&
        (same_in_a_row_ < kRetryAfter || since_hessian_ < kRetryShare * hessian_spent_))
      return false;
    double mean = 0;
    for (const Step& r : rounds_) mean += r.digits / kWindow;
    return mean < kCreeping;
  }

  // Whether a step from the Hessian that costs about `work` pays when `digits` of optimality are left to
  // gain: the rounds, at their last window's pace, would spend more on those digits. (A step from the
  // Hessian near the end of a fit gains them all at once, but its cost does not shrink with them.)
  bool hessian_pays(double work, double digits) const {
    if (mode_ != Mode::kAuto || !(score_[kRounds] > 0)) return true;
    return work < std::max(digits, 0.0) / score_[kRounds];
  }

 private:
  static constexpr std::size_t kWindow = 4, kRetryAfter = 8;
  static constexpr double kCreeping = 0.3, kRetryShare = 2;

  Mode mode_;
  double spent_ = 0;
  std::uint64_t last_round_ = std::numeric_limits<std::uint64_t>::max();
  std::array<double, 2> score_ = {NAN, NAN};
  struct Step {
    double digits, spent;
  };
  std::deque<Step> rounds_;  // the last steps by rounds, oldest first
  Way last_ = kRounds;
  std::size_t same_in_a_row_ = 0;
  double hessian_spent_ = 0;  // by the last step from the Hessian
  double since_hessian_ = 0;  // by the rounds since
};

}  // namespace schmp
