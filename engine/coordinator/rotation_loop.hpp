// The coordinator of a rotation program (rotation.hpp), on rank 0, which is worker 0 as well: it
// decides each round's step, plays its own part of the round, aggregates the summed replies,
// evaluates when the program asks (or every --eval_every rounds), traces, and stops when the program
// converges or a limit is reached.
#pragma once

#include <optional>

#include "../../io/checkpoint_file.hpp"
#include "../../runtime/checkpoints.hpp"
#include "../../runtime/trace.hpp"
#include "../workers/rotation_worker.hpp"
#include "schmp/internal/options.hpp"
#include "schmp/internal/roles.hpp"
#include "schmp/program.hpp"

namespace schmp::detail {

// A resumed run passes its checkpoint (the program and its workers restored from it already).
Summary run_rotation_coordinator(RotationCoordinatorRole& program, RotationWorkerRole& own_worker,
                                 const Ring& ring, TraceWriter& trace, const RunOptions& options,
                                 Waiter& waiter, Checkpoints& checkpoints,
                                 std::optional<io::CheckpointState> resumed);

}  // namespace schmp::detail
