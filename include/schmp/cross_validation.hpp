// K-fold cross-validation of a path, as glmnet's cv.glmnet: the rows split into K folds by a seed, the
// path solved on each fold's complement (the folds side by side, Job::run_each) at the lambdas of the
// whole data, the mean and standard error of the held-out loss per lambda, lambda_min and lambda_1se.
// A program's fold job reads its rows with training_rows() and scores held_out_rows().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "schmp/io.hpp"
#include "schmp/peers.hpp"

namespace schmp {

// The fold of each of `rows` rows: `folds` labels in turn (0, 1, ..., folds - 1, 0, ...), shuffled by
// Fisher-Yates with a SplitMix64 stream from `seed` (for i = rows - 1 down to 1: swap i with
// next() % (i + 1)). The folds' sizes differ by one at most.
std::vector<std::uint32_t> folds_of_rows(std::uint64_t rows, std::uint32_t folds, std::uint64_t seed);

// Rows as a worker reads them, with their weights (empty without --weights).
struct WeightedRows {
  io::SparseRows rows;
  std::vector<double> weights;
};

// Where rows come from: the data, the labels of a MatrixMarket matrix, the weights (empty: none), and
// the classes' names when the labels are words (io::read_libsvm).
struct RowsSource {
  std::string data;
  std::string labels;
  std::string weights;
  std::vector<std::string> names;
};

// This worker's part of the rows (io::read_rows_part), with their weights.
WeightedRows read_weighted_rows(const RowsSource& source, Peers& peers);

// The rows of `all` (and their weights) in fold `fold` (`held_out`), or in every other fold: `first` is
// the index of all's first row among the data's, `folds` every row's fold.
WeightedRows fold_rows(const WeightedRows& all, const std::vector<std::uint32_t>& folds, std::uint64_t first,
                       std::uint32_t fold, bool held_out);

// The folds of a cross-validation that one process plays one after another (Job::run_each) read the
// same data: the first fold job's worker reads its part, keeps it here, and the folds after it take it
// from here, as does the coordinator of a one-process fold job. `peers` places the worker (Peers{}: the
// whole data). forget_kept_rows() lets it go.
const WeightedRows& kept_rows(const RowsSource& source, Peers& peers);
void forget_kept_rows();

// A fold job's training rows: this worker's part of the rows outside fold `fold` of `folds` (folds_of_rows
// with `seed`), from its part `all` (kept_rows). Throws std::runtime_error when the data has fewer rows
// than folds.
WeightedRows training_rows(const RowsSource& source, Peers& peers, const WeightedRows& all,
                           std::uint32_t folds, std::uint64_t seed, std::uint32_t fold);
// A fold job's held-out rows, from the whole data (kept_rows with Peers{}).
WeightedRows held_out_rows(const WeightedRows& all, std::uint32_t folds, std::uint64_t seed,
                           std::uint32_t fold);

// Throws std::runtime_error unless a checkpoint's path (its lambdas, and `saved_points` of them solved)
// fits a run's path of `lambdas` that solves `solved` of them: the same lambdas to rounding (lambda_max is
// a sum over workers), and one left to solve at least.
void check_resumable_path(const std::vector<double>& saved_lambdas, std::size_t saved_points,
                          const std::vector<double>& lambdas, std::size_t solved);

// glmnet's lambdas of a path: `count` values from lambda_max down to min_ratio * lambda_max, evenly spaced
// on a log scale.
std::vector<double> path_lambdas(std::size_t count, double lambda_max, double min_ratio);
// The path's last lambda over lambda_max: `asked` (--lambda_min_ratio) when positive, else glmnet's,
// 1e-4 with more rows than features and 1e-2 otherwise.
double min_ratio_of(double asked, double rows, double features);

// The folds' held-out loss along the path, and what glmnet picks from them.
struct CrossValidation {
  std::vector<double> lambdas;
  std::vector<double> mean;  // the folds' loss, weighted by their held-out weight (their rows)
  std::vector<double> se;    // its standard error: sqrt(weighted variance / (K - 1))
  std::size_t best = 0;      // lambda_min: the lowest mean (the largest lambda among ties)
  std::size_t one_se = 0;    // lambda_1se: the largest lambda whose mean is within one SE of the lowest

  // From each fold's result (its held-out weight, then its loss at each of `lambdas`; NaN where it did
  // not finish). Lambdas some fold did not finish are left out of the choice.
  CrossValidation(std::vector<double> lambdas, const std::vector<std::vector<double>>& fold_results);
};

}  // namespace schmp
