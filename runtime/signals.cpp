#include "signals.hpp"

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

// One request to stop can arrive more than once: a batch system (Slurm) signals every process of a job
// that is out of time, and mpirun passes on its own copy. Repeats within this long of the first are
// taken for that; a later signal means the user does not want to wait for the round to end.
constexpr std::int64_t kSameRequestNanoseconds = 2'000'000'000;

extern "C" void on_stop_signal(int signal) {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);  // async-signal-safe
  const std::int64_t at = std::int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
  std::int64_t first = 0;
  if (first_signal_at.compare_exchange_strong(first, at)) {
    stop_signal = signal;
    return;
  }
  if (at - first < kSameRequestNanoseconds) return;
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

}  // namespace

StopSignals::StopSignals() {
  stop_signal = 0;
  first_signal_at = 0;
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  // Restart interrupted system calls: MPI's progress engine and file writes should not see EINTR.
  action.sa_flags = SA_RESTART;
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

bool StopSignals::requested() { return stop_signal != 0; }

int StopSignals::received() { return stop_signal; }

}  // namespace schmp::detail
