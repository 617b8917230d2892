// Sampling by weight with weights that change every round: a Fenwick tree over the weights gives
// O(log n) updates and O(log n) draws.
#pragma once

#include <cstddef>
#include <vector>

namespace schmp::detail {

class PrioritySampler {
 public:
  explicit PrioritySampler(std::vector<double> weights);

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

}  // namespace schmp::detail
