// Every framework flag, declared once with its rule and help (schmp/flags.hpp says what a declaration
// makes). Apps declare only their own model flags (data, lambda, ...).
#include <gflags/gflags.h>

#include "flag_registry.hpp"
#include "schmp/internal/options.hpp"

namespace {

constexpr const char* kSchedule =
    "dynamic schedule (Lasso, logreg; rotation programs refuse all but --priority)";
constexpr const char* kStopping = "stopping and evaluation";
constexpr const char* kOutput = "output";
constexpr const char* kCheckpoints = "checkpoints";
constexpr const char* kRun = "run";

}  // namespace

// A framework flag in `group`; `...` may say that only a dynamic schedule reads it, and that it may
// differ between hosts (declare_framework_flag's last arguments).
#define FRAMEWORK_FLAG(group, type, name, value, rule, help, ...)                           \
  DEFINE_##type(name, value, help);                                                         \
  namespace {                                                                               \
  [[maybe_unused]] const bool declared_##name =                                             \
      schmp::detail::declare_framework_flag(#name, group, rule __VA_OPT__(, ) __VA_ARGS__); \
  }

using schmp::any;
using schmp::at_least;

// The defaults are RunOptions', written once, there.
const schmp::RunOptions kDefaults;

FRAMEWORK_FLAG(kSchedule, int32, schedulers, kDefaults.schedulers, at_least(1),
               "Scheduler ranks; each owns a contiguous range of parameters", true)
FRAMEWORK_FLAG(kSchedule, int32, staleness, kDefaults.staleness, schmp::between(0, 1000),
               "Rounds the schedulers may run ahead of the workers (0: lock-step)", true)
FRAMEWORK_FLAG(kSchedule, uint32, schedule_size, kDefaults.schedule_size, at_least(1),
               "Parameters updated per round, over all schedulers", true)
FRAMEWORK_FLAG(
    kSchedule, bool, priority, kDefaults.priority, any(),
    "Sample parameters by |change|^priority_power + eta (false: uniformly; MF: its components' order)")
FRAMEWORK_FLAG(
    kSchedule, bool, sweeps, kDefaults.sweeps, any(),
    "Visit the moving parameters once each per sweep, in random order, instead of drawing by weight", true)
FRAMEWORK_FLAG(kSchedule, bool, cyclic, kDefaults.cyclic, any(),
               "With --sweeps: visit the moving parameters in index order, end each block at a sweep's end, "
               "and evaluate at sweep ends (with --eval_every 0): the fixed order extrapolation needs",
               true)
FRAMEWORK_FLAG(
    kSchedule, bool, in_order, kDefaults.in_order, any(),
    "One process on the CPU updates a block's parameters one after another, with no dependency check", true)
FRAMEWORK_FLAG(kSchedule, string, layout, kDefaults.layout.c_str(), schmp::one_of({"auto", "all"}),
               "auto: a job on one host whose ranks would make one worker, or outnumber its cores, runs as "
               "one process on rank 0 with their cores; all: every rank plays its role",
               true)
FRAMEWORK_FLAG(kSchedule, double, priority_power, kDefaults.priority_power, schmp::one_of({1.0, 2.0}),
               "Exponent of the change in the sampling weight", true)
FRAMEWORK_FLAG(kSchedule, double, eta, kDefaults.eta, at_least(0),
               "Added to every sampling weight so that no parameter starves (positive with --priority)", true)
FRAMEWORK_FLAG(kStopping, uint64, max_rounds, kDefaults.max_rounds, any(), "Stop after this many rounds")
FRAMEWORK_FLAG(kStopping, double, max_seconds, kDefaults.max_seconds,
               schmp::Rule("positive", [](double x) { return x > 0; }),
               "Stop after this many seconds of solving")
FRAMEWORK_FLAG(kStopping, uint64, eval_every, kDefaults.eval_every, any(),
               "Rounds between evaluations (0: an eighth of a sweep over the live parameters, at least 8)")
FRAMEWORK_FLAG(kOutput, string, trace, "", any(),
               "Write the convergence trace (CSV) to this file as the run goes")
FRAMEWORK_FLAG(kOutput, double, progress_seconds, kDefaults.progress_seconds, at_least(0),
               "Seconds between progress lines on stderr (0: none)")
FRAMEWORK_FLAG(
    kCheckpoints, string, checkpoint, "", any(),
    "Keep the run's state in this file: every --checkpoint_every seconds, at the end, on SIGINT/SIGTERM")
FRAMEWORK_FLAG(kCheckpoints, double, checkpoint_every, kDefaults.checkpoint_every, at_least(0),
               "Seconds between checkpoints, taken at evaluations (0: at every evaluation)")
FRAMEWORK_FLAG(kCheckpoints, string, resume, "", any(),
               "Go on from this checkpoint, with this run's rank count")
FRAMEWORK_FLAG(kRun, uint64, seed, kDefaults.seed, any(),
               "Random seed: the same seed and rank count give the same result")
FRAMEWORK_FLAG(
    kRun, int32, threads, kDefaults.threads, any(),
    "oneTBB threads per worker rank (0: its bound CPUs / ranks sharing them); may differ between hosts",
    false, true)
FRAMEWORK_FLAG(kRun, string, device, "cpu", schmp::one_of({"cpu", "gpu"}),
               "Where the workers' kernels run: cpu (oneTBB) or gpu (CUDA, one GPU per worker rank)")

namespace schmp {

RunOptions run_options_from_flags() {
  RunOptions options;
  options.schedulers = FLAGS_schedulers;
  options.staleness = FLAGS_staleness;
  options.threads = FLAGS_threads;
  options.schedule_size = FLAGS_schedule_size;
  options.priority = FLAGS_priority;
  options.sweeps = FLAGS_sweeps;
  options.cyclic = FLAGS_cyclic;
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
  options.layout = FLAGS_layout;
  for (const detail::DeclaredFlag& flag : detail::declared_flags()) {
    if (flag.dynamic_only && !gflags::GetCommandLineFlagInfoOrDie(flag.name.c_str()).is_default)
      options.scheduling_flags_given.push_back("--" + flag.name);
  }
  return options;
}

}  // namespace schmp
