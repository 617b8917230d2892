#include "worker_group.hpp"

#include <stdexcept>

#include "../../runtime/signals.hpp"
#include "../workers/worker_loop.hpp"

namespace schmp::detail {

void LocalWorker::send(const RoundMessage& message) { reply_ = handle_round(worker_, message); }

WorkerReply LocalWorker::collect() {
  if (!reply_) throw std::logic_error("collect() without a pending reply");
  WorkerReply reply = std::move(*reply_);
  reply_.reset();
  return reply;
}

void RemoteWorkers::send(const RoundMessage& message) {
  Bytes bytes = serialize(message);
  broadcast_bytes(compute_, 0, bytes, waiter_);
}

WorkerReply RemoteWorkers::collect() {
  auto reply = deserialize<WorkerReply>(receive_bytes(world_, first_worker_, kTagReply, waiter_));
  if (reply.stop_requests > 0) StopSignals::relay();
  return reply;
}

}  // namespace schmp::detail
