// K-fold cross-validation of a path, as glmnet's cv.glmnet: the rows split into K folds by --seed, the
// path solved on each fold's complement (the folds side by side, Job::run_each) at the lambdas of the
// whole data, the mean and standard error of the held-out MSE per lambda, lambda_min and lambda_1se.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "schmp/io.hpp"

namespace schmp::lasso {

// The fold of each of `rows` rows: `folds` labels in turn (0, 1, ..., folds - 1, 0, ...), shuffled by
// Fisher-Yates with a SplitMix64 stream from `seed` (for i = rows - 1 down to 1: swap i with
// next() % (i + 1)). The folds' sizes differ by one at most.
std::vector<std::uint32_t> folds_of_rows(std::uint64_t rows, std::uint32_t folds, std::uint64_t seed);

// Keeps the rows (and their weights, when any) whose fold is not `fold`; `first` is the index of the
// first row of `rows` among the data's, `folds` every row's fold.
void drop_fold(io::SparseRows& rows, std::vector<double>& weights, const std::vector<std::uint32_t>& folds,
               std::uint64_t first, std::uint32_t fold);

// Keeps the rows (and weights) of fold `fold` only.
void keep_fold(io::SparseRows& rows, std::vector<double>& weights, const std::vector<std::uint32_t>& folds,
               std::uint32_t fold);

// The folds' held-out MSE along the path, and what glmnet picks from them.
struct CrossValidation {
  std::vector<double> lambdas;
  std::vector<double> mean;  // the folds' MSE, weighted by their held-out weight (their rows)
  std::vector<double> se;    // its standard error: sqrt(weighted variance / (K - 1))
  std::size_t best = 0;      // lambda_min: the lowest mean (the largest lambda among ties)
  std::size_t one_se = 0;    // lambda_1se: the largest lambda whose mean is within one SE of the lowest

  // From each fold's result (its held-out weight, then its MSE at each of `lambdas`; NaN where it did
  // not finish). Lambdas some fold did not finish are left out of the choice.
  CrossValidation(std::vector<double> lambdas, const std::vector<std::vector<double>>& fold_results);
};

}  // namespace schmp::lasso
