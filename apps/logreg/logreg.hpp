// Binary logistic regression as a SchMP program: minimise
//   R(w) + C sum_i log(1 + exp(-y_i w . x_i)),   R(w) = ||w||_1 (--penalty l1) or ||w||^2 / 2 (l2),
// liblinear's objectives (-s 6 and -s 0), by scheduled parallel coordinate descent.
//
// Workers own row blocks of X and keep the margins w . x_i of their rows; for a scheduled block they
// return each coordinate's first and second derivative of the loss over their rows. The coordinator
// adds them up and takes one Newton step per coordinate, soft-thresholded for L1. A plain Newton step
// can overshoot, and a line search would cost a round trip per trial, so the step is made safe by a
// curvature bound instead: for the logistic loss l''(z + t) <= l''(z) e^|t|, so over a step that moves
// no margin by more than c, the loss is majorised by the quadratic with curvature h e^c. The step
// minimises that majoriser (c is the margin change of the plain Newton step, capped at 1), so each
// coordinate's objective never goes up, and near the optimum, where steps are small, it is the Newton
// step. Priorities and the dependency filter (|cos(x_j, x_k)| < rho) work as in Lasso; each evaluation
// refreshes every priority with the step that coordinate would take now.
//
// The run stops when the minimum-norm subgradient, relative to its value at w = 0, is at most --tol
// (the 1-norm for L1, as liblinear -s 6 measures it; the 2-norm for L2, as -s 0 does).
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "kernels/column_kernel.hpp"
#include "kernels/correlation_filter.hpp"
#include "schmp/io.hpp"
#include "schmp/program.hpp"

namespace schmp::logreg {

enum class Penalty { kL1, kL2 };

struct Config {
  std::string data;            // LIBSVM (1-based) or MatrixMarket file
  std::string labels;          // labels of a MatrixMarket matrix
  std::string penalty = "l1";  // l1 or l2
  double C = 1;
  bool bias = false;           // append a constant feature 1 (liblinear -B 1)
  std::string positive_label;  // a number naming the positive class; empty: labels +1/-1 or 1/0
  double tol = 1e-4;           // stop at relative minimum-norm subgradient <= tol
  double rho = 0.1;            // dependency threshold on |cos(x_j, x_k)|; 1 switches the check off
  std::string test;            // held-out rows, scored at every evaluation (LIBSVM or MatrixMarket)
  std::string test_labels;     // labels of a MatrixMarket test matrix
  std::string output;          // model file, liblinear's format
  std::string trace;           // named in the closing message only
};

// Throws std::runtime_error naming the flag when a setting is out of range.
void check_config(const Config& config);
Penalty penalty_of(const Config& config);
// The positive class named by --positive_label, or NaN when labels are +1/-1 or 1/0.
double positive_label_of(const Config& config);

// The class (+1 or -1) of a label read from `file` at `line`: +1/-1 or 1/0 unless `positive_label`
// (not NaN) names the positive class, in which case every other label is negative. Throws
// io::InputError for any other label.
double binary_label(double label, double positive_label, const std::string& file, std::uint64_t line);

// Whether each row of `file` is in the positive class, by binary_label's rules; a file mixing the
// labels 0 and -1 without `positive_label` is refused at the first row that mixes them.
std::vector<bool> positive_rows(const io::SparseRows& rows, double positive_label, const std::string& file);

// l(z) = log(1 + exp(-z)) without overflow.
double logistic_loss(double z);

// The coordinate step: minimises g d + h d^2 / 2 + R(w + d) - R(w) over d, where h includes the
// penalty's curvature for L2.
double newton_step(Penalty penalty, double w, double g, double h);

struct Logreg {
  using Config = logreg::Config;

  struct Setup {
    std::vector<double> gradient;      // of the loss at w = 0 (margins 0)
    std::vector<double> column_norms;  // ||x_j||^2
    std::vector<double> column_max;    // sum over workers of max_i |x_ij|: at least the largest
    double rows = 0;
    double positives = 0;
    double zero_labels = 0;  // rows labelled 0 (with 1/0 labels)
    template <class V>
    void visit(V& v) {
      v(gradient, column_norms, column_max, rows, positives, zero_labels);
    }
  };
  struct Stats {
    std::vector<double> gradient;   // of the loss, every coordinate
    std::vector<double> curvature;  // second derivative of the loss, every coordinate
    double loss = 0;                // sum_i l(y_i w . x_i)
    double correct = 0;             // rows classified right (positive when w . x_i > 0)
    template <class V>
    void visit(V& v) {
      v(gradient, curvature, loss, correct);
    }
  };
  struct Partial {
    std::vector<double> gradient;  // for each scheduled coordinate, in schedule order
    std::vector<double> curvature;
    template <class V>
    void visit(V& v) {
      v(gradient, curvature);
    }
  };
  struct Commit {
    std::vector<ParamIndex> params;
    std::vector<double> delta;  // new w_j - old w_j
    template <class V>
    void visit(V& v) {
      v(params, delta);
    }
  };

  class Worker {
   public:
    Worker(const Config& config, const WorkerContext& context);
    std::size_t num_params() const { return columns_in_data_ + (bias_ ? 1 : 0); }
    void start(std::size_t num_params);
    Setup setup() const;
    Stats evaluate() const;
    Partial update(const Schedule& schedule);
    void apply(const Commit& commit);

   private:
    io::SparseRows rows_;  // released once the kernel holds the data
    std::size_t columns_in_data_ = 0;
    bool bias_ = false;
    double zero_labels_ = 0;  // rows labelled 0
    Eigen::VectorXd y_;       // +1 or -1
    std::unique_ptr<kernels::ColumnKernel> kernel_;
    std::vector<ParamIndex> all_;  // 0, 1, ..., num_params - 1
  };

  class Coordinator {
   public:
    Coordinator(const Config& config, std::size_t num_params, const Setup& setup);
    std::vector<std::string> trace_columns() const;
    std::vector<double> initial_changes() const;
    Commit aggregate(const Schedule& schedule, const Partial& summed, Priorities& priorities);
    Report report(const Stats& summed, Priorities& priorities);
    void finish(const Summary& summary);

   private:
    // The safe step for coordinate j from the loss derivatives g, h (not yet scaled by C).
    double step(ParamIndex j, double g, double h) const;
    // How much a change of w_j moves the margins (root mean square over rows): the priority.
    double margin_change(ParamIndex j, double delta) const;
    double optimality(const std::vector<double>& gradient) const;
    // Appends test log-loss, accuracy and AUC of the current w to a trace row.
    void score_test(std::vector<double>& columns) const;

    Config config_;
    Penalty penalty_;
    double n_;
    double zero_labels_;
    Eigen::VectorXd w_;
    Eigen::VectorXd column_norms_;
    Eigen::VectorXd column_max_;
    std::vector<double> initial_changes_;
    double initial_optimality_ = 0;
    io::SparseRows test_;  // held-out rows (empty without --test)
    std::vector<bool> test_positive_;
  };

  // The dependency filter: |cos(x_j, x_k)| < rho for every pair in a block (kernels/correlation_filter.hpp).
  class Dependency : public kernels::CorrelationFilter {
   public:
    Dependency(const Config& config, ParamRange owned)
        : CorrelationFilter(config.data, config.labels, config.rho, owned, config.bias) {}
  };
};

}  // namespace schmp::logreg
