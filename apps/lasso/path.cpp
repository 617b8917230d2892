#include "path.hpp"

#include <cmath>
#include <cstdio>
#include <iomanip>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "predict.hpp"
#include "schmp/output.hpp"

namespace schmp::lasso {

Path::Path(std::size_t count, double lambda_max, double min_ratio)
    : lambdas_(path_lambdas(count, lambda_max, min_ratio)), solved_(count) {}

void Path::hold_out(io::SparseRows rows, std::vector<double> weights) {
  test_column_start_.assign(rows.columns() + std::size_t{1}, 0);
  for (std::uint32_t j : rows.index) ++test_column_start_[j + std::size_t{1}];
  std::partial_sum(test_column_start_.begin(), test_column_start_.end(), test_column_start_.begin());
  std::vector<std::uint64_t> next(test_column_start_.begin(), test_column_start_.end() - 1);
  test_row_.resize(rows.index.size());
  test_value_.resize(rows.index.size());
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    for (std::uint64_t e = rows.row_start[r]; e < rows.row_start[r + 1]; ++e) {
      const std::uint64_t at = next[rows.index[e]]++;
      test_row_[at] = static_cast<std::uint32_t>(r);
      test_value_[at] = rows.value[e];
    }
  }
  test_labels_ = std::move(rows.labels);
  test_weights_ = std::move(weights);
}

void Path::cross_validated(const CrossValidation& cv) {
  cv_ = cv;
  solved_ = cv.best + 1;
  if (points_.size() > solved_) points_.resize(solved_);
}

std::vector<double> Path::serialised() const {
  std::vector<double> numbers{static_cast<double>(lambdas_.size())};
  numbers.insert(numbers.end(), lambdas_.begin(), lambdas_.end());
  numbers.push_back(static_cast<double>(points_.size()));
  for (const PathPoint& p : points_) {
    numbers.insert(numbers.end(), {p.lambda, p.objective, p.gap, p.relative_gap, p.seconds, p.test_mse,
                                   p.intercept, static_cast<double>(p.beta.size())});
    for (const auto& [j, value] : p.beta) numbers.insert(numbers.end(), {static_cast<double>(j), value});
  }
  return numbers;
}

void Path::resume(const Path& saved) {
  check_resumable_path(saved.lambdas_, saved.points_.size(), lambdas_, solved_);
  points_ = saved.points_;
}

Path Path::deserialised(std::span<const double> numbers) {
  Path path;
  std::size_t at = 0;
  const auto next = [&] {
    if (at >= numbers.size()) throw std::logic_error("lasso: a serialised path cut short");
    return numbers[at++];
  };
  path.lambdas_.resize(static_cast<std::size_t>(next()));
  for (double& lambda : path.lambdas_) lambda = next();
  path.solved_ = path.lambdas_.size();
  path.points_.resize(static_cast<std::size_t>(next()));
  for (PathPoint& p : path.points_) {
    for (double* field :
         {&p.lambda, &p.objective, &p.gap, &p.relative_gap, &p.seconds, &p.test_mse, &p.intercept})
      *field = next();
    p.beta.resize(static_cast<std::size_t>(next()));
    for (auto& [j, value] : p.beta) {
      j = static_cast<ParamIndex>(next());
      value = next();
    }
    p.nonzeros = p.beta.size();
  }
  return path;
}

double Path::test_weight() const {
  if (test_weights_.empty()) return static_cast<double>(test_labels_.size());
  return std::accumulate(test_weights_.begin(), test_weights_.end(), 0.0);
}

double Path::mse(const PathPoint& point) const {
  if (!has_test()) return std::numeric_limits<double>::quiet_NaN();
  std::vector<double> predicted(test_labels_.size(), point.intercept);
  const std::size_t columns = test_column_start_.size() - 1;
  for (const auto& [j, value] : point.beta) {
    if (j >= columns) continue;  // a feature no held-out row has
    for (std::uint64_t e = test_column_start_[j]; e < test_column_start_[j + 1]; ++e)
      predicted[test_row_[e]] += value * test_value_[e];
  }
  if (test_weights_.empty()) return regression_quality(predicted, test_labels_).mse;
  double sse = 0;
  for (std::size_t r = 0; r < predicted.size(); ++r)
    sse += test_weights_[r] * (test_labels_[r] - predicted[r]) * (test_labels_[r] - predicted[r]);
  return sse / test_weight();
}

void Path::record(PathPoint point, const Eigen::VectorXd& beta) {
  for (Eigen::Index j = 0; j < beta.size(); ++j) {
    if (beta[j] != 0) point.beta.emplace_back(static_cast<ParamIndex>(j), beta[j]);
  }
  point.nonzeros = point.beta.size();
  point.test_mse = mse(point);
  points_.push_back(std::move(point));
}

void Path::print() const {
  std::printf("%-14s %-16s %-10s %-9s %-10s%s%s\n", "lambda", "objective", "rel_gap", "nonzeros", "seconds",
              has_test() ? " test_mse" : "", cv_ ? " cv_mse          cv_se" : "");
  for (std::size_t k = 0; k < points_.size(); ++k) {
    const PathPoint& p = points_[k];
    std::printf("%-14.8g %-16.10g %-10.3g %-9zu %-10.4g", p.lambda, p.objective, p.relative_gap, p.nonzeros,
                p.seconds);
    if (has_test()) std::printf(" %.8g", p.test_mse);
    if (cv_) std::printf(" %-15.8g %.4g", cv_->mean[k], cv_->se[k]);
    std::printf("\n");
  }
  if (cv_) {
    std::printf("lambda_min %.8g (cv_mse %.8g)  lambda_1se %.8g (cv_mse %.8g)\n", cv_->lambdas[cv_->best],
                cv_->mean[cv_->best], cv_->lambdas[cv_->one_se], cv_->mean[cv_->one_se]);
  }
}

void Path::write_table(const std::string& path) const {
  io::write_file_atomically(path, [&](std::ostream& out) {
    out << "lambda,objective,duality_gap,relative_gap,nnz,seconds" << (has_test() ? ",test_mse" : "")
        << (cv_ ? ",cv_mse,cv_se" : "") << "\n"
        << std::setprecision(17);
    // With the folds' results, every lambda of the path: those past lambda_min were solved on the folds
    // only, and leave the refit's fields empty.
    const std::size_t rows = cv_ ? lambdas_.size() : points_.size();
    for (std::size_t k = 0; k < rows; ++k) {
      if (k < points_.size()) {
        const PathPoint& p = points_[k];
        out << p.lambda << ',' << p.objective << ',' << p.gap << ',' << p.relative_gap << ',' << p.nonzeros
            << ',' << p.seconds;
        if (has_test()) out << ',' << p.test_mse;
      } else {
        out << lambdas_[k] << ",,,,," << (has_test() ? "," : "");
      }
      if (cv_) out << ',' << cv_->mean[k] << ',' << cv_->se[k];
      out << '\n';
    }
  });
}

void Path::write_models(const std::string& path, const std::string& header) const {
  io::write_file_atomically(path, [&](std::ostream& out) {
    out << header << std::setprecision(17);
    for (const PathPoint& p : points_) {
      out << "lambda " << p.lambda << "\nintercept " << p.intercept << '\n';
      for (const auto& [j, value] : p.beta) out << j + 1 << ' ' << value << '\n';
    }
  });
}

}  // namespace schmp::lasso
