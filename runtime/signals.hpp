// SIGINT and SIGTERM as a request to stop: while a StopSignals lives, either signal only raises a flag
// that the coordinator reads between rounds, so that the run ends as it would at a limit (a last
// evaluation, a checkpoint, the model written) instead of dying mid-round. A signal that reaches a worker
// or scheduler rank alone (a batch system or an operator signalling one host's processes) travels to the
// coordinator with the rank's next reply and stops the job the same way.
//
// One request can arrive more than once. mpirun passes SIGINT and SIGTERM on to every rank as SIGTERM
// `--mca odls_base_sigkill_timeout` seconds after it got them (Open MPI's default: 1), and sends SIGKILL
// as long again later: a round must end, and the checkpoint and model be written, within that time. A
// batch system that stops a job signals the ranks too, so each gets a copy of its own and then mpirun's.
// A copy from the rank's launcher (mpirun, Open MPI's daemon on other hosts, through any wrapper script
// between it and the rank) is always the same request, and so is any repeat within 2 seconds of the
// first; a later one from elsewhere ends the process at once, as if no handler were installed: the user
// does not want to wait for the round to end.
#pragma once

#include <csignal>

namespace schmp::detail {

class StopSignals {
 public:
  StopSignals();   // installs the handlers
  ~StopSignals();  // puts back the previous ones, unless a stop was asked for
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // Whether SIGINT or SIGTERM has come since the handlers were installed, here or (relay) elsewhere.
  static bool requested();
  // The first of them to come, 0 before any.
  static int received();
  // Another rank was asked to stop: requested() from now on, though this rank received nothing.
  static void relay();

 private:
  struct sigaction previous_interrupt_ {};
  struct sigaction previous_terminate_ {};
};

}  // namespace schmp::detail
