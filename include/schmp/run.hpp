// Running a program: schmp::Job owns MPI, flags and logging for the life of main(); Job::run<P>
// plays this rank's roles of program P and returns the exit status.
//
//   int main(int argc, char** argv) {
//     schmp::Job job(argc, argv, "usage: mpirun -np N my-app --data FILE [flags]");
//     return job.run<MyProgram>(MyProgram::Config{...from flags...});
//   }
#pragma once

#include <chrono>
#include <concepts>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "schmp/detail/roles.hpp"
#include "schmp/message.hpp"
#include "schmp/options.hpp"
#include "schmp/program.hpp"
#include "schmp/rotation.hpp"

namespace schmp {

template <class P>
concept DynamicProgram = requires(typename P::Worker& worker, const typename P::Worker& const_worker,
                                  typename P::Coordinator& coordinator,
                                  const typename P::Coordinator& const_coordinator,
                                  const typename P::Dependency& dependency, const Schedule& schedule,
                                  const typename P::Partial& partial, const typename P::Commit& commit,
                                  const typename P::Stats& stats, Priorities& priorities,
                                  const Summary& summary, std::size_t n, ParamIndex j) {
  typename P::Config;
  { const_worker.num_params() } -> std::convertible_to<std::size_t>;
  worker.start(n);
  { const_worker.setup() } -> std::same_as<typename P::Setup>;
  { const_worker.evaluate() } -> std::same_as<typename P::Stats>;
  { worker.update(schedule) } -> std::same_as<typename P::Partial>;
  worker.apply(commit);
  { const_coordinator.trace_columns() } -> std::same_as<std::vector<std::string>>;
  { const_coordinator.initial_changes() } -> std::same_as<std::vector<double>>;
  { coordinator.aggregate(schedule, partial, priorities) } -> std::same_as<typename P::Commit>;
  { coordinator.report(stats, priorities) } -> std::same_as<Report>;
  coordinator.finish(summary);
};

// The dependency test of a program comes in one of two forms: a pairwise test, which the framework
// applies between a candidate and every parameter already in the block, or a filter that keeps the
// block itself and can answer faster (clear() starts a block; admit(j) keeps j if it interferes with
// none kept and says whether it did; an optional prepare(j) hears of a candidate before it is offered,
// so that its data can be fetched early).
template <class D>
concept PairwiseDependency = requires(const D& d, ParamIndex j) {
  { d.interferes(j, j) } -> std::convertible_to<bool>;
};
template <class D>
concept BlockDependency = requires(D& d, ParamIndex j) {
  d.clear();
  { d.admit(j) } -> std::convertible_to<bool>;
};

// Checkpoints (program.hpp, rotation.hpp): a program that can save its state and go on from it.
template <class P>
concept SavesDynamic = requires(const typename P::Coordinator& const_coordinator,
                                typename P::Coordinator& coordinator, const typename P::Saved& saved,
                                Priorities& priorities) {
  { const_coordinator.save() } -> std::same_as<typename P::Saved>;
  { coordinator.restore(saved, priorities) } -> std::same_as<typename P::Commit>;
};
template <class P>
concept SavesRotation = requires(const typename P::Worker& const_worker, typename P::Worker& worker,
                                 const typename P::Block& const_block, typename P::Block& block,
                                 const typename P::Saved& share,
                                 const typename P::Coordinator& const_coordinator,
                                 typename P::Coordinator& coordinator, const typename P::Progress& progress) {
  { const_worker.save(const_block) } -> std::same_as<typename P::Saved>;
  worker.restore(share, block);
  worker.finish_restore(block);
  { const_coordinator.save() } -> std::same_as<typename P::Progress>;
  coordinator.restore(progress);
};

// The data files a program's Config names (its optional inputs()): a checkpoint is tied to them.
template <class Config>
std::vector<std::string> input_files(const Config& config) {
  if constexpr (requires {
                  { config.inputs() } -> std::convertible_to<std::vector<std::string>>;
                }) {
    return config.inputs();
  } else {
    return {};
  }
}

// The files a program's Config reads and writes (its optional files()), checked against each other.
template <class Config>
io::RunFiles run_files(const Config& config) {
  if constexpr (requires {
                  { config.files() } -> std::convertible_to<io::RunFiles>;
                }) {
    return config.files();
  } else {
    return {};
  }
}

// A dependency test that never objects: for programs whose parameters never interfere.
struct NoDependency {
  template <class Config>
  NoDependency(const Config&, ParamRange) {}
  bool interferes(ParamIndex, ParamIndex) const { return false; }
};

namespace detail {

class CommandLine;  // the parsed command line (runtime/command_line.hpp)

// A program's worker that keeps the rows it read until start() (program.hpp, Dependency).
template <class Worker>
concept HoldsRows = requires(const Worker& w) {
  { w.rows() } -> std::convertible_to<const io::SparseRows&>;
};

template <DynamicProgram P>
class TypedWorker final : public WorkerRole {
 public:
  TypedWorker(const typename P::Config& config, const WorkerContext& context) : worker_(config, context) {}
  std::size_t num_params() const override { return worker_.num_params(); }
  void start(std::size_t num_params) override { worker_.start(num_params); }
  const typename P::Worker& program_worker() const { return worker_; }
  typename P::Worker& program_worker() { return worker_; }
  Flat setup() const override { return flatten(worker_.setup()); }
  Flat evaluate() const override { return flatten(worker_.evaluate()); }
  Flat update(const Schedule& schedule) override { return flatten(worker_.update(schedule)); }
  void apply(std::span<const std::byte> commit) override {
    worker_.apply(deserialize<typename P::Commit>(commit));
  }
  const io::SparseRows* rows() const override {
    if constexpr (HoldsRows<typename P::Worker>) {
      return &worker_.rows();
    } else {
      return nullptr;
    }
  }

 private:
  typename P::Worker worker_;
};

template <DynamicProgram P>
class TypedCoordinator final : public CoordinatorRole {
  static constexpr bool kPaced = requires(const typename P::Coordinator& c) {
    { c.wants_evaluation() } -> std::convertible_to<bool>;
  };
  static constexpr bool kSaves = SavesDynamic<P>;
  static_assert(
      kSaves || !requires { typename P::Saved; },
      "a program with a Saved message needs Coordinator::save() and restore() (program.hpp)");

 public:
  explicit TypedCoordinator(const typename P::Config& config) : config_(config) {}
  std::vector<std::string> trace_columns() const override { return coordinator_->trace_columns(); }
  void setup(std::size_t num_params, const Flat& summed) override {
    coordinator_.emplace(config_, num_params, unflatten<typename P::Setup>(summed));
  }
  std::vector<double> initial_changes() const override { return coordinator_->initial_changes(); }
  Bytes aggregate(const Schedule& schedule, const Flat& summed, Priorities& priorities) override {
    return serialize(coordinator_->aggregate(schedule, unflatten<typename P::Partial>(summed), priorities));
  }
  Report report(const Flat& summed, Priorities& priorities) override {
    return coordinator_->report(unflatten<typename P::Stats>(summed), priorities);
  }
  double update_in_order(WorkerRole& worker, const Schedule& block, Priorities& priorities) override {
    using Clock = std::chrono::steady_clock;
    typename P::Worker& alone = static_cast<TypedWorker<P>&>(worker).program_worker();
    Schedule one;
    one.round = block.round;
    Clock::duration aggregating{};
    for (const ParamIndex param : block.params) {
      one.params.assign(1, param);
      const typename P::Partial partial = alone.update(one);
      const auto computed = Clock::now();
      auto commit = coordinator_->aggregate(one, partial, priorities);
      aggregating += Clock::now() - computed;
      alone.apply(commit);
      if (wants_evaluation()) break;
    }
    return std::chrono::duration<double>(aggregating).count();
  }
  void finish(const Summary& summary) override { coordinator_->finish(summary); }
  bool paces_evaluations() const override { return kPaced; }
  bool wants_evaluation() const override {
    if constexpr (kPaced) {
      return coordinator_->wants_evaluation();
    } else {
      return false;
    }
  }
  bool saves() const override { return kSaves; }
  Bytes save() const override {
    if constexpr (kSaves) {
      return serialize(coordinator_->save());
    } else {
      return {};
    }
  }
  Bytes restore(std::span<const std::byte> saved, Priorities& priorities) override {
    if constexpr (kSaves) {
      return serialize(coordinator_->restore(deserialize<typename P::Saved>(saved), priorities));
    } else {
      return {};
    }
  }

 private:
  typename P::Config config_;
  std::optional<typename P::Coordinator> coordinator_;
};

template <DynamicProgram P>
requires PairwiseDependency<typename P::Dependency> || BlockDependency<typename P::Dependency>
class TypedDependency final : public DependencyRole {
 public:
  // Whether the schedulers of this program take their columns from the workers (program.hpp).
  static bool takes_columns(const typename P::Config& config) {
    if constexpr (std::constructible_from<typename P::Dependency, const typename P::Config&, ParamRange,
                                          const io::ColumnBlock&> &&
                  HoldsRows<typename P::Worker>) {
      if constexpr (requires { P::Dependency::takes_columns(config); }) {
        return P::Dependency::takes_columns(config);
      } else {
        return true;
      }
    } else {
      return false;
    }
  }

  TypedDependency(const typename P::Config& config, ParamRange owned, const WorkerRole* whole_data_worker,
                  const io::ColumnBlock* columns)
      : dependency_(make(config, owned, whole_data_worker, columns)) {}
  void clear() override {
    if constexpr (BlockDependency<typename P::Dependency>) {
      dependency_.clear();
    } else {
      kept_.clear();
    }
  }
  void prepare(ParamIndex candidate) override {
    if constexpr (requires { dependency_.prepare(candidate); }) dependency_.prepare(candidate);
  }
  bool admit(ParamIndex candidate) override {
    if constexpr (BlockDependency<typename P::Dependency>) {
      return dependency_.admit(candidate);
    } else {
      for (ParamIndex other : kept_) {
        if (dependency_.interferes(candidate, other)) return false;
      }
      kept_.push_back(candidate);
      return true;
    }
  }

 private:
  static typename P::Dependency make(const typename P::Config& config, ParamRange owned,
                                     const WorkerRole* whole_data_worker, const io::ColumnBlock* columns) {
    if constexpr (std::constructible_from<typename P::Dependency, const typename P::Config&, ParamRange,
                                          const typename P::Worker&>) {
      if (whole_data_worker) {
        return typename P::Dependency(
            config, owned, static_cast<const TypedWorker<P>*>(whole_data_worker)->program_worker());
      }
    }
    if constexpr (std::constructible_from<typename P::Dependency, const typename P::Config&, ParamRange,
                                          const io::ColumnBlock&>) {
      if (columns) return typename P::Dependency(config, owned, *columns);
    }
    return typename P::Dependency(config, owned);
  }

  typename P::Dependency dependency_;
  std::vector<ParamIndex> kept_;
};

template <RotationProgram P>
class TypedRotationWorker final : public RotationWorkerRole {
  static constexpr bool kPrepares = requires(typename P::Worker & w, typename P::Block& b) {
    w.prepare(0u, b);
  };
  static constexpr bool kShares = requires { typename P::Shared; };
  static constexpr bool kEvaluatesBlocks = requires(typename P::Worker & w, const typename P::Block& b) {
    w.evaluate(0u, b);
  };
  static constexpr bool kSaves = SavesRotation<P>;
  static_assert(
      kSaves || !requires { typename P::Saved; },
      "a rotation program with a Saved message needs the save(), restore() and finish_restore() members of "
      "rotation.hpp");

 public:
  TypedRotationWorker(const typename P::Config& config, const WorkerContext& context)
      : worker_(config, context) {}
  Flat setup() const override { return flatten(worker_.setup()); }
  void start(const Flat& summed) override {
    worker_.start(unflatten<typename P::Setup>(summed));
    held_ = worker_.make_block();
  }
  void begin_update(std::span<const std::byte> step) override { step_ = deserialize<typename P::Step>(step); }
  bool prepares() const override { return kPrepares; }
  bool evaluates_blocks() const override { return kEvaluatesBlocks; }
  void work(RoundKind kind, std::uint32_t block) override {
    if (kind == RoundKind::kEvaluate) {
      if constexpr (kEvaluatesBlocks) worker_.evaluate(block, held_);
    } else if (kind == RoundKind::kUpdate) {
      worker_.update(step_, block, held_);
    } else if constexpr (kPrepares) {
      worker_.prepare(block, held_);
    }
  }
  Flat end_round(RoundKind kind) override {
    if (kind == RoundKind::kEvaluate) return flatten(worker_.end_evaluation(held_));
    if (kind == RoundKind::kUpdate) return flatten(worker_.end_update(step_, held_));
    return {};
  }
  bool shares() const override { return kShares; }
  Flat share() override {
    if constexpr (kShares) {
      return flatten(worker_.share());
    } else {
      return {};
    }
  }
  void absorb(const Flat& summed) override {
    if constexpr (kShares) worker_.absorb(unflatten<typename P::Shared>(summed));
  }
  Bytes take_block() override { return serialize(held_); }
  void put_block(std::span<const std::byte> block) override { held_ = deserialize<typename P::Block>(block); }
  Bytes part() const override { return serialize(worker_.part(held_)); }
  void keep() override {
    if constexpr (requires { worker_.keep(held_); }) worker_.keep(held_);
  }
  bool saves() const override { return kSaves; }
  Bytes save() const override {
    if constexpr (kSaves) {
      return serialize(worker_.save(held_));
    } else {
      return {};
    }
  }
  void restore(std::span<const std::byte> share) override {
    if constexpr (kSaves) worker_.restore(deserialize<typename P::Saved>(share), held_);
  }
  void finish_restore() override {
    if constexpr (kSaves) worker_.finish_restore(held_);
  }

 private:
  typename P::Worker worker_;
  typename P::Step step_;
  typename P::Block held_;
};

template <RotationProgram P>
class TypedRotationCoordinator final : public RotationCoordinatorRole {
 public:
  TypedRotationCoordinator(const typename P::Config& config, const Flat& summed_setup, int blocks)
      : coordinator_(config, unflatten<typename P::Setup>(summed_setup), blocks) {}
  std::vector<std::string> trace_columns() const override { return coordinator_.trace_columns(); }
  Bytes schedule() override {
    step_ = coordinator_.schedule();
    return serialize(step_);
  }
  void aggregate(const Flat& summed) override {
    coordinator_.aggregate(step_, unflatten<typename P::Partial>(summed));
  }
  bool wants_evaluation() const override { return coordinator_.wants_evaluation(); }
  Report report(const Flat& summed) override {
    return coordinator_.report(unflatten<typename P::Stats>(summed));
  }
  void finish(const Summary& summary, std::vector<Bytes> parts) override {
    std::vector<typename P::Part> typed;
    typed.reserve(parts.size());
    for (Bytes& part : parts) {
      typed.push_back(deserialize<typename P::Part>(part));
      Bytes().swap(part);
    }
    coordinator_.finish(summary, typed);
  }
  Bytes save() const override {
    if constexpr (SavesRotation<P>) {
      return serialize(coordinator_.save());
    } else {
      return {};
    }
  }
  void restore(std::span<const std::byte> progress) override {
    if constexpr (SavesRotation<P>) coordinator_.restore(deserialize<typename P::Progress>(progress));
  }

 private:
  typename P::Coordinator coordinator_;
  typename P::Step step_;
};

}  // namespace detail

// One-process subcommands beside a program's training run (`schmp-mf predict ...`):
//
//   if (schmp::take_subcommand(argc, argv, "predict"))
//     return schmp::run_tool(argc, argv, "usage: schmp-mf predict ...", [] { ...; return 0; });
//
// take_subcommand says whether argv[1] is `name` and, if so, drops it so that flags follow. run_tool
// parses the flags, runs `body`, and turns an exception into one line "program: error: message" and
// exit status 1.
bool take_subcommand(int& argc, char**& argv, const char* name);
int run_tool(int argc, char** argv, const std::string& usage, const std::function<int()>& body);

// "--NAME is not read WHERE" for the first of `flags` (names without dashes) that the command line or a
// flag file gave a value, or "" when none was: the flags of another mode (a model to predict with, given to
// training), which would otherwise be ignored, however wrong their paths. `where` is "in training",
// "by predict", ...
std::string unread_flag(std::initializer_list<const char*> flags, const std::string& where);

class Job {
 public:
  // Parses the command line (the flags of schmp/flags.hpp, --help and --flagfile, checked so that every
  // mistake is one line), sets up logging and, in a process a launcher started, MPI (one started without
  // mpirun is a job of one, which needs none). Every rank must then hold the same settings: the declared
  // flags, which a flag file or --fromenv could set apart on one host.
  Job(int& argc, char**& argv, const std::string& usage);
  ~Job();
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  // A command line the program itself finds wrong (a flag's value it cannot parse): prints
  // "program: error: message" once, from the first rank, and returns the status every rank exits with.
  int refuse(const std::string& message) const;

  template <DynamicProgram P>
  int run(const typename P::Config& config) {
    detail::ProgramRoles roles;
    roles.make_worker = [config](const WorkerContext& context) {
      return std::make_unique<detail::TypedWorker<P>>(config, context);
    };
    roles.make_coordinator = [config] { return std::make_unique<detail::TypedCoordinator<P>>(config); };
    roles.make_dependency = [config](ParamRange owned, const detail::WorkerRole* whole_data_worker,
                                     const io::ColumnBlock* columns) {
      return std::make_unique<detail::TypedDependency<P>>(config, owned, whole_data_worker, columns);
    };
    roles.dependency_takes_columns = detail::TypedDependency<P>::takes_columns(config);
    roles.program_name = name_;
    roles.program_type = detail::program_type(typeid(P));
    roles.inputs = input_files(config);
    roles.files = run_files(config);
    return detail::launch(roles, run_options_from_flags());
  }

  template <RotationProgram P>
  int run(const typename P::Config& config) {
    detail::RotationRoles roles;
    roles.make_worker = [config](const WorkerContext& context) {
      return std::make_unique<detail::TypedRotationWorker<P>>(config, context);
    };
    roles.make_coordinator = [config](const Flat& summed_setup, int blocks) {
      return std::make_unique<detail::TypedRotationCoordinator<P>>(config, summed_setup, blocks);
    };
    roles.program_name = name_;
    roles.program_type = detail::program_type(typeid(P));
    roles.inputs = input_files(config);
    roles.files = run_files(config);
    return detail::launch(roles, run_options_from_flags());
  }

 private:
  std::string name_;
  std::unique_ptr<detail::CommandLine> command_line_;  // what argc/argv point into after parsing
};

}  // namespace schmp
