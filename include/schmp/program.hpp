// The SchMP programming interface: what a user writes to get a scheduled model-parallel solver.
//
// A program is a type P with a Config, three summed messages, one shipped message and three roles:
//
//   struct P {
//     struct Config { ... };                  // plain data, filled by the app's main from its flags
//     struct Setup   { ... visit() };         // summed over workers once, before the first round
//     struct Stats   { ... visit() };         // summed over workers at every evaluation
//     struct Partial { ... visit() };         // summed over workers every round
//     struct Commit  { ... visit() };         // shipped from the coordinator to every worker
//
//     class Worker {                          // one per worker rank: owns its part of the data
//      public:
//       Worker(const Config&, const WorkerContext&);   // reads only its own partition (peers.hpp: to
//                                                      // hand other workers' records to them)
//       std::size_t num_params() const;                // parameter count its data implies
//       void start(std::size_t num_params);            // the job's count (max over workers)
//       Setup setup() const;
//       Stats evaluate() const;                        // partial objective and statistics
//       Partial update(const Schedule&);               // partial results for the scheduled block
//       void apply(const Commit&);                     // bring its state in line with a commit
//     };
//     class Coordinator {                     // one per job: owns the model
//      public:
//       Coordinator(const Config&, std::size_t num_params, const Setup& summed);
//       std::vector<std::string> trace_columns() const;   // app columns after the objective
//       std::vector<double> initial_changes() const;       // one per parameter, seeds the priorities
//       Commit aggregate(const Schedule&, const Partial& summed, Priorities&);
//       Report report(const Stats& summed, Priorities&);  // may retire parameters
//       void finish(const Summary&);                       // write the model, print the result
//       bool wants_evaluation() const;                     // optional: see below
//     };
//     class Dependency {                      // one per scheduler: the pluggable dependency test
//      public:
//       Dependency(const Config&, ParamRange owned);
//       Dependency(const Config&, ParamRange owned, const Worker&);  // optional: used instead when the
//                                       // job's only worker runs in this process (so holds every row),
//                                       // before its start(): what it read need not be read again
//       Dependency(const Config&, ParamRange owned, const io::ColumnBlock&);  // optional, with a
//                                       // Worker::rows() (const io::SparseRows&, until start()): used
//                                       // when the workers run in other processes, which send each
//                                       // scheduler their rows' entries in its columns (rows in worker
//                                       // order), so that no scheduler reads the data itself; a
//                                       // static bool takes_columns(const Config&) may decline them
//       bool interferes(ParamIndex a, ParamIndex b) const; // may a and b not be updated together?
//     };                                   // (or, faster: void clear(); bool admit(ParamIndex),
//                                          //  a filter that keeps the block being built itself,
//                                          //  with an optional prepare(ParamIndex) prefetch hint)
//   };
//
// The calls come in this order: each Worker is made and says num_params(); the Dependencies are made;
// every Worker gets start() with the job's count, then setup(); the Coordinator is made from the summed
// Setup; then rounds of update() and apply(), with evaluate() at evaluations.
//
// A summed message is added up field by field, as doubles, so it must have the same shape on every
// worker: size its vectors by the job (start()'s num_params, a Schedule's length), never by what the
// worker's own data holds. The framework compares the first message of each kind across the workers
// and stops the job when they differ; a Report's columns must likewise match trace_columns().
//
// Evaluations (a Stats exchange, a report and a trace row) come every --eval_every rounds, by default
// every eighth of a sweep over the live parameters. A program whose algorithm has outer iterations (a
// Newton method whose inner solve is the scheduled coordinate descent, say) paces them itself instead:
// if its Coordinator has wants_evaluation(), the framework asks it after every round and evaluates
// when it says so (and still every --eval_every rounds when that flag is given).
//
// In a one-process job on the CPU (--in_order, the default) a round takes its block one parameter at a
// time: Worker::update() sees a Schedule of one parameter, Coordinator::aggregate() its partial, and
// Worker::apply() the commit, before the next parameter's update(); a program that wants an evaluation
// midway ends the round there. No two parameters of a block then interfere, and the Dependency is
// not used.
//
// Checkpoints (--checkpoint, --resume) need two optional members more, and a message:
//
//     struct Saved { ... visit() };              // the model, in a form any rank count resumes from
//     Saved Coordinator::save() const;           // at an evaluation
//     Commit Coordinator::restore(const Saved&, Priorities&);
//
// restore() takes the saved model (throwing std::runtime_error when it was fitted with other settings)
// and returns the commit that brings workers fresh from their data to it; it may retire parameters.
// The framework keeps the rest: rounds, time, the schedulers' weights and the trace. Config may name
// its data files, `std::vector<std::string> inputs() const`, so that a checkpoint is only resumed on
// the same data, and every file it reads and writes by flag, `io::RunFiles files() const`
// (schmp/output.hpp), so that an output that would overwrite an input or another output is refused
// before any work.
//
// and its main() is `schmp::Job job(argc, argv, usage); return job.run<P>(config);` (run.hpp). Every
// message exchange, every MPI call and the choice of which rank plays which role belong to the
// framework.
//
// This is a *dynamic-schedule* program: each round the schedulers pick a block of parameters by
// priority (parameters still changing are picked more often) and filter it with the dependency test.
// Static-schedule programs (model blocks rotating among workers, as matrix factorization and LDA use)
// have the same verbs with a schedule that names which model block each worker holds.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

namespace schmp {

using ParamIndex = std::uint32_t;

// The block of parameters that one round updates, in the order the schedulers chose them.
struct Schedule {
  std::uint64_t round = 0;  // counted from the run's start, on through a resume
  std::vector<ParamIndex> params;

  template <class Visitor>
  void visit(Visitor& v) {
    v(round, params);
  }
};

// For a program that moves only `count` of a block's parameters (they interfered together): their
// positions in the block, spread over it and turning with the round. A block lists each scheduler's
// share in turn, so taking its first `count` would leave the later schedulers' parameters unmoved.
inline std::vector<std::size_t> spread_positions(const Schedule& block, std::size_t count) {
  const std::size_t size = block.params.size();
  std::vector<std::size_t> positions(std::min(count, size));
  if (count >= size) {
    std::iota(positions.begin(), positions.end(), std::size_t{0});
    return positions;
  }
  const std::size_t start = static_cast<std::size_t>(block.round % size);
  for (std::size_t i = 0; i < count; ++i) positions[i] = (start + i * size / count) % size;
  return positions;
}

// The contiguous range of parameters one scheduler owns: [begin, end).
struct ParamRange {
  ParamIndex begin = 0;
  ParamIndex end = 0;
  std::size_t size() const { return end - begin; }
  bool contains(ParamIndex j) const { return j >= begin && j < end; }
};

// Where a worker's kernels run (--device): on its CPU cores with oneTBB, or on one CUDA GPU.
enum class Device { cpu, gpu };

class Peers;

// What a worker knows about its place in the job.
struct WorkerContext {
  int index = 0;    // 0 .. count-1, in rank order
  int count = 1;    // number of workers
  int threads = 1;  // oneTBB threads this worker may use
  std::uint64_t seed = 0;
  Device device = Device::cpu;
  int index_on_host = 0;  // the worker's index among its host's workers: picks its GPU (index mod GPUs)
  Peers* peers =
      nullptr;  // the other workers, for collectives in the constructor: use peers_of() (peers.hpp)
};

// What the coordinator tells the schedulers about parameters: how much each updated one changed (the
// scheduler turns a change c into the sampling weight |c|^priority_power + eta), and which are done
// for good (proven at their final value, e.g. by a safe screening rule): those are never scheduled
// again. Reporting a parameter's last change again costs next to nothing: only changes that differ
// from a parameter's last one travel to the schedulers, so an evaluation may refresh every priority.
class Priorities {
 public:
  void set(ParamIndex param, double change) { changes_.emplace_back(param, change); }
  void retire(ParamIndex param) { retired_.push_back(param); }
  const std::vector<std::pair<ParamIndex, double>>& changes() const { return changes_; }
  const std::vector<ParamIndex>& retired() const { return retired_; }
  void clear() {
    changes_.clear();
    retired_.clear();
  }

 private:
  std::vector<std::pair<ParamIndex, double>> changes_;
  std::vector<ParamIndex> retired_;
};

// One evaluation of the model: a row of the convergence trace.
struct Report {
  double objective = 0;
  std::vector<double> columns;  // one value per Coordinator::trace_columns() entry
  bool converged = false;       // the program's own stopping test (e.g. duality gap <= tol)
  bool finished = false;        // the program has done the iterations it was asked for
  bool keep = false;            // rotation programs: the model as evaluated is the best so far, and
                                // every worker is to keep a copy of it (its keep())
};

// Where a run ended, handed to Coordinator::finish.
struct Summary {
  std::uint64_t rounds = 0;
  double seconds = 0;
  Report last;
  // "converged", "finished" (the program's iterations are done), "max_rounds", "max_seconds",
  // "signal" (SIGINT or SIGTERM), or "no parameter left to schedule" (all retired)
  std::string stopped_by;
};

}  // namespace schmp
