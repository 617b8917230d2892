// Working sets, as celer grows them: between full evaluations a program evaluates only the parameters
// likely to matter. Lasso and logistic regression use the same rule.
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <utility>
#include <vector>

#include "schmp/program.hpp"

namespace schmp {

// The set after a full evaluation: every parameter of `moving` (nonzero or about to move), then as many
// again (at least 100 in all) of `others`, nearest first by their distance to moving (the pair's first).
// Empty when the set would hold more than a quarter of the `live` parameters: it then saves too little.
// `others` is reordered: a caller may keep it to fill again, sparing an allocation per evaluation.
inline std::vector<ParamIndex> choose_working_set(std::vector<ParamIndex> moving,
                                                  std::vector<std::pair<double, ParamIndex>>& others,
                                                  std::size_t live) {
  constexpr std::size_t kSmallest = 100;
  const std::size_t size = std::min(live, std::max(2 * moving.size(), kSmallest));
  if (4 * size > live) return {};
  const std::size_t more = size - moving.size();
  // The `more` least (by distance, then index) in a max-heap at the front: most candidates are
  // turned away by one comparison with its top, where a selection would pass over them all again.
  const auto least = others.begin() + static_cast<std::ptrdiff_t>(more);
  std::make_heap(others.begin(), least);
  for (auto candidate = least; more > 0 && candidate != others.end(); ++candidate) {
    if (!(*candidate < others.front())) continue;
    std::pop_heap(others.begin(), least);
    *(least - 1) = *candidate;
    std::push_heap(others.begin(), least);
  }
  for (auto chosen = others.begin(); chosen != least; ++chosen) moving.push_back(chosen->second);
  std::sort(moving.begin(), moving.end());
  return moving;
}

// Whether the evaluation after a scoped one should be full: the set's own relative gap `inner` has
// fallen to 0.3 of the last full evaluation's (celer's inner tolerance), or 16 scoped ones went by.
inline bool working_set_solved(double inner, double full_gap, std::size_t scoped_evaluations) {
  constexpr double kFraction = 0.3;
  constexpr std::size_t kMostScoped = 16;
  return inner <= kFraction * full_gap || scoped_evaluations >= kMostScoped;
}

}  // namespace schmp
