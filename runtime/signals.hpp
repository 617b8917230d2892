// SIGINT and SIGTERM as a request to stop: while a StopSignals lives, either signal only raises a flag
// that the coordinator reads between rounds, so that the run ends as it would at a limit (a last
// evaluation, a checkpoint, the model written) instead of dying mid-round. A second signal of either
// kind, 2 seconds or more after the first, ends the process at once, as if no handler were installed;
// sooner, it is the same request delivered twice (a batch system signals every rank, and mpirun
// passes its own copy on).
//
// mpirun passes SIGINT and SIGTERM on to every rank as SIGTERM and, Open MPI by default, sends SIGKILL
// one second later (raise it with `--mca odls_base_sigkill_timeout SECONDS`): a round must end, and the
// checkpoint and model be written, within that time.
#pragma once

#include <csignal>

namespace schmp::detail {

class StopSignals {
 public:
  StopSignals();   // installs the handlers
  ~StopSignals();  // puts back the previous ones, unless a stop was asked for
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // Whether SIGINT or SIGTERM has come since the handlers were installed.
  static bool requested();
  // The first of them to come, 0 before any.
  static int received();

 private:
  struct sigaction previous_interrupt_ {};
  struct sigaction previous_terminate_ {};
};

}  // namespace schmp::detail
