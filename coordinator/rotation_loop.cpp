#include "rotation_loop.hpp"

#include <algorithm>
#include <chrono>

#include "../runtime/signals.hpp"
#include "coordinator_loop.hpp"

namespace schmp::detail {

Summary run_rotation_coordinator(RotationCoordinatorRole& program, RotationWorkerRole& own_worker,
                                 const Ring& ring, TraceWriter& trace, const RunOptions& options,
                                 Waiter& waiter, Checkpoints& checkpoints,
                                 std::optional<io::CheckpointState> resumed) {
  const auto started = Clock::now();
  // A resumed run goes on counting rounds and seconds from its checkpoint.
  const double earlier_seconds = resumed ? resumed->seconds : 0;
  auto elapsed = [&] { return earlier_seconds + seconds_since(started); };
  TimeSplit time = resumed ? time_split_from(resumed->time_split) : TimeSplit{};
  ProgressLog progress(options.progress_seconds, program.trace_columns());

  SameShape shapes;
  // A command without a reply, to every worker but this one.
  auto tell_other_workers = [&](Command command) {
    if (ring.count == 1) return;
    RoundMessage message;
    message.command = command;
    Bytes bytes = serialize(message);
    broadcast_bytes(ring.comm, 0, bytes, waiter);
  };
  // Ships the message to every worker, plays worker 0's part and returns the summed reply.
  auto play_round = [&](RoundMessage message) {
    const auto sent = Clock::now();
    if (ring.count > 1) {
      Bytes bytes = serialize(message);
      broadcast_bytes(ring.comm, 0, bytes, waiter);
    }
    WorkerReply reply = rotate(own_worker, message, ring, waiter, shapes);
    sum_onto_first(reply, message.command, ring, waiter, shapes);
    if (reply.stop_requests > 0) StopSignals::relay();
    const double compute = reply.compute_seconds / ring.count;
    time.compute += compute;
    time.communication += std::max(0.0, seconds_since(sent) - compute);
    return reply;
  };
  auto evaluate = [&](std::uint64_t round, bool traced) {
    RoundMessage message;
    message.command = Command::kEvaluate;
    const WorkerReply reply = play_round(std::move(message));
    const auto received = Clock::now();
    Report report = program.report(reply.summed);
    check_objective_is_finite(report, round);
    if (report.keep) {
      tell_other_workers(Command::kKeep);
      own_worker.keep();
    }
    time.idle += seconds_since(received);
    if (traced) {
      trace.row(round, elapsed(), report, time);
      progress.maybe_log(round, elapsed(), report);
    }
    return report;
  };
  // The coordinator's state, the clock and the trace, then every worker's share, each written as it
  // arrives so that rank 0 holds one at a time. Receiving the shares is communication (across hosts it
  // moves the whole model); the rest is the coordinator's own work while the workers wait: idle_s.
  auto save_checkpoint = [&](std::uint64_t round) {
    const auto began = Clock::now();
    io::CheckpointState state = checkpoints.state_at(round, elapsed(), time, trace);
    state.coordinator = program.save();
    tell_other_workers(Command::kSave);
    double receiving = 0;
    checkpoints.write(state, seconds_since(started), static_cast<std::uint64_t>(ring.count),
                      [&](std::uint64_t w) {
                        if (w == 0) return own_worker.save();
                        const auto asked = Clock::now();
                        Bytes share = receive_bytes(ring.comm, static_cast<int>(w), kTagSaved, waiter);
                        receiving += seconds_since(asked);
                        return share;
                      });
    time.communication += receiving;
    time.idle += seconds_since(began) - receiving;
  };

  if (own_worker.prepares()) {
    RoundMessage prepare;
    prepare.command = Command::kPrepare;
    play_round(std::move(prepare));
  }
  Summary summary;
  std::uint64_t round = resumed ? resumed->round : 0;
  // A resumed run's first evaluation repeats the checkpoint's last trace row: it is not traced again.
  summary.last = evaluate(round, !resumed);
  resumed.reset();
  std::uint64_t rounds_since_evaluation = 0;
  for (;;) {
    summary.stopped_by = stop_reason(summary.last, round, elapsed(), options);
    if (!summary.stopped_by.empty()) break;
    const auto asked = Clock::now();
    RoundMessage message;
    message.command = Command::kUpdate;
    message.commit = program.schedule();
    time.scheduler += seconds_since(asked);
    const WorkerReply reply = play_round(std::move(message));
    const auto received = Clock::now();
    program.aggregate(reply.summed);
    time.idle += seconds_since(received);
    ++round;
    ++rounds_since_evaluation;
    if (program.wants_evaluation() ||
        (options.eval_every > 0 && rounds_since_evaluation >= options.eval_every)) {
      summary.last = evaluate(round, true);
      rounds_since_evaluation = 0;
      if (checkpoints.due(seconds_since(started))) save_checkpoint(round);
    }
  }
  if (rounds_since_evaluation > 0) summary.last = evaluate(round, true);
  if (checkpoints.enabled()) save_checkpoint(round);
  // The solve ends here. Gathering the workers' parts of the model is output, as writing it is: across
  // hosts it moves the whole model, which would otherwise count in the solve's seconds but in no
  // share of them.
  close_summary(summary, round, elapsed());

  std::vector<Bytes> parts;
  parts.push_back(own_worker.part());
  tell_other_workers(Command::kStop);
  for (int worker = 1; worker < ring.count; ++worker)
    parts.push_back(receive_bytes(ring.comm, worker, kTagPart, waiter));
  program.finish(summary, std::move(parts));
  print_time_split(time, summary.seconds, std::nullopt);
  return summary;
}

}  // namespace schmp::detail
