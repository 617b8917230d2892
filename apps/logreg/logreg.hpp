// Binary logistic regression as a SchMP program: minimise
//   F(w, b) = R(w) + C L(w, b),  L = sum_i l(y_i (w . x_i + b)),  l(z) = log(1 + exp(-z)),
// with R(w) = ||w||_1 (--penalty l1) or ||w||^2 / 2 (l2): liblinear's objectives (-s 6 and -s 0), with
// the intercept b unpenalised (--fit_intercept; liblinear's -B 1 penalises it: --bias). The elastic net
// (--l1_ratio a < 1 with l1) is scikit-learn's: R(w) = a ||w||_1 + (1 - a)/2 ||w||^2.
//
// The elastic net is solved as F / a: the L1 penalty of weight 1, the loss weighted C / a, and a ridge
// term mu/2 ||w||^2, mu = (1 - a)/a, that the coordinator adds to the smooth part: mu w_j to each
// gradient, mu to each curvature and to the Hessian's diagonal. The workers see no difference. The dual
// point is the margins' alpha scaled by the t that maximises the dual value, whose penalty term is the
// elastic net's conjugate sum_j (t |v_j| - 1)_+^2 / (2 mu), v = C/a X'(alpha y); objectives and gaps
// are reported times a, on scikit-learn's scale.
//
// Row weights c_i (--weights) make the loss sum_i c_i l(...), as scikit-learn's sample_weight does: the
// kernel weighs each row's derivatives, curvature and loss change by c_i, and the dual variables of
// the rows are c_i alpha_i, their entropy terms c_i h(alpha_i).
//
// The intercept is the weight of a constant feature 1 after the data's columns, as --bias's, but free
// of the penalty: its coordinate step is plain Newton, and the Hessian model eliminates it exactly
// (a Schur complement) before the penalised coordinates are solved. Its optimality condition sum_i
// y_i alpha_i = 0 is an equality in the dual: the dual point scales the alphas of one class down until
// it holds, and bounds how far that moves the other coordinates' gradients.
//
// The method is newGLMNET's (Yuan, Ho and Lin 2012, liblinear -s 6): Newton steps whose direction is
// found by scheduled parallel coordinate descent. Each outer iteration starts at an evaluation, where
// the workers, who own row blocks of X and keep the margins w . x_i of their rows, return the gradient
// G and the Hessian diagonal H of L at w. The direction d minimises the quadratic model
//   Q(d) = C (G . d + d' X'DX d / 2) + R(w + d) - R(w),   D_ii = l''(y_i w . x_i),
// by coordinate descent: each round the schedulers pick a block (by default in random-order sweeps over the
// coordinates still moving, through the dependency filter |cos(x_j, x_k)| < rho, as in Lasso; one process
// takes a block's coordinates one after another and needs no filter: --in_order), the workers
// return (X'DX d)_j over their rows from u = X d and D u, which they keep, and the coordinator takes each
// coordinate's exact minimiser of Q (soft-thresholded for L1). No exponential is computed inside this inner
// solve: that is what makes it cheaper than coordinate descent on F itself. The inner solve ends after two
// passes over the coordinates still free to move (see kFewestPasses); then the coordinator asks for an
// evaluation, the workers move their margins by u, and the evaluation at w + d serves both as the line
// search (Armijo's sufficient decrease, sigma = 0.01, on the loss change summed row by row and the model's
// decrease summed term by term, so that rounding does not decide it near the optimum) and, when the step is
// accepted, as the start of the next outer iteration. A rejected step is halved, at the cost of one more
// evaluation and of the round scheduled meanwhile, whose results belong to the rejected point. Each outer
// iteration restarts every priority from how far its coordinate is from optimal (its unclipped model step),
// scaled so the largest is 1.
//
// The run stops when the duality gap relative to the objective is at most --tol, as Lasso's does: a
// bound on how far the objective is above the optimum. The dual point comes from the margins: with
// alpha_i = 1 / (1 + exp(y_i w . x_i)) the dual objective is C sum_i h(alpha_i), h the binary entropy,
// less ||C grad L||^2 / 2 for L2; for L1, alpha is first scaled by t = 1 / max(1, ||C grad L||_inf) into
// the feasible set. t is known only once the workers' gradients are summed, so each worker sums
// h(t alpha_i) at points of a fixed grid of t (kDualScales: those near the last dual point's t, which
// the commits name), and the coordinator takes the chord between the summed points around t: h is
// concave, so the chord is below the dual value, and the gap stays a bound. The
// minimum-norm subgradient relative to its value at w = 0 (the 1-norm for L1, as liblinear -s 6
// measures it; the 2-norm for L2, as -s 0 does) is traced as `optimality`.
//
// Where coordinate descent creeps (raw features of mixed scales, correlated columns) the inner solves
// end far from the model's minimiser and the Newton steps are many and short. So an evaluation can also
// return the loss's Hessian over a model set (the coordinates nonzero or near moving, named by the commit
// before it), from which the coordinator minimises the model itself (schmp/quadratic_model.hpp) and ships the
// step whole. Which way each step goes is StepWays's choice (schmp/step_ways.hpp).
//
// --standardize solves for the columns scaled to unit variance, x_j / sd_j (glmnet's meaning: the
// rows' weighted standard deviation about the mean, with or without the intercept), without
// touching X: the coordinator scales each column's gradient and curvature by 1 / sd_j, and its Hessian
// entries by 1 / (sd_j sd_k), on the way in, and each weight's change by 1 / sd_j on the way out to the
// workers, who see the original columns. w_ holds the scaled problem's weights; model files, test
// scores and results the original scale's.
//
// Working sets (L1), as for Lasso: after a full evaluation the coordinator picks the coordinates likely
// to matter (nonzero or free to move, and as many again of those nearest to moving), and the Newton
// steps that follow evaluate the gradient and curvature of those only, the others held at zero, until
// the set's own gap has fallen to a fraction of the last full one. The reported gap is always a bound:
// the objective against the best dual value found, where a working set's evaluation bounds the
// gradients it left out by their last full values and how far alpha has moved since.
#pragma once

#include <Eigen/Core>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "path.hpp"
#include "predict.hpp"
#include "schmp/cross_validation.hpp"
#include "schmp/io.hpp"
#include "schmp/kernels/column_kernel.hpp"
#include "schmp/kernels/correlation_filter.hpp"
#include "schmp/output.hpp"
#include "schmp/program.hpp"
#include "schmp/quadratic_model.hpp"
#include "schmp/step_ways.hpp"

namespace schmp::logreg {

struct Config {
  std::string data;            // LIBSVM (1-based) or MatrixMarket file
  std::string labels;          // labels of a MatrixMarket matrix
  std::string weights;         // one weight per row (plain text); none: every row weighs 1
  std::string penalty = "l1";  // l1 or l2
  double C = 1;
  double l1_ratio = 1;         // a: the L1 share of an l1 penalty (below 1: the elastic net; 0: l2)
  bool bias = false;           // append a constant feature 1 (liblinear -B 1), penalised
  bool fit_intercept = true;   // an unpenalised intercept (not with bias)
  bool standardize = false;    // penalise the weights of columns scaled to unit variance
  std::string positive_label;  // a number naming the positive class; empty: labels +1/-1 or 1/0
  // Classes by name (labels that are words, --multiclass): each row's label is its word's index here.
  std::vector<std::string> label_names;
  bool multiclass = false;   // one-vs-rest over every label (multiclass.hpp)
  bool multinomial = false;  // the softmax over every label (multinomial.hpp)
  // One class's step of a multinomial fit (multinomial.hpp): the job solves the weights of class
  // `block` of `classes` (the data's labels, increasing) with the other classes' weights held at
  // `class_weights` (each as result() gives w; empty: all zero), silent. Its setup also sums the
  // softmax objective and what its duality gap needs, at the weights it starts from.
  std::int64_t block = -1;
  std::vector<double> classes;
  std::vector<std::vector<double>> class_weights;
  // A probe before a multinomial path (with `block`, at all-zero weights): the job stops at its first
  // evaluation, and its result() is what the path needs of the data (probe_result).
  bool probe = false;
  // A joint step's job of a multinomial fit (with `block`): these features (increasing, the constant
  // feature last when fitted). The job stops at its first evaluation; its result() is the softmax
  // objective and dual at `class_weights`, the columns' scales, the loss's gradient in every class's
  // weights, and its Hessian in every class's weights of these features (multinomial.hpp).
  std::vector<std::uint32_t> joint;
  // One class's job of a one-vs-rest fit (Job::run_each): finish() prints and writes nothing, and
  // result() gives the model.
  bool silent = false;
  // Stop at relative duality gap <= tol. The margins' dual point is a loose one until the solve is far
  // along, most of all on raw features of mixed scales: at 1e-4 the objective was within 2e-8 of the
  // optimum on every shared set (spamassassin, dna_splice, coil2000, grants, heart).
  double tol = 1e-4;
  double rho = 0.1;  // dependency threshold on |cos(x_j, x_k)|; 1 switches the check off
  // The most coordinates whose Hessian an evaluation returns (Coordinator::choose_model): it costs the
  // workers sum_i k_i^2 / 2 products (k_i the row's entries among them) and the coordinator up to 28 m^2
  // bytes. --newton_steps rounds never asks for one.
  std::uint64_t max_hessian = 2048;
  std::string newton_steps = "auto";  // auto, rounds or hessian (StepWays)
  std::string test;                   // held-out rows, scored at every evaluation (LIBSVM or MatrixMarket)
  std::string test_labels;            // labels of a MatrixMarket test matrix
  std::string output;                 // model file, liblinear's format (a path's: its last model)
  std::string trace;                  // named in the closing message only
  double progress_seconds = 0;        // a multinomial fit's progress line on stderr, this often (0: none)
  double max_seconds = 0;             // a multinomial fit's time limit, as a whole (0: none)
  // A path (path.hpp): this many lambdas from lambda_max down to lambda_min_ratio times it (0: glmnet's
  // default), each solved to tol from the last; none when path is 0.
  std::uint64_t path = 0;
  double lambda_min_ratio = 0;
  // The path's first lambda, when positive, instead of the data's lambda_max: one-vs-rest's classes
  // share the largest of theirs, so that each lambda's models make one model of every class.
  double lambda_max = 0;
  std::string path_table;   // the path's table (CSV)
  std::string path_models;  // every model of the path
  // Cross-validation: cv folds of the rows by seed. A fold's job (fold >= 0) solves the path on the
  // other folds and scores its own; the refit is given the folds' results.
  std::uint64_t cv = 0;
  std::uint64_t seed = 0;
  std::int64_t fold = -1;
  std::vector<std::vector<double>> fold_results;
  // The refit played beside the folds (Job::run_each) instead: it solves the whole path and says
  // nothing; its result() is lambda_max, nr_feature, bias, the two labels, then the path
  // (Path::serialised).
  bool refit_beside = false;

  io::RunFiles files() const {
    return {{{"--output", output}, {"--path_table", path_table}, {"--path_models", path_models}},
            {{"--data", data},
             {"--labels", labels},
             {"--weights", weights},
             {"--test", test},
             {"--test_labels", test_labels}}};
  }

  std::vector<std::string> inputs() const { return {data, labels, weights}; }  // what a checkpoint is tied to
};

// Throws std::runtime_error naming the flag when a setting is out of range.
void check_config(const Config& config);
// What a path's run says and writes: its table on stdout and in --path_table, its models in
// --path_models, the last in --output; `shape` holds the models' labels, nr_feature and bias.
void write_path(const Config& config, const Path& path, double lambda_max, const LinearModel& shape);
// What a refit beside the folds found (its Coordinator::result(), Config::refit_beside): its path, and
// the lambda_max and shape write_path needs.
struct Refit {
  double lambda_max = 0;
  LinearModel shape;  // labels, nr_feature and bias; no weights
  Path path;
};
Refit refit_of(const std::vector<double>& result);
// What a probe (Config::probe) finds of the data for a softmax path over K classes.
struct Probe {
  double lambda_max = 0;  // softmax_lambda_max
  double rows = 0;        // the rows, and the features (the constant one left out)
  double features = 0;
  std::vector<double> class_weights;  // each class's rows' weight sum_i c_i
  // Each class's lambda_max against the rest (lambda_max_of), for a one-vs-rest path.
  std::vector<double> class_lambda_max;
  std::vector<double> serialised() const;
  static Probe deserialised(const std::vector<double>& numbers);
};
// The softmax's lambda_max: at W = 0, with the intercepts at their optimum (the log of each class's
// weight share) under fit_intercept, the largest |sum_i c_i (p_il - e_il) x_ij| / sd_j over the
// penalised j < `penalised` and every class l, over the L1 share times sum_i c_i: every weight is 0
// from there up. `class_column_sums` is K x params (Setup), `unit` the columns' scales 1 / sd_j.
double softmax_lambda_max(const std::vector<double>& class_column_sums,
                          const std::vector<double>& class_weights, const Eigen::VectorXd& unit,
                          std::size_t penalised, bool fit_intercept, double l1_ratio);
// Each class's lambda_max against the rest from the same sums: the binary path's first lambda.
std::vector<double> class_lambda_max(const std::vector<double>& class_column_sums,
                                     const std::vector<double>& class_weights, const Eigen::VectorXd& unit,
                                     bool fit_intercept, double l1_ratio);
// The class `label` as the data writes it: its name, with label_names, else the number.
std::string class_text(const Config& config, double label);
// Where the rows of `config` come from.
inline RowsSource rows_source(const Config& config) {
  return {config.data, config.labels, config.weights, config.label_names};
}
// Whether the parameter after the data's columns is a constant feature 1: --bias or --fit_intercept.
inline bool constant_feature(const Config& config) { return config.bias || config.fit_intercept; }
Penalty penalty_of(const Config& config);
// liblinear's name of the model's solver: L1R_LR with an L1 share (liblinear has no elastic net; its
// predictions are the same), else L2R_LR.
inline const char* solver_type(const Config& config) {
  return penalty_of(config) == Penalty::kL1 ? "L1R_LR" : "L2R_LR";
}
// A label written as text (a model file's, a flag's), as a number: none unless the whole text is one
// finite number.
std::optional<double> label_number(const std::string& text);
// The positive class named by --positive_label (`flag`), or NaN when it is empty (labels +1/-1 or 1/0);
// std::runtime_error when it is not a number.
double positive_label_of(const std::string& flag);
// A label as messages and model files show it: the shortest decimal that reads back as it (1, -1, 0,
// 2.5, 1234567), so that "1.0" on the command line is written 1, as liblinear's integer labels are.
std::string label_text(double label);

// The Anderson extrapolation (schmp/extrapolation.hpp) of `iterates`, oldest first, or none when it
// fails or stays at the last.
std::optional<Eigen::VectorXd> anderson_point(const std::vector<Eigen::VectorXd>& iterates);

// 1 / sd_j of each column from its weighted sums and sums of squares over the rows' weight: the standard
// deviation about the mean, with or without the intercept, as glmnet takes it; 1 where it is 0.
Eigen::VectorXd unit_scales(const std::vector<double>& sums, const std::vector<double>& squares,
                            double weight);

// glmnet's lambda_max, the smallest lambda at which w = 0 is optimal, for the L1 share `l1_ratio`: the
// largest |dL/dw_j| at w = 0 (the intercept at its optimum, with `fit_intercept`) over the rows' weight,
// from the class sums of c_i x_ij and the classes' weights.
double lambda_max_of(const std::vector<double>& positive_sums, const std::vector<double>& negative_sums,
                     double positive_weight, double negative_weight, bool fit_intercept, double l1_ratio);

// The class (+1 or -1) of a label read from `file` at `source` (schmp/io.hpp): +1/-1 or 1/0 unless
// `positive_label` (not NaN) names the positive class, in which case every other label is negative. Throws
// io::InputError for any other label.
double binary_label(double label, double positive_label, const std::string& file, std::uint64_t source);

// Whether each row of `file` is in the positive class, by binary_label's rules; a file mixing the
// labels 0 and -1 without `positive_label` is refused at the first row that mixes them.
std::vector<bool> positive_rows(const io::SparseRows& rows, double positive_label, const std::string& file);

// What an evaluation needs of a row with margin z = y w . x, from one exponential and one logarithm,
// without overflow: its loss l(z) = log(1 + exp(-z)), and its dual variable alpha = 1 / (1 + exp(z))
// (the loss's -l'(z)) with log(alpha).
struct MarginTerms {
  double loss = 0;
  double alpha = 0;
  double log_alpha = 0;
};
MarginTerms margin_terms(double z);

// l(z) = log(1 + exp(-z)) without overflow.
inline double logistic_loss(double z) { return margin_terms(z).loss; }
// The binary entropy -a log a - (1 - a) log(1 - a), 0 at a = 0 and a = 1; log_a is log(a).
double binary_entropy(double a, double log_a);

// The scales t at which the workers sum the entropy of t alpha_i, largest first: t = 1 / (1 + e), e from
// 0 to 1e6, ever sparser away from 1, where the scale ends up as the solve converges.
inline constexpr std::array<double, 18> kDualScales = {1.0,
                                                       1 / (1 + 1e-10),
                                                       1 / (1 + 1e-8),
                                                       1 / (1 + 1e-6),
                                                       1 / (1 + 1e-5),
                                                       1 / (1 + 1e-4),
                                                       1 / (1 + 1e-3),
                                                       1 / (1 + 3e-3),
                                                       1 / (1 + 1e-2),
                                                       1 / (1 + 3e-2),
                                                       1 / (1 + 0.1),
                                                       1 / (1 + 0.3),
                                                       1 / (1 + 1.0),
                                                       1 / (1 + 3.0),
                                                       1 / (1 + 10.0),
                                                       1 / (1 + 100.0),
                                                       1 / (1 + 1e4),
                                                       1 / (1 + 1e6)};

// A lower bound on sum_i h(t alpha_i) from its values at kDualScales (`sums`; NaN at the scales not
// summed, the first always is): the chord between the summed grid points nearest t on either side,
// which lies below it since the sum is concave in t (0 at t = 0).
double entropy_at(double t, const std::vector<double>& sums);
// The grid points (indices of kDualScales) an evaluation sums the entropy at when the dual point's
// scales will be near `arguments`: the first (t = 1) and two on either side of each.
std::vector<std::uint8_t> scales_near(std::initializer_list<double> arguments);

// The softmax objective's terms at the weights W of K classes, summed over rows i with class scores
// z_il = w_l . x_i, softmax p_i, class y_i and its indicator e_i, weight c_i (multinomial.hpp). Kept
// as sums so that the workers' add up.
struct SoftmaxSums {
  double loss = 0;                    // sum_i c_i (log sum_l exp(z_il) - z_{i y_i})
  std::vector<double> gradient;       // sum_i c_i (p_il - e_il) x_ij: class l's row of `params`, l by l
  std::vector<double> class_sums;     // over the rows of class y, sum c_i (p_il - e_il): K x K, y by y
  std::vector<double> class_squares;  // ... and sum (c_i (p_il - e_il))^2
  // Over the rows of class y, sum c_i H(e_i + t (p_i - e_i)) at each t of kDualScales, H the entropy:
  // K rows of kDualScales.size().
  std::vector<double> entropy;
  // The gradient's terms over the rows of each class y (K x K x params, y by y), when that is at most
  // kExactGradient numbers: the dual point's X' u exactly, where it scales the classes' rows apart.
  std::vector<double> class_gradient;
  static constexpr std::size_t kExactGradient = std::size_t{1} << 18;

  void resize(std::size_t classes, std::size_t params);
  // Adds a row: its scores `z`, class `y` and weight `c`, and its entries (`index`, `value`).
  void add_row(std::span<const double> z, std::size_t y, double c, std::span<const std::uint32_t> index,
               std::span<const double> value);
};

// After an L1 run that did not converge: a line on why, when the weights have settled (`optimality`
// at most `tol`) but the relative gap has not, and the squared column norms span six orders of
// magnitude or more: the dual point is scaled down by the largest |G_j|, which a feature of huge scale
// keeps far above 1. It names the remedy: a larger --max_hessian where the `moving` coordinates exceeded
// it, else scaled columns. Empty otherwise.
std::string lagging_gap_hint(double optimality, double relative_gap, double tol,
                             const Eigen::VectorXd& column_norms, std::size_t moving,
                             std::size_t max_hessian);

struct Logreg {
  using Config = logreg::Config;

  struct Setup {
    std::vector<double> gradient;       // of the loss at w = 0 (margins 0)
    std::vector<double> column_norms;   // ||x_j||^2
    std::vector<double> column_counts;  // nonzeros of x_j: what reading it costs
    double rows = 0;
    double weight_sum = 0;  // sum_i c_i: rows without --weights
    double positives = 0;
    double zero_labels = 0;  // rows labelled 0 (with 1/0 labels)
    // For a path's lambda_max: sum_i c_i x_ij over the positive rows, and their weight.
    std::vector<double> positive_sums;
    double positive_weight = 0;
    // For --standardize: sum_i c_i x_ij and sum_i c_i x_ij^2.
    std::vector<double> column_sums;
    std::vector<double> column_squares;
    // A multinomial step's (Config::block), at the weights it starts from: the block's own loss, and
    // the softmax objective's terms (multinomial.hpp).
    double block_loss = 0;
    SoftmaxSums softmax;
    // A probe's (Config::probe): sum_i c_i x_ij over the rows of each class (K x params, class by
    // class), and the classes' weights sum_i c_i.
    std::vector<double> class_column_sums;
    std::vector<double> class_weights;
    // A joint step's (Config::joint): sum_i c_i x_ia x_ib (p_il [l = m] - p_il p_im) over the pairs of
    // (class l, feature a) and (class m, feature b), numbered l |joint| + a, packed (packed_symmetric.hpp).
    std::vector<double> joint_hessian;
    template <class V>
    void visit(V& v) {
      v(gradient, column_norms, column_counts, rows, weight_sum, positives, zero_labels, positive_sums,
        positive_weight, column_sums, column_squares, block_loss, softmax.loss, softmax.gradient,
        softmax.class_sums, softmax.class_squares, softmax.entropy, softmax.class_gradient, class_column_sums,
        class_weights, joint_hessian);
    }
  };
  struct Stats {
    std::vector<double> gradient;   // G: of the loss at the workers' margins, each coordinate evaluated
    std::vector<double> curvature;  // H: second derivative of the loss there, each coordinate evaluated
    double loss = 0;                // sum_i l(y_i w . x_i)
    double loss_change = 0;         // since the start of the current direction, summed row by row
    double correct = 0;             // rows (their weight) classified right (positive when w . x_i > 0)
    // sum_i h(t alpha_i) at each t of kDualScales, over the positive rows, then over the negative ones.
    std::vector<double> entropy;
    std::vector<double> alpha_sums;     // sum_i alpha_i over the positive rows, the negative ones
    std::vector<double> alpha_squares;  // sum_i alpha_i^2 likewise
    // A multinomial step's: sum_i alpha_i y_i o_i likewise, o_i the row's margin offset (the loss
    // l(y_i (w . x_i - o_i)) puts alpha_i y_i o_i into the dual objective beside h(alpha_i)), then
    // sum_i |alpha_i o_i|, by which the sums' rounding is bounded.
    std::vector<double> offset_sums;
    // At an evaluation of a working set: ||alpha - alpha at the last full evaluation||^2, which bounds
    // how far the gradient of the coordinates left out has moved since.
    double alpha_shift = 0;
    // The Hessian of the loss over the coordinates the last remodelling commit named, packed
    // (schmp/packed_symmetric.hpp), or zeros from a worker whose kernel cannot compute it, which says so
    // here.
    std::vector<double> hessian;
    double hessian_missing = 0;
    double hessian_products = 0;  // the multiply-adds it took
    template <class V>
    void visit(V& v) {
      v(gradient, curvature, loss, loss_change, correct, entropy, alpha_sums, alpha_squares, offset_sums,
        alpha_shift, hessian, hessian_missing, hessian_products);
    }
  };
  struct Partial {
    std::vector<double> hessian_d;  // (X'DX d)_j for each scheduled coordinate, in schedule order
    template <class V>
    void visit(V& v) {
      v(hessian_d);
    }
  };
  // Applied in field order: the margins are recomputed from `restart_from` (a whole w) when it is
  // given, a new direction starts from zero, d_j += delta, then the margins move by `step` times
  // u = X d (a negative step shortens the last one).
  struct Commit {
    std::vector<double> restart_from;
    bool new_direction = false;  // clear d first
    std::vector<ParamIndex> params;
    std::vector<double> delta;
    double step = 0;
    // From this commit on the evaluations cover `scope` (in index order), or every coordinate when it
    // is empty.
    std::uint8_t rescope = 0;
    std::vector<ParamIndex> scope;
    // From this commit on the evaluations return the Hessian over `model` (in index order, within the
    // scope), or none when it is empty.
    std::uint8_t remodel = 0;
    std::vector<ParamIndex> model;
    // From this commit on the evaluations sum the entropy at these of kDualScales (scales_near) only,
    // or at all when it is empty: its logarithms are most of an evaluation's work.
    std::uint8_t rescale = 0;
    std::vector<std::uint8_t> scales;
    template <class V>
    void visit(V& v) {
      v(restart_from, new_direction, params, delta, step, rescope, scope, remodel, model, rescale, scales);
    }
  };

  // A checkpoint: the last accepted iterate w, with what the run has learned about its problem. A
  // resumed run starts a new Newton iteration there.
  struct Saved {
    double C = 0;
    std::uint8_t penalty = 0;
    double l1_ratio = 1;
    std::uint8_t bias = 0;
    std::uint8_t fit_intercept = 0;
    std::uint8_t standardize = 0;
    std::string positive_label;  // as --positive_label gave it: another labels the rows otherwise
    std::vector<double> w;
    double initial_optimality = 0;  // the yardstick of --tol
    std::uint64_t parallel = 0;     // coordinates that may move per round (after interference)
    std::vector<double> path;       // a path's points so far (Path::serialised); empty for one C
    template <class V>
    void visit(V& v) {
      v(C, penalty, l1_ratio, bias, fit_intercept, standardize, positive_label, w, initial_optimality,
        parallel, path);
    }
  };

  class Worker {
   public:
    Worker(const Config& config, const WorkerContext& context);
    std::size_t num_params() const { return columns_in_data_ + (constant_ ? 1 : 0); }
    void start(std::size_t num_params);
    Setup setup() const;
    Stats evaluate() const;
    Partial update(const Schedule& schedule);
    // One process takes a block's coordinates one at a time: their columns are fetched first.
    void prefetch(const Schedule& block) const;
    void apply(const Commit& commit);
    const io::SparseRows& rows() const { return rows_; }  // its rows, until start()

   private:
    int gpu_;              // the kernel's GPU (-1: the CPU), picked before any data is read
    io::SparseRows rows_;  // released once the kernel holds the data
    std::size_t columns_in_data_ = 0;
    bool constant_ = false;        // a constant feature after the data's columns
    bool path_ = false;            // the setup sums what lambda_max needs
    bool standardize_ = false;     // the setup sums what the columns' deviations need
    double zero_labels_ = 0;       // rows labelled 0
    Eigen::VectorXd y_;            // +1 or -1
    Eigen::VectorXd row_weights_;  // c_i of its rows; empty without --weights (every c_i = 1)
    std::unique_ptr<kernels::ColumnKernel> kernel_;
    std::vector<ParamIndex> all_;        // 0, 1, ..., num_params - 1
    std::vector<ParamIndex> scope_;      // what evaluations cover (empty: all_)
    std::vector<ParamIndex> model_;      // what their Hessian covers (empty: none)
    std::vector<std::uint8_t> scales_;   // where they sum the entropy (empty: every scale)
    std::vector<double> column_counts_;  // nonzeros per column, for the setup
    std::vector<double> positive_sums_;  // the setup's, with a path (made before the rows go)
    std::vector<double> column_sums_;    // the setup's, with --standardize
    std::vector<double> column_squares_;
    mutable std::vector<double> full_alpha_;  // alpha at the last full evaluation (evaluate() keeps it)
    double moved_ = 0;                        // how far the margins have moved along the current direction
    // A multinomial step's (Config::block): its class, the classes, and the weights it starts from,
    // until start(); then each row's margin offset log sum_{l != block} exp(w_l . x_i), and the sums
    // its setup returns.
    std::int64_t block_ = -1;
    std::vector<double> classes_;
    std::vector<std::vector<double>> class_weights_;
    Eigen::VectorXd offsets_;
    SoftmaxSums softmax_;
    double block_loss_ = 0;
    bool probe_ = false;
    std::vector<double> class_column_sums_, class_sizes_;  // a probe's (Setup)
    std::vector<std::uint32_t> joint_;                     // a joint step's features
    std::vector<double> joint_hessian_;                    // ... and its Hessian (Setup)
    // Adds row i's terms to joint_hessian_: its scores z, weight c and entries; `position` maps a
    // feature to its place in joint_ (-1: not there).
    void add_joint_row(std::span<const double> z, double c, std::span<const std::uint32_t> index,
                       std::span<const double> value, const std::vector<std::int32_t>& position);
    void pack_joint_hessian();  // the rows' dense sum, packed for the setup
    // The margins w_block . x_i - o_i at the weights the step starts from, and the softmax sums there,
    // from the rows (with the constant feature) before the kernel takes them.
    Eigen::VectorXd start_block(std::size_t num_params);
  };

  class Coordinator {
   public:
    Coordinator(const Config& config, std::size_t num_params, const Setup& setup);
    std::vector<std::string> trace_columns() const;
    std::vector<double> initial_changes() const;
    Commit aggregate(const Schedule& schedule, const Partial& summed, Priorities& priorities);
    // As the worker's: the block's coordinates' entries of the coordinator's vectors.
    void prefetch(const Schedule& block) const;
    Report report(const Stats& summed, Priorities& priorities);
    bool wants_evaluation() const { return evaluate_now_; }
    void finish(const Summary& summary);
    // A silent job's: the objective, the relative gap, the nonzeros, then w (the constant feature's
    // weight last, when there is one). A fold's: its held-out weight, then its held-out deviance at
    // each lambda (NaN where it stopped short).
    std::vector<double> result() const;
    Saved save() const;
    Commit restore(const Saved& saved, Priorities& priorities);

   private:
    // Where the outer iteration stands.
    enum class Phase {
      kStart,       // before the first evaluation
      kDirection,   // the inner solve: rounds improve d
      kLineSearch,  // the workers' margins are at w + t d, awaiting the evaluation there
      // The last Newton iterates extrapolated (Anderson): d is the way to that point, which the
      // workers' margins are at, awaiting the evaluation that takes it if it is better than w.
      kExtrapolation,
      // d was found whole from the Hessian the evaluation returned: the next commit ships it, and the
      // line search follows.
      kSolvedDirection,
    };
    // Coordinate j's penalty: none for the intercept.
    Penalty penalty_at(ParamIndex j) const { return j == intercept_ ? Penalty::kNone : penalty_; }
    // The elastic net's ridge weight on coordinate j (none on the intercept, 0 without the elastic net).
    double ridge_at(ParamIndex j) const { return j == intercept_ ? 0.0 : ridge_; }
    // The coordinate step and the violation of j at x, given the loss's derivatives g and h there (C/a
    // times the data's): the ridge's are added here.
    double step_at(ParamIndex j, double x, double g, double h) const {
      return coordinate_step(penalty_at(j), x, g + ridge_at(j) * x, h + ridge_at(j));
    }
    double violation_at(ParamIndex j, double x, double g) const {
      return violation(penalty_at(j), x, g + ridge_at(j) * x);
    }
    // R(w): the intercept's weight is not penalised.
    double penalty_value(const Eigen::VectorXd& w) const;
    // The model's coordinate step for j at the current d, from (X'DX d)_j.
    double model_step(ParamIndex j, double hessian_d) const;
    // How much a change of w_j moves the margins (root mean square over rows): the priority.
    double margin_change(ParamIndex j, double delta) const;
    // The minimum-norm subgradient of F (1-norm for L1, 2-norm for L2) over the coordinates evaluated,
    // from gradient_.
    double optimality() const;
    double objective(const Eigen::VectorXd& w, double loss) const;
    // The dual objective at the point the evaluation's margins give (see the top of this file), scaled
    // into the feasible set; with `whole` false, feasible only on the coordinates evaluated. At a
    // working set's evaluation the others' gradients are bounded by their last full values and how far
    // alpha moved since.
    // `arguments` gets the scales the entropy was taken at, the dual point's for each class.
    double dual_value(const Stats& summed, bool whole, std::array<double, 2>* arguments = nullptr) const;
    // A multinomial step's: the softmax objective of every class's weights it started from (the
    // block's w_ then), and a dual value that bounds its optimum from below (multinomial.hpp); both on
    // the reported scale.
    double softmax_primal(const SoftmaxSums& sums) const;
    std::vector<double> joint_result(const Setup& setup) const;  // a joint step's result()
    double softmax_dual(const SoftmaxSums& sums) const;
    // The rounding of those sums over n rows, which the dual value is lowered by, as the binary's.
    double softmax_rounding(const SoftmaxSums& sums) const;
    // Whether a multinomial step's gap has stopped falling (kStalledEvaluations), given this
    // evaluation's.
    bool block_stalled(double relative_gap);
    // The coordinates the next evaluations cover after a full one (empty: all).
    std::vector<ParamIndex> working_set() const;
    // The coordinates the evaluation being reported covered.
    const std::vector<ParamIndex>& evaluated() const { return scope_.empty() ? all_ : scope_; }
    // R(w + t d) - R(w), term by term so that a small change is not lost to rounding.
    double penalty_change(double t) const;
    // The penalty's change when w_j moves by `step`, exact while w_j keeps its sign.
    double penalty_term_change(Eigen::Index j, double step) const;
    // The model's first-order decrease G . d + R(w + d) - R(w), the line search's yardstick.
    double model_decrease() const;
    // Takes the evaluation at a new w as the start of an outer iteration.
    void start_outer_iteration(const Stats& summed, Priorities& priorities);
    // The digits of optimality the step that just ended gained: log10 of how far the violations fell
    // over the coordinates evaluated at both its ends (gradient_ is the new one), or NaN when there were
    // none at its start. Keeps the new ones.
    double step_progress();
    // Finds d over the model set from the evaluation's Hessian, the coordinates outside it held, when it
    // returned one (kSolvedDirection); false otherwise.
    bool solve_direction(const Stats& summed);
    // Names in `commit` the coordinates whose Hessian the next evaluation returns: those nonzero or
    // moving, or near moving, at the step it evaluates (none when there are too many, or when steps by
    // rounds are doing better: StepWays).
    void choose_model(Commit& commit);
    // What reading the columns `cols` costs the workers, in multiply-adds.
    double columns_work(std::span<const ParamIndex> cols) const;
    // About what a step from the Hessian over `model` costs, in multiply-adds; and the digits of
    // optimality the solve has left to gain.
    double hessian_work(const std::vector<ParamIndex>& model) const;
    double digits_left() const;
    // Keeps the accepted iterate w and, every kExtrapolationDepth of them, aims the next evaluation at
    // their extrapolation (the kExtrapolation phase).
    void try_extrapolation();
    // Gives up a direction along which the line search found no descent: the parallel updates of the
    // inner solve interfered. The workers' margins go back to w and fewer coordinates move per round.
    void abandon_direction();
    // Appends test log-loss, accuracy and AUC of the current w to a trace row.
    void score_test(std::vector<double>& columns) const;
    // Sets the path up from the setup's sums (a fold's from the whole data's), and C to its first.
    void start_path(const Setup& setup, std::size_t num_params);
    // A new C: the loss's derivatives scale with it.
    void set_C(double C);
    // Records the path's point just converged (the evaluation `summed` at w) and, unless it was the
    // last, starts the next lambda's first Newton step at w.
    void next_lambda(const Report& converged, const Stats& summed, Priorities& priorities);
    void finish_path(const Summary& summary);
    LinearModel model_of(const std::vector<double>& w) const;  // with its labels, as the model files write it
    void write_model(const std::vector<double>& w) const;      // to --output, liblinear's format
    // w on the data's scale: w_ times unit_.
    std::vector<double> original_w() const;

    Config config_;
    Report final_report_;  // as finish() was given it, for result()
    Penalty penalty_;
    // The problem solved is F / a (the top of this file): the loss's weight C / a, the ridge's mu, and a
    // itself, by which objectives and gaps are reported (1 and 0 without the elastic net).
    double c_;
    double ridge_;
    double scale_;
    // The intercept's coordinate (the last), or none (the largest index) without --fit_intercept.
    ParamIndex intercept_ = std::numeric_limits<ParamIndex>::max();
    double n_;           // rows, by which work is measured
    double weight_sum_;  // sum_i c_i: the rows without --weights
    double zero_labels_;
    Eigen::VectorXd w_;             // the last accepted iterate
    Eigen::VectorXd d_;             // the direction being built
    Eigen::VectorXd gradient_;      // G at w, scaled by C
    Eigen::VectorXd curvature_;     // H at w, scaled by C
    Eigen::VectorXd column_norms_;  // of the columns solved for (scaled, with --standardize)
    // sqrt(column_norms_) and sqrt(column_norms_ / n): taken once, not at every coordinate of every
    // evaluation.
    Eigen::VectorXd column_lengths_, margin_lengths_;
    // working_set()'s candidates, kept for their storage.
    mutable std::vector<std::pair<double, ParamIndex>> working_others_;
    // 1 / sd_j of each column with --standardize (1 for constant and all-zero columns and for the
    // constant feature), else 1.
    Eigen::VectorXd unit_;
    std::vector<double> initial_changes_;
    double initial_optimality_ = 0;

    Phase phase_ = Phase::kStart;
    bool evaluate_now_ = false;
    bool new_direction_ = true;  // the next commit clears d
    double priority_scale_ = 1;  // 1 / the largest margin change at the start of the Newton step
    double objective_ = 0;       // F(w)
    // The inner solve: a pass is `pass_length` coordinate updates (see kFewestPasses).
    std::size_t pass_length_ = 1;
    std::size_t pass_updates_ = 0;
    std::size_t passes_ = 0;
    double pass_violation_ = 0;
    double pass_gain_ = 0;          // how far this pass lowered the quadratic model
    double direction_gain_ = 0;     // how far the passes before it did
    bool direction_moved_ = false;  // some coordinate of d is nonzero
    // The line search: the step t tried and the model decrease C G . d + R(w + d) - R(w).
    double step_ = 1;
    double model_decrease_ = 0;
    double retreat_ = 0;    // a shortening of the step for the next commit
    bool restart_ = false;  // the next commit sends the workers back to w (margins from w itself)
    // How many of each block's coordinates the inner solve moves: all, until a direction is abandoned.
    std::size_t parallel_ = std::numeric_limits<std::size_t>::max();
    std::size_t block_seen_ = 1;  // the size of the last block
    // The most coordinates one round of this Newton step moved together: at 1 the updates were
    // sequential (one process updating in order), and a line search that fails is rounding.
    std::size_t widest_round_ = 0;
    Report last_report_;
    // The gap is down to the rounding of its sums, above --tol: the solve has done what doubles allow.
    bool at_floor_ = false;
    std::vector<Eigen::VectorXd> iterates_;  // accepted since the last extrapolation, oldest first
    // Working sets. scope_ is what the next evaluation covers, as shipped (empty: every coordinate);
    // between full evaluations gradient_ and curvature_ are current on it only.
    std::vector<ParamIndex> all_;  // 0, 1, ..., num_params - 1
    std::vector<ParamIndex> scope_;
    std::vector<bool> in_scope_;
    std::vector<ParamIndex> in_scope_list_;           // the same, listed
    std::vector<ParamIndex> next_scope_;              // to ship with the next commit, when rescope_
    std::vector<std::uint8_t> scales_, next_scales_;  // the entropy's, as shipped and to ship
    std::vector<ParamIndex> model_;  // the coordinates of the evaluations' Hessian, as shipped
    std::size_t model_wanted_ = 0;   // the last model set's size, before --max_hessian bounded it
    Eigen::VectorXd column_counts_;
    StepWays ways_;                          // made from config_.newton_steps
    StepWays::Way way_ = StepWays::kRounds;  // of the current Newton step
    // |violation| of each coordinate at the start of the current step (NaN where not evaluated), and
    // the coordinates it has: the yardstick of the step's progress.
    Eigen::VectorXd step_violations_;
    std::vector<ParamIndex> step_covered_;
    bool rescope_ = false;
    std::size_t scoped_evaluations_ = 0;                         // since the last full evaluation
    double full_gap_ = std::numeric_limits<double>::infinity();  // relative, at the last full evaluation
    // The highest dual value found, less its rounding: a lower bound on the optimum.
    double best_dual_ = -std::numeric_limits<double>::infinity();
    Eigen::VectorXd full_gradient_;  // C grad L at the last full evaluation, accepted or not

    io::SparseRows test_;  // held-out rows (empty without --test)
    std::vector<bool> test_positive_;
    Path path_;
    double lambda_max_ = 0;
    // A multinomial step's (Config::block): its own objective where it started, and softmax_primal
    // and softmax_dual there.
    std::array<double, 3> block_start_{};
    std::vector<double> probe_;  // a probe's result
    std::vector<double> joint_;  // a joint step's result (Config::joint)
    double lowest_gap_ = std::numeric_limits<double>::infinity();
    std::size_t stalled_evaluations_ = 0;
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  };

  // The dependency filter: |cos(x_j, x_k)| < rho for every pair in a block (kernels/correlation_filter.hpp).
  class Dependency : public kernels::CorrelationFilter {
   public:
    Dependency(const Config& config, ParamRange owned, const DataColumns& data)
        : CorrelationFilter(data, config.rho, owned, constant_feature(config)) {}
    // With the check off (rho >= 1) no columns are needed.
    static bool takes_columns(const Config& config) { return config.rho < 1; }
  };
};

}  // namespace schmp::logreg
