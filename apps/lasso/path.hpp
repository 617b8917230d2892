// A regularisation path: glmnet's sequence of lambdas from lambda_max down, the solution found at
// each, and what a run writes of them (a table, and one model file holding every model).
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "schmp/cross_validation.hpp"
#include "schmp/io.hpp"
#include "schmp/program.hpp"

namespace schmp::lasso {

struct PathPoint {
  double lambda = 0;
  double objective = 0;
  double gap = 0;
  double relative_gap = 0;
  std::size_t nonzeros = 0;
  double seconds = 0;   // since the solve started
  double test_mse = 0;  // NaN without held-out rows (weighted by their weights, when given)
  double intercept = 0;
  std::vector<std::pair<ParamIndex, double>> beta;  // the nonzero coefficients
};

class Path {
 public:
  Path() = default;  // no path: one lambda
  // `count` lambdas from lambda_max down to min_ratio * lambda_max, evenly spaced on a log scale.
  Path(std::size_t count, double lambda_max, double min_ratio);

  // Rows whose MSE each point reports (weighted by `weights` unless it is empty).
  void hold_out(io::SparseRows rows, std::vector<double> weights);
  // The folds' results at these lambdas: shown beside the points, the path solved down to lambda_min
  // (the points past it, of a path solved beside the folds, let go).
  void cross_validated(const CrossValidation& cv);
  // The lambdas and the points as numbers (a job's result(), a checkpoint's), and back.
  std::vector<double> serialised() const;
  static Path deserialised(std::span<const double> numbers);
  // Takes the points of `saved` (a checkpoint's path), whose lambdas must be these; throws
  // std::runtime_error otherwise.
  void resume(const Path& saved);

  bool active() const { return !lambdas_.empty(); }
  double lambda() const { return lambdas_[points_.size()]; }  // the one being solved
  bool has_test() const { return !test_labels_.empty(); }
  std::size_t size() const { return solved_; }  // the lambdas to solve
  const std::vector<double>& lambdas() const { return lambdas_; }
  const std::optional<CrossValidation>& cross_validation() const { return cv_; }
  // The weight of the held-out rows: their count without weights.
  double test_weight() const;

  // Records the solution at the current lambda, and moves on to the next.
  void record(PathPoint point, const Eigen::VectorXd& beta);
  const std::vector<PathPoint>& points() const { return points_; }

  // One line per lambda on stdout.
  void print() const;
  // The same as CSV.
  void write_table(const std::string& path) const;
  // Every model, each as schmp-lasso writes one: 'lambda L', 'intercept b', then 'index value' per
  // nonzero coefficient (1-based), after `header` (comment lines).
  void write_models(const std::string& path, const std::string& header) const;

 private:
  double mse(const PathPoint& point) const;

  std::vector<double> lambdas_;
  std::size_t solved_ = 0;
  std::vector<PathPoint> points_;
  // The held-out rows by column: a point's predictions then cost its nonzeros' entries, not every
  // entry (a wide fold holds many more entries than a sparse model touches).
  std::vector<double> test_labels_;
  std::vector<std::uint64_t> test_column_start_{0};
  std::vector<std::uint32_t> test_row_;
  std::vector<double> test_value_;
  std::vector<double> test_weights_;
  std::optional<CrossValidation> cv_;
};

}  // namespace schmp::lasso
