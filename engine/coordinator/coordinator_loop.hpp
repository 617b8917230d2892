// The coordinator's rounds: get a block from the schedulers, ship it to the workers together with the
// previous round's commit, aggregate their summed partials into the next commit, tell the schedulers
// how much each parameter changed; evaluate the objective every few rounds, trace it, and stop when the
// program converges or a limit is reached.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "../../io/checkpoint_file.hpp"
#include "../../runtime/checkpoints.hpp"
#include "../../runtime/trace.hpp"
#include "round_loop.hpp"
#include "schedule_source.hpp"
#include "schmp/internal/options.hpp"
#include "schmp/internal/roles.hpp"
#include "schmp/program.hpp"
#include "worker_group.hpp"

namespace schmp::detail {

// Rounds between evaluations when --eval_every is 0: an eighth of a sweep's worth of updates over the
// parameters not yet retired, and at least 8 rounds. An evaluation streams through the data, which
// costs far less per parameter than scheduled rounds do, and it refreshes the priorities of every live
// parameter: between evaluations the sampler only knows the parameters it visited, so evaluating
// often finds the ones that started to move sooner. The floor keeps small problems from evaluating
// every round. Cyclic sweeps (--cyclic) visit every moving parameter without drawing, and their
// evaluations feed extrapolation, which wants iterates a whole sweep apart or more: there a whole
// sweep's worth, so that evaluations cost no more than the rounds between them (measured on a
// 10,000 x 50,000 Lasso with 9,151 nonzeros: 2.3 s to a relative suboptimality of 1e-6, against 3.7 s
// at an eighth).
std::uint64_t auto_eval_every(std::size_t num_params, std::uint32_t schedule_size, bool cyclic);

// Whether a round updates its block's parameters one after another (--in_order): in a one-process job
// on the CPU, where the only worker can compute each one's partial after the commit of the one before.
// (On a GPU a kernel launch per parameter would cost more than the updates.)
bool updates_in_order(const RunOptions& options, bool one_process);

// Where a resumed run starts: its checkpoint, and what the program's restore() made of it (the commit
// that brings the workers to the restored model, and the retirements it implies).
struct Resumed {
  io::CheckpointState state;
  Bytes commit;
  Priorities priorities;
};

// Runs the rounds after the program's coordinator has been set up (and restored, when resuming);
// returns how the run ended (the program's finish() has been called with it).
Summary run_coordinator(CoordinatorRole& program, ScheduleSource& schedulers, WorkerGroup& workers,
                        TraceWriter& trace, const RunOptions& options, std::size_t num_params,
                        Checkpoints& checkpoints, std::optional<Resumed> resumed);

}  // namespace schmp::detail
