// Lasso as a SchMP program: minimise
//   (1/2n) ||y - X beta - b||^2 + lambda (a ||beta||_1 + (1 - a)/2 ||beta||^2),   a = --l1_ratio,
// by scheduled parallel coordinate descent, with the intercept b unpenalised (or held at 0 without
// --fit_intercept). a = 1 (the default) is the Lasso; a < 1 the elastic net.
//
// With row weights w_i (--weights) the loss is sum_i w_i (y_i - x_i beta - b)^2 / (2 sum_i w_i), as
// glmnet's and scikit-learn's: the plain loss of the rows and labels scaled by sqrt(w_i), with n the sum
// of the weights and the intercept's column sqrt(w) in place of ones. The workers scale their rows as
// they read them, so X keeps its sparsity, and everything below holds on the scaled problem.
//
// Each round the schedulers pick a block of coefficients, preferring those that moved most and
// keeping only coefficients whose columns are nearly uncorrelated (|cos(x_j, x_k)| < rho), so that
// updating them together behaves like updating them one after another. Workers own row blocks of X
// and y and keep the residual r = y - X beta of their rows; each returns x_j . r over its rows for the
// block. The coordinator adds these up, takes the exact coordinate minimiser
//   beta_j <- S(beta_j ||x_j||^2 + x_j . r, n lambda) / ||x_j||^2,
// and commits the changes, which the workers apply to their residuals. Every few rounds the workers
// return X^T r, ||r||^2 and y . r, from which the coordinator computes the objective and a duality gap
// (the dual point is the residual scaled into the feasible set); the run stops when the gap relative
// to the objective falls below --tol. The same gap drives a safe screening rule (Fercoq, Gramfort and
// Salmon's gap-safe sphere test): a coefficient whose column is certified to be zero at the optimum is
// retired (until a path's next lambda), not scheduled, and left out of evaluations, so that the work
// shrinks to the coefficients that can still matter. Each evaluation also refreshes every live
// coefficient's priority with the step it would take now, so that coefficients the sampler has not
// visited lately but that would move are found at once.
//
// The workers also keep their residuals of the last few evaluations (schmp/extrapolation.hpp) and return
// their inner products with the new one. From these the coordinator extrapolates (Anderson, as celer
// and skglm do): a combination of the last residuals gives a better dual point, hence a tighter gap, and
// the same combination of the last coefficient vectors a better primal point, which the coordinator
// jumps to whenever its objective is lower. On strongly correlated columns, where coordinate descent
// creeps, the jumps save most of the sweeps.
//
// Coordinate descent creeps on strongly correlated columns, and the duality gap lags the objective
// there: the residual is infeasible for the dual to the first order of its error. So once the rounds'
// pace says they would take longer to reach --tol than it costs, the coordinator asks for the Gram
// matrix over the support (the nonzero coefficients) and moves those coefficients to their exact
// minimiser (schmp/quadratic_model.hpp), the others held: on the right support that is the optimum,
// primal and dual. The workers sum each column's part of the matrix once (gram_cache.hpp): X does not
// change.
//
// Working sets, as celer's: after a full evaluation the coordinator picks the coefficients likely to
// matter (those nonzero or about to move, and as many again of those nearest to moving), and the
// evaluations that follow cover only them, until their own gap has fallen to a fraction of the last
// full one. The sweeps visit the coefficients that move, which the working set holds. The reported gap
// is always a bound: the objective against the best dual value found, where a working set's evaluation
// bounds the dots it left out by their last full values and how far r has moved since.
//
// The intercept is fitted by implicit centering: for a given beta the best b is mean(y - X beta), and
// with it the problem is the Lasso on centred columns x_j - mean(x_j) and centred y, whose norms, dots
// and Gram matrix follow from X's own and the column sums. So X stays sparse, and b is no coordinate
// of its own: it follows beta exactly, which a coordinate for it, coupled to every column with a
// nonzero mean, would not. Each commit ships b; a worker shifts its residual by the change lazily, at
// the next evaluation (a dense pass), and corrects the dots of the rounds between by the column sums.
//
// The elastic net is the Lasso with weight lambda a on the augmented data [X; sqrt(m) I], [y; 0], m = n
// lambda (1 - a): the augmented rows add m to each column's squared norm, -m beta_j to each dot x_j . r,
// m ||beta||^2 to ||r||^2 and m I to the Gram matrix, all known to the coordinator. So the workers do
// as for the Lasso, and every rule above (the gap, screening, working sets, steps from the Gram
// matrix, extrapolation) holds on the augmented problem. A second dual point, the residual itself
// against the penalty's conjugate, needs no scaling and bounds the gap where a is small (a = 0, ridge
// regression, has only this one).
//
// --standardize solves for the columns scaled to unit variance, x_j / sd_j (glmnet's meaning: about
// their means, with or without the intercept), without touching X: the coordinator scales each
// column's dots, norm, sum and Gram entries by 1 / sd_j on the way in, and each coefficient's change
// by 1 / sd_j on the way out to the workers, who see the original columns. beta_ holds the scaled
// problem's coefficients; the model file the original scale's.
//
// A path (--path N) solves glmnet's N lambdas from lambda_max down in one run (path.hpp): at each
// lambda's convergence the coordinator records the solution and moves on, warm, with the Gram cache
// kept (X does not change) and everything learned of the last lambda's gap let go. Screening retires
// nothing on a path: a coefficient proven zero at one lambda may move at the next.
#pragma once

#include <Eigen/Core>
#include <chrono>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gram_cache.hpp"
#include "path.hpp"
#include "schmp/cross_validation.hpp"
#include "schmp/extrapolation.hpp"
#include "schmp/kernels/column_kernel.hpp"
#include "schmp/kernels/correlation_filter.hpp"
#include "schmp/output.hpp"
#include "schmp/program.hpp"

namespace schmp::lasso {

struct Config {
  std::string data;     // LIBSVM (1-based) or MatrixMarket file
  std::string labels;   // labels of a MatrixMarket matrix
  std::string weights;  // one weight per row (plain text); none: every row weighs 1
  double lambda = 0;    // the L1 weight; when 0, lambda_ratio * lambda_max
  double lambda_ratio = 0.1;
  double l1_ratio = 1;  // a: the L1 share of the penalty (1: Lasso, 0: ridge)
  double tol = 1e-6;    // stop at relative duality gap <= tol
  bool fit_intercept = true;
  bool standardize = false;  // penalise the coefficients of unit-variance columns
  double rho = 0.1;          // dependency threshold on |cos(x_j, x_k)|; 1 switches the check off
  // Steps from the Gram matrix (Coordinator::gram_step): auto, rounds (never) or hessian (at every
  // evaluation), over a support of at most max_hessian coefficients, which costs the coordinator up to
  // 8 m^2 bytes.
  std::string newton_steps = "auto";
  std::uint64_t max_hessian = 1024;
  std::string output;  // model file
  std::string trace;   // named in the closing message only
  // A path: this many lambdas from lambda_max down to lambda_min_ratio times it (0: glmnet's, 1e-4
  // with more rows than features, else 1e-2); 0 for one lambda.
  std::uint64_t path = 0;
  double lambda_min_ratio = 0;
  std::string test;        // held-out rows (LIBSVM), whose MSE the path reports
  std::string path_table;  // the path's table, as CSV
  // Cross-validation: the folds (0: none) and the seed that assigns rows to them.
  std::uint64_t cv = 0;
  std::uint64_t seed = 1;
  // A fold job's (Job::run_each) fold, held out: its path is solved on the other rows at the whole
  // data's lambdas, and its result is the held-out MSE at each. -1: not a fold job.
  std::int64_t fold = -1;
  // The refit on the whole data after the folds: each fold job's result(). Its path stops at lambda_min.
  std::vector<std::vector<double>> fold_results;
  // The refit played beside the folds (Job::run_each) instead: it solves the whole path and says
  // nothing; its result() is lambda_max, the features, then the path (Path::serialised).
  bool refit_beside = false;

  io::RunFiles files() const {
    return {{{"--output", output}, {"--path_table", path_table}},
            {{"--data", data}, {"--labels", labels}, {"--weights", weights}, {"--test", test}}};
  }

  std::vector<std::string> inputs() const { return {data, labels, weights}; }  // what a checkpoint is tied to
};

double soft_threshold(double z, double threshold);

// Evaluations kept for extrapolation: celer's and skglm's depth. Each costs a worker 8 bytes a row and
// the coordinator 16 bytes a coefficient.
inline constexpr std::size_t kExtrapolationDepth = 6;

// Throws std::runtime_error naming the flag when a setting is out of range.
void check_config(const Config& config);
// The model file's words on the objective, then its lines naming the data (and the weights).
std::string objective_text(const Config& config);
// What a path's run says and writes: its table on stdout and in --path_table, every model in --output.
void write_path(const Config& config, const Path& path, double lambda_max, std::size_t features);

struct Lasso {
  using Config = lasso::Config;

  struct Setup {
    std::vector<double> xty;            // X^T y
    std::vector<double> column_norms;   // ||x_j||^2
    std::vector<double> column_counts;  // nonzeros of x_j: what reading it costs
    std::vector<double> column_sums;    // sum_i x_ij, with --fit_intercept or --standardize only
    double yy = 0;                      // ||y||^2
    double y_sum = 0;                   // sum_i y_i
    double rows = 0;
    double weight_sum = 0;  // sum_i w_i: rows without --weights
    template <class V>
    void visit(V& v) {
      v(xty, column_norms, column_counts, column_sums, yy, y_sum, rows, weight_sum);
    }
  };
  struct Stats {
    std::vector<double> gradient;  // x_j . r for every coefficient evaluated, in index order
    double rr = 0;                 // ||r||^2
    double yr = 0;                 // y . r
    double r_sum = 0;              // sum_i r_i: zero but for rounding when b is fitted
    std::vector<double> gram;      // r . r_k for the residuals kept at earlier evaluations, then r . r
    // At an evaluation of a working set: ||r - r'||^2, r' the residual at the last full evaluation,
    // which bounds how far x_j . r has moved since for the coefficients left out.
    double shift = 0;
    // The Gram matrix X_M' X_M over the columns M the last remodelling commit named, its columns from
    // `known` on (the coordinator holds the rest), packed (schmp/packed_symmetric.hpp): sent by the
    // first evaluation after that commit only. model_missing says a worker's kernel cannot compute it.
    std::vector<double> model_block;
    double model_missing = 0;
    double model_products = 0;  // the multiply-adds it took
    template <class V>
    void visit(V& v) {
      v(gradient, rr, yr, r_sum, gram, shift, model_block, model_missing, model_products);
    }
  };
  struct Partial {
    std::vector<double> dots;  // x_j . r for each scheduled j, in schedule order
    template <class V>
    void visit(V& v) {
      v(dots);
    }
  };
  struct Commit {
    std::vector<ParamIndex> params;
    std::vector<double> delta;        // new beta_j - old beta_j
    std::vector<ParamIndex> retired;  // screened out since the last commit
    std::uint8_t revived = 0;         // every coefficient is evaluated again (a path's next lambda)
    // The residual made again from y, with `delta` the whole of beta: after updates that ran away,
    // subtracting them back would leave it swamped by rounding.
    std::uint8_t from_start = 0;
    std::uint8_t forget = 0;  // the workers drop the residuals they keep for extrapolation
    // From this commit on the evaluations cover `scope` (in index order), or every coefficient not
    // retired when it is empty.
    std::uint8_t rescope = 0;
    std::vector<ParamIndex> scope;
    // The next evaluation sends the Gram matrix over `model`, whose first `known` columns' part the
    // coordinator holds.
    std::uint8_t remodel = 0;
    std::vector<ParamIndex> model;
    std::uint64_t known = 0;
    double intercept = 0;  // b after this commit
    template <class V>
    void visit(V& v) {
      v(params, delta, retired, revived, from_start, forget, rescope, scope, remodel, model, known,
        intercept);
    }
  };

  // A checkpoint: the coefficients, those screened out, and the lambda they were fitted for.
  struct Saved {
    double lambda = 0;
    double l1_ratio = 1;
    std::uint64_t standardize = 0;
    std::vector<double> beta;  // of the problem solved: the scaled columns' with --standardize
    std::vector<ParamIndex> retired;
    std::vector<double> path;  // a path's points so far (Path::serialised); empty for one lambda
    template <class V>
    void visit(V& v) {
      v(lambda, l1_ratio, standardize, beta, retired, path);
    }
  };

  class Worker {
   public:
    Worker(const Config& config, const WorkerContext& context);
    std::size_t num_params() const { return columns_in_data_; }
    void start(std::size_t num_params);
    Setup setup() const;
    Stats evaluate() const;
    Partial update(const Schedule& schedule);
    // One process takes a block's coordinates one at a time: their columns are fetched first.
    void prefetch(const Schedule& block) const;
    void apply(const Commit& commit);
    const io::SparseRows& rows() const { return rows_; }  // its rows, until start()

   private:
    // Scales each row and its label by the square root of its weight (the weighted loss is the plain
    // one of the scaled rows), keeping the roots: the intercept's column.
    void weigh_rows(const std::vector<double>& weights);
    // The intercept's column's dot with `v`: sqrt(w) . v, or the sum of v without weights.
    double intercept_dot(const Eigen::VectorXd& v) const;
    // Moves the kernel's residual to the last commit's intercept: r = y - X beta - b sqrt(w).
    void shift_residual() const;

    int gpu_;  // the kernel's GPU (-1: the CPU), picked before any data is read
    bool fit_intercept_;
    bool column_sums_needed_;  // for the intercept, or the columns' spread (--standardize)
    io::SparseRows rows_;      // released once the kernel holds the data
    std::size_t columns_in_data_ = 0;
    Eigen::VectorXd y_;
    Eigen::VectorXd root_weights_;  // sqrt(w_i) of its rows; empty without --weights (every w_i = 1)
    std::unique_ptr<kernels::ColumnKernel> kernel_;
    std::vector<ParamIndex> active_;  // not retired, in index order
    std::vector<ParamIndex> scope_;   // what evaluations cover (empty: active_)
    mutable Eigen::VectorXd full_r_;  // r at the last full evaluation (evaluate() keeps it)
    std::vector<double> scale_;       // a commit's deltas, negated: kept to spare an allocation per commit
    mutable Snapshots residuals_{kExtrapolationDepth};  // at the last evaluations (evaluate() keeps them)
    // X^T y from the setup: the first evaluation's gradient while the residual is still y, which spares
    // it a pass over the data. Let go at the first evaluation or the first change of the residual.
    mutable std::vector<double> first_gradient_;
    std::vector<double> column_counts_;  // nonzeros per column, for the setup
    std::vector<ParamIndex> model_;      // the Gram matrix's columns, as the commit named them
    std::size_t known_ = 0;
    mutable bool model_sent_ = true;  // the next evaluation sends the Gram matrix when false
    // The kernel's residual is y - X beta - shifted_; the last commit's b is intercept_. Empty sums
    // without --fit_intercept.
    std::vector<double> column_sums_;
    double intercept_ = 0;
    mutable double shifted_ = 0;
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
    // What the next evaluation covers, which paces the evaluations (program.hpp): a working set's
    // cost little, so they come sooner than full ones.
    std::size_t evaluation_size() const;
    void finish(const Summary& summary);
    // A fold job's: the held-out weight (its rows without --weights), then the MSE at each lambda. A
    // refit beside the folds: see Config::refit_beside.
    std::vector<double> result() const;
    Saved save() const;
    Commit restore(const Saved& saved, Priorities& priorities);

   private:
    // finish() for a path: its closing line, write_path, the trace.
    void finish_path(const Summary& summary);
    // A feasible dual point theta = r / s and what the gap and the screening need of it.
    struct DualPoint {
      double value = -std::numeric_limits<double>::infinity();
      double s = 1;                                   // max(n lambda, max_j |x_j . r|)
      const std::vector<double>* gradient = nullptr;  // x_j . r over the live coefficients
    };
    // The extrapolated residual r = sum_k c_k r_k of the last evaluations, and beta = sum_k c_k beta_k.
    struct Extrapolated {
      std::vector<double> weights;
      double rr = 0;
      double yr = 0;
      double rounding = 0;  // a bound on the rounding error of rr / 2 + yr, from the weights' size
      std::vector<double> gradient;
    };

    // How much a change of beta_j moves the fitted values, relative to ||y||: the priority.
    double fitted_change(ParamIndex j, double delta) const;
    // The coordinate updates of a scheduled block, into `commit`.
    void update_block(const Schedule& schedule, const Partial& summed, Priorities& priorities,
                      Commit& commit);
    // Ships the coefficients retired at the last evaluation with `commit`.
    void ship_retirements(Commit& commit);
    // After revive_retired(): every coefficient is evaluated again, from `commit` on.
    void ship_revival(Commit& commit);
    // At a path's next lambda: the coefficients proven zero at the last one may move at this one.
    void revive_retired(Priorities& priorities);
    // `left_out`: a bound on |x_j . r| over the live coefficients the gradient does not cover.
    DualPoint dual_point(double rr, double yr, const std::vector<double>& gradient,
                         double left_out = 0) const;
    // After a scoped evaluation with ||r - r'||^2 = `shift`: the bound on |x_j . r| outside the scope.
    double left_out_bound(double shift) const;
    // Keeps this evaluation for extrapolation and extrapolates from the ones kept (empty weights: none).
    Extrapolated extrapolate(const Stats& summed);
    // Moves beta to the extrapolated point when its objective is below `primal`; true when it did.
    bool jump(const Extrapolated& point, double& primal);
    // After a full evaluation with x_j . r = `gradient` (over active_) and dual scale s: the working set
    // the next evaluations cover, or empty when it would hold most of the live coefficients.
    std::vector<ParamIndex> working_set(const std::vector<double>& gradient, double s) const;
    // What reading the columns `cols` costs the workers, in multiply-adds.
    double columns_work(std::span<const ParamIndex> cols) const;
    // Keeps the support: the nonzero coefficients.
    void keep_support();
    // What computing `request` costs the workers, and solving a model over m coefficients the
    // coordinator, in StepWays's units (multiply-adds).
    double request_work(const GramCache::Request& request) const;
    static double solve_work(std::size_t m);
    // Takes in the Gram matrix block the evaluation sent, when it was asked for.
    void receive_gram(const Stats& summed);
    // The work the rounds still need to reach --tol at their pace since the last change of scope or step
    // from the Gram matrix, from this evaluation's relative gap over the coefficients it covered (0:
    // unknown).
    double rounds_remaining(double gap);
    // Measures the rounds' pace afresh from an evaluation whose gap is `gap`.
    void restart_pace(double gap);
    // Asks for the Gram matrix over the support (what the cache lacks of it) and takes a step from it
    // (solve_support) where the rounds would take longer; true when beta moved.
    bool gram_step(const std::vector<ParamIndex>& covered, const std::vector<double>& gradient, double gap,
                   Priorities& priorities);
    // Sets lambda, the L1 weight and the ridge's, and the columns' norms with the ridge's rows.
    void set_lambda(double lambda);
    // At the convergence of a path's lambda: records it and sets the next one up, its solve to start
    // afresh from the coefficients found.
    void next_lambda(const Report& converged, Priorities& priorities);
    // After next_lambda(), from the full evaluation that solved the last lambda (x_j . r = `gradient`
    // over active_, with ||r||^2 = rr and y . r = yr): the new lambda's working set, gap and priorities.
    void start_lambda(double rr, double yr, const std::vector<double>& gradient, Priorities& priorities);
    // The rounding error of sums over n rows with ||r||^2 = rr and y . r = yr: up to n ulps of their
    // terms' total, in the primal and in the dual. A gap within it proves nothing.
    double rounding_of(double rr, double yr) const;
    // Sets coefficient j's priority to the step it would take now, x_j . r being `gradient`.
    void reprioritise(ParamIndex j, double gradient, Priorities& priorities) const;
    // beta on the data's own scale.
    Eigen::VectorXd original_beta() const { return beta_.cwiseProduct(unit_); }
    // The best intercept for `beta`: mean(y - X beta), 0 without --fit_intercept.
    double intercept_for(const Eigen::VectorXd& beta) const;
    // The evaluation's sums for the residual moved by its mean, so that it sums to zero exactly (the
    // centred problem's dual needs that, and the mean is the intercept's remaining error), and for the
    // augmented problem of the elastic net.
    Stats centred(const Stats& summed);
    // The elastic net's dual value at the residual itself, from the centred sums without the ridge's
    // rows (a full evaluation's): (y . r - ||r||^2 / 2) / n - sum_j n (|x_j . r| / n - lambda a)_+^2 /
    // (2 m).
    double conjugate_dual(const Stats& augmented) const;
    // Moves beta to the minimiser over the support's coefficients the cache holds, the others where
    // they are, when those hold nearly all of the violation; true when it moved.
    bool solve_support(const std::vector<ParamIndex>& covered, const std::vector<double>& gradient,
                       Priorities& priorities);

    Config config_;
    double n_;     // the loss's normaliser: sum_i w_i, the rows without --weights
    double rows_;  // the rows of data, by which work is measured
    double lambda_;
    double lambda_max_;
    double l1_ = 0;     // lambda a: the L1 weight
    double ridge_ = 0;  // m = n lambda (1 - a): the augmented rows' weight
    Path path_;
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
    double yy_;
    Eigen::VectorXd beta_;
    // The intercept, the column sums and y's sum (zero without --fit_intercept), and the centred
    // columns' squared norms ||x_j - mean(x_j)||^2 (the columns' own without it).
    double intercept_ = 0;
    double shipped_intercept_ = 0;  // in the last commit: what the rounds' dots are relative to
    // 1 / sd_j with --standardize (1 for a constant column), else 1: column j of the problem solved is
    // x_j times this. The sums and norms below are of those columns.
    Eigen::VectorXd unit_;
    Eigen::VectorXd column_sums_;
    double y_sum_ = 0;
    Eigen::VectorXd column_norms_;
    // Their square roots, and sqrt(yy_): taken once, not at every coefficient of every evaluation.
    Eigen::VectorXd column_lengths_;
    double y_length_ = 0;
    // working_set()'s candidates, kept for their storage.
    mutable std::vector<std::pair<double, ParamIndex>> working_others_;
    std::vector<double> initial_changes_;
    std::vector<ParamIndex> active_;  // not retired, in index order: the order of Stats::gradient
    std::vector<bool> retired_;
    std::vector<ParamIndex> newly_retired_;  // to ship with the next commit
    bool revived_ = false;                   // every coefficient back, with the next commit
    std::size_t full_evaluations_ = 0;       // at this lambda
    // The dependency check compares columns two by two: a block of many weakly correlated columns can
    // still interfere as a whole and make the updates overshoot. An evaluation whose objective ran
    // away halves how many coefficients a round moves (the rest of the block waits for a later one),
    // and the next round goes back to the coefficients of the last evaluation: from far out, fewer
    // coefficients at a time would take long to come back.
    std::size_t parallel_ = std::numeric_limits<std::size_t>::max();
    std::size_t block_seen_ = 1;  // the size of the last block
    double last_objective_ = std::numeric_limits<double>::infinity();
    Eigen::VectorXd last_beta_;  // at the last evaluation that did not rise
    bool go_back_ = false;
    // Extrapolation: what the last evaluations saw, oldest first; the workers keep their residuals.
    Extrapolation gram_{kExtrapolationDepth};
    std::deque<Eigen::VectorXd> betas_;
    std::deque<std::vector<double>> gradients_;
    std::deque<double> yr_;
    std::deque<double> means_;   // of the residuals as the workers keep them (0 without an intercept)
    bool forget_ = false;        // the next commit tells the workers to drop their residuals, as this does
    bool jumped_ = false;        // the next commit moves the workers to the extrapolated beta
    Eigen::VectorXd jump_from_;  // beta before the jump
    // Working sets. scope_ is what the next evaluation covers, as shipped (empty: every live one).
    std::vector<ParamIndex> scope_;
    std::vector<ParamIndex> next_scope_;  // to ship with the next commit, when rescope_
    std::size_t checked_scope_ = 0;       // the working set a full evaluation is to check, if any
    bool rescope_ = false;
    std::size_t scoped_evaluations_ = 0;                         // since the last full evaluation
    double full_gap_ = std::numeric_limits<double>::infinity();  // relative, at the last full evaluation
    // The highest dual value found, less its rounding: a lower bound on the optimum.
    double best_dual_ = -std::numeric_limits<double>::infinity();
    bool at_floor_ = false;          // the last gap was no more than its rounding error, and above --tol
    Eigen::VectorXd full_gradient_;  // x_j . r at the last full evaluation, by coefficient
    Eigen::VectorXd full_beta_;      // beta then (with the ridge only: its dots depend on beta)
    // Steps from the Gram matrix. A request goes out with the next commit, and its answer comes with the
    // evaluation after that.
    enum class Asked { kNothing, kToShip, kShipped };
    Eigen::VectorXd column_counts_;
    GramCache gram_cache_;
    GramCache::Request request_;
    Asked asked_ = Asked::kNothing;
    bool gram_missing_ = false;        // a worker's kernel cannot compute it: rounds only
    bool arrived_ = false;             // a block came with this evaluation
    std::vector<ParamIndex> support_;  // at the last evaluation, in index order
    // The rounds' pace: their work (multiply-adds, StepWays's measure) and the evaluations since the
    // last step from the Gram matrix or change of scope, and the gap and scope then; the round last
    // counted.
    double rented_ = 0;
    std::size_t rent_evaluations_ = 0;  // this one included
    // Infinite until the first change of scope (the first working set) or a settled support: no pace is
    // known before.
    double rent_gap_ = std::numeric_limits<double>::infinity();
    std::vector<ParamIndex> rent_scope_;
    std::vector<ParamIndex> rent_support_;  // the support at the last evaluation
    // On a path: the rounds' work per digit of the gap last measured, which estimates the next lambda's
    // until its own pace is known (NaN: none yet). Without it a lambda's few evaluations end before
    // the estimate, and steps from the Gram matrix, whose columns the cache keeps from lambda to
    // lambda, would never be taken.
    double path_pace_ = std::numeric_limits<double>::quiet_NaN();
    // A new lambda's pace is measured from its first evaluation: its support is the last lambda's, near
    // its own, so the rule that waits for the first working set does not apply.
    bool pace_from_next_ = false;
    std::uint64_t last_round_ = std::numeric_limits<std::uint64_t>::max();
  };

  // The dependency filter: |cos(x_j, x_k)| < rho for every pair in a block (kernels/correlation_filter.hpp).
  class Dependency : public kernels::CorrelationFilter {
   public:
    Dependency(const Config& config, ParamRange owned, const DataColumns& data)
        : CorrelationFilter(data, config.rho, owned) {}
    // With the check off (rho >= 1) no columns are needed.
    static bool takes_columns(const Config& config) { return config.rho < 1; }
  };
};

}  // namespace schmp::lasso
