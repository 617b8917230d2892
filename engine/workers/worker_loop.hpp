// A worker: it applies each commit the coordinator broadcasts, then evaluates or updates as told, and
// its reply is summed with the other workers' on the way back.
#pragma once

#include <mpi.h>

#include <optional>

#include "../../runtime/mpi.hpp"
#include "../../runtime/protocol.hpp"
#include "schmp/internal/roles.hpp"

namespace schmp::detail {

// One worker's handling of one message, free of MPI; returns no reply for kStop.
std::optional<WorkerReply> handle_round(WorkerRole& worker, const RoundMessage& message);

// Sums a reply to a `command` over the workers (checking the shape of the first of each kind) and sends
// the sum to the coordinator from the first worker.
void send_summed_reply(WorkerReply reply, Command command, SameShape& shapes, MPI_Comm world,
                       int coordinator_rank, MPI_Comm workers, Outbox& outbox, Waiter& waiter);

// The loop of a worker rank. `compute` holds the coordinator (its root) and the workers; `workers`
// holds the workers alone, the first of which forwards the summed reply to the coordinator over
// `world`.
void run_worker_rank(WorkerRole& worker, MPI_Comm world, int coordinator_rank, MPI_Comm compute,
                     MPI_Comm workers, Waiter& waiter);

}  // namespace schmp::detail
