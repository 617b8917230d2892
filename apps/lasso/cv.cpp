#include "cv.hpp"

#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <utility>

namespace schmp::lasso {

namespace {

std::uint64_t split_mix(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Keeps the rows r (and weights) for which keep(r).
template <class Keep>
void filter_rows(io::SparseRows& rows, std::vector<double>& weights, Keep keep) {
  io::SparseRows kept;
  std::vector<double> kept_weights;
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    if (!keep(r)) continue;
    kept.labels.push_back(rows.labels[r]);
    kept.source.push_back(rows.source[r]);
    for (std::uint64_t e = rows.row_start[r]; e < rows.row_start[r + 1]; ++e) {
      kept.index.push_back(rows.index[e]);
      kept.value.push_back(rows.value[e]);
    }
    kept.row_start.push_back(kept.index.size());
    if (!weights.empty()) kept_weights.push_back(weights[r]);
  }
  rows = std::move(kept);
  weights = std::move(kept_weights);
}

}  // namespace

std::vector<std::uint32_t> folds_of_rows(std::uint64_t rows, std::uint32_t folds, std::uint64_t seed) {
  std::vector<std::uint32_t> fold(rows);
  for (std::uint64_t i = 0; i < rows; ++i) fold[i] = static_cast<std::uint32_t>(i % folds);
  std::uint64_t state = seed;
  for (std::uint64_t i = rows; i > 1; --i) std::swap(fold[i - 1], fold[split_mix(state) % i]);
  return fold;
}

void drop_fold(io::SparseRows& rows, std::vector<double>& weights, const std::vector<std::uint32_t>& folds,
               std::uint64_t first, std::uint32_t fold) {
  filter_rows(rows, weights, [&](std::size_t r) { return folds[first + r] != fold; });
}

void keep_fold(io::SparseRows& rows, std::vector<double>& weights, const std::vector<std::uint32_t>& folds,
               std::uint32_t fold) {
  filter_rows(rows, weights, [&](std::size_t r) { return folds[r] == fold; });
}

CrossValidation::CrossValidation(std::vector<double> lambdas, const std::vector<std::vector<double>>& results)
    : lambdas(std::move(lambdas)) {
  const std::size_t count = this->lambdas.size();
  const auto folds = static_cast<double>(results.size());
  mean.assign(count, std::numeric_limits<double>::quiet_NaN());
  se = mean;
  double lowest = std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < count; ++k) {
    double weight = 0, sum = 0;
    bool complete = true;
    for (const std::vector<double>& fold : results) {
      complete = complete && fold.size() == count + 1 && std::isfinite(fold[k + 1]);
      if (!complete) break;
      weight += fold[0];
      sum += fold[0] * fold[k + 1];
    }
    if (!complete || !(weight > 0)) continue;
    mean[k] = sum / weight;
    double spread = 0;
    for (const std::vector<double>& fold : results) spread += fold[0] * std::pow(fold[k + 1] - mean[k], 2);
    se[k] = std::sqrt(spread / weight / (folds - 1));
    // Strictly lower: among ties the larger lambda, which comes first.
    if (mean[k] < lowest) {
      lowest = mean[k];
      best = k;
    }
  }
  if (!std::isfinite(lowest)) throw std::runtime_error("no lambda was solved on every fold");
  one_se = best;
  for (std::size_t k = 0; k < best; ++k) {
    if (std::isfinite(mean[k]) && mean[k] <= lowest + se[best]) {
      one_se = k;
      break;
    }
  }
}

}  // namespace schmp::lasso
