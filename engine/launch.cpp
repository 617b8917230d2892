// Plays this rank's roles: builds them, agrees with the other ranks that every one started (or prints
// the first failure once and exits non-zero everywhere), then runs the coordinator's, a scheduler's or
// a worker's loop. An error after start-up takes the whole job down with MPI_Abort: a job that has lost
// a rank cannot finish, and must not hang.
#include <cxxabi.h>
#include <mpi.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <typeinfo>

#include "../io/fingerprint.hpp"
#include "../runtime/checkpoints.hpp"
#include "../runtime/column_shares.hpp"
#include "../runtime/layout.hpp"
#include "../runtime/memory.hpp"
#include "../runtime/mpi.hpp"
#include "../runtime/peers.hpp"
#include "../runtime/signals.hpp"
#include "../runtime/trace.hpp"
#include "coordinator/coordinator_loop.hpp"
#include "coordinator/rotation_loop.hpp"
#include "coordinator/schedule_source.hpp"
#include "coordinator/worker_group.hpp"
#include "scheduler/scheduler_rank.hpp"
#include "schmp/internal/roles.hpp"
#include "schmp/io.hpp"
#include "workers/rotation_worker.hpp"
#include "workers/worker_loop.hpp"

namespace schmp::detail {

namespace {

// " on rank R (host H)" in a job of several ranks, else "": where a setting that may differ between hosts
// (--threads) was given.
std::string on_rank(int rank, const std::string& host) {
  return world_size() > 1 ? " on rank " + std::to_string(rank) + " (host " + host + ")" : "";
}

// What the flags' own rules (runtime/flags.cpp) cannot say: a flag that may differ between hosts, and
// flags checked against each other.
std::optional<Failure> check_options(const RunOptions& o) {
  auto bad = [](const std::string& message) { return Failure{0, message}; };
  // --threads may differ between hosts: say which rank was given a bad one.
  if (o.threads < 0) {
    return bad("--threads=" + std::to_string(o.threads) + on_rank(world_rank(), io::internal::host_name()) +
               ": must be 0 (automatic) or more");
  }
  // Each scheduler builds at least one parameter of a round's block.
  if (static_cast<std::uint64_t>(o.schedulers) > o.schedule_size) {
    return bad("--schedulers (" + std::to_string(o.schedulers) + ") must not exceed --schedule_size (" +
               std::to_string(o.schedule_size) + ")");
  }
  // With priorities, a weight of zero would never change again: eta keeps every parameter drawable.
  if (!(o.eta > 0) && o.priority) return bad("--eta must be positive");
  return std::nullopt;
}

// An output of the run (the program's, --trace, --checkpoint) on one of its inputs (the program's,
// --resume) or on another output, refused on every rank before any work. --checkpoint may be --resume:
// a resumed run goes on writing the checkpoint it came from.
std::optional<Failure> check_files(const io::RunFiles& program_files, const RunOptions& options) {
  std::vector<io::FlagFile> written = program_files.written;
  written.push_back({"--trace", options.trace});
  written.push_back({"--checkpoint", options.checkpoint});
  std::vector<io::FlagFile> read = program_files.read;
  if (options.checkpoint.empty() || !io::same_file(options.checkpoint, options.resume))
    read.push_back({"--resume", options.resume});
  try {
    io::refuse_overwriting(written, read);
  } catch (const std::runtime_error& e) {
    return Failure{0, e.what()};
  }
  return std::nullopt;
}

// What an exception says to the user: an allocation failure names its likely cause, since
// std::bad_alloc alone does not.
std::string explained(const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr) {
    return "out of memory: the data, or the sizes it declares (a header's counts, the largest id), need "
           "more memory than this rank can have";
  }
  return e.what();
}

// Runs a start-up step, turning an exception into this rank's failure. Input errors are keyed by their
// place in the data so that all ranks agree on the earliest one, across part files too; a worker stopped
// because another failed keys its echo last, so that the other's failure is the one reported.
void guarded(std::optional<Failure>& failure, const std::function<void()>& step) {
  if (failure) return;
  try {
    step();
  } catch (const PeerFailure& e) {
    failure = Failure{~std::uint64_t{0} - 1, e.what()};
  } catch (const io::InputError& e) {
    failure = Failure{e.order(), e.what()};
  } catch (const std::exception& e) {
    failure = Failure{0, explained(e)};
  }
}

// Rank 0's checkpoints, refused up front for a program that cannot save its state.
template <class Roles>
std::unique_ptr<Checkpoints> start_checkpoints(const Roles& roles, bool program_saves,
                                               const RunOptions& options) {
  if ((!options.checkpoint.empty() || !options.resume.empty()) && !program_saves)
    throw std::runtime_error(roles.program_name + " cannot checkpoint (--checkpoint, --resume)");
  return std::make_unique<Checkpoints>(options, roles.program_type, roles.inputs);
}

// Runs a program's restore(): state that passed the checksum but does not decode as this program's
// is a checkpoint of another version or build, and is refused as such; a program's own refusal (the
// checkpoint was made with other settings) names the checkpoint too.
template <class Restore>
auto restore_program(const std::string& path, Restore restore) {
  try {
    return restore();
  } catch (const MessageError&) {
    throw io::InputError(path, 0, "corrupt checkpoint: the program's state does not decode");
  } catch (const io::InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw io::InputError(path, 0, explained(e));
  }
}

// The trace; resuming, it starts with the checkpointed run's rows, and is refused (naming the checkpoint)
// when this run's columns differ, before the file is touched.
std::unique_ptr<TraceWriter> open_trace(const RunOptions& options, const std::vector<std::string>& columns,
                                        const io::CheckpointState* resumed) {
  if (!resumed) return std::make_unique<TraceWriter>(options.trace, columns);
  return restore_program(options.resume, [&] {
    return std::make_unique<TraceWriter>(options.trace, columns, resumed->trace_header, resumed->trace_rows);
  });
}

// What a rank may use on its host: oneTBB threads, and its index there (which picks its GPU).
struct RankResources {
  int threads = 1;
  int index_on_host = 0;
  int ranks_on_host = 1;
  unsigned cores_on_host = 1;
  int launched_ranks = 1;  // the job's ranks, of which this one may run it alone (--layout auto)
};

// One line for rank 0 to print at start-up when the layout costs more than it brings: a job of one worker
// (the ranks beyond it only pass messages, and one process updates in order), or more ranks on a host
// than it has cores (the ranks wait on one another). "" otherwise.
std::string layout_note(const std::string& program, const Layout& layout, const RankResources& resources) {
  if (layout.single_process() && resources.launched_ranks > 1) {
    const std::string ranks = std::to_string(resources.launched_ranks) + " ranks";
    const std::string why = static_cast<unsigned>(resources.launched_ranks) > resources.cores_on_host
                                ? ranks + " would share " + std::to_string(resources.cores_on_host) +
                                      " cores and wait on one another"
                                : ranks + " would make one worker";
    return program + ": note: " + why +
           ": rank 0 runs the job alone, on their cores (--layout all: every rank plays its role)\n";
  }
  if (layout.single_process() || !layout.is_coordinator()) return "";
  const std::string ranks = std::to_string(layout.size) + " ranks";
  if (layout.workers() == 1) {
    return program + ": note: " + ranks + " make one worker; one process (mpirun -np 1) updates in order, " +
           "without messages, and is faster\n";
  }
  if (static_cast<unsigned>(resources.ranks_on_host) > resources.cores_on_host) {
    return program + ": note: " + std::to_string(resources.ranks_on_host) + " ranks share " +
           std::to_string(resources.cores_on_host) + " cores and wait on one another; at most " +
           std::to_string(resources.cores_on_host) + " ranks a host are faster\n";
  }
  return "";
}

WorkerContext worker_context(int index, int count, const RankResources& resources, const RunOptions& options,
                             Peers* peers) {
  const Device device = options.device == "gpu" ? Device::gpu : Device::cpu;
  return WorkerContext{index, count, resources.threads, options.seed, device, resources.index_on_host, peers};
}

// Builds this rank's worker among its peers (none in a job of one process), turning a failure into
// this rank's; every worker then closes its peers, so that one that failed stops the others' calls.
// The peers outlive the worker (the caller declares them first): a worker that kept its context and
// used them later would be told so, not read freed memory.
template <class Role, class Make>
std::unique_ptr<Role> make_worker(std::optional<Failure>& failure, const Make& make, int index, int count,
                                  const RankResources& resources, const RunOptions& options,
                                  std::optional<WorkerPeers>& peers) {
  std::unique_ptr<Role> worker;
  guarded(failure, [&] {
    worker = make(worker_context(index, count, resources, options, peers ? &*peers : nullptr));
  });
  if (peers) peers->close(failure.has_value());
  return worker;
}

// Plays this rank's part of a job among the ranks of `world`; the coordinator puts the program's
// result() in `result` when given.
int play(const ProgramRoles& roles, const RunOptions& options, const Layout& layout, MPI_Comm world,
         Waiter& waiter, const RankResources& resources, std::vector<double>* result = nullptr) {
  const bool many = !layout.single_process();
  // compute: the coordinator (its rank 0) and the workers; workers: the workers alone. One process
  // talks to no one and needs neither.
  const Communicator compute =
      many ? Communicator::split(world, layout.is_scheduler_rank() ? 1 : 0, layout.rank)
           : Communicator::none();
  const Communicator workers =
      many ? Communicator::split(world, layout.is_worker() ? 0 : MPI_UNDEFINED, layout.rank)
           : Communicator::none();

  std::optional<Failure> failure = check_options(options);
  if (!failure) failure = check_files(roles.files, options);
  std::optional<WorkerPeers> peers;
  if (many && layout.is_worker()) peers.emplace(workers.get(), waiter);
  std::unique_ptr<WorkerRole> worker;
  if (layout.is_worker()) {
    // A worker's GPU follows its index among the workers on its host: the coordinator and scheduler
    // ranks there hold none.
    RankResources worker_resources = resources;
    if (many) worker_resources.index_on_host = host_placement(workers.get()).index;
    worker = make_worker<WorkerRole>(failure, roles.make_worker, layout.worker_index(), layout.workers(),
                                     worker_resources, options, peers);
  }
  if (agree_on_failure(world, failure, roles.program_name)) return 1;

  const std::uint64_t num_params = allreduce_max(world, worker ? worker->num_params() : 0);
  std::vector<ParamRange> ranges;
  std::vector<std::unique_ptr<DependencyRole>> dependencies;
  guarded(failure, [&] {
    if (num_params == 0)
      throw std::runtime_error("the input has no parameters to fit (no features in the data)");
    if (num_params > 0xFFFFFFFEull) throw std::runtime_error("more than 2^32 - 2 parameters");
    if (static_cast<std::uint64_t>(options.schedulers) > num_params) {
      throw std::runtime_error("--schedulers (" + std::to_string(options.schedulers) + ") exceeds the " +
                               std::to_string(num_params) + " parameters to share among them");
    }
    for (int s = 0; s < options.schedulers; ++s)
      ranges.push_back(split_params(num_params, s, options.schedulers));
  });
  if (agree_on_failure(world, failure, roles.program_name)) return 1;

  // The scheduler ranges this rank tests, and (programs whose schedulers take their columns from the
  // workers, column_shares.hpp) those ranges' columns, gathered before the workers start: a worker may
  // then let go of the rows it read.
  std::vector<std::size_t> hosted;
  if (layout.is_scheduler_rank()) hosted.push_back(static_cast<std::size_t>(layout.scheduler_index()));
  if (layout.is_coordinator() && layout.hosted_schedulers) {
    for (std::size_t s = 0; s < ranges.size(); ++s) hosted.push_back(s);
  }
  // Hosted beside the job's only worker, the dependency tests may take the whole data set from it.
  const WorkerRole* whole_data_worker = worker && layout.workers() == 1 ? worker.get() : nullptr;
  // Updated in order, a block's parameters cannot interfere: no dependency test is needed.
  const bool tested = layout.is_scheduler_rank() || !updates_in_order(options, layout.single_process());
  dependencies.resize(hosted.size());
  const auto make_dependency = [&](std::size_t k, const io::ColumnBlock* columns) {
    guarded(failure, [&] {
      if (tested) dependencies[k] = roles.make_dependency(ranges[hosted[k]], whole_data_worker, columns);
    });
  };
  if (many && roles.dependency_takes_columns) {
    gather_columns(world, layout, ranges, hosted, worker ? worker->rows() : nullptr, waiter,
                   [&](std::size_t k, const io::ColumnBlock& columns) { make_dependency(k, &columns); });
  } else {
    for (std::size_t k = 0; k < hosted.size(); ++k) make_dependency(k, nullptr);
  }
  guarded(failure, [&] {
    if (worker) worker->start(num_params);
  });
  if (agree_on_failure(world, failure, roles.program_name)) return 1;
  if (const std::string note = layout_note(roles.program_name, layout, resources);
      !note.empty() && !options.quiet) {
    std::fputs(note.c_str(), stderr);
    std::fflush(stderr);
  }

  // Setup: the workers' summed Setup reaches the coordinator, which builds the program's coordinator
  // (and, resuming, restores it from the checkpoint).
  std::unique_ptr<CoordinatorRole> program;
  std::unique_ptr<TraceWriter> trace;
  std::unique_ptr<Checkpoints> checkpoints;
  std::optional<Resumed> resumed;
  std::unique_ptr<WorkerGroup> group;
  RoundMessage setup;
  setup.command = Command::kSetup;
  if (layout.is_coordinator()) {
    if (many) {
      group = std::make_unique<RemoteWorkers>(world, compute.get(), layout.first_worker_rank(),
                                              layout.workers(), waiter);
    } else {
      group = std::make_unique<LocalWorker>(*worker);
      group->send(setup);
    }
    const WorkerReply reply = group->collect();
    guarded(failure, [&] {
      program = roles.make_coordinator();
      program->setup(num_params, reply.summed);
      checkpoints = start_checkpoints(roles, program->saves(), options);
      if (!options.resume.empty()) {
        Resumed& r = resumed.emplace();
        r.state = checkpoints->load()->take_state();
        if (r.state.num_params != num_params) {
          throw io::InputError(options.resume, 0,
                               "was made for " + std::to_string(r.state.num_params) +
                                   " parameters, this run has " + std::to_string(num_params) +
                                   ": other data, or settings that change how many there are");
        }
        const bool fits = r.state.changes.size() == num_params &&
                          std::all_of(r.state.retired.begin(), r.state.retired.end(),
                                      [&](std::uint32_t param) { return param < num_params; });
        if (!fits)
          throw io::InputError(options.resume, 0, "corrupt checkpoint: the schedulers' state does not fit");
        r.commit = restore_program(options.resume,
                                   [&] { return program->restore(r.state.coordinator, r.priorities); });
      }
      // Opened last: a resume refused above leaves the trace file as it was.
      trace = open_trace(options, program->trace_columns(), resumed ? &resumed->state : nullptr);
    });
  } else if (layout.is_worker()) {
    Outbox outbox;
    SameShape shapes;
    send_summed_reply(*handle_round(*worker, setup), Command::kSetup, shapes, world, 0, workers.get(), outbox,
                      waiter);
    outbox.drain(waiter);
  }
  if (agree_on_failure(world, failure, roles.program_name)) return 1;
  return_freed_memory();

  if (layout.is_coordinator()) {
    std::unique_ptr<ScheduleSource> schedulers;
    if (layout.hosted_schedulers) {
      schedulers = std::make_unique<LocalSchedulers>(ranges, std::move(dependencies), options);
    } else {
      schedulers = std::make_unique<RemoteSchedulers>(world, ranges, options, waiter);
    }
    run_coordinator(*program, *schedulers, *group, *trace, options, num_params, *checkpoints,
                    std::move(resumed));
    if (result) *result = program->result();
  } else if (layout.is_scheduler_rank()) {
    run_scheduler_rank(world, 0, ranges[layout.scheduler_index()], dependencies.front().get(), options,
                       layout.scheduler_index(), waiter);
  } else {
    run_worker_rank(*worker, world, 0, compute.get(), workers.get(), waiter);
  }
  return 0;
}

// Collective: rank 0 says so, once, when a worker rank is bound to fewer CPUs than its threads, which
// oneTBB then does not run (the coordinator and scheduler ranks run none). --threads may differ between
// hosts, so the first such rank tells its own.
void warn_of_short_bindings(MPI_Comm comm, const std::string& program_name, const std::string& role,
                            int threads, int bound_cpus) {
  const bool works = role == "all roles" || role.find("worker") != std::string::npos;
  int rank = 0;
  if (mpi_started()) check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  int first = works && threads > bound_cpus ? rank : INT_MAX;
  struct ShortBinding {
    int threads;
    int bound_cpus;
    char host[64];
  } found{threads, bound_cpus, {}};
  const std::string host = io::internal::host_name();
  host.copy(found.host, sizeof found.host - 1);
  if (mpi_started()) {
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
    if (first != INT_MAX) check_mpi(MPI_Bcast(&found, sizeof found, MPI_BYTE, first, comm), "MPI_Bcast");
  }
  if (rank != 0 || first == INT_MAX) return;
  const std::string where = on_rank(first, found.host);
  std::fprintf(stderr,
               "%s: warning: --threads %d%s, but it is bound to %d CPU%s and runs no more threads "
               "(mpirun's --bind-to, whose default binds each rank to a core when it starts 2 ranks or "
               "fewer and to a socket when more): add --bind-to none, or --map-by slot:PE=%d\n",
               program_name.c_str(), found.threads, where.c_str(), found.bound_cpus,
               found.bound_cpus == 1 ? "" : "s", found.threads);
}

// Plays a rank's part (`play(waiter, resources)`) with the waiting and threading that its place on the
// host (`place()`) allows; an error after start-up takes the whole job down, naming the rank and its role.
template <class Place, class Play>
int run_placed(const std::string& program_name, const RunOptions& options, const char* role, Place place,
               Play play) {
  const int rank = world_rank();
  try {
    const HostPlacement host = place();
    Waiter waiter(!host.oversubscribed());
    const StopSignals stop_signals;
    const int threads = options.threads > 0 ? options.threads : host.cpus;
    tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism,
                                    static_cast<std::size_t>(threads));
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const int status = play(waiter, RankResources{threads, host.index, host.ranks, cores, world_size()});
    // A run a signal stopped ends as a limit would, model and checkpoint written, but exits as the
    // signal would have ended it (128 + its number, as a shell reports it), so that a script or a
    // batch system can tell it from a finished run.
    return status == 0 && StopSignals::received() != 0 ? 128 + StopSignals::received() : status;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: rank %d (%s): %s\n", program_name.c_str(), rank, role,
                 explained(e).c_str());
    std::fflush(stderr);
    if (mpi_started()) MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
  }
}

// run_placed among the ranks of `comm`, saying once when a rank runs fewer threads than asked.
template <class Play>
int run_rank(const std::string& program_name, const RunOptions& options, const char* role, MPI_Comm comm,
             Play play) {
  const auto place = [&] {
    const HostPlacement host = host_placement(comm);
    const int threads = options.threads > 0 ? options.threads : host.cpus;
    warn_of_short_bindings(comm, program_name, role, threads, host.bound_cpus);
    return host;
  };
  return run_placed(program_name, options, role, place, play);
}

// Whether this job runs faster as one process (--layout auto): its ranks share one host, and would
// make one worker (the others only pass messages, where one process updates in order) or outnumber the
// cores (they would wait on one another). Collective; every rank reaches the same answer.
bool faster_alone(const Layout& layout) {
  if (layout.single_process()) return false;
  const HostPlacement host = host_placement(MPI_COMM_WORLD);
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  return host.ranks == layout.size && (layout.workers() == 1 || static_cast<unsigned>(host.ranks) > cores);
}

// Rank 0's exit status on every rank, once rank 0 has run the job alone. The others poll each
// millisecond: they hold no work, and their cores are rank 0's.
int rank_zero_status(int status) {
  MPI_Request request;
  check_mpi(MPI_Ibcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD, &request), "MPI_Ibcast");
  for (;;) {
    int done = 0;
    check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

int play_rotation(const RotationRoles& roles, const RunOptions& options, const Ring& ring, Waiter& waiter,
                  const RankResources& resources) {
  std::optional<Failure> failure = check_options(options);
  if (!failure) failure = check_files(roles.files, options);
  if (!failure && !options.scheduling_flags_given.empty()) {
    failure = Failure{0, options.scheduling_flags_given.front() +
                             " is for programs with a dynamic schedule (Lasso, logreg): this one rotates "
                             "blocks of its model around the workers and has no schedulers"};
  }
  std::optional<WorkerPeers> peers;
  if (ring.count > 1) peers.emplace(ring.comm, waiter);
  std::unique_ptr<RotationWorkerRole> worker = make_worker<RotationWorkerRole>(
      failure, roles.make_worker, ring.index, ring.count, resources, options, peers);
  if (agree_on_failure(ring.comm, failure, roles.program_name)) return 1;

  // Every worker learns the summed Setup; rank 0 builds the program's coordinator from it.
  Flat summed;
  guarded(failure, [&] { summed = worker->setup(); });
  if (agree_on_failure(ring.comm, failure, roles.program_name)) return 1;
  if (ring.count > 1) {
    SameShape().check(ring.comm, summed, "Setup");
    reduce_sum(ring.comm, 0, summed.values, waiter);
    Bytes bytes = ring.index == 0 ? serialize(summed) : Bytes{};
    broadcast_bytes(ring.comm, 0, bytes, waiter);
    summed = deserialize<Flat>(bytes);
  }
  std::unique_ptr<RotationCoordinatorRole> program;
  std::unique_ptr<TraceWriter> trace;
  std::unique_ptr<Checkpoints> checkpoints;
  std::optional<io::CheckpointState> resumed;
  std::unique_ptr<io::CheckpointReader> resume_file;  // resuming, on rank 0: the shares still to read
  guarded(failure, [&] {
    worker->start(summed);
    if (ring.index != 0) return;
    program = roles.make_coordinator(summed, ring.count);
    checkpoints = start_checkpoints(roles, worker->saves(), options);
    if (!options.resume.empty()) {
      resume_file = checkpoints->load();
      resumed = resume_file->take_state();
      restore_program(options.resume, [&] { program->restore(resumed->coordinator); });
    }
  });
  if (agree_on_failure(ring.comm, failure, roles.program_name)) return 1;

  // Resuming, every worker takes its part of the model from the checkpointed run's shares, which rank 0
  // reads from the file one at a time and broadcasts: no rank holds more than one of them (LDA's hold
  // every token's topic). The ranks agree before each share, so that a share refused (or one rank 0
  // could not read) stops them all at once, not after the whole checkpoint has gone round.
  if (!options.resume.empty()) {
    Bytes count = resume_file ? serialize(resume_file->shares()) : Bytes{};
    broadcast_bytes(ring.comm, 0, count, waiter);
    const auto shares = deserialize<std::uint64_t>(count);
    for (std::uint64_t s = 0; s < shares; ++s) {
      Bytes share;
      if (resume_file) guarded(failure, [&] { share = resume_file->next_share(); });
      if (agree_on_failure(ring.comm, failure, roles.program_name)) return 1;
      broadcast_bytes(ring.comm, 0, share, waiter);
      guarded(failure, [&] { restore_program(options.resume, [&] { worker->restore(share); }); });
    }
    resume_file.reset();
    guarded(failure, [&] { restore_program(options.resume, [&] { worker->finish_restore(); }); });
    if (agree_on_failure(ring.comm, failure, roles.program_name)) return 1;
  }
  // Opened last: a resume refused above leaves the trace file as it was.
  if (ring.index == 0) {
    guarded(failure,
            [&] { trace = open_trace(options, program->trace_columns(), resumed ? &*resumed : nullptr); });
  }
  if (agree_on_failure(ring.comm, failure, roles.program_name)) return 1;
  return_freed_memory();

  if (ring.index == 0) {
    run_rotation_coordinator(*program, *worker, ring, *trace, options, waiter, *checkpoints,
                             std::move(resumed));
  } else {
    run_rotation_worker_rank(*worker, ring, waiter);
  }
  return 0;
}

}  // namespace

std::string program_type(const std::type_info& type) {
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> readable(
      abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), &std::free);
  return status == 0 && readable ? std::string(readable.get()) : std::string(type.name());
}

int launch(const ProgramRoles& roles, const RunOptions& options) {
  const int schedulers = std::max(1, options.schedulers);
  const Layout layout = Layout::make(world_size(), world_rank(), schedulers);
  if (options.layout == "auto" && faster_alone(layout)) {
    give_cpus_to(MPI_COMM_WORLD, 0);
    if (!layout.is_coordinator()) {
      const StopSignals stop_signals;  // a signal stops rank 0, which then ends the job as a limit would
      return rank_zero_status(0);
    }
    return rank_zero_status(run_rank(roles.program_name, options, "all roles", MPI_COMM_SELF,
                                     [&](Waiter& waiter, const RankResources& resources) {
                                       return play(roles, options, Layout::make(1, 0, schedulers),
                                                   MPI_COMM_SELF, waiter, resources);
                                     }));
  }
  return run_rank(roles.program_name, options, layout.role_name(), MPI_COMM_WORLD,
                  [&](Waiter& waiter, const RankResources& resources) {
                    return play(roles, options, layout, MPI_COMM_WORLD, waiter, resources);
                  });
}

int launch(const RotationRoles& roles, const RunOptions& options) {
  Ring ring;
  ring.count = world_size();
  ring.index = world_rank();
  const char* role = ring.index == 0 ? "coordinator+worker" : "worker";
  return run_rank(roles.program_name, options, role, MPI_COMM_WORLD,
                  [&](Waiter& waiter, const RankResources& resources) {
                    return play_rotation(roles, options, ring, waiter, resources);
                  });
}

namespace {

// Every job's result on every rank, from the ranks that hold them (each job's on one rank, empty on the
// others): sizes, then values, summed over the ranks.
void share_results(std::vector<std::vector<double>>& results) {
  if (!mpi_started()) return;
  const auto mpi_count = [](std::size_t count) {
    if (count > static_cast<std::size_t>(INT_MAX)) throw std::runtime_error("results too large to share");
    return static_cast<int>(count);
  };
  std::vector<std::uint64_t> sizes(results.size());
  for (std::size_t k = 0; k < results.size(); ++k) sizes[k] = results[k].size();
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, sizes.data(), mpi_count(sizes.size()), MPI_UINT64_T, MPI_SUM,
                          MPI_COMM_WORLD),
            "MPI_Allreduce");
  std::vector<double> values;
  for (std::size_t k = 0; k < results.size(); ++k) {
    results[k].resize(sizes[k], 0.0);
    values.insert(values.end(), results[k].begin(), results[k].end());
  }
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, values.data(), mpi_count(values.size()), MPI_DOUBLE, MPI_SUM,
                          MPI_COMM_WORLD),
            "MPI_Allreduce");
  std::size_t at = 0;
  for (std::vector<double>& result : results) {
    std::copy_n(values.begin() + static_cast<std::ptrdiff_t>(at), result.size(), result.begin());
    at += result.size();
  }
}

}  // namespace

EachRun launch_each(const std::vector<ProgramRoles>& jobs, RunOptions options) {
  options.quiet = true;
  options.progress_seconds = 0;
  options.trace.clear();
  options.checkpoint.clear();
  options.resume.clear();
  EachRun run;
  run.results.resize(jobs.size());
  if (jobs.empty()) return run;
  const int ranks = world_size(), rank = world_rank();
  const int groups = static_cast<int>(std::min<std::size_t>(jobs.size(), static_cast<std::size_t>(ranks)));
  // Consecutive ranks form a group: they share a host more often than ranks far apart.
  const int group = static_cast<int>(static_cast<std::int64_t>(rank) * groups / ranks);
  const Communicator split =
      mpi_started() ? Communicator::split(MPI_COMM_WORLD, group, rank) : Communicator::none();
  const MPI_Comm comm = mpi_started() ? split.get() : MPI_COMM_WORLD;
  int group_rank = 0, group_size = 1;
  if (mpi_started()) {
    check_mpi(MPI_Comm_rank(comm, &group_rank), "MPI_Comm_rank");
    check_mpi(MPI_Comm_size(comm, &group_size), "MPI_Comm_size");
  }
  // Threads follow a rank's place among all the ranks on its host: the groups share its cores.
  const HostPlacement host = host_placement(MPI_COMM_WORLD);
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const int schedulers = std::max(1, options.schedulers);
  Layout layout = Layout::make(group_size, group_rank, schedulers);
  // As launch() does for the whole job: a group that would make one worker, or ranks that outnumber the
  // cores, leave each job to the group's first rank.
  const bool alone = options.layout == "auto" && !layout.single_process() &&
                     (layout.workers() == 1 || static_cast<unsigned>(host.ranks) > cores);
  if (alone) layout = Layout::make(1, 0, schedulers);
  std::optional<Failure> failure;
  {
    HeldFailure held;
    // One placement for all of a group's jobs: a job of a small problem takes well under a millisecond,
    // where the signal handlers, the thread pool and the reads of /proc that placing costs would not.
    const auto play_jobs = [&](Waiter& waiter, const RankResources& resources) {
      for (std::size_t k = static_cast<std::size_t>(group); k < jobs.size();
           k += static_cast<std::size_t>(groups)) {
        std::vector<double> result;
        const int status =
            play(jobs[k], options, layout, alone ? MPI_COMM_SELF : comm, waiter, resources, &result);
        if (status != 0) return status;
        run.results[k] = std::move(result);
      }
      return 0;
    };
    if (!alone || group_rank == 0) {
      run.status = run_placed(
          jobs.front().program_name, options, layout.role_name(), [&] { return host; }, play_jobs);
    }
    failure = held.failure();
  }
  if (mpi_started()) {
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &run.status, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
  }
  agree_on_failure(MPI_COMM_WORLD, failure, jobs.front().program_name);
  if (run.status != 0) {
    run.results.assign(jobs.size(), {});
    return run;
  }
  share_results(run.results);
  return run;
}

}  // namespace schmp::detail
