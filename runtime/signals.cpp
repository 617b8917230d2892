#include "signals.hpp"

#include <csignal>

namespace schmp::detail {

namespace {

// A signal handler can only talk to the program through a lock-free flag of static storage.
volatile std::sig_atomic_t stop_signal = 0;

struct sigaction previous_interrupt;
struct sigaction previous_terminate;

extern "C" void on_stop_signal(int signal) {
  if (stop_signal != 0) {
    // A second request: the user does not want to wait for the round to end.
    std::signal(signal, SIG_DFL);
    std::raise(signal);
    return;
  }
  stop_signal = signal;
}

}  // namespace

StopSignals::StopSignals() {
  stop_signal = 0;
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  // Restart interrupted system calls: MPI's progress engine and file writes should not see EINTR.
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, &previous_interrupt);
  sigaction(SIGTERM, &action, &previous_terminate);
}

StopSignals::~StopSignals() {
  sigaction(SIGINT, &previous_interrupt, nullptr);
  sigaction(SIGTERM, &previous_terminate, nullptr);
}

bool StopSignals::requested() { return stop_signal != 0; }

}  // namespace schmp::detail
