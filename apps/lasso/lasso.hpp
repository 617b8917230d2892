// Lasso as a SchMP program: minimise (1/2n) ||y - X beta||^2 + lambda ||beta||_1 by scheduled
// parallel coordinate descent.
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
// retired, never scheduled again, and left out of later evaluations, so that the work shrinks to the
// coefficients that can still matter. Each evaluation also refreshes every live coefficient's
// priority with the step it would take now, so that coefficients the sampler has not visited lately
// but that would move are found at once.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/column_kernel.hpp"
#include "schmp/program.hpp"

namespace schmp::lasso {

struct Config {
  std::string data;    // LIBSVM (1-based) or MatrixMarket file
  std::string labels;  // labels of a MatrixMarket matrix
  double lambda = 0;   // the L1 weight; when 0, lambda_ratio * lambda_max
  double lambda_ratio = 0.1;
  double tol = 1e-6;   // stop at relative duality gap <= tol
  double rho = 0.1;    // dependency threshold on |cos(x_j, x_k)|; 1 switches the check off
  std::string output;  // model file
  std::string trace;   // named in the closing message only
};

double soft_threshold(double z, double threshold);

// Throws std::runtime_error naming the flag when a setting is out of range.
void check_config(const Config& config);

struct Lasso {
  using Config = lasso::Config;

  struct Setup {
    std::vector<double> xty;           // X^T y
    std::vector<double> column_norms;  // ||x_j||^2
    double yy = 0;                     // ||y||^2
    double rows = 0;
    template <class V>
    void visit(V& v) {
      v(xty, column_norms, yy, rows);
    }
  };
  struct Stats {
    std::vector<double> gradient;  // x_j . r for every coefficient not retired, in index order
    double rr = 0;                 // ||r||^2
    double yr = 0;                 // y . r
    template <class V>
    void visit(V& v) {
      v(gradient, rr, yr);
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
    template <class V>
    void visit(V& v) {
      v(params, delta, retired);
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
    void apply(const Commit& commit);

   private:
    io::SparseRows rows_;  // released once the kernel holds the data
    std::size_t columns_in_data_ = 0;
    Eigen::VectorXd y_;
    std::unique_ptr<kernels::ColumnKernel> kernel_;
    std::vector<ParamIndex> active_;  // not retired, in index order
  };

  class Coordinator {
   public:
    Coordinator(const Config& config, std::size_t num_params, const Setup& setup);
    static std::vector<std::string> trace_columns();
    std::vector<double> initial_changes() const;
    Commit aggregate(const Schedule& schedule, const Partial& summed, Priorities& priorities);
    Report report(const Stats& summed, Priorities& priorities);
    void finish(const Summary& summary);

   private:
    // How much a change of beta_j moves the fitted values, relative to ||y||: the priority.
    double fitted_change(ParamIndex j, double delta) const;

    Config config_;
    double n_;
    double lambda_;
    double lambda_max_;
    double yy_;
    Eigen::VectorXd beta_;
    Eigen::VectorXd column_norms_;
    std::vector<double> initial_changes_;
    std::vector<ParamIndex> active_;  // not retired, in index order: the order of Stats::gradient
    std::vector<bool> retired_;
    std::vector<ParamIndex> newly_retired_;  // to ship with the next commit
  };

  // The dependency filter: a block keeps only columns with |cos(x_a, x_b)| < rho for every pair. It
  // reads the owned columns from the whole file. To test a candidate against the whole block at once,
  // the kept columns' entries are threaded by row: a candidate's cosines with every kept column cost
  // one pass over its own rows plus the entries it meets there. Long columns (dense features, popular
  // items) would make that pass the bulk of a round, and late in a solve the same few coefficients
  // are drawn round after round: so the verdicts on pairs involving a long column are remembered,
  // and a kept column is threaded only when a candidate's verdict is not already known.
  class Dependency {
   public:
    Dependency(const Config& config, ParamRange owned);
    void clear();
    void prepare(ParamIndex candidate) const;
    bool admit(ParamIndex candidate);

   private:
    // Verdicts on pairs of columns, in an open-addressed table emptied when it fills up.
    class PairMemo {
     public:
      enum class Verdict : std::uint8_t { kUnknown, kIndependent, kInterferes };
      Verdict find(ParamIndex a, ParamIndex b) const;
      void insert(ParamIndex a, ParamIndex b, bool interferes);

     private:
      std::size_t slot_of(std::uint64_t key) const;
      std::vector<std::uint64_t> slots_;  // 0 when empty, else (pair key << 1) | interferes
      std::size_t used_ = 0;
    };
    struct Entry {
      std::int32_t next;   // next entry of a kept column on the same row, or -1
      std::uint32_t slot;  // which kept column
      float value;
    };
    struct Kept {
      ParamIndex column;
      bool threaded;
    };
    std::size_t length(ParamIndex column) const {
      return start_[column - owned_.begin + 1] - start_[column - owned_.begin];
    }
    bool is_long(ParamIndex column) const;
    void thread(std::uint32_t slot);

    double rho_;
    ParamRange owned_;
    // The owned columns, normalised to unit length.
    std::vector<std::size_t> start_;
    std::vector<std::uint32_t> row_;
    // Single precision: the test compares cosines with rho, and the halved memory traffic matters
    // because each round reads the columns of every candidate from memory.
    std::vector<float> value_;
    PairMemo memo_;
    // The block being built.
    std::vector<Kept> kept_;
    std::vector<std::int32_t> row_head_;  // per row: its first threaded entry, or -1
    std::vector<std::uint32_t> touched_rows_;
    std::vector<Entry> entries_;
    std::vector<double> cosines_;         // per kept column, for the candidate being tested
    std::vector<std::uint32_t> unknown_;  // kept slots whose verdict with the candidate is not known
  };
};

}  // namespace schmp::lasso
