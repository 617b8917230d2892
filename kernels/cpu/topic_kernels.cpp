#include "kernels/topic_kernels.hpp"

namespace schmp::kernels {

std::uint32_t resample_exact(const TopicCounts& counts, std::uint32_t old_topic, double uniform,
                             std::span<double> weights) {
  --counts.document[old_topic];
  --counts.word[old_topic];
  --counts.totals[old_topic];
  const std::size_t topics = counts.totals.size();
  double total = 0;
  for (std::size_t k = 0; k < topics; ++k) {
    total += (counts.document[k] + counts.alpha) * (counts.word[k] + counts.beta) /
             (static_cast<double>(counts.totals[k]) + counts.beta_sum);
    weights[k] = total;  // running sums: the draw is the first topic whose sum passes u * total
  }
  const double target = uniform * total;
  std::size_t topic = 0;
  while (topic + 1 < topics && weights[topic] <= target) ++topic;
  ++counts.document[topic];
  ++counts.word[topic];
  ++counts.totals[topic];
  return static_cast<std::uint32_t>(topic);
}

}  // namespace schmp::kernels
