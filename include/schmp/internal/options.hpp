// The framework's run options: how many schedulers, how far they may run ahead, how parameters are
// picked, when to evaluate and when to stop. Every one of them is a command-line flag of every app,
// defined in one place (runtime/flags.cpp); this struct is their plain-data form.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace schmp {

struct RunOptions {
  int schedulers = 1;  // --schedulers: scheduler count S
  int staleness = 0;   // --staleness: rounds the schedulers may run ahead (0 = lock-step)
  int threads = 0;     // --threads: oneTBB threads per worker (0 = bound CPUs / ranks sharing them)
  std::uint32_t schedule_size = 32;    // --schedule_size: parameters per round, over all schedulers
  bool priority = true;                // --priority: sample by |change|^power + eta, else uniformly
  bool sweeps = false;                 // --sweeps: random-order sweeps over the moving parameters
  bool cyclic = false;                 // --cyclic: sweeps in index order, evaluated at their ends
  bool in_order = true;                // --in_order: one process updates a block's parameters in turn
  double priority_power = 1;           // --priority_power: 1 or 2
  double eta = 1e-4;                   // --eta: floor of every weight so nothing starves
  std::uint64_t seed = 1;              // --seed
  std::uint64_t max_rounds = 1000000;  // --max_rounds
  double max_seconds = 3600;           // --max_seconds
  std::uint64_t eval_every = 0;        // --eval_every: rounds between evaluations (0 = auto)
  std::string trace;                   // --trace: CSV file, written as the run goes
  double progress_seconds = 2;         // --progress_seconds: stderr progress line interval (0 = off)
  std::string checkpoint;              // --checkpoint: file to keep the run's state in
  double checkpoint_every = 600;  // --checkpoint_every: seconds between checkpoints (0 = every evaluation)
  std::string resume;             // --resume: a checkpoint to go on from
  std::string device = "cpu";     // --device: where workers' kernels run, "cpu" or "gpu"
  std::string layout = "auto";    // --layout: "auto" (one process where the ranks cannot pay) or "all"
  // One of several jobs played side by side (launch_each): no time split, layout note or progress.
  bool quiet = false;
  // Those of the flags above that only a dynamic schedule reads, where the command line gave them: a
  // rotation program (MF, LDA) refuses them rather than ignore them.
  std::vector<std::string> scheduling_flags_given;
};

// The options as the command line set them.
RunOptions run_options_from_flags();

}  // namespace schmp
