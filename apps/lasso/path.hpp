// A regularisation path: glmnet's sequence of lambdas from lambda_max down, the solution found at
// each, and what a run writes of them (a table, and one model file holding every model).
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

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
  double test_mse = 0;  // NaN without held-out rows
  double intercept = 0;
  std::vector<std::pair<ParamIndex, double>> beta;  // the nonzero coefficients
};

class Path {
 public:
  Path() = default;  // no path: one lambda
  // `count` lambdas from lambda_max down to min_ratio * lambda_max, evenly spaced on a log scale;
  // `test` (may be empty) the held-out rows whose MSE each point reports.
  Path(std::size_t count, double lambda_max, double min_ratio, io::SparseRows test);

  bool active() const { return !lambdas_.empty(); }
  double lambda() const { return lambdas_[points_.size()]; }  // the one being solved
  bool last() const { return points_.size() + 1 == lambdas_.size(); }
  bool has_test() const { return test_.rows() > 0; }
  std::size_t size() const { return lambdas_.size(); }

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
  double mse(const Eigen::VectorXd& beta, double intercept) const;

  std::vector<double> lambdas_;
  std::vector<PathPoint> points_;
  io::SparseRows test_;
};

}  // namespace schmp::lasso
