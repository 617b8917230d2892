#include "rotation_worker.hpp"

#include "../../runtime/signals.hpp"
#include "../../runtime/trace.hpp"

namespace schmp::detail {

WorkerReply rotate(RotationWorkerRole& worker, const RoundMessage& message, const Ring& ring, Waiter& waiter,
                   SameShape& shapes) {
  RoundKind kind = RoundKind::kUpdate;
  if (message.command == Command::kEvaluate) {
    kind = RoundKind::kEvaluate;
  } else if (message.command == Command::kPrepare) {
    kind = RoundKind::kPrepare;
  } else if (message.command != Command::kUpdate) {
    throw MessageError("rotation round with an unexpected command");
  }
  double compute = 0;
  auto timed = [&](auto&& work) {
    const auto started = Clock::now();
    work();
    compute += seconds_since(started);
  };
  if (kind == RoundKind::kUpdate) timed([&] { worker.begin_update(message.commit); });
  const int left = (ring.index + ring.count - 1) % ring.count;
  const int right = (ring.index + 1) % ring.count;
  Outbox outbox;
  // An evaluation that needs no block but the home one is no rotation at all.
  const int sub_rounds = kind == RoundKind::kEvaluate && !worker.evaluates_blocks() ? 0 : ring.count;
  for (int sub_round = 0; sub_round < sub_rounds; ++sub_round) {
    const auto block = static_cast<std::uint32_t>((ring.index + sub_round) % ring.count);
    timed([&] { worker.work(kind, block); });
    if (kind == RoundKind::kUpdate && worker.shares()) {
      Flat shared = worker.share();
      if (ring.count > 1) {
        shapes.check(ring.comm, shared, "Shared");
        allreduce_sum(ring.comm, shared.values, waiter);
      }
      worker.absorb(shared);
    }
    if (ring.count == 1) continue;
    outbox.send(ring.comm, left, kTagBlock, worker.take_block());
    worker.put_block(receive_bytes(ring.comm, right, kTagBlock, waiter, &outbox));
    // The block sent must be gone before the next sub-round computes. Where the kernel offers shared
    // memory no single copy (containers and VMs that refuse process_vm_readv), a large message moves in
    // pieces only while its sender is inside MPI, so the neighbour would wait a whole sub-round for it.
    outbox.drain(waiter);
  }
  WorkerReply reply;
  timed([&] { reply.summed = worker.end_round(kind); });
  reply.compute_seconds = compute;
  reply.stop_requests = StopSignals::requested() ? 1 : 0;
  return reply;
}

void sum_onto_first(WorkerReply& reply, Command command, const Ring& ring, Waiter& waiter,
                    SameShape& shapes) {
  if (ring.count == 1) return;
  shapes.check(ring.comm, reply.summed, summed_message_name(command));
  std::vector<double>& values = reply.summed.values;
  values.push_back(reply.compute_seconds);
  values.push_back(reply.stop_requests);
  reduce_sum(ring.comm, 0, values, waiter);
  if (ring.index != 0) return;
  reply.stop_requests = values.back();
  values.pop_back();
  reply.compute_seconds = values.back();
  values.pop_back();
}

void run_rotation_worker_rank(RotationWorkerRole& worker, const Ring& ring, Waiter& waiter) {
  SameShape shapes;
  for (;;) {
    Bytes bytes;
    broadcast_bytes(ring.comm, 0, bytes, waiter);
    const auto message = deserialize<RoundMessage>(bytes);
    if (message.command == Command::kStop) break;
    if (message.command == Command::kKeep) {
      worker.keep();
      continue;
    }
    if (message.command == Command::kSave) {
      Outbox outbox;
      outbox.send(ring.comm, 0, kTagSaved, worker.save());
      outbox.drain(waiter);
      continue;
    }
    WorkerReply reply = rotate(worker, message, ring, waiter, shapes);
    sum_onto_first(reply, message.command, ring, waiter, shapes);
  }
  Outbox outbox;
  outbox.send(ring.comm, 0, kTagPart, worker.part());
  outbox.drain(waiter);
}

}  // namespace schmp::detail
