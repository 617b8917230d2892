// Collapsed Gibbs sampling for LDA: the counts one token's resampling reads and writes, and the exact
// sampler. A token of word w in document d takes topic k with probability proportional to
//
//   (n_dk + alpha) (n_kw + beta) / (n_k + W beta)
//
// where the counts leave the token itself out (Griffiths and Steyvers, 2004). The exact sampler costs
// O(K) per token; faster samplers are checked against it.
#pragma once

#include <cstdint>
#include <span>

namespace schmp::kernels {

struct TopicCounts {
  std::span<std::uint32_t> document;  // n_dk of the token's document, one per topic
  std::span<std::uint32_t> word;      // n_kw of the token's word, one per topic
  std::span<std::int64_t> totals;     // n_k, one per topic
  double alpha = 0.1;                 // per topic
  double beta = 0.01;                 // per word
  double beta_sum = 1;                // W beta
};

// Takes the token (now of topic `old_topic`, and counted) out of the counts, draws its new topic from
// the conditional above with `uniform` in [0, 1), and counts it there. `weights` is scratch space of K
// doubles. Returns the new topic.
std::uint32_t resample_exact(const TopicCounts& counts, std::uint32_t old_topic, double uniform,
                             std::span<double> weights);

}  // namespace schmp::kernels
