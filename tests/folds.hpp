// Cross-validation's folds in the tests: as the manual specifies them, written independently of the
// library's, and the rows of one fold or of the others.
#pragma once

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "schmp/io.hpp"

namespace schmp::testing {

// The folds of --cv, as the manual specifies them: labels 0, 1, ..., K - 1 in turn, shuffled by
// Fisher-Yates with a SplitMix64 stream from the seed.
inline std::vector<std::uint32_t> specified_folds(std::size_t rows, std::uint32_t folds, std::uint64_t seed) {
  std::vector<std::uint32_t> fold(rows);
  for (std::size_t i = 0; i < rows; ++i) fold[i] = static_cast<std::uint32_t>(i % folds);
  std::uint64_t state = seed;
  for (std::size_t i = rows; i > 1; --i) {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    std::swap(fold[i - 1], fold[(z ^ (z >> 31)) % i]);
  }
  return fold;
}

// The rows of `rows` for which keep(r).
template <class Keep>
io::SparseRows rows_where(const io::SparseRows& rows, Keep keep) {
  io::SparseRows kept;
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    if (!keep(r)) continue;
    kept.labels.push_back(rows.labels[r]);
    for (std::uint64_t e = rows.row_start[r]; e < rows.row_start[r + 1]; ++e) {
      kept.index.push_back(rows.index[e]);
      kept.value.push_back(rows.value[e]);
    }
    kept.row_start.push_back(kept.index.size());
  }
  return kept;
}

// The folds' mean loss, each fold weighing its held-out weight, and its standard error: the square root
// of the folds' weighted variance over K - 1 (glmnet's).
inline std::pair<double, double> fold_mean_se(const std::vector<double>& loss,
                                              const std::vector<double>& held) {
  double total = 0, sum = 0;
  for (std::size_t k = 0; k < loss.size(); ++k) {
    total += held[k];
    sum += held[k] * loss[k];
  }
  const double mean = sum / total;
  double spread = 0;
  for (std::size_t k = 0; k < loss.size(); ++k) spread += held[k] * (loss[k] - mean) * (loss[k] - mean);
  return {mean, std::sqrt(spread / total / static_cast<double>(loss.size() - 1))};
}

}  // namespace schmp::testing
