#include <gflags/gflags.h>
#include <glog/logging.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "../io/fingerprint.hpp"
#include "command_line.hpp"
#include "flag_registry.hpp"
#include "mpi.hpp"
#include "schmp/run.hpp"

namespace schmp {

namespace {

// Where launchers announce the MPI rank, and where they say how many ranks the step has, before MPI is
// up: Open MPI, PMIx, MPICH and Intel MPI (PMI), MVAPICH, Slurm's srun, Cray PALS and ALPS, Flux, IBM
// jsrun (nullptr: not said). A process started by none of them runs alone, without MPI (see Job). Slurm's
// step count, not SLURM_NTASKS: a batch script's shell has the allocation's count, and is one process.
struct LauncherVariables {
  const char* rank;
  const char* size;
};
constexpr LauncherVariables kLaunchers[] = {{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                            {"PMIX_RANK", nullptr},
                                            {"PMI_RANK", "PMI_SIZE"},
                                            {"MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE"},
                                            {"SLURM_PROCID", "SLURM_STEP_NUM_TASKS"},
                                            {"PALS_RANKID", nullptr},
                                            {"ALPS_APP_PE", nullptr},
                                            {"FLUX_TASK_RANK", nullptr},
                                            {"JSM_NAMESPACE_RANK", "JSM_NAMESPACE_SIZE"}};

// The launcher that started this process, or nullptr when none did.
const LauncherVariables* launcher() {
  for (const LauncherVariables& variables : kLaunchers) {
    if (std::getenv(variables.rank)) return &variables;
  }
  return nullptr;
}

// The MPI rank as the launcher announces it, or nullptr when no launcher started this process.
const char* launcher_rank_text() {
  const LauncherVariables* started_by = launcher();
  return started_by ? std::getenv(started_by->rank) : nullptr;
}

int launcher_rank() {
  const char* rank = launcher_rank_text();
  return rank ? std::atoi(rank) : 0;
}

// How many ranks the launcher started: 1 when none did; at least 2 for a rank past the first whose
// launcher does not say.
int launcher_size() {
  const LauncherVariables* started_by = launcher();
  if (started_by && started_by->size) {
    if (const char* size = std::getenv(started_by->size)) return std::max(1, std::atoi(size));
  }
  return launcher_rank() > 0 ? 2 : 1;
}

// Open MPI tries each of its transports before it picks one: the UCX probe alone took 0.2 s of every
// run's start on a host without a fast network. Ranks that all share one host talk through shared
// memory whichever it picks, so they skip the probe. A user's choice (OMPI_MCA_pml) stands.
void skip_transport_probe_on_one_host() {
  const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  if (size && local && std::strcmp(size, local) == 0) setenv("OMPI_MCA_pml", "ob1", 0);
}

// Silences stdout and stderr while alive: every rank parses the same command line, and only rank 0
// should print --help or a flag error.
class Silence {
 public:
  explicit Silence(bool active) {
    if (!active) return;
    std::fflush(stdout);
    std::fflush(stderr);
    saved_out_ = dup(STDOUT_FILENO);
    saved_err_ = dup(STDERR_FILENO);
    std::FILE* null = std::fopen("/dev/null", "w");
    if (null) {
      dup2(fileno(null), STDOUT_FILENO);
      dup2(fileno(null), STDERR_FILENO);
      std::fclose(null);
    }
  }
  ~Silence() {
    if (saved_out_ < 0) return;
    std::fflush(stdout);
    std::fflush(stderr);
    dup2(saved_out_, STDOUT_FILENO);
    dup2(saved_err_, STDERR_FILENO);
    close(saved_out_);
    close(saved_err_);
  }
  Silence(const Silence&) = delete;
  Silence& operator=(const Silence&) = delete;

 private:
  int saved_out_ = -1;
  int saved_err_ = -1;
};

const char* program_name(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
}

// Ends a job some of whose ranks found `mine` or another failure before any work: the lowest rank that
// found one prints it, once, and every rank exits 1. Every rank takes part, MPI started: a rank that
// exited at once would have the launcher stop the others, perhaps before the line was out. Returns
// when no rank found one.
void stop_if_any_failed(const std::optional<detail::Failure>& mine, const std::string& program) {
  if (!detail::agree_on_failure(MPI_COMM_WORLD, mine, program)) return;
  if (detail::mpi_started()) MPI_Finalize();
  std::exit(1);
}

// The settings every rank of a job must share: the declared flags (the framework's and the program's),
// by name.
struct Settings {
  std::string host;  // where they were read
  std::vector<std::string> names;
  std::vector<std::string> values;
  // Whether the command line, a flag file or the environment gave each: a program may refuse a flag
  // given at all (MF's --top in training), and a rank that refuses alone leaves the others waiting.
  std::vector<std::uint8_t> given;
  template <class V>
  void visit(V& v) {
    v(host, names, values, given);
  }
};

Settings settings_of() {
  Settings settings;
  settings.host = io::internal::host_name();
  for (const detail::DeclaredFlag& declared : detail::declared_flags()) {
    if (declared.per_host) continue;
    const gflags::CommandLineFlagInfo flag = gflags::GetCommandLineFlagInfoOrDie(declared.name.c_str());
    settings.names.push_back(flag.name);
    settings.values.push_back(flag.current_value);
    settings.given.push_back(flag.is_default ? 0 : 1);
  }
  return settings;
}

// Whether two settings of a flag agree: as text or, for a string, as the same file on this rank's host
// (a relative path and an absolute one, a link and its target, "shards" and "shards/") or, where neither
// names a file yet (an output), as the same absolute path once spelt plainly ("./out.txt", "out.txt" and
// its absolute path). Data files are compared by content as they are read (io::worker_range).
bool same_value(const std::string& name, const std::string& mine, const std::string& theirs) {
  if (mine == theirs) return true;
  if (mine.empty() || theirs.empty() || gflags::GetCommandLineFlagInfoOrDie(name.c_str()).type != "string")
    return false;
  std::error_code unknown;
  if (std::filesystem::equivalent(mine, theirs, unknown)) return true;
  if (std::filesystem::exists(mine, unknown) || std::filesystem::exists(theirs, unknown)) return false;
  const auto plain = [&](const std::string& path) {
    return std::filesystem::absolute(path, unknown).lexically_normal();
  };
  return plain(mine) == plain(theirs);
}

// A flag's setting for a message: one line, and a number as short as it reads back (gflags keeps 0.3 as
// 0.29999999999999999).
std::string shown_setting(const std::string& name, const std::string& value, bool given) {
  const std::string shown =
      detail::printable(detail::shown_value(gflags::GetCommandLineFlagInfoOrDie(name.c_str()).type, value));
  return given ? "--" + name + "=" + shown : "--" + name + " not given (" + shown + ")";
}

// Rank 0's settings against this rank's: a flag file or a variable for --fromenv that differs between
// hosts gave ranks different model sizes (a crash) or different stopping rules (two runs mixed without a
// word), and a host with another build of the program other flags altogether. Collective.
std::optional<detail::Failure> differing_settings() {
  const Settings mine = settings_of();
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  detail::Waiter waiter(false);
  Bytes first = rank == 0 ? serialize(mine) : Bytes{};
  detail::broadcast_bytes(MPI_COMM_WORLD, 0, first, waiter);
  if (rank == 0) return std::nullopt;
  const std::string here = "rank " + std::to_string(rank) + " (host " + mine.host + ")";
  const std::string another_build = ": every host must run the same build of the program";
  Settings theirs;
  try {
    theirs = deserialize<Settings>(first);
  } catch (const std::exception&) {
    return detail::Failure{0, here + " cannot read rank 0's settings" + another_build};
  }
  const std::string there = "rank 0 (host " + theirs.host + ")";
  for (std::size_t k = 0; k < mine.names.size(); ++k) {
    const std::string& name = mine.names[k];
    const auto it = std::find(theirs.names.begin(), theirs.names.end(), name);
    if (it == theirs.names.end())
      return detail::Failure{0,
                             "--" + name + " is a flag on " + here + " but not on " + there + another_build};
    const auto at = static_cast<std::size_t>(it - theirs.names.begin());
    if (!same_value(name, mine.values[k], theirs.values[at]) || theirs.given[at] != mine.given[k]) {
      return detail::Failure{0, shown_setting(name, mine.values[k], mine.given[k] != 0) + " on " + here +
                                    ", " + shown_setting(name, theirs.values[at], theirs.given[at] != 0) +
                                    " on " + there +
                                    ": every rank must run with the same flags (a flag file, or an "
                                    "environment variable read by --fromenv, that differs between hosts?)"};
    }
  }
  if (mine.names.size() != theirs.names.size()) {
    return detail::Failure{0, here + " has " + std::to_string(mine.names.size()) + " flags, " + there + " " +
                                  std::to_string(theirs.names.size()) + another_build};
  }
  return std::nullopt;
}

}  // namespace

bool take_subcommand(int& argc, char**& argv, const char* name) {
  if (argc < 2 || std::strcmp(argv[1], name) != 0) return false;
  argv[1] = argv[0];
  --argc;
  ++argv;
  return true;
}

std::string unread_flag(std::initializer_list<const char*> flags, const std::string& where) {
  for (const char* flag : flags) {
    gflags::CommandLineFlagInfo info;
    // An empty value (`--model=`, as a wrapper passing "$MODEL" gives it) names nothing.
    if (gflags::GetCommandLineFlagInfo(flag, &info) && !info.is_default && !info.current_value.empty())
      return "--" + std::string(flag) + " is not read " + where;
  }
  return "";
}

int run_tool(int argc, char** argv, const std::string& usage, const std::function<int()>& body) {
  gflags::SetUsageMessage(usage);
  const char* program = program_name(argv[0]);
  // A tool is one process: under mpirun -np N, each of the N would do the whole work and publish the same
  // output. Refused before the flags are read, the ranks agreeing (stop_if_any_failed), so that the one
  // line is out before any rank exits 1.
  if (const int ranks = launcher_size(); ranks > 1) {
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) return 1;
    stop_if_any_failed(detail::Failure{0, "this command runs in one process, not in " +
                                              std::to_string(ranks) + " ranks: start it without mpirun"},
                       program);
  }
  std::unique_ptr<detail::CommandLine> command_line;
  try {
    command_line = std::make_unique<detail::CommandLine>(argc, argv, 0, 1);
    // The framework's files belong to training runs.
    if (const std::string unread = unread_flag({"trace", "checkpoint", "resume"}, "by this command");
        !unread.empty())
      throw std::runtime_error(unread);
    return body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", program, e.what());
    return 1;
  }
}

Job::Job(int& argc, char**& argv, const std::string& usage) {
  gflags::SetUsageMessage(usage);
  FLAGS_logtostderr = true;
  FLAGS_log_prefix = false;
  // Flags are parsed before MPI starts, so that --help exits without an MPI job (shown by the first
  // rank). A mistake waits for MPI: it may be one rank's only (a flag file missing on its host).
  std::optional<detail::Failure> mistake;
  {
    Silence silence(launcher_rank() != 0);
    try {
      command_line_ = std::make_unique<detail::CommandLine>(argc, argv, 0, launcher_size());
    } catch (const std::invalid_argument& error) {
      mistake = detail::Failure{0, error.what()};
    }
  }
  google::InitGoogleLogging(argv[0]);
  name_ = program_name(argv[0]);
  // A process no launcher started is a job of one rank, which talks to no one: it does without MPI.
  // Started as a singleton, Open MPI would take 40 ms or more (hardware discovery, transports), longer
  // than a small problem's whole solve.
  if (launcher_rank_text()) {
    skip_transport_probe_on_one_host();
    int provided = MPI_THREAD_SINGLE;
    const int started = MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    // Kernels run on threads beside the one that talks MPI: an MPI that allows no threads at all
    // could fail in ways that would be hard to trace back here. Every rank finds the same and stops.
    if (started != MPI_SUCCESS || provided < MPI_THREAD_FUNNELED) {
      if (launcher_rank() == 0) {
        std::fprintf(stderr, "%s: error: %s\n", name_.c_str(),
                     started != MPI_SUCCESS ? "MPI failed to start"
                                            : "this MPI allows no threads beside the main one "
                                              "(MPI_THREAD_FUNNELED), which the kernels need");
      }
      if (started == MPI_SUCCESS) MPI_Finalize();
      std::exit(1);
    }
    // Errors in MPI calls are reported by the runtime with context rather than aborting inside MPI.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  }
  stop_if_any_failed(mistake, name_);
  if (launcher_rank_text()) stop_if_any_failed(differing_settings(), name_);
}

bool Job::first_rank() const { return launcher_rank() == 0; }

int Job::ranks() const {
  if (!launcher_rank_text()) return 1;
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

int Job::refuse(const std::string& message) const {
  if (launcher_rank() == 0) std::fprintf(stderr, "%s: error: %s\n", name_.c_str(), message.c_str());
  return 1;
}

Job::~Job() {
  int started = 0;
  int finalized = 0;
  MPI_Initialized(&started);
  MPI_Finalized(&finalized);
  if (started && !finalized) MPI_Finalize();
  google::ShutdownGoogleLogging();
  gflags::ShutDownCommandLineFlags();
}

}  // namespace schmp
