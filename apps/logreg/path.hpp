// A regularisation path of logistic regression, as glmnet's: lambdas from lambda_max down, each the
// objective's C = 1 / (lambda sum_i c_i) (glmnet minimises the mean loss plus lambda times the penalty,
// the same problem scaled), the solution at each, and what a run writes of them.
#pragma once

#include <cstddef>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "schmp/cross_validation.hpp"
#include "schmp/io.hpp"
#include "schmp/program.hpp"

namespace schmp::logreg {

struct PathPoint {
  double lambda = 0;
  double C = 0;
  double objective = 0;
  double gap = 0;
  double relative_gap = 0;
  std::size_t nonzeros = 0;
  double seconds = 0;  // since the solve started
  // NaN without held-out rows (weighted by their weights, when given)
  double test_log_loss = std::numeric_limits<double>::quiet_NaN();
  double test_accuracy = std::numeric_limits<double>::quiet_NaN();
  // The nonzero weights, 0-based, as a liblinear model lists them: row by row (the constant feature's
  // row last), a column per class (Path::columns).
  std::vector<std::pair<ParamIndex, double>> nonzero;
};

// Held-out rows and how a model scores on them.
struct HeldOut {
  io::SparseRows rows;
  std::vector<bool> positive;
  std::vector<double> weights;  // empty: every row weighs 1
};

class Path {
 public:
  Path() = default;  // no path: one C
  // `count` lambdas from lambda_max down to min_ratio * lambda_max, evenly spaced on a log scale, for
  // rows whose weights sum to `weight_sum`.
  Path(std::size_t count, double lambda_max, double min_ratio, double weight_sum);

  // Rows whose log-loss and accuracy each point reports.
  void hold_out(HeldOut held_out) { test_ = std::move(held_out); }
  // A multinomial path's: each row of weights holds a column per class (of `columns`), and the points
  // come with their test scores when `tested` (record() keeps them).
  void set_columns(std::size_t columns, bool tested) {
    columns_ = columns;
    tested_ = tested;
  }
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
  double C() const { return 1 / (lambda() * weight_sum_); }
  bool done() const { return points_.size() == solved_; }
  const std::vector<double>& lambdas() const { return lambdas_; }
  const std::optional<CrossValidation>& cross_validation() const { return cv_; }
  const std::vector<PathPoint>& points() const { return points_; }
  // The held-out rows' weight: their count without weights.
  double test_weight() const;

  // Records the solution w at the current lambda (scored on the held-out rows; `constant` says whether
  // w's last weight is a constant feature's), and moves on to the next. w is row by row, as `nonzero`.
  void record(PathPoint point, const std::vector<double>& w, bool constant);
  // Point k's weights, every one.
  std::vector<double> weights(std::size_t k) const;

  void print() const;                               // one line per lambda on stdout
  void write_table(const std::string& path) const;  // the same as CSV
  // Every model after `header` (comment lines, then the models' 'labels P N', 'nr_feature F' and
  // 'bias B' lines): 'lambda L C c', then 'index value' per nonzero weight (1-based; the constant
  // feature's index is nr_feature + 1); of several columns, 'index v_1 ... v_K' per row with a nonzero.
  void write_models(const std::string& path, const std::string& header) const;

 private:
  std::vector<double> lambdas_;
  double weight_sum_ = 1;
  std::size_t size_ = 0;  // weights per model
  std::size_t columns_ = 1;
  bool tested_ = false;
  std::size_t solved_ = 0;
  std::vector<PathPoint> points_;
  HeldOut test_;
  std::optional<CrossValidation> cv_;
};

}  // namespace schmp::logreg
