// The byte-level view of a program that the runtime works with. schmp::Job::run<P> builds it from a
// typed program; users never implement these classes themselves.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <typeinfo>
#include <vector>

#include "schmp/dataset.hpp"
#include "schmp/internal/options.hpp"
#include "schmp/message.hpp"
#include "schmp/output.hpp"
#include "schmp/program.hpp"

namespace schmp::detail {

// A program's C++ type, as written in the source ("schmp::lasso::Lasso"): what a checkpoint is tied
// to, so that a renamed binary resumes its own checkpoints and another program's are refused.
std::string program_type(const std::type_info& type);

class WorkerRole {
 public:
  virtual ~WorkerRole() = default;
  virtual std::size_t num_params() const = 0;
  virtual void start(std::size_t num_params) = 0;
  virtual Flat setup() const = 0;
  virtual Flat evaluate() const = 0;
  virtual Flat update(const Schedule& schedule) = 0;
  virtual void apply(std::span<const std::byte> commit) = 0;
  // Its rows, until start(), for programs whose Worker has rows(): the schedulers' dependency tests
  // take their columns from them. Null for the others.
  virtual const io::SparseRows* rows() const { return nullptr; }
};

class CoordinatorRole {
 public:
  virtual ~CoordinatorRole() = default;
  virtual std::vector<std::string> trace_columns() const = 0;
  virtual void setup(std::size_t num_params, const Flat& summed) = 0;
  virtual std::vector<double> initial_changes() const = 0;
  virtual Bytes aggregate(const Schedule& schedule, const Flat& summed, Priorities& priorities) = 0;
  virtual Report report(const Flat& summed, Priorities& priorities) = 0;
  // A round in a one-process job (--in_order): the block's parameters one after another, each one's
  // partial computed by `worker` (the job's only worker, in this process) after the commit of the one
  // before is applied, until the block ends or the program asks for an evaluation.
  virtual void update_in_order(WorkerRole& worker, const Schedule& block, Priorities& priorities) = 0;
  // Whether the program paces evaluations itself (see program.hpp), and whether it asks for one now.
  virtual bool paces_evaluations() const = 0;
  virtual bool wants_evaluation() const = 0;
  // How many parameters the next evaluation covers: the program's evaluation_size(), else `live`.
  virtual std::size_t evaluation_size(std::size_t live) const = 0;
  virtual void finish(const Summary& summary) = 0;
  virtual std::vector<double> result() const = 0;  // the program's optional result(), after finish()
  // Checkpoints, for programs with a Saved message: the model as bytes, and back; restore() returns
  // the commit that brings workers fresh from their data to the restored model.
  virtual bool saves() const = 0;
  virtual Bytes save() const = 0;
  virtual Bytes restore(std::span<const std::byte> saved, Priorities& priorities) = 0;
};

// The dependency filter of one scheduler, applied while a block is built.
class DependencyRole {
 public:
  virtual ~DependencyRole() = default;
  virtual void clear() = 0;                        // a new, empty block
  virtual void prepare(ParamIndex candidate) = 0;  // to be offered soon: a hint to fetch its data
  virtual bool admit(ParamIndex candidate) = 0;    // keeps it (and says so) if it interferes with none kept
};

// Factories for the roles a rank plays; each is called only on the ranks that play that role.
struct ProgramRoles {
  std::function<std::unique_ptr<WorkerRole>(const WorkerContext&)> make_worker;
  std::function<std::unique_ptr<CoordinatorRole>()> make_coordinator;
  // whole_data_worker: this process's worker when it is the job's only one (so holds every row), before
  // its start(), else null; columns: the owned columns of every worker's rows, gathered from the
  // workers, when dependency_takes_columns and the workers run in other processes, else null. A
  // program's Dependency may be made from either instead of reading the data again.
  std::function<std::unique_ptr<DependencyRole>(ParamRange, const WorkerRole* whole_data_worker,
                                                const io::ColumnBlock* columns)>
      make_dependency;
  bool dependency_takes_columns = false;
  std::string program_name;         // for messages: "schmp-lasso: error: ..."
  std::string program_type;         // program_type(typeid(P)), which a checkpoint is tied to
  std::vector<std::string> inputs;  // the data files a checkpoint is tied to
  io::RunFiles files;               // the files the program reads and writes, by flag (its Config's)
};

// Runs the job on this rank; returns the process exit status.
int launch(const ProgramRoles& roles, const RunOptions& options);

// Plays the jobs side by side on groups of ranks (Job::run_each): every rank gets every job's result.
EachRun launch_each(const std::vector<ProgramRoles>& jobs, RunOptions options);

// What a rotation round does: fill the blocks once before the first evaluation (programs with
// prepare()), update, or evaluate.
enum class RoundKind { kPrepare, kUpdate, kEvaluate };

// A rotation program's worker (rotation.hpp): it holds one block of the model at a time.
class RotationWorkerRole {
 public:
  virtual ~RotationWorkerRole() = default;
  virtual Flat setup() const = 0;
  virtual void start(const Flat& summed) = 0;  // also makes the home block
  virtual bool prepares() const = 0;
  virtual bool evaluates_blocks() const = 0;  // whether an evaluation visits every block
  virtual void begin_update(std::span<const std::byte> step) = 0;
  virtual void work(RoundKind kind, std::uint32_t block) = 0;  // one sub-round on the block it holds
  virtual Flat end_round(RoundKind kind) = 0;                  // empty after a preparation
  // Programs with a Shared message: after each update sub-round, share() from every worker is summed
  // and handed to every worker's absorb().
  virtual bool shares() const = 0;
  virtual Flat share() = 0;
  virtual void absorb(const Flat& summed) = 0;
  virtual Bytes take_block() = 0;  // the held block, to pass on
  virtual void put_block(std::span<const std::byte> block) = 0;
  virtual Bytes part() const = 0;
  virtual void keep() = 0;  // the model as it stands is the best so far
  // Checkpoints, for programs with a Saved message: this worker's share of the model state; then, after
  // start(), each share of the checkpointed run's workers (any count) in turn to take its own part
  // from, and finish_restore() after them (also when there are none).
  virtual bool saves() const = 0;
  virtual Bytes save() const = 0;
  virtual void restore(std::span<const std::byte> share) = 0;
  virtual void finish_restore() = 0;
};

class RotationCoordinatorRole {
 public:
  virtual ~RotationCoordinatorRole() = default;
  virtual std::vector<std::string> trace_columns() const = 0;
  virtual Bytes schedule() = 0;
  virtual void aggregate(const Flat& summed) = 0;  // of the step schedule() gave last
  virtual bool wants_evaluation() const = 0;
  virtual Report report(const Flat& summed) = 0;
  // parts[w] from worker w: each part's bytes are let go once decoded, so they are not held twice.
  virtual void finish(const Summary& summary, std::vector<Bytes> parts) = 0;
  virtual Bytes save() const = 0;  // the coordinator's own state (its Progress)
  virtual void restore(std::span<const std::byte> progress) = 0;
};

struct RotationRoles {
  std::function<std::unique_ptr<RotationWorkerRole>(const WorkerContext&)> make_worker;
  std::function<std::unique_ptr<RotationCoordinatorRole>(const Flat& summed_setup, int blocks)>
      make_coordinator;
  std::string program_name;
  std::string program_type;
  std::vector<std::string> inputs;
  io::RunFiles files;
};

int launch(const RotationRoles& roles, const RunOptions& options);

}  // namespace schmp::detail
