// Sampling by weight with weights that keep changing (the schedulers' priorities): a tree of partial
// sums with eight children a node gives O(log n) updates and O(log n) draws. Eight doubles are one
// cache line, so a draw reads one line a level and an update adds to one sum a level: 6 levels for
// 50,000 weights, where a binary (Fenwick) tree walks 16 scattered entries for a draw. Header-only, so
// that the scheduler uses it without linking the kernels.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

namespace schmp::detail {

class WeightedSampler {
 public:
  explicit WeightedSampler(std::vector<double> weights);
  // Starts over with these weights, keeping the storage.
  void assign(std::span<const double> weights);

  std::size_t size() const { return weights_.size(); }
  double weight(std::size_t i) const { return weights_[i]; }
  double total() const { return sums_.back().front(); }
  // Whether any weight is positive. (The tree's total can keep a rounding residue after every
  // weight has been set to zero, so it cannot tell.)
  bool any_positive() const { return positive_ > 0; }
  void set(std::size_t i, double weight);
  // The same as set() for each (index, weight) in turn. Many updates at once (an evaluation that
  // re-prioritises every parameter) write the weights and sum the tree afresh: one pass in order
  // against a walk up the levels per update, 3 to 5 times faster for a change to every weight.
  void set_many(std::span<const std::pair<std::size_t, double>> updates);
  // The index i drawn with probability weight(i) / total(), from u uniform in [0, 1). Requires
  // any_positive(); never returns an index of weight 0.
  std::size_t sample(double u) const;

 private:
  static constexpr std::size_t kFanout = 8;
  void rebuild();
  // The level below `level` of the tree: the weights themselves below level 0.
  const std::vector<double>& children_of_level(std::size_t level) const {
    return level == 0 ? weights_ : sums_[level - 1];
  }

  std::vector<double> weights_;
  // sums_[0][g] is the sum of weights g * kFanout .. g * kFanout + kFanout - 1; each further level
  // sums kFanout entries of the one before; the last level holds one entry, the total.
  std::vector<std::vector<double>> sums_;
  std::size_t updates_since_rebuild_ = 0;
  std::size_t positive_ = 0;
};

inline WeightedSampler::WeightedSampler(std::vector<double> weights) { assign(weights); }

inline void WeightedSampler::assign(std::span<const double> weights) {
  weights_.assign(weights.begin(), weights.end());
  positive_ = 0;
  for (double w : weights_) {
    if (!(w >= 0)) throw std::invalid_argument("sampling weights must be non-negative");
    if (w > 0) ++positive_;
  }
  rebuild();
}

inline void WeightedSampler::rebuild() {
  // Each level sums groups of kFanout entries of the one below, up to a level of one entry; the
  // levels' vectors are reused, so that a periodic rebuild does not allocate.
  std::size_t level = 0;
  do {
    if (level == sums_.size()) sums_.emplace_back();
    const std::vector<double>& below = children_of_level(level);
    sums_[level].assign(std::max<std::size_t>(1, (below.size() + kFanout - 1) / kFanout), 0.0);
    for (std::size_t i = 0; i < below.size(); ++i) sums_[level][i / kFanout] += below[i];
  } while (sums_[level++].size() > 1);
  sums_.resize(level);
  updates_since_rebuild_ = 0;
}

inline void WeightedSampler::set(std::size_t i, double weight) {
  const double delta = weight - weights_[i];
  positive_ += static_cast<std::size_t>(weight > 0) - static_cast<std::size_t>(weights_[i] > 0);
  weights_[i] = weight;
  // Incremental updates accumulate rounding error; a periodic rebuild keeps the sums exact enough.
  if (++updates_since_rebuild_ >= weights_.size() + 64) {
    rebuild();
    return;
  }
  for (std::vector<double>& level : sums_) {
    i /= kFanout;
    level[i] += delta;
  }
}

inline void WeightedSampler::set_many(std::span<const std::pair<std::size_t, double>> updates) {
  // Measured on 33,000 and 200,000 weights, a rebuild costs about as much as updates to a sixth to a
  // fifth of them: from a quarter on, it is clearly the cheaper.
  constexpr std::size_t kWeightsPerUpdateForRebuild = 4;
  if (updates.size() * kWeightsPerUpdateForRebuild < weights_.size()) {
    for (const auto& [i, weight] : updates) set(i, weight);
    return;
  }
  for (const auto& [i, weight] : updates) {
    positive_ += static_cast<std::size_t>(weight > 0) - static_cast<std::size_t>(weights_[i] > 0);
    weights_[i] = weight;
  }
  rebuild();
}

inline std::size_t WeightedSampler::sample(double u) const {
  double target = u * total();
  // From the root down: at each level, the child whose interval of the running sum holds the target.
  std::size_t node = 0;
  for (std::size_t level = sums_.size(); level-- > 0;) {
    const std::vector<double>& children = children_of_level(level);
    const std::size_t first = node * kFanout;
    const std::size_t last = std::min(first + kFanout, children.size());
    node = last - 1;  // rounding can leave the target past every child: the last one
    for (std::size_t c = first; c < last; ++c) {
      if (target < children[c]) {
        node = c;
        break;
      }
      target -= children[c];
    }
  }
  // Rounding can land on an index of weight zero at the edge of an interval: move to a drawable one.
  for (std::size_t k = node; k < weights_.size(); ++k) {
    if (weights_[k] > 0) return k;
  }
  for (std::size_t k = node; k-- > 0;) {
    if (weights_[k] > 0) return k;
  }
  throw std::logic_error("WeightedSampler::sample with all weights zero");
}

}  // namespace schmp::detail
