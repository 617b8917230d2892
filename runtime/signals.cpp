#include "signals.hpp"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdint>
#include <ctime>

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
  if (info != nullptr && info->si_pid == getppid()) return;  // getppid: async-signal-safe
  if (at - first < kSameRequestNanoseconds) return;
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

}  // namespace

StopSignals::StopSignals() {
  stop_signal = 0;
  first_signal_at = 0;
  relayed = false;
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
