#include "worker_loop.hpp"

#include <string>

#include "../../runtime/signals.hpp"
#include "../../runtime/trace.hpp"

namespace schmp::detail {

std::optional<WorkerReply> handle_round(WorkerRole& worker, const RoundMessage& message) {
  const auto started = Clock::now();
  if (!message.commit.empty()) worker.apply(message.commit);
  WorkerReply reply;
  switch (message.command) {
    case Command::kSetup:
      reply.summed = worker.setup();
      break;
    case Command::kEvaluate:
      reply.summed = worker.evaluate();
      break;
    case Command::kUpdate:
      reply.summed = worker.update(message.schedule);
      break;
    case Command::kStop:
      return std::nullopt;
    default:
      throw MessageError("round message with unknown command " +
                         std::to_string(static_cast<unsigned>(message.command)));
  }
  reply.compute_seconds = seconds_since(started);
  reply.stop_requests = StopSignals::requested() ? 1 : 0;
  return reply;
}

void send_summed_reply(WorkerReply reply, Command command, SameShape& shapes, MPI_Comm world,
                       int coordinator_rank, MPI_Comm workers, Outbox& outbox, Waiter& waiter) {
  shapes.check(workers, reply.summed, summed_message_name(command));
  // The compute time and the stop requests ride along as two more numbers to sum.
  std::vector<double>& values = reply.summed.values;
  values.push_back(reply.compute_seconds);
  values.push_back(reply.stop_requests);
  reduce_sum(workers, 0, values, waiter);
  int worker_index = 0;
  check_mpi(MPI_Comm_rank(workers, &worker_index), "MPI_Comm_rank");
  if (worker_index != 0) return;
  reply.stop_requests = values.back();
  values.pop_back();
  reply.compute_seconds = values.back();
  values.pop_back();
  outbox.send(world, coordinator_rank, kTagReply, serialize(reply));
}

void run_worker_rank(WorkerRole& worker, MPI_Comm world, int coordinator_rank, MPI_Comm compute,
                     MPI_Comm workers, Waiter& waiter) {
  Outbox outbox;
  SameShape shapes;
  for (;;) {
    Bytes bytes;
    broadcast_bytes(compute, 0, bytes, waiter);
    const auto message = deserialize<RoundMessage>(bytes);
    std::optional<WorkerReply> reply = handle_round(worker, message);
    if (!reply) break;
    send_summed_reply(std::move(*reply), message.command, shapes, world, coordinator_rank, workers, outbox,
                      waiter);
  }
  outbox.drain(waiter);
}
}  // namespace schmp::detail
