#include "kernels/topic_kernels.hpp"

#include <algorithm>

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

void WordByWordSampler::start_word(std::span<std::uint32_t> word, std::span<std::int64_t> totals,
                                   double alpha, double beta, double beta_sum) {
  word_ = word;
  totals_ = totals;
  alpha_ = alpha;
  beta_ = beta;
  beta_sum_ = beta_sum;
  for (std::uint32_t k = 0; k < weights_.size(); ++k) weights_[k] = alpha_ * coefficient(k);
  tree_.assign(weights_);
}

void WordByWordSampler::count(std::uint32_t topic, int change) {
  word_[topic] = static_cast<std::uint32_t>(static_cast<std::int64_t>(word_[topic]) + change);
  totals_[topic] += change;
  tree_.set(topic, alpha_ * coefficient(topic));
}

void WordByWordSampler::uncount(std::span<std::uint32_t> document,
                                std::vector<std::uint32_t>& document_topics, std::uint32_t topic) {
  if (--document[topic] == 0) {
    *std::find(document_topics.begin(), document_topics.end(), topic) = document_topics.back();
    document_topics.pop_back();
  }
}

void WordByWordSampler::recount(std::span<std::uint32_t> document,
                                std::vector<std::uint32_t>& document_topics, std::uint32_t topic) {
  if (document[topic]++ == 0) document_topics.push_back(topic);
}

std::uint32_t WordByWordSampler::draw(std::span<const std::uint32_t> document,
                                      const std::vector<std::uint32_t>& document_topics, double uniform) {
  double document_part = 0;
  for (std::size_t i = 0; i < document_topics.size(); ++i) {
    const std::uint32_t k = document_topics[i];
    document_part += document[k] * coefficient(k);
    weights_[i] = document_part;
  }
  const double tree_part = tree_.total();
  const double target = uniform * (document_part + tree_part);
  if (target < document_part) {
    std::size_t i = 0;
    while (i + 1 < document_topics.size() && weights_[i] <= target) ++i;
    return document_topics[i];
  }
  return static_cast<std::uint32_t>(
      tree_.sample(std::min((target - document_part) / tree_part, 0.9999999999999999)));
}

std::uint32_t WordByWordSampler::resample(std::span<std::uint32_t> document,
                                          std::vector<std::uint32_t>& document_topics,
                                          std::uint32_t old_topic, double uniform) {
  uncount(document, document_topics, old_topic);
  count(old_topic, -1);
  const std::uint32_t topic = draw(document, document_topics, uniform);
  recount(document, document_topics, topic);
  count(topic, +1);
  return topic;
}

std::uint32_t WordByWordSampler::fold_in(std::span<std::uint32_t> document,
                                         std::vector<std::uint32_t>& document_topics, std::uint32_t old_topic,
                                         double uniform) {
  uncount(document, document_topics, old_topic);
  const std::uint32_t topic = draw(document, document_topics, uniform);
  recount(document, document_topics, topic);
  return topic;
}

double WordByWordSampler::predictive(std::span<const std::uint32_t> document,
                                     const std::vector<std::uint32_t>& document_topics, double length) const {
  // The draw's normaliser: sum_k n_dk c_k over the document's topics, plus the tree's alpha sum_k c_k.
  double sum = tree_.total();
  for (const std::uint32_t k : document_topics) sum += document[k] * coefficient(k);
  return sum / (length + alpha_ * static_cast<double>(weights_.size()));
}

}  // namespace schmp::kernels
