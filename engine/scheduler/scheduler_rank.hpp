// A scheduler on a rank of its own: it sends its pieces of the next blocks to the coordinator, up to
// `staleness` rounds ahead of the feedback it has seen, until the coordinator says stop.
#pragma once

#include <mpi.h>

#include <cstddef>

#include "../../runtime/mpi.hpp"
#include "block_scheduler.hpp"
#include "schmp/internal/options.hpp"
#include "schmp/internal/roles.hpp"

namespace schmp::detail {

// The settings of the index-th of options.schedulers schedulers.
BlockSchedulerSettings scheduler_settings(const RunOptions& options, int index);

void run_scheduler_rank(MPI_Comm world, int coordinator_rank, ParamRange owned, DependencyRole* dependency,
                        const RunOptions& options, int index, Waiter& waiter);

}  // namespace schmp::detail
