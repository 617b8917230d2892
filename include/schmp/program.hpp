// A dynamic-schedule program: each round the schedulers pick a block of parameters, by priority and
// through the dependency test; every worker computes its partial results for the block on its own data;
// the coordinator sums them, commits new values, and ships the commit back to every worker.
//
//   struct P {
//     using Config = ...;                   // plain data, filled by main() from the flags
//
//     class Worker {                        // one per worker rank: owns its part of the data
//      public:
//       Worker(const Config&, const WorkerContext&);  // reads only its own part (peers.hpp)
//       std::size_t num_params() const;               // the parameter count its data implies
//       Partial update(const Schedule&);              // partial results for the scheduled block
//       void apply(const Commit&);                    // bring its state in line with a commit
//       Stats evaluate() const;                       // its share of the objective
//     };
//     class Coordinator {                   // one per job: owns the model
//      public:
//       Coordinator(const Config&, std::size_t num_params);
//       Commit aggregate(const Schedule&, const Partial& summed, Priorities&);
//       double report(const Stats& summed);           // the objective; the run stops when it stops
//                                                     // falling. Or Report: the objective, converged?
//     };
//   };
//
// Partial (summed over the workers every round), Commit (shipped from the coordinator to every worker;
// often schmp::Deltas, how far each parameter moved) and Stats (summed over the workers at every
// evaluation) are messages: a number, a vector, or a struct listing its fields with SCHMP_FIELDS
// (message.hpp). They are the types the functions return; a program may also name them (using Partial).
// Config is any copyable value. main() is `return schmp::Job(argc, argv, usage).run<P>(config);` (run.hpp).
//
// Optional members, each with a stock default. A program that has half of one fails to compile, with a
// message that names it.
//   Setup       struct Setup { visit() } summed once before the first round, from Setup Worker::setup()
//               const; the Coordinator is then made as Coordinator(const Config&, std::size_t, const
//               Setup& summed). Default: none.
//   start       void Worker::start(std::size_t num_params): the job's count, the largest over the
//               workers, before setup(). Default: nothing.
//   trace       std::vector<std::string> Coordinator::trace_columns() const: names of Report::columns.
//               Default: none.
//   priorities  std::vector<double> Coordinator::initial_changes() const: a first change per parameter,
//               which seeds the schedulers' weights. Default: 1 for every parameter.
//   retiring    Report Coordinator::report(const Stats&, Priorities&): a report that may refresh
//               priorities or retire parameters. Default: report(const Stats&).
//   finish      void Coordinator::finish(const Summary&): write the model, print the result. Default:
//               a line with how the run ended and the objective.
//   pacing      bool Coordinator::wants_evaluation() const: asked after every round, for programs with
//               outer iterations. Default: every --eval_every rounds, or (0) an eighth of a sweep over
//               the live parameters.
//   evaluation  std::size_t Coordinator::evaluation_size() const: how many parameters the next
//               evaluation covers (a working set's), which sets that default pace: an evaluation of a
//               small set costs little, so it may come often. Default: the live parameters.
//   prefetch    void Worker::prefetch(const Schedule&) const, void Coordinator::prefetch(const
//               Schedule&) const, either or both: where one process takes a block's parameters one at
//               a time (--in_order), each first hears of the whole block, to fetch its data so that the
//               cache misses overlap. Default: nothing.
//   Dependency  class P::Dependency, made as Dependency(const Config&, ParamRange owned, const
//               DataColumns&) with bool interferes(ParamIndex, ParamIndex) const, or with void clear()
//               and bool admit(ParamIndex), a filter of the block being built. Default: NoDependency.
//   rows        const io::SparseRows& Worker::rows() const (schmp/io.hpp), until start(): the rows
//               whose columns the Dependency sees (DataColumns), wherever the workers run. A static bool
//               Dependency::takes_columns(const Config&) may decline them; a void
//               Dependency::prepare(ParamIndex) hears of a candidate early, to fetch its data.
//   checkpoints struct Saved { visit() }, Saved Coordinator::save() const and Commit
//               Coordinator::restore(const Saved&, Priorities&) (throws when the settings differ): for
//               --checkpoint and --resume. Default: a run cannot be checkpointed.
//   result      std::vector<double> Coordinator::result() const, asked after finish(): what a job played
//               by Job::run_each (run.hpp) hands back. Default: nothing.
//   inputs      std::vector<std::string> Config::inputs() const: the data files a checkpoint is tied to.
//   files       io::RunFiles Config::files() const (output.hpp): every file read and written by flag, so
//               that an output that would overwrite an input is refused before any work.
//
// A summed message must have the same shape on every worker: size its vectors by the job (num_params,
// a Schedule's length), never by the worker's own data. One process on the CPU updates a block's
// parameters one after another (--in_order), so test a program with several ranks too.
// docs/programming.md has the call order, evaluations, the dependency test and checkpoints in full.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace schmp {

using ParamIndex = std::uint32_t;

// The block of parameters that one round updates, in the order the schedulers chose them.
struct Schedule {
  std::uint64_t round = 0;  // counted from the run's start, on through a resume
  std::vector<ParamIndex> params;
  bool ends_sweep = false;  // with --cyclic: the block finishes a sweep of every scheduler
  bool settled = false;     // with --cyclic: no parameter is left moving (the block is drawn by weight)

  template <class Visitor>
  void visit(Visitor& v) {
    v(round, params, ends_sweep, settled);
  }
};

// The commit of many programs: how far each scheduled parameter moved, in the block's order.
struct Deltas {
  std::vector<ParamIndex> params;
  std::vector<double> deltas;

  template <class Visitor>
  void visit(Visitor& v) {
    v(params, deltas);
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
// (proven at their final value, e.g. by a safe screening rule): those are not scheduled again unless
// revived. Reporting a parameter's last change again costs next to nothing: only changes that differ
// from a parameter's last one travel to the schedulers, so an evaluation may refresh every priority.
class Priorities {
 public:
  void set(ParamIndex param, double change) { changes_.emplace_back(param, change); }
  void retire(ParamIndex param) { retired_.push_back(param); }
  // A retired parameter scheduled again, its proof no longer holding (at a path's next lambda). It
  // comes back drawn at the weight of no change, until a change is set. Within one report the
  // retirements come first, then the revivals, then the changes.
  void revive(ParamIndex param) { revived_.push_back(param); }
  const std::vector<std::pair<ParamIndex, double>>& changes() const { return changes_; }
  const std::vector<ParamIndex>& retired() const { return retired_; }
  const std::vector<ParamIndex>& revived() const { return revived_; }
  void clear() {
    changes_.clear();
    retired_.clear();
    revived_.clear();
  }

 private:
  std::vector<std::pair<ParamIndex, double>> changes_;
  std::vector<ParamIndex> retired_;
  std::vector<ParamIndex> revived_;
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

// What Job::run_each (run.hpp) gives every rank.
struct EachRun {
  int status = 0;                            // the exit status: 0 when every job ran to its end
  std::vector<std::vector<double>> results;  // each job's Coordinator::result(), in order; empty on failure
};

// A dynamic program's messages are the types its functions return: Worker::update's is the Partial,
// Worker::evaluate's the Stats, Coordinator::aggregate's the Commit. A program may also name them
// (using Partial = ...), as the bundled apps do.
template <class P>
using PartialOf = std::remove_cvref_t<decltype(std::declval<typename P::Worker&>().update(
    std::declval<const Schedule&>()))>;
template <class P>
using StatsOf = std::remove_cvref_t<decltype(std::declval<const typename P::Worker&>().evaluate())>;
template <class P>
using CommitOf = std::remove_cvref_t<decltype(std::declval<typename P::Coordinator&>().aggregate(
    std::declval<const Schedule&>(), std::declval<const PartialOf<P>&>(), std::declval<Priorities&>()))>;

// The members every dynamic program has (the optional ones are checked where Job::run uses them).
template <class P>
concept DynamicProgram = requires(typename P::Worker& worker, const typename P::Worker& const_worker,
                                  const Schedule& schedule) {
  typename P::Config;
  { const_worker.num_params() } -> std::convertible_to<std::size_t>;
  const_worker.evaluate();
  worker.update(schedule);
}
&&requires(typename P::Worker& worker, typename P::Coordinator& coordinator, const Schedule& schedule,
           const PartialOf<P>& partial, const CommitOf<P>& commit, const StatsOf<P>& stats,
           Priorities& priorities) {
  coordinator.aggregate(schedule, partial, priorities);
  worker.apply(commit);
  requires requires {
    { coordinator.report(stats, priorities) } -> std::same_as<Report>;
  } || requires {
    { coordinator.report(stats) } -> std::same_as<Report>;
  } || requires {
    { coordinator.report(stats) } -> std::same_as<double>;
  };
};

// The two forms of a dependency test (above).
template <class D>
concept PairwiseDependency = requires(const D& d, ParamIndex j) {
  { d.interferes(j, j) } -> std::convertible_to<bool>;
};
template <class D>
concept BlockDependency = requires(D& d, ParamIndex j) {
  d.clear();
  { d.admit(j) } -> std::convertible_to<bool>;
};

namespace io {
struct SparseRows;
}  // namespace io

// What a scheduler's dependency test sees of the data: every row's entries in the columns the scheduler
// owns (a row may hold others too, which a test ignores), and the data's column count. The engine makes
// it wherever the rows live: from the job's only worker when it runs in this process, else gathered from
// the workers. `rows` is null when the program's Worker has no rows() or takes_columns() declined them.
// It is valid only while the Dependency's constructor runs: copy what the test needs.
struct DataColumns {
  const io::SparseRows* rows = nullptr;
  std::uint32_t columns = 0;
};

// A dependency test that never objects: the stock one, for parameters that never interfere.
struct NoDependency {
  template <class Config>
  NoDependency(const Config&, ParamRange, const DataColumns&) {}
  bool interferes(ParamIndex, ParamIndex) const { return false; }
};

// Checkpoints: a program that can save its state and go on from it.
template <class P>
concept SavesDynamic = requires(const typename P::Coordinator& const_coordinator,
                                typename P::Coordinator& coordinator, const typename P::Saved& saved,
                                Priorities& priorities) {
  { const_coordinator.save() } -> std::same_as<typename P::Saved>;
  { coordinator.restore(saved, priorities) } -> std::same_as<typename P::Commit>;
};

}  // namespace schmp
