#include "schmp/cross_validation.hpp"

#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "schmp/dataset.hpp"

namespace schmp {

namespace {

std::uint64_t split_mix(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// What kept_rows() keeps: the last data read, and its key.
std::string kept_key;
std::optional<WeightedRows> kept;

}  // namespace

std::vector<std::uint32_t> folds_of_rows(std::uint64_t rows, std::uint32_t folds, std::uint64_t seed) {
  std::vector<std::uint32_t> fold(rows);
  for (std::uint64_t i = 0; i < rows; ++i) fold[i] = static_cast<std::uint32_t>(i % folds);
  std::uint64_t state = seed;
  for (std::uint64_t i = rows; i > 1; --i) std::swap(fold[i - 1], fold[split_mix(state) % i]);
  return fold;
}

WeightedRows fold_rows(const WeightedRows& all, const std::vector<std::uint32_t>& folds, std::uint64_t first,
                       std::uint32_t fold, bool held_out) {
  WeightedRows subset;
  io::SparseRows& rows = subset.rows;
  for (std::size_t r = 0; r < all.rows.rows(); ++r) {
    if ((folds[first + r] == fold) != held_out) continue;
    rows.labels.push_back(all.rows.labels[r]);
    rows.source.push_back(all.rows.source[r]);
    for (std::uint64_t e = all.rows.row_start[r]; e < all.rows.row_start[r + 1]; ++e) {
      rows.index.push_back(all.rows.index[e]);
      rows.value.push_back(all.rows.value[e]);
    }
    rows.row_start.push_back(rows.index.size());
    if (!all.weights.empty()) subset.weights.push_back(all.weights[r]);
  }
  return subset;
}

double min_ratio_of(double asked, double rows, double features) {
  if (asked > 0) return asked;
  return rows > features ? 1e-4 : 1e-2;
}

std::vector<double> path_lambdas(std::size_t count, double lambda_max, double min_ratio) {
  std::vector<double> lambdas(count);
  for (std::size_t k = 0; k < count; ++k) {
    const double share = count > 1 ? static_cast<double>(k) / static_cast<double>(count - 1) : 0.0;
    lambdas[k] = lambda_max * std::pow(min_ratio, share);
  }
  return lambdas;
}

void check_resumable_path(const std::vector<double>& saved_lambdas, std::size_t saved_points,
                          const std::vector<double>& lambdas, std::size_t solved) {
  bool same = saved_lambdas.size() == lambdas.size() && saved_points < solved;
  for (std::size_t k = 0; same && k < lambdas.size(); ++k)
    same = std::abs(saved_lambdas[k] - lambdas[k]) <= 1e-9 * lambdas[k];
  if (!same) {
    throw std::runtime_error(
        "the checkpoint's path does not fit this run: its lambdas differ, or it is solved to the end "
        "already");
  }
}

WeightedRows read_weighted_rows(const RowsSource& source, Peers& peers) {
  WeightedRows read;
  read.rows = io::read_rows_part(source.data, source.labels, peers, source.names);
  if (!source.weights.empty()) read.weights = io::read_row_weights(source.weights, read.rows.rows(), peers);
  return read;
}

const WeightedRows& kept_rows(const RowsSource& source, Peers& peers) {
  std::string key = source.data + '\n' + source.labels + '\n' + source.weights + '\n' +
                    std::to_string(peers.index()) + '/' + std::to_string(peers.count());
  for (const std::string& name : source.names) key += '\n' + name;
  if (!kept || kept_key != key) {
    kept.reset();
    kept = read_weighted_rows(source, peers);
    kept_key = key;
  }
  return *kept;
}

WeightedRows training_rows(const RowsSource& source, Peers& peers, const WeightedRows& all,
                           std::uint32_t folds, std::uint64_t seed, std::uint32_t fold) {
  // Where this worker's rows start among the data's: the workers' counts, summed in place.
  std::vector<std::uint64_t> counts(static_cast<std::size_t>(peers.count()), 0);
  counts[static_cast<std::size_t>(peers.index())] = all.rows.rows();
  peers.sum(counts);
  const std::uint64_t first =
      std::accumulate(counts.begin(), counts.begin() + peers.index(), std::uint64_t{0});
  const std::uint64_t rows = std::accumulate(counts.begin(), counts.end(), std::uint64_t{0});
  if (rows < folds) {
    throw std::runtime_error("--cv " + std::to_string(folds) + " needs as many rows, and " + source.data +
                             " has " + std::to_string(rows));
  }
  return fold_rows(all, folds_of_rows(rows, folds, seed), first, fold, false);
}

WeightedRows held_out_rows(const WeightedRows& all, std::uint32_t folds, std::uint64_t seed,
                           std::uint32_t fold) {
  return fold_rows(all, folds_of_rows(all.rows.rows(), folds, seed), 0, fold, true);
}

void forget_kept_rows() { kept.reset(); }

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

}  // namespace schmp
