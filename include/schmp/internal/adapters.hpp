// The engine's side of Job::run<P>: adapters that turn a typed program (program.hpp, rotation.hpp) into
// the byte-level roles the launcher plays (roles.hpp), with each optional member's stock default.
// Internal: a program never includes this header or names what it declares.
#pragma once

#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdio>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include "schmp/internal/options.hpp"
#include "schmp/internal/roles.hpp"
#include "schmp/message.hpp"
#include "schmp/program.hpp"
#include "schmp/rotation.hpp"

namespace schmp {

namespace detail {

// The optional members of a dynamic program (program.hpp), each checked whole: half of one is a
// compile error that names it.
template <class Worker>
concept HoldsRows = requires(const Worker& w) {
  { w.rows() } -> std::convertible_to<const io::SparseRows&>;
};
template <class P>
concept HasSetup = requires {
  typename P::Setup;
};
template <class P>
concept WorkerSetsUp = requires(const typename P::Worker& w) {
  w.setup();
};

template <class P>
struct DependencyOfImpl {
  using type = NoDependency;
};
template <class P>
requires requires { typename P::Dependency; }
struct DependencyOfImpl<P> {
  using type = typename P::Dependency;
};
// The program's dependency test, or the stock one that never objects.
template <class P>
using DependencyOf = typename DependencyOfImpl<P>::type;

// Whether T names a member `name` at all: a member of an optional name that cannot be called as
// program.hpp says is a mistake, not a reason to use the stock default.
#define SCHMP_NAMES(T, name) \
  requires { &T::name; }

// The compile errors of a dynamic program that has only half of an optional member, or one of the wrong
// form.
template <class P>
constexpr bool check_dynamic_program() {
  using Worker = typename P::Worker;
  using Coordinator = typename P::Coordinator;
  static_assert(
      !SCHMP_NAMES(Worker, start) || requires(Worker & w, std::size_t n) { w.start(n); },
      "start: the optional Worker::start is void start(std::size_t num_params) (program.hpp)");
  static_assert(!SCHMP_NAMES(Worker, rows) || HoldsRows<Worker>,
                "rows: the optional Worker::rows is const io::SparseRows& rows() const (program.hpp)");
  static_assert(
      !SCHMP_NAMES(Coordinator, trace_columns) ||
          requires(const Coordinator& c) {
            { c.trace_columns() } -> std::same_as<std::vector<std::string>>;
          },
      "trace: the optional Coordinator::trace_columns is std::vector<std::string> trace_columns() const "
      "(program.hpp)");
  static_assert(
      !SCHMP_NAMES(Coordinator, initial_changes) ||
          requires(const Coordinator& c) {
            { c.initial_changes() } -> std::same_as<std::vector<double>>;
          },
      "priorities: the optional Coordinator::initial_changes is std::vector<double> initial_changes() const "
      "(program.hpp)");
  static_assert(
      !SCHMP_NAMES(Coordinator, finish) || requires(Coordinator & c, const Summary& s) { c.finish(s); },
      "finish: the optional Coordinator::finish is void finish(const Summary&) (program.hpp)");
  static_assert(
      !SCHMP_NAMES(Coordinator, wants_evaluation) ||
          requires(const Coordinator& c) {
            { c.wants_evaluation() } -> std::convertible_to<bool>;
          },
      "pacing: the optional Coordinator::wants_evaluation is bool wants_evaluation() const (program.hpp)");
  static_assert(
      !SCHMP_NAMES(Coordinator, evaluation_size) ||
          requires(const Coordinator& c) {
            { c.evaluation_size() } -> std::convertible_to<std::size_t>;
          },
      "pacing: the optional Coordinator::evaluation_size is std::size_t evaluation_size() const "
      "(program.hpp)");
  static_assert(
      !requires(const typename P::Config& config) { DependencyOf<P>::takes_columns(config); } ||
          HoldsRows<Worker>,
      "rows: a Dependency with takes_columns() is handed the rows of Worker::rows(), which the "
      "Worker lacks (program.hpp)");
  static_assert(
      !requires { typename P::Partial; } ||
          requires { requires std::same_as<typename P::Partial, PartialOf<P>>; },
      "Partial: a program that names its Partial returns it from Worker::update (program.hpp)");
  static_assert(
      !requires { typename P::Stats; } || requires { requires std::same_as<typename P::Stats, StatsOf<P>>; },
      "Stats: a program that names its Stats returns it from Worker::evaluate (program.hpp)");
  static_assert(
      !requires { typename P::Commit; } ||
          requires { requires std::same_as<typename P::Commit, CommitOf<P>>; },
      "Commit: a program that names its Commit returns it from Coordinator::aggregate (program.hpp)");
  static_assert(HasSetup<P> == WorkerSetsUp<P>,
                "Setup: a program with a Setup message needs Setup Worker::setup() const, and one with "
                "Worker::setup() needs the Setup message (program.hpp)");
  if constexpr (HasSetup<P>) {
    static_assert(std::constructible_from<typename P::Coordinator, const typename P::Config&, std::size_t,
                                          const typename P::Setup&>,
                  "Setup: the Coordinator is made as Coordinator(const Config&, std::size_t num_params, "
                  "const Setup& summed) (program.hpp)");
  } else {
    static_assert(std::constructible_from<typename P::Coordinator, const typename P::Config&, std::size_t>,
                  "the Coordinator is made as Coordinator(const Config&, std::size_t num_params), or with a "
                  "third argument, const Setup& summed, in a program with a Setup message (program.hpp)");
  }
  static_assert(
      SavesDynamic<P> || !requires { typename P::Saved; },
      "checkpoints: a program with a Saved message needs Saved Coordinator::save() const and "
      "Commit Coordinator::restore(const Saved&, Priorities&) (program.hpp)");
  return true;
}
#undef SCHMP_NAMES

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

template <DynamicProgram P>
class TypedWorker final : public WorkerRole {
 public:
  TypedWorker(const typename P::Config& config, const WorkerContext& context) : worker_(config, context) {}
  std::size_t num_params() const override { return worker_.num_params(); }
  void start(std::size_t num_params) override {
    if constexpr (requires { worker_.start(num_params); }) worker_.start(num_params);
  }
  typename P::Worker& program_worker() { return worker_; }
  Flat setup() const override {
    if constexpr (HasSetup<P>) {
      return flatten(worker_.setup());
    } else {
      return {};
    }
  }
  Flat evaluate() const override { return flatten(worker_.evaluate()); }
  Flat update(const Schedule& schedule) override { return flatten(worker_.update(schedule)); }
  void apply(std::span<const std::byte> commit) override { worker_.apply(deserialize<CommitOf<P>>(commit)); }
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

 public:
  TypedCoordinator(const typename P::Config& config, std::string name)
      : config_(config), name_(std::move(name)) {}
  std::vector<std::string> trace_columns() const override {
    if constexpr (requires { coordinator_->trace_columns(); }) {
      return coordinator_->trace_columns();
    } else {
      return {};
    }
  }
  void setup(std::size_t num_params, const Flat& summed) override {
    num_params_ = num_params;
    if constexpr (HasSetup<P>) {
      coordinator_.emplace(config_, num_params, unflatten<typename P::Setup>(summed));
    } else {
      coordinator_.emplace(config_, num_params);
    }
  }
  std::vector<double> initial_changes() const override {
    if constexpr (requires { coordinator_->initial_changes(); }) {
      return coordinator_->initial_changes();
    } else {
      return std::vector<double>(num_params_, 1.0);
    }
  }
  Bytes aggregate(const Schedule& schedule, const Flat& summed, Priorities& priorities) override {
    return serialize(coordinator_->aggregate(schedule, unflatten<PartialOf<P>>(summed), priorities));
  }
  Report report(const Flat& summed, Priorities& priorities) override {
    const auto stats = unflatten<StatsOf<P>>(summed);
    if constexpr (requires { coordinator_->report(stats, priorities); }) {
      return coordinator_->report(stats, priorities);
    } else if constexpr (std::same_as<decltype(coordinator_->report(stats)), double>) {
      return until_stalled(coordinator_->report(stats));
    } else {
      return coordinator_->report(stats);
    }
  }
  void update_in_order(WorkerRole& worker, const Schedule& block, Priorities& priorities) override {
    typename P::Worker& alone = static_cast<TypedWorker<P>&>(worker).program_worker();
    if constexpr (requires { alone.prefetch(block); }) alone.prefetch(block);
    if constexpr (requires { coordinator_->prefetch(block); }) coordinator_->prefetch(block);
    Schedule one;
    one.round = block.round;
    for (const ParamIndex param : block.params) {
      one.params.assign(1, param);
      const PartialOf<P> partial = alone.update(one);
      alone.apply(coordinator_->aggregate(one, partial, priorities));
      if (wants_evaluation()) break;
    }
  }
  void finish(const Summary& summary) override {
    if constexpr (requires { coordinator_->finish(summary); }) {
      coordinator_->finish(summary);
    } else {
      std::printf("%s: %s after %llu rounds, %.3g s: objective %.10g\n", name_.c_str(),
                  summary.stopped_by.c_str(), static_cast<unsigned long long>(summary.rounds),
                  summary.seconds, summary.last.objective);
    }
  }
  std::vector<double> result() const override {
    if constexpr (requires { coordinator_->result(); }) {
      return coordinator_->result();
    } else {
      return {};
    }
  }
  bool paces_evaluations() const override { return kPaced; }
  bool wants_evaluation() const override {
    if constexpr (kPaced) {
      return coordinator_->wants_evaluation();
    } else {
      return false;
    }
  }
  std::size_t evaluation_size(std::size_t live) const override {
    if constexpr (requires { coordinator_->evaluation_size(); }) {
      return coordinator_->evaluation_size();
    } else {
      return live;
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
  // The stock stopping test of a report that gives only the objective: converged once an evaluation no
  // longer lowers it (by a relative 1e-12), which is where a descent method can move no more.
  Report until_stalled(double objective) {
    Report report{objective};
    report.converged = previous_ && objective >= *previous_ - 1e-12 * std::abs(*previous_);
    previous_ = objective;
    return report;
  }

  typename P::Config config_;
  std::string name_;  // for the stock finish()'s line
  std::size_t num_params_ = 0;
  std::optional<typename P::Coordinator> coordinator_;
  std::optional<double> previous_;  // the objective at the evaluation before, for until_stalled
};

template <DynamicProgram P>
class TypedDependency final : public DependencyRole {
  using Dependency = DependencyOf<P>;
  static_assert(PairwiseDependency<Dependency> || BlockDependency<Dependency>,
                "P::Dependency needs bool interferes(ParamIndex, ParamIndex) const, or void clear() and "
                "bool admit(ParamIndex) (program.hpp)");
  static_assert(
      std::constructible_from<Dependency, const typename P::Config&, ParamRange, const DataColumns&>,
      "P::Dependency is made as Dependency(const Config&, ParamRange owned, const DataColumns& data) "
      "(program.hpp)");

 public:
  // Whether the schedulers of this program take their columns from the workers (program.hpp).
  static bool takes_columns(const typename P::Config& config) {
    if constexpr (!HoldsRows<typename P::Worker>) {
      return false;
    } else if constexpr (requires { Dependency::takes_columns(config); }) {
      return Dependency::takes_columns(config);
    } else {
      return true;
    }
  }

  // The data the test sees: the rows of `whole_data_worker` (this process's worker, when it is the job's
  // only one, before its start()), or the owned `columns` gathered from the workers, or none.
  TypedDependency(const typename P::Config& config, ParamRange owned, const WorkerRole* whole_data_worker,
                  const io::ColumnBlock* columns)
      : dependency_(config, owned, data_columns(config, whole_data_worker, columns)) {}
  void clear() override {
    if constexpr (BlockDependency<Dependency>) {
      dependency_.clear();
    } else {
      kept_.clear();
    }
  }
  void prepare(ParamIndex candidate) override {
    if constexpr (requires { dependency_.prepare(candidate); }) dependency_.prepare(candidate);
  }
  bool admit(ParamIndex candidate) override {
    if constexpr (BlockDependency<Dependency>) {
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
  static DataColumns data_columns(const typename P::Config& config, const WorkerRole* whole_data_worker,
                                  const io::ColumnBlock* columns) {
    if (columns) return {&columns->rows, columns->columns};
    if (whole_data_worker && takes_columns(config)) {
      const io::SparseRows& rows = *whole_data_worker->rows();
      return {&rows, rows.columns()};
    }
    return {};
  }

  Dependency dependency_;
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
  // An evaluation rotates when evaluate() exists and, if the worker has rotates_evaluation(), it says so.
  static constexpr bool kChoosesRotation = requires(const typename P::Worker& w) {
    { w.rotates_evaluation() } -> std::convertible_to<bool>;
  };
  static_assert(!kChoosesRotation || kEvaluatesBlocks,
                "evaluate: a rotation program with Worker::rotates_evaluation() needs void Worker::evaluate("
                "std::uint32_t, const Block&) (rotation.hpp)");
  static constexpr bool kSaves = SavesRotation<P>;
  static_assert(
      kSaves || !requires { typename P::Saved; },
      "checkpoints: a rotation program with a Saved message needs a Progress message, Worker::save(), "
      "restore() and finish_restore(), and Coordinator::save() and restore() (rotation.hpp)");
  static_assert(
      kShares == requires(typename P::Worker & w) { w.share(); },
      "Shared: a rotation program with a Shared message needs Shared Worker::share() and void "
      "Worker::absorb(const Shared&), and one with share() needs the Shared message (rotation.hpp)");

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
  bool evaluates_blocks() const override {
    if constexpr (kChoosesRotation) {
      return worker_.rotates_evaluation();
    } else {
      return kEvaluatesBlocks;
    }
  }
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

// The roles of program P with `config`, for the launcher.
template <DynamicProgram P>
ProgramRoles program_roles(const std::string& name, const typename P::Config& config) {
  static_assert(check_dynamic_program<P>());
  ProgramRoles roles;
  roles.make_worker = [config](const WorkerContext& context) {
    return std::make_unique<TypedWorker<P>>(config, context);
  };
  roles.make_coordinator = [config, name] { return std::make_unique<TypedCoordinator<P>>(config, name); };
  roles.make_dependency = [config](ParamRange owned, const WorkerRole* whole_data_worker,
                                   const io::ColumnBlock* columns) {
    return std::make_unique<TypedDependency<P>>(config, owned, whole_data_worker, columns);
  };
  roles.dependency_takes_columns = TypedDependency<P>::takes_columns(config);
  roles.program_name = name;
  roles.program_type = program_type(typeid(P));
  roles.inputs = input_files(config);
  roles.files = run_files(config);
  return roles;
}

// Job::run's work.
template <DynamicProgram P>
int run_program(const std::string& name, const typename P::Config& config) {
  return launch(program_roles<P>(name, config), run_options_from_flags());
}

// Job::run_each's work.
template <DynamicProgram P>
EachRun run_each_program(const std::string& name, const std::vector<typename P::Config>& configs) {
  std::vector<ProgramRoles> jobs;
  for (const typename P::Config& config : configs) jobs.push_back(program_roles<P>(name, config));
  return launch_each(jobs, run_options_from_flags());
}

template <RotationProgram P>
int run_program(const std::string& name, const typename P::Config& config) {
  RotationRoles roles;
  roles.make_worker = [config](const WorkerContext& context) {
    return std::make_unique<TypedRotationWorker<P>>(config, context);
  };
  roles.make_coordinator = [config](const Flat& summed_setup, int blocks) {
    return std::make_unique<TypedRotationCoordinator<P>>(config, summed_setup, blocks);
  };
  roles.program_name = name;
  roles.program_type = program_type(typeid(P));
  roles.inputs = input_files(config);
  roles.files = run_files(config);
  return launch(roles, run_options_from_flags());
}

}  // namespace detail

}  // namespace schmp
