#include "rotation_loop.hpp"

#include <algorithm>
#include <chrono>

#include "coordinator_loop.hpp"

namespace schmp::detail {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

Summary run_rotation_coordinator(RotationCoordinatorRole& program, RotationWorkerRole& own_worker,
                                 const Ring& ring, TraceWriter& trace, const RunOptions& options,
                                 Waiter& waiter) {
  const auto started = Clock::now();
  TimeSplit time;
  ProgressLog progress(options.progress_seconds, program.trace_columns());

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
    WorkerReply reply = rotate(own_worker, message, ring, waiter);
    sum_onto_first(reply, ring, waiter);
    const double compute = reply.compute_seconds / ring.count;
    time.compute += compute;
    time.communication += std::max(0.0, seconds_since(sent) - compute);
    return reply;
  };
  auto evaluate = [&](std::uint64_t round) {
    RoundMessage message;
    message.command = Command::kEvaluate;
    const WorkerReply reply = play_round(std::move(message));
    const auto received = Clock::now();
    Report report = program.report(reply.summed);
    if (report.keep) {
      tell_other_workers(Command::kKeep);
      own_worker.keep();
    }
    time.idle += seconds_since(received);
    const double elapsed = seconds_since(started);
    trace.row(round, elapsed, report, time);
    progress.maybe_log(round, elapsed, report);
    return report;
  };

  if (own_worker.prepares()) {
    RoundMessage prepare;
    prepare.command = Command::kPrepare;
    play_round(std::move(prepare));
  }
  Summary summary;
  summary.last = evaluate(0);
  std::uint64_t round = 0;
  std::uint64_t rounds_since_evaluation = 0;
  for (;;) {
    summary.stopped_by = stop_reason(summary.last, round, seconds_since(started), options);
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
      summary.last = evaluate(round);
      rounds_since_evaluation = 0;
    }
  }
  if (rounds_since_evaluation > 0) summary.last = evaluate(round);

  std::vector<Bytes> parts;
  parts.push_back(own_worker.part());
  tell_other_workers(Command::kStop);
  for (int worker = 1; worker < ring.count; ++worker)
    parts.push_back(receive_bytes(ring.comm, worker, kTagPart, waiter));
  close_summary(summary, round, seconds_since(started));
  program.finish(summary, parts);
  return summary;
}

}  // namespace schmp::detail
