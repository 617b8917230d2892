// How logistic regression's next Newton step is found: by rounds of coordinate descent over the data,
// or by the coordinator from the Hessian the workers sum (newton_model.hpp). Neither wins everywhere.
// The Hessian's steps are exact, and win by far where coordinate descent creeps (raw features of mixed
// scales, correlated columns); but its products grow with the square of a row's entries among the
// coordinates moving, and on long rows of well-conditioned data (text) a few cheap rounds do as well.
// So each way's last step is scored by the digits of optimality it gained (how far the coordinates'
// violations fell) per multiply-add spent, and the better way goes on; the other is tried again every
// few steps, as the solve narrows and the scores change. Work is counted, not timed, so that a run does
// not depend on the machine's load.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>

namespace schmp::logreg {

class StepWays {
 public:
  enum Way { kRounds = 0, kHessian = 1 };

  // Work done for the current step, in multiply-adds (or their equivalent).
  void spend(double work) { spent_ += work; }

  // The current step, taken `way`, gained `digits` of optimality (log10 of how far the violations fell).
  // The next step starts.
  void step_ended(Way way, double digits) {
    if (spent_ > 0) score_[way] = std::max(digits, 0.0) / spent_;
    same_in_a_row_ = way == last_ ? same_in_a_row_ + 1 : 1;
    last_ = way;
    spent_ = 0;
  }

  // Whether the next step should come from the Hessian (where one can be had).
  bool hessian_next() const {
    if (std::isnan(score_[kHessian])) return true;  // never tried: try it
    const Way better =
        std::isnan(score_[kRounds]) || score_[kHessian] >= score_[kRounds] ? kHessian : kRounds;
    if (last_ == better && same_in_a_row_ >= kRetryAfter) return better != kHessian;
    return better == kHessian;
  }

 private:
  // Steps one way before the other is tried again.
  static constexpr std::size_t kRetryAfter = 8;

  double spent_ = 0;
  std::array<double, 2> score_ = {NAN, NAN};
  Way last_ = kRounds;
  std::size_t same_in_a_row_ = 0;
};

}  // namespace schmp::logreg
