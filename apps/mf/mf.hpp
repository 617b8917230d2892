// Matrix factorization as a rotation program: R (users x items) ~ W H^T, minimising
//
//   sum over observed (u, j) of (r_uj - w_u.h_j)^2 + lambda (sum_u n_u |w_u|^2 + sum_j n_j |h_j|^2)
//
// where n_u and n_j count the ratings of user u and item j: LIBMF's objective (its -l2 is our
// lambda). Worker w owns the users u with u mod P = w, their ratings and their rows of W; the item
// factors H are cut into P blocks (item j in block j mod P) that rotate around the workers, so in each
// sub-round a worker updates the ratings of its users for the items of the block it holds. Each worker
// reads only its byte range of the ratings files and hands each rating to its user's owner.
//
// Two algorithms, chosen by --algorithm:
//   ccd  CCD++ (Yu et al., 2012): rank-one components updated one at a time, each by exact coordinate
//        minimisation of its user factors (one round) then its item factors (one round), --inner times;
//        every rating keeps its residual. Each sweep updates every component once, by priority: in
//        decreasing order of the objective decrease of its last update (the first sweep in turn).
//        Every update is exact, so the objective never increases.
//   sgd  block-rotation SGD (DSGD / FPSGD): one round is an epoch; per rating, one step on
//        (r - w.h)^2 + lambda (|w|^2 + |h|^2), with AdaGrad step sizes per factor row as LIBMF takes them.
//
// Internally ratings are divided by their standard deviation s (as LIBMF does; rating_scale), so that
// one learning rate suits every rating scale; factors are s^(1/2) times the internal ones.
//
// --implicit fits implicit feedback (Hu, Koren and Volinsky 2008) instead: every cell (u, j) counts,
//
//   sum over all (u, j) of c_uj (p_uj - w_u.h_j)^2 + lambda (sum_u |w_u|^2 + sum_j |h_j|^2),
//
// p_uj = 1 where the data has a positive count r_uj and 0 elsewhere, c_uj = 1 + alpha r_uj there (or
// 1 + alpha log(1 + r_uj / epsilon)) and 1 elsewhere. It splits into every cell's (w_u.h_j)^2, which is
// trace(W'W H'H), plus the observed cells' c (1 - w.h)^2 - (w.h)^2. So CCD++'s schedule runs on the
// observed cells alone, with blocks of --block_size columns B in place of one (iALS++, Rendle et al.
// 2021): a cell's value is c - 1 and its residual e = 1 - w.h with the block left out (lifted), and
// each row's w_B is exactly minimised at the solution of
//
//   (lambda I + G_BB + sum_obs (c - 1) h_B h_B') w_B = sum_obs (1 + (c - 1) e_uj) h_B - G_{B,-B} w_{-B},
//
// G = H'H, the items' k x k Gram matrix (likewise for items with W'W). The coordinator keeps both Gram
// matrices: a first round sums them over the workers, each round ships the rows its block needs and
// gets back the rows its update changed. A sweep costs O(nnz k (b + 2) + (users + items) (k^2 + k b^2)),
// and the dense matrix is never formed. No biases, no rating scale (the targets are 0 and 1).
//
// With --device gpu each worker runs its cells' work on a GPU (kernels::FactorDevice): its ratings,
// residuals and user rows stay there, the travelling item blocks are staged in and out at each
// sub-round. A block is then one cell (the GPU's parallelism is within the cell, not a grid of cells
// on threads). CCD++ gives the CPU's result up to rounding; SGD's steps within a cell run in parallel,
// Hogwild-style (see FactorDevice), so it follows a different path to a comparable model.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ranking.hpp"
#include "schmp/io.hpp"
#include "schmp/kernels/factor_kernels.hpp"
#include "schmp/output.hpp"
#include "schmp/program.hpp"

namespace schmp::mf {

enum class Algorithm : std::uint8_t { kCcd = 0, kSgd = 1 };
enum class Confidence : std::uint8_t { kLinear = 0, kLog = 1 };

struct Config {
  std::string data;
  std::string test;
  int index_base = 0;
  io::IdBounds bounds;
  Algorithm algorithm = Algorithm::kCcd;
  int rank = 20;
  double lambda = 0.1;
  int iterations = 20;  // sgd: epochs; ccd: sweeps over the components
  int inner = 1;        // ccd: user/item round pairs per component update
  double learning_rate = 0.1;
  bool biases = true;    // model mean + b_u + c_j + w.h (two more factor columns in the model file)
  double tol = 0;        // stop when an iteration lowers the objective by at most this, relatively
  int early_stop = 0;    // stop when the test RMSE has not improved for this many iterations; keep the best
  bool priority = true;  // ccd: order each sweep by the components' last decrease (else in turn)
  // Implicit feedback (above): the ratings are counts of interactions, c = 1 + alpha r (linear) or
  // 1 + alpha log(1 + r / epsilon) (log).
  bool implicit = false;
  double alpha = 1;
  Confidence confidence = Confidence::kLinear;
  double epsilon = 1;
  std::size_t top = 10;  // --implicit --test: the ranking metrics' K (ranking.hpp)
  int block_size = 8;    // --implicit: the factor columns each row solves at once (1: CCD++; rank: ALS)
  std::string output;

  io::RunFiles files() const { return {{{"--output", output}}, {{"--data", data}, {"--test", test}}}; }

  std::vector<std::string> inputs() const { return {data}; }  // what a checkpoint is tied to
};

// Whether a Config is usable; the error names the flag.
void check(const Config& config);

// The factor columns a component of the coordinator names: one column, or with --implicit a block of
// --block_size columns (the last may be narrower).
struct ColumnBlock {
  int first = 0;
  int span = 1;
};
ColumnBlock columns_of(const Config& config, std::uint32_t component);
// How many components a sweep updates: the factor columns, or their blocks with --implicit.
std::uint32_t component_count(const Config& config);

struct MatrixFactorization;

// The ratings of one worker's users, cut into cells by item block and by a grid inside the worker.
class Cells {
 public:
  Cells() = default;
  Cells(int blocks, int groups)
      : groups_(groups), cells_(static_cast<std::size_t>(blocks * groups * groups)) {}
  int groups() const { return groups_; }
  std::size_t index(int block, int group, int sub_block) const {
    return static_cast<std::size_t>((block * groups_ + group) * groups_ + sub_block);
  }
  std::vector<kernels::CellRating>& at(int block, int group, int sub_block) {
    return cells_[index(block, group, sub_block)];
  }
  std::vector<std::vector<kernels::CellRating>>& all() { return cells_; }
  const std::vector<std::vector<kernels::CellRating>>& all() const { return cells_; }

 private:
  int groups_ = 1;
  std::vector<std::vector<kernels::CellRating>> cells_;
};

struct MatrixFactorization {
  using Config = mf::Config;

  struct Setup {
    double ratings = 0;
    double sum = 0;
    // Of each rating less a rating every worker shares: about zero, a sum of squares would lose the
    // spread of ratings far from zero (prices, timestamps) to rounding.
    double sum_of_offsets = 0;
    double sum_of_squared_offsets = 0;
    double test_ratings = 0;
    template <class V>
    void visit(V& v) {
      v(ratings, sum, sum_of_offsets, sum_of_squared_offsets, test_ratings);
    }
  };

  struct Step {
    Algorithm algorithm = Algorithm::kCcd;
    std::uint32_t component = 0;  // ccd
    bool users = true;            // ccd: update the users' factor (else the items')
    // --implicit: a round that only sums the Gram matrices; else the other side's Gram row `component`.
    bool gram = false;
    std::vector<double> gram_row;
    template <class V>
    void visit(V& v) {
      v(algorithm, component, users, gram, gram_row);
    }
  };

  struct Partial {
    double decrease = 0;       // ccd: objective decrease of the round, internal units
    double squared_error = 0;  // sgd: squared errors met during the epoch, internal units
    // --implicit: after a Gram round W'W then H'H (k x k each); after a ccd round, row `component` of
    // the updated side's.
    std::vector<double> gram;
    template <class V>
    void visit(V& v) {
      v(decrease, squared_error, gram);
    }
  };

  struct Stats {
    double squared_error = 0;  // internal units, like the rest; --implicit: the observed cells' loss
    double penalty = 0;        // sum of n |factor row|^2
    double test_squared_error = 0;
    double test_absolute_error = 0;
    std::vector<double> gram_users;  // --implicit: W'W and H'H
    std::vector<double> gram_items;
    RankingSums ranking;  // --implicit --test
    template <class V>
    void visit(V& v) {
      v(squared_error, penalty, test_squared_error, test_absolute_error, gram_users, gram_items, ranking);
    }
  };

  // The item factors of one block: item j of block b is row j / P.
  struct Block {
    std::vector<double> factors;
    std::vector<double> gradient_sums;  // sgd
    // ccd: the item rows' sums, only while an item round gathers (empty otherwise, so that user
    // rounds and evaluations do not carry them around the ring).
    std::vector<double> numerator;
    std::vector<double> denominator;
    template <class V>
    void visit(V& v) {
      v(factors, gradient_sums, numerator, denominator);
    }
  };

  // A worker's share of the final model, in internal units.
  struct Part {
    std::uint32_t users = 0;  // of the whole job
    std::uint32_t items = 0;
    std::vector<double> user_factors;  // its users' rows
    std::vector<std::uint8_t> user_trained;
    std::vector<double> item_factors;  // its home block's rows
    std::vector<std::uint8_t> item_trained;
    template <class V>
    void visit(V& v) {
      v(users, items, user_factors, user_trained, item_factors, item_trained);
    }
  };

  // A worker's share of a checkpoint, in internal units: the rows of its users (u = worker + workers
  // row) and of its home block's items (j = worker + workers row), with their AdaGrad sums (sgd) and
  // the copies early stopping keeps. CCD++'s residuals follow from the factors.
  struct Saved {
    std::uint32_t worker = 0;
    std::uint32_t workers = 1;
    std::vector<double> user_factors;
    std::vector<double> user_gradient_sums;
    std::vector<double> item_factors;
    std::vector<double> item_gradient_sums;
    std::uint8_t kept = 0;  // early stopping has kept a model (every worker alike)
    std::vector<double> kept_user_factors;
    std::vector<double> kept_item_factors;
    template <class V>
    void visit(V& v) {
      v(worker, workers, user_factors, user_gradient_sums, item_factors, item_gradient_sums, kept,
        kept_user_factors, kept_item_factors);
    }
  };
  // The coordinator's part: where the sweeps stand, and the settings the model was fitted with.
  struct Progress {
    Algorithm algorithm = Algorithm::kCcd;
    std::int32_t rank = 0;
    std::uint8_t biases = 0;
    double lambda = 0;
    std::uint8_t implicit = 0;
    double alpha = 0;
    Confidence confidence = Confidence::kLinear;
    double epsilon = 0;
    std::int32_t block_size = 0;
    std::vector<double> component_decrease;
    std::uint32_t component = 0;
    std::int32_t rounds_left = 0;
    double decrease = 0;
    std::uint64_t component_updates = 0;
    std::vector<std::uint32_t> sweep_order;
    std::uint64_t iterations = 0;
    double best_test_rmse = 0;
    std::uint64_t best_iteration = 0;
    template <class V>
    void visit(V& v) {
      v(algorithm, rank, biases, lambda, implicit, alpha, confidence, epsilon, block_size, component_decrease,
        component, rounds_left, decrease, component_updates, sweep_order, iterations, best_test_rmse,
        best_iteration);
    }
  };

  class Worker {
   public:
    Worker(const Config& config, const WorkerContext& context);
    Setup setup() const;
    void start(const Setup& summed);
    Block make_block() const;
    void update(const Step& step, std::uint32_t block, Block& held);
    Partial end_update(const Step& step, Block& home);
    void evaluate(std::uint32_t block, const Block& held);
    Stats end_evaluation(const Block& home);
    Part part(const Block& home) const;
    void keep(const Block& home);
    Saved save(const Block& home) const;
    // Takes its rows from each of the checkpointed run's shares in turn.
    void restore(const Saved& share, Block& home);
    void finish_restore(Block& home);

   private:
    // The ratings of this worker's users in `path`: each worker reads its byte range, passes every
    // rating there to `count`, and hands it to the owner of its user (Peers). Sorted by user and item;
    // a rating given twice is refused at its later line.
    std::vector<io::Rating> read_own_ratings(const std::string& path, const WorkerContext& context,
                                             const std::function<void(const io::Rating&)>& count);
    std::uint32_t block_items(std::uint32_t block) const;
    // What a training cell's residual starts from: its rating, or 1 with --implicit.
    double target(const kernels::CellRating& rating) const { return config_.implicit ? 1.0 : rating.value; }
    // --implicit --test: keeps the held-out interactions per user, less those met in training (`mine`,
    // this worker's, sorted by user and item).
    void hold_out(const std::vector<io::Rating>& mine, std::vector<io::Rating> held_out);
    // Offers each ranked user the block's items with factors that they did not meet in training.
    void rank_block(std::uint32_t block, const Block& held);
    // Whether the checkpoint being restored holds a model kept by early stopping that this run keeps
    // too: only while this run also stops early, or the model written would not be the one reported.
    bool keeps_restored_model() const { return restoring_ && restoring_->kept && config_.early_stop > 0; }
    // Runs work(cell_index, group) over the block's cells, the grid's diagonals one after another so
    // that no two concurrent cells share a user or an item.
    template <class Work>
    void for_each_cell(std::uint32_t block, Work work);
    // A trained row's start: latent entries random (or zero), biases zero beside their fixed 1.
    void initialise(double* row, std::uint64_t id, bool user, bool random) const;
    // Swaps the home block's rows for a copy of the round's and the lifted columns, for its travels.
    void narrow(Block& home, ColumnBlock columns, ColumnBlock lifted);
    // --implicit: the end of a round, each row's block of columns solved exactly (mf.hpp).
    template <class CountOf>
    void solve_one_class(const Step& step, std::vector<double>& factors, std::vector<double>& numerator,
                         std::vector<double>& denominator, CountOf count_of, Partial& partial) const;
    // The sums a round gathers per row: numerator values, then as many columns' products packed.
    std::size_t gathered_per_row() const {
      return config_.implicit ? static_cast<std::size_t>(std::min(config_.block_size, config_.rank)) : 1;
    }
    // The user rows and their AdaGrad sums as they stand: copies of the host's, or downloaded from the
    // GPU, which holds them with --device gpu.
    std::vector<double> current_user_factors() const;
    std::vector<double> current_user_gradient_sums() const;
    // With --device gpu: hands the user rows (and CCD++'s residuals) to the GPU, which holds them from
    // here on, and drops the host's copies, so that none can be read stale.
    void move_users_to_gpu();

    // What the shares of a checkpoint have given so far, while they come in.
    struct Restoring {
      std::uint32_t shares = 0;   // taken
      std::uint32_t workers = 0;  // of the checkpointed run: as many shares
      bool kept = false;
      std::vector<double> item_factors;  // ccd: every item's row, by id, for the residuals
    };

    Config config_;
    kernels::RowLayout layout_;
    WorkerContext context_;
    int gpu_ = -1;  // --device gpu: the GPU's ordinal (kernels::pick_gpu); -1 on the CPU
    std::unique_ptr<kernels::FactorDevice> device_;  // --device gpu, from start() on
    std::uint32_t users_ = 0;  // of the whole job: 1 + the largest id in the training data
    std::uint32_t items_ = 0;
    std::vector<double> user_counts_;  // its users
    std::vector<double> item_counts_;  // every item
    Cells train_;
    Cells test_;
    // --implicit --test: per user row, the items met in training and the held-out ones less those
    // (global ids, increasing), and the best items so far of an evaluation's rotation.
    std::vector<std::vector<std::uint32_t>> seen_;
    std::vector<std::vector<std::uint32_t>> held_out_;
    std::vector<std::uint32_t> ranked_rows_;  // the users who count: held-out items and factors
    std::vector<TopItems> top_;               // one per ranked row
    std::vector<double> cold_test_;           // test ratings of unknown users or items, until start()
    double cold_squared_error_ = 0;           // theirs, predicted by the mean
    double cold_absolute_error_ = 0;
    double mean_ = 0;
    double offset_origin_ = 0;  // the rating Setup's offsets are taken from, the same on every worker
    std::vector<std::vector<double>> residuals_;  // ccd: one per training rating, cell by cell (CPU)
    double scale_ = 1;                            // rating_scale()
    double lambda_ = 0;                           // in internal units
    std::vector<double> user_factors_;  // on the CPU; with --device gpu only until they are on the GPU
    std::vector<double> user_gradient_sums_;
    std::vector<double> numerator_;  // ccd, while a user round gathers
    std::vector<double> denominator_;
    int lifted_ = -1;
    bool narrow_ = false;               // ccd: the home block is out as a narrow copy
    std::vector<double> home_factors_;  // its full rows meanwhile
    bool kept_ = false;                 // early stopping: the best model so far, as part() hands it over
    std::vector<double> kept_user_factors_;
    std::vector<double> kept_item_factors_;
    std::vector<double> error_by_group_;
    std::vector<double> absolute_by_group_;
    std::vector<double> test_error_by_group_;
    std::optional<Restoring> restoring_;
  };

  class Coordinator {
   public:
    Coordinator(const Config& config, const Setup& summed, int blocks);
    std::vector<std::string> trace_columns() const;
    Step schedule();
    void aggregate(const Step& step, const Partial& summed);
    bool wants_evaluation() const { return iteration_done_; }
    Report report(const Stats& summed);
    void finish(const Summary& summary, const std::vector<Part>& parts);
    Progress save() const;
    void restore(const Progress& progress);

   private:
    std::uint32_t pick_component();
    // --implicit: W'W (users) or H'H, k x k.
    std::vector<double>& gram(bool users) { return users ? gram_users_ : gram_items_; }
    // Between iterations: no component's update under way (sgd: always). A run resumed from a
    // checkpoint taken within an iteration measures its first --tol decrease from the next boundary.
    bool at_iteration_boundary() const;

    Config config_;
    Setup setup_;
    double scale_;
    double lambda_;
    kernels::RowLayout layout_;
    // ccd
    std::vector<double> component_decrease_;
    std::uint32_t component_ = 0;
    int rounds_left_ = 0;  // of the current component's update
    double decrease_ = 0;  // of the current component's update so far
    std::uint64_t component_updates_ = 0;
    std::vector<std::uint32_t> sweep_order_;
    // both
    std::uint64_t iterations_ = 0;
    bool iteration_done_ = false;
    // The last iteration boundary evaluated: what --tol measures the next iteration's decrease from.
    struct Boundary {
      std::uint64_t iterations = 0;
      double objective = 0;
    };
    std::optional<Boundary> last_boundary_;
    // --implicit: the Gram matrices, summed by a Gram round at the start (and after a resume) and kept
    // up to date by every round's row.
    std::vector<double> gram_users_, gram_items_;
    bool grams_known_ = false;
    // early stopping: the best test RMSE of any evaluation so far (several may fall in one iteration)
    double best_test_rmse_ = std::numeric_limits<double>::infinity();
    std::uint64_t best_iteration_ = 0;
  };
};

// The standard deviation of the training ratings, the unit of the internal ratings (1 with --implicit).
double rating_scale(const MatrixFactorization::Setup& summed, const Config& config);

// --implicit: whether a line of `path` is an interaction (a count above 0); refuses a negative count at
// its line.
bool is_interaction(const std::string& path, const io::Rating& rating);

// --implicit: a count's confidence less 1, c - 1 (Config).
double confidence_extra(double count, const Config& config);

}  // namespace schmp::mf
