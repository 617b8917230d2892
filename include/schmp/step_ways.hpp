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
// work as the rounds' last did (work is counted, not timed, so that a run does not depend on the
// machine's load). A way given up is not tried again for kRetryAfter steps.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <numeric>

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
    if (std::isnan(digits)) {
      spent_ = 0;
      return;
    }
    if (spent_ > 0) score_[way] = std::max(digits, 0.0) / spent_;
    if (way == kRounds) {
      rounds_digits_.push_back(digits);
      if (rounds_digits_.size() > kWindow) rounds_digits_.pop_front();
    }
    same_in_a_row_ = way == last_ ? same_in_a_row_ + 1 : 1;
    last_ = way;
    spent_ = 0;
  }

  // Whether the next step should come from the Hessian (where one can be had).
  bool hessian_next() const {
    if (mode_ != Mode::kAuto) return mode_ == Mode::kHessian;
    if (last_ == kHessian) return std::isnan(score_[kRounds]) || score_[kHessian] >= score_[kRounds];
    if (rounds_digits_.size() < kWindow) return false;
    // The Hessian's last step did better per unit of work than the rounds' last: back to it, creeping
    // or not (on a path each lambda's rounds gain many digits from a warm start, yet cost more).
    if (score_[kHessian] > score_[kRounds]) return true;
    if (!std::isnan(score_[kHessian]) && same_in_a_row_ < kRetryAfter) return false;
    const double mean = std::accumulate(rounds_digits_.begin(), rounds_digits_.end(), 0.0) / kWindow;
    return mean < kCreeping;
  }

 private:
  static constexpr std::size_t kWindow = 4, kRetryAfter = 8;
  static constexpr double kCreeping = 0.3;

  Mode mode_;
  double spent_ = 0;
  std::uint64_t last_round_ = std::numeric_limits<std::uint64_t>::max();
  std::array<double, 2> score_ = {NAN, NAN};
  std::deque<double> rounds_digits_;  // of the last steps by rounds, oldest first
  Way last_ = kRounds;
  std::size_t same_in_a_row_ = 0;
};

}  // namespace schmp
