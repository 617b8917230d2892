#include "signals.hpp"

#include <atomic>
#include <csignal>

namespace schmp::detail {

namespace {

// A signal handler can only talk to the program through a lock-free atomic of static storage; atomic
// rather than volatile because the signal may be taken on any of the process's threads (oneTBB's, MPI's)
// while the main thread reads it.
std::atomic<int> stop_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void on_stop_signal(int signal) {
  if (stop_signal.exchange(signal) != 0) {
    // A second request: the user does not want to wait for the round to end.
    std::signal(signal, SIG_DFL);
    std::raise(signal);
  }
}

}  // namespace

StopSignals::StopSignals() {
  stop_signal = 0;
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  // Restart interrupted system calls: MPI's progress engine and file writes should not see EINTR.
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, &previous_interrupt_);
  sigaction(SIGTERM, &action, &previous_terminate_);
}

StopSignals::~StopSignals() {
  sigaction(SIGINT, &previous_interrupt_, nullptr);
  sigaction(SIGTERM, &previous_terminate_, nullptr);
}

bool StopSignals::requested() { return stop_signal != 0; }

}  // namespace schmp::detail
