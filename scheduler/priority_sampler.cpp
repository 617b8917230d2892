#include "priority_sampler.hpp"

#include <bit>
#include <stdexcept>

namespace schmp::detail {

PrioritySampler::PrioritySampler(std::vector<double> weights) : weights_(std::move(weights)) {
  for (double w : weights_) {
    if (!(w >= 0)) throw std::invalid_argument("priority weights must be non-negative");
    if (w > 0) ++positive_;
  }
  rebuild();
}

void PrioritySampler::rebuild() {
  tree_.assign(weights_.size() + 1, 0.0);
  for (std::size_t i = 1; i <= weights_.size(); ++i) {
    tree_[i] += weights_[i - 1];
    const std::size_t parent = i + (i & (~i + 1));
    if (parent <= weights_.size()) tree_[parent] += tree_[i];
  }
  updates_since_rebuild_ = 0;
}

double PrioritySampler::total() const {
  double sum = 0;
  for (std::size_t i = weights_.size(); i > 0; i &= i - 1) sum += tree_[i];
  return sum;
}

void PrioritySampler::set(std::size_t i, double weight) {
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

std::size_t PrioritySampler::sample(double u) const {
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
  throw std::logic_error("PrioritySampler::sample with all weights zero");
}

}  // namespace schmp::detail
