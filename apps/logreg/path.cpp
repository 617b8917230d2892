#include "path.hpp"

#include <cmath>
#include <cstdio>
#include <iomanip>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "predict.hpp"
#include "schmp/output.hpp"

namespace schmp::logreg {

Path::Path(std::size_t count, double lambda_max, double min_ratio, double weight_sum)
    : lambdas_(path_lambdas(count, lambda_max, min_ratio)), weight_sum_(weight_sum), solved_(count) {}

void Path::cross_validated(const CrossValidation& cv) {
  cv_ = cv;
  solved_ = cv.best + 1;
  if (points_.size() > solved_) points_.resize(solved_);
}

std::vector<double> Path::serialised() const {
  std::vector<double> numbers{static_cast<double>(lambdas_.size())};
  numbers.insert(numbers.end(), lambdas_.begin(), lambdas_.end());
  numbers.insert(numbers.end(),
                 {weight_sum_, static_cast<double>(size_), static_cast<double>(points_.size())});
  for (const PathPoint& p : points_) {
    numbers.insert(numbers.end(),
                   {p.lambda, p.C, p.objective, p.gap, p.relative_gap, p.seconds, p.test_log_loss,
                    p.test_accuracy, static_cast<double>(p.nonzeros), static_cast<double>(p.nonzero.size())});
    for (const auto& [j, value] : p.nonzero) numbers.insert(numbers.end(), {static_cast<double>(j), value});
  }
  return numbers;
}

void Path::resume(const Path& saved) {
  check_resumable_path(saved.lambdas_, saved.points_.size(), lambdas_, solved_);
  points_ = saved.points_;
  size_ = saved.size_;
}

Path Path::deserialised(std::span<const double> numbers) {
  Path path;
  std::size_t at = 0;
  const auto next = [&] {
    if (at >= numbers.size()) throw std::logic_error("logreg: a serialised path cut short");
    return numbers[at++];
  };
  path.lambdas_.resize(static_cast<std::size_t>(next()));
  for (double& lambda : path.lambdas_) lambda = next();
  path.weight_sum_ = next();
  path.size_ = static_cast<std::size_t>(next());
  path.solved_ = path.lambdas_.size();
  path.points_.resize(static_cast<std::size_t>(next()));
  for (PathPoint& p : path.points_) {
    for (double* field : {&p.lambda, &p.C, &p.objective, &p.gap, &p.relative_gap, &p.seconds,
                          &p.test_log_loss, &p.test_accuracy})
      *field = next();
    p.nonzeros = static_cast<std::size_t>(next());
    p.nonzero.resize(static_cast<std::size_t>(next()));
    for (auto& [j, value] : p.nonzero) {
      j = static_cast<ParamIndex>(next());
      value = next();
    }
  }
  return path;
}

double Path::test_weight() const {
  if (test_.weights.empty()) return static_cast<double>(test_.rows.rows());
  return std::accumulate(test_.weights.begin(), test_.weights.end(), 0.0);
}

void Path::record(PathPoint point, const std::vector<double>& w, bool constant) {
  size_ = w.size();
  for (std::size_t j = 0; j < w.size(); ++j) {
    if (w[j] != 0) point.nonzero.emplace_back(static_cast<ParamIndex>(j), w[j]);
  }
  if (!tested_) point.test_log_loss = point.test_accuracy = std::numeric_limits<double>::quiet_NaN();
  if (test_.rows.rows() > 0) {
    const PredictionReport quality = classification_quality(
        decision_values(w, constant ? 1.0 : -1.0, test_.rows), test_.positive, test_.weights);
    point.test_log_loss = quality.log_loss;
    point.test_accuracy = quality.accuracy;
  }
  points_.push_back(std::move(point));
}

std::vector<double> Path::weights(std::size_t k) const {
  std::vector<double> w(size_, 0.0);
  for (const auto& [j, value] : points_[k].nonzero) w[j] = value;
  return w;
}

void Path::print() const {
  const bool test = test_.rows.rows() > 0 || tested_;
  std::printf("%-14s %-14s %-16s %-10s %-9s %-10s%s%s\n", "lambda", "C", "objective", "rel_gap", "nonzeros",
              "seconds", test ? " test_logloss test_accuracy" : "", cv_ ? " cv_deviance     cv_se" : "");
  for (std::size_t k = 0; k < points_.size(); ++k) {
    const PathPoint& p = points_[k];
    std::printf("%-14.8g %-14.8g %-16.10g %-10.3g %-9zu %-10.4g", p.lambda, p.C, p.objective, p.relative_gap,
                p.nonzeros, p.seconds);
    if (test) std::printf(" %-12.8g %.6f", p.test_log_loss, p.test_accuracy);
    if (cv_) std::printf(" %-15.8g %.4g", cv_->mean[k], cv_->se[k]);
    std::printf("\n");
  }
  if (cv_) {
    std::printf("lambda_min %.8g (cv_deviance %.8g)  lambda_1se %.8g (cv_deviance %.8g)\n",
                cv_->lambdas[cv_->best], cv_->mean[cv_->best], cv_->lambdas[cv_->one_se],
                cv_->mean[cv_->one_se]);
  }
}

void Path::write_table(const std::string& path) const {
  const bool test = test_.rows.rows() > 0 || tested_;
  io::write_file_atomically(path, [&](std::ostream& out) {
    out << "lambda,C,objective,duality_gap,relative_gap,nnz,seconds"
        << (test ? ",test_logloss,test_accuracy" : "") << (cv_ ? ",cv_deviance,cv_se" : "") << "\n"
        << std::setprecision(17);
    // With the folds' results, every lambda of the path: those past lambda_min were solved on the folds
    // only, and leave the refit's fields empty.
    const std::size_t rows = cv_ ? lambdas_.size() : points_.size();
    for (std::size_t k = 0; k < rows; ++k) {
      if (k < points_.size()) {
        const PathPoint& p = points_[k];
        out << p.lambda << ',' << p.C << ',' << p.objective << ',' << p.gap << ',' << p.relative_gap << ','
            << p.nonzeros << ',' << p.seconds;
        if (test) out << ',' << p.test_log_loss << ',' << p.test_accuracy;
      } else {
        out << lambdas_[k] << ',' << 1 / (lambdas_[k] * weight_sum_) << ",,,,," << (test ? ",," : "");
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
      out << "lambda " << p.lambda << " C " << p.C << '\n';
      if (columns_ == 1) {
        for (const auto& [j, value] : p.nonzero) out << j + 1 << ' ' << value << '\n';
        continue;
      }
      // The nonzeros come in index order: a row's are together.
      for (std::size_t e = 0; e < p.nonzero.size();) {
        const std::size_t row = p.nonzero[e].first / columns_;
        std::vector<double> values(columns_, 0.0);
        for (; e < p.nonzero.size() && p.nonzero[e].first / columns_ == row; ++e)
          values[p.nonzero[e].first % columns_] = p.nonzero[e].second;
        out << row + 1;
        for (const double value : values) out << ' ' << value;
        out << '\n';
      }
    }
  });
}

}  // namespace schmp::logreg
