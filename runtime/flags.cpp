// Every framework flag, in one place. Apps define only their own model flags (data, lambda, ...).
#include <gflags/gflags.h>

#include "schmp/options.hpp"

DEFINE_int32(schedulers, 1, "Number of scheduler ranks; each owns a contiguous range of parameters");
DEFINE_int32(staleness, 0, "Rounds the schedulers may run ahead of the workers (0 = lock-step)");
DEFINE_int32(
    threads, 0,
    "oneTBB threads per worker rank (0 = the CPUs the rank is bound to / ranks on this host bound to them); "
    "the one flag that may differ between hosts");
DEFINE_uint32(schedule_size, 32, "Parameters updated per round, over all schedulers");
DEFINE_bool(priority, true, "Sample parameters by |change|^priority_power + eta (false: uniformly)");
DEFINE_bool(sweeps, false,
            "Visit the parameters whose last change was not zero once each per sweep, in random order, "
            "instead of drawing them by weight (for programs that restart priorities at evaluations)");
DEFINE_bool(in_order, true,
            "In a one-process job on the CPU, update a block's parameters one after another, each one's "
            "partial computed after the commit of the one before: no two interfere, so no dependency "
            "check is made (false: together, as several workers would)");
DEFINE_double(priority_power, 1, "Exponent of the change in the sampling weight (1 or 2)");
DEFINE_double(eta, 1e-4, "Added to every sampling weight so that no parameter starves");
DEFINE_uint64(seed, 1, "Random seed: the same seed and rank count give the same result");
DEFINE_uint64(max_rounds, 1000000, "Stop after this many rounds");
DEFINE_double(max_seconds, 3600, "Stop after this many seconds of solving");
DEFINE_uint64(eval_every, 0,
              "Rounds between evaluations of the objective (0 = auto: an eighth of a sweep over the live "
              "parameters, at least 8)");
DEFINE_string(trace, "", "Write the convergence trace (CSV) to this file as the run goes");
DEFINE_double(progress_seconds, 2, "Seconds between progress lines on stderr (0 = none)");
DEFINE_string(checkpoint, "",
              "Keep the run's state in this file: rewritten atomically every --checkpoint_every seconds, at "
              "the end, and on SIGINT or SIGTERM");
DEFINE_double(checkpoint_every, 600,
              "Seconds between checkpoints, taken at evaluations (0 = at every evaluation)");
DEFINE_string(resume, "", "Go on from this checkpoint, with this run's rank count");
DEFINE_string(device, "cpu",
              "Where the workers' kernels run: cpu (oneTBB) or gpu (CUDA, one GPU per worker rank: the "
              "rank's index among its host's worker ranks, modulo the host's GPU count)");

namespace schmp {

RunOptions run_options_from_flags() {
  RunOptions options;
  options.schedulers = FLAGS_schedulers;
  options.staleness = FLAGS_staleness;
  options.threads = FLAGS_threads;
  options.schedule_size = FLAGS_schedule_size;
  options.priority = FLAGS_priority;
  options.sweeps = FLAGS_sweeps;
  options.in_order = FLAGS_in_order;
  options.priority_power = FLAGS_priority_power;
  options.eta = FLAGS_eta;
  options.seed = FLAGS_seed;
  options.max_rounds = FLAGS_max_rounds;
  options.max_seconds = FLAGS_max_seconds;
  options.eval_every = FLAGS_eval_every;
  options.trace = FLAGS_trace;
  options.progress_seconds = FLAGS_progress_seconds;
  options.checkpoint = FLAGS_checkpoint;
  options.checkpoint_every = FLAGS_checkpoint_every;
  options.resume = FLAGS_resume;
  options.device = FLAGS_device;
  for (const char* name :
       {"schedulers", "staleness", "schedule_size", "sweeps", "in_order", "priority_power", "eta"}) {
    if (!gflags::GetCommandLineFlagInfoOrDie(name).is_default)
      options.scheduling_flags_given.push_back(std::string("--") + name);
  }
  return options;
}

}  // namespace schmp
