// A rotation program's worker: one round is P sub-rounds on the blocks passing around the ring of
// workers (rotation.hpp). Every rank is a worker; rank 0 coordinates as well.
#pragma once

#include <mpi.h>

#include "../../runtime/mpi.hpp"
#include "../../runtime/protocol.hpp"
#include "schmp/internal/roles.hpp"

namespace schmp::detail {

// The workers in ring order: worker w passes blocks to w - 1 and receives them from w + 1.
struct Ring {
  MPI_Comm comm = MPI_COMM_WORLD;
  int index = 0;
  int count = 1;
};

// Plays one update or evaluation round on this worker; its reply is not yet summed. `shapes` checks the
// first of each summed message across the ring.
WorkerReply rotate(RotationWorkerRole& worker, const RoundMessage& message, const Ring& ring, Waiter& waiter,
                   SameShape& shapes);

// Sums a reply to `command` (the compute seconds too) over the ring onto worker 0.
void sum_onto_first(WorkerReply& reply, Command command, const Ring& ring, Waiter& waiter, SameShape& shapes);

// The loop of every worker but the first: rounds (and requests to keep the model) as broadcast by
// rank 0 until told to stop, then its share of the model goes to rank 0.
void run_rotation_worker_rank(RotationWorkerRole& worker, const Ring& ring, Waiter& waiter);

}  // namespace schmp::detail
