// Sampling by weight with weights that keep changing (the scheduler's priorities, LDA's topic
// weights): a Fenwick tree over the weights gives O(log n) updates and O(log n) draws. Header-only, so
// that the scheduler and the kernels share it without depending on each other.
#pragma once

#include <bit>
#include <cstddef>
#include <stdexcept>
#include <span>
#include <vector>

namespace schmp::kernels {

class WeightedSampler {
 public:
  explicit WeightedSampler(std::vector<double> weights);
  // Starts over with these weights, keeping the storage.
  void assign(std::span<const double> weights);

  std::size_t size() const { return weights_.size(); }
  double weight(std::size_t i) const { return weights_[i]; }
  double total() const;
  // Whether any weight is positive. (The tree's total can keep a rounding residue after every
  // weight has been set to zero, so it cannot tell.)
  bool any_positive() const { return positive_ > 0; }
  void set(std::size_t i, double weight);
  // The index i drawn with probability weight(i) / total(), from u uniform in [0, 1). Requires
  // any_positive(); never returns an index of weight 0.
  std::size_t sample(double u) const;

 private:
  void rebuild();

  std::vector<double> weights_;
  std::vector<double> tree_;  // Fenwick tree, 1-based
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
  tree_.assign(weights_.size() + 1, 0.0);
  for (std::size_t i = 1; i <= weights_.size(); ++i) {
    tree_[i] += weights_[i - 1];
    const std::size_t parent = i + (i & (~i + 1));
    if (parent <= weights_.size()) tree_[parent] += tree_[i];
  }
  updates_since_rebuild_ = 0;
}

inline double WeightedSampler::total() const {
  double sum = 0;
  for (std::size_t i = weights_.size(); i > 0; i &= i - 1) sum += tree_[i];
  return sum;
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
  for (std::size_t k = i + 1; k <= weights_.size(); k += k & (~k + 1)) tree_[k] += delta;
}

inline std::size_t WeightedSampler::sample(double u) const {
  double target = u * total();
  std::size_t position = 0;  // the largest prefix whose sum is <= target
  for (std::size_t step = std::bit_floor(weights_.size()); step > 0; step >>= 1) {
    const std::size_t next = position + step;
    if (next <= weights_.size() && tree_[next] <= target) {
      position = next;
      target -= tree_[next];
    }
  }
  // Rounding can land on an index of weight zero at the edge of an interval: move to a drawable one.
  std::size_t i = position < weights_.size() ? position : weights_.size() - 1;
  for (std::size_t k = i; k < weights_.size(); ++k) {
    if (weights_[k] > 0) return k;
  }
  for (std::size_t k = i; k-- > 0;) {
    if (weights_[k] > 0) return k;
  }
  throw std::logic_error("WeightedSampler::sample with all weights zero");
}

}  // namespace schmp::kernels
