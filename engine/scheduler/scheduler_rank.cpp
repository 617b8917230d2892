#include "scheduler_rank.hpp"

#include <algorithm>

#include "../../runtime/protocol.hpp"
#include "../../runtime/signals.hpp"
#include "../../runtime/trace.hpp"

namespace schmp::detail {

BlockSchedulerSettings scheduler_settings(const RunOptions& options, int index) {
  BlockSchedulerSettings settings;
  settings.block_size =
      std::max<std::uint32_t>(1, split_params(options.schedule_size, index, options.schedulers).size());
  settings.priority = options.priority;
  settings.sweeps = options.sweeps;
  settings.cyclic = options.cyclic;
  settings.priority_power = options.priority_power;
  settings.eta = options.eta;
  settings.seed = options.seed;
  settings.index = index;
  return settings;
}

void run_scheduler_rank(MPI_Comm world, int coordinator_rank, ParamRange owned, DependencyRole* dependency,
                        const RunOptions& options, int index, Waiter& waiter) {
  Outbox outbox;
  const auto start = deserialize<SchedulerStart>(
      receive_bytes(world, coordinator_rank, kTagSchedulerStart, waiter, &outbox));
  BlockScheduler scheduler(owned, start.changes, dependency, scheduler_settings(options, index));

  // Each piece carries the work so far, from which the coordinator traces the busiest scheduler's.
  double busy_seconds = 0;
  auto send_piece = [&](std::uint64_t round, Clock::time_point work_began) {
    BlockPiece piece{round, scheduler.next_block(), 0, StopSignals::requested()};
    piece.ended_sweep = scheduler.ended_sweep();
    piece.settled = scheduler.settled();
    busy_seconds += seconds_since(work_began);
    piece.busy_seconds = busy_seconds;
    outbox.send(world, coordinator_rank, kTagSchedule, serialize(piece));
  };
  const auto ahead = static_cast<std::uint64_t>(options.staleness);
  for (std::uint64_t round = 0; round <= ahead; ++round) send_piece(round, Clock::now());
  for (;;) {
    const Bytes message = receive_bytes(world, coordinator_rank, kTagFeedback, waiter, &outbox);
    const auto work_began = Clock::now();  // taking the feedback in is the scheduler's work too
    const auto feedback = deserialize<Feedback>(message);
    if (feedback.stop) break;
    std::vector<std::pair<ParamIndex, double>> changes(feedback.params.size());
    for (std::size_t k = 0; k < changes.size(); ++k) changes[k] = {feedback.params[k], feedback.changes[k]};
    scheduler.revive(feedback.revived);
    scheduler.report_changes(changes);
    scheduler.retire(feedback.retired);
    // The block of round t is built after the feedback of rounds up to t - staleness - 1.
    send_piece(feedback.round + ahead + 1, work_began);
  }
  outbox.drain(waiter);
}

}  // namespace schmp::detail
