#include "signals.hpp"

#include <unistd.h>

#include <array>
#include <atomic>
#include <csignal>
#include <cstdint>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace schmp::detail {

namespace {

// A signal handler can only talk to the program through a lock-free atomic of static storage; atomic
// rather than volatile because the signal may be taken on any of the process's threads (oneTBB's, MPI's)
// while the main thread reads it.
std::atomic<int> stop_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);
// When the first stop signal came (CLOCK_MONOTONIC nanoseconds), 0 before it.
std::atomic<std::int64_t> first_signal_at{0};
static_assert(std::atomic<std::int64_t>::is_always_lock_free);

// Another rank's request, relayed by the coordinator's loop (not a signal handler's state).
std::atomic<bool> relayed{false};

// The processes from this one's parent up to the launcher that started it, through any wrapper script
// (mpirun signals the rank's whole process group): a stop request any of them sends is the launcher's
// copy. Zeros past the chain's end, and all zeros when no launcher is among the first ancestors.
constexpr std::size_t kMostAncestors = 16;
std::array<std::atomic<pid_t>, kMostAncestors> launcher_chain{};
static_assert(std::atomic<pid_t>::is_always_lock_free);

// Launchers that pass a stop on to the processes they started: Open MPI's (mpirun and its daemon, PRRTE's
// for Open MPI 5), MPICH's Hydra, Slurm's step daemon.
bool is_launcher(std::string_view name) {
  for (const std::string_view launcher : {"mpirun", "mpiexec", "orterun", "orted", "prterun", "prted",
                                          "mpiexec.hydra", "hydra_pmi_proxy", "slurmstepd"}) {
    if (name == launcher) return true;
  }
  return false;
}

void find_launcher_chain() {
  for (std::atomic<pid_t>& pid : launcher_chain) pid = 0;
  std::array<pid_t, kMostAncestors> chain{};
  pid_t pid = getppid();
  for (std::size_t k = 0; k < kMostAncestors && pid > 1; ++k) {
    chain[k] = pid;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text;
    std::getline(stat, text);
    // "pid (name) state ppid ...", where the name may hold blanks and parentheses.
    const std::size_t open = text.find('(');
    const std::size_t close = text.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close < open) return;
    if (is_launcher(std::string_view(text).substr(open + 1, close - open - 1))) {
      for (std::size_t j = 0; j <= k; ++j) launcher_chain[j] = chain[j];
      return;
    }
    std::istringstream rest(text.substr(close + 1));
    char state = 0;
    if (!(rest >> state >> pid)) return;
  }
}

bool from_launcher(pid_t sender) {
  if (sender == 0) return false;  // the kernel's (a terminal's), or from outside this process's namespace
  for (const std::atomic<pid_t>& pid : launcher_chain) {
    if (pid == 0) return false;
    if (pid == sender) return true;
  }
  return false;
}

// A repeat within this long of the first signal is the same request delivered twice (signals.hpp).
constexpr std::int64_t kSameRequestNanoseconds = 2'000'000'000;

extern "C" void on_stop_signal(int signal, siginfo_t* info, void*) {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);  // async-signal-safe
  const std::int64_t at = std::int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
  std::int64_t first = 0;
  if (first_signal_at.compare_exchange_strong(first, at)) {
    stop_signal = signal;
    return;
  }
  // The launcher's copy comes odls_base_sigkill_timeout seconds late, however long that is.
  if (info != nullptr && from_launcher(info->si_pid)) return;
  if (at - first < kSameRequestNanoseconds) return;
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

}  // namespace

StopSignals::StopSignals() {
  stop_signal = 0;
  first_signal_at = 0;
  relayed = false;
  find_launcher_chain();
  struct sigaction action {};
  action.sa_sigaction = on_stop_signal;
  sigemptyset(&action.sa_mask);
  // Restart interrupted system calls: MPI's progress engine and file writes should not see EINTR. The
  // sender's process id tells the launcher's copy of a request from another's.
  action.sa_flags = SA_RESTART | SA_SIGINFO;
  sigaction(SIGINT, &action, &previous_interrupt_);
  sigaction(SIGTERM, &action, &previous_terminate_);
}

StopSignals::~StopSignals() {
  // Once a stop was asked for, the process is on its way out (MPI_Finalize, exit): the handlers stay,
  // so that the request's second copy, coming late, does not kill it in its last steps.
  if (requested()) return;
  sigaction(SIGINT, &previous_interrupt_, nullptr);
  sigaction(SIGTERM, &previous_terminate_, nullptr);
}

bool StopSignals::requested() { return stop_signal != 0 || relayed; }

int StopSignals::received() { return stop_signal; }

void StopSignals::relay() { relayed = true; }

}  // namespace schmp::detail
