#include "coordinator_loop.hpp"

#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>

#include "../runtime/protocol.hpp"
#include "../runtime/signals.hpp"
#include "../runtime/trace.hpp"

namespace schmp::detail {

namespace {

RoundMessage make_message(Command command, Bytes& pending_commit, Schedule schedule = {}) {
  RoundMessage message;
  message.command = command;
  message.commit = std::move(pending_commit);
  pending_commit.clear();
  message.schedule = std::move(schedule);
  return message;
}

// A program that names a parameter beyond the job's is broken: say so rather than write out of bounds.
void check_params(const Priorities& priorities, std::size_t num_params) {
  auto beyond = [&](ParamIndex param) {
    if (param >= num_params) {
      throw std::logic_error("the program reported parameter " + std::to_string(param) + " of " +
                             std::to_string(num_params));
    }
  };
  for (const auto& change : priorities.changes()) beyond(change.first);
  for (ParamIndex param : priorities.retired()) beyond(param);
}

}  // namespace

bool updates_in_order(const RunOptions& options, bool one_process) {
  return options.in_order && one_process && options.device == "cpu";
}

std::string stop_reason(const Report& last, std::uint64_t rounds, double seconds, const RunOptions& options) {
  if (last.converged) return "converged";
  if (last.finished) return "finished";
  if (StopSignals::requested()) return "signal";
  if (rounds >= options.max_rounds) return "max_rounds";
  if (seconds >= options.max_seconds) return "max_seconds";
  return "";
}

void close_summary(Summary& summary, std::uint64_t rounds, double seconds) {
  summary.rounds = rounds;
  summary.seconds = seconds;
  // A limit (or the last parameter retired) may stop the rounds between evaluations, and the final
  // evaluation then find the model converged: that is how the run ended, with nothing to warn of.
  if (summary.last.converged) {
    summary.stopped_by = "converged";
  } else if (summary.last.finished && summary.stopped_by != "converged") {
    summary.stopped_by = "finished";
  }
  if (summary.stopped_by != "converged" && summary.stopped_by != "finished")
    LOG(WARNING) << "stopped by " << summary.stopped_by << " before converging";
}

void print_time_split(const TimeSplit& time, double seconds, std::optional<int> staleness) {
  std::printf("%s\n", time_split_line(time, seconds).c_str());
  const std::string hint = staleness ? scheduler_hint(time, seconds, *staleness) : "";
  if (!hint.empty()) std::printf("%s\n", hint.c_str());
  std::fflush(stdout);
}

std::uint64_t auto_eval_every(std::size_t num_params, std::uint32_t schedule_size) {
  constexpr std::uint64_t kEvaluationsPerSweep = 8;
  constexpr std::uint64_t kFewestRounds = 8;
  return std::max<std::uint64_t>(
      kFewestRounds, num_params / (kEvaluationsPerSweep * std::max<std::uint32_t>(1, schedule_size)));
}

Summary run_coordinator(CoordinatorRole& program, ScheduleSource& schedulers, WorkerGroup& workers,
                        TraceWriter& trace, const RunOptions& options, std::size_t num_params,
                        Checkpoints& checkpoints, std::optional<Resumed> resumed) {
  const auto started = Clock::now();
  // A resumed run goes on counting rounds and seconds from its checkpoint; its schedulers count their
  // own rounds from 0.
  const std::uint64_t first_round = resumed ? resumed->state.round : 0;
  const double earlier_seconds = resumed ? resumed->state.seconds : 0;
  auto elapsed = [&] { return earlier_seconds + seconds_since(started); };
  // Parameters not yet retired: an evaluation sweep is measured in them.
  std::size_t live_params = num_params;
  std::vector<bool> retired(num_params, false);
  auto evaluation_due = [&](std::uint64_t rounds_since_evaluation) {
    if (program.paces_evaluations()) {
      return program.wants_evaluation() ||
             (options.eval_every > 0 && rounds_since_evaluation >= options.eval_every);
    }
    const std::uint64_t every =
        options.eval_every > 0 ? options.eval_every : auto_eval_every(live_params, options.schedule_size);
    return rounds_since_evaluation >= every;
  };
  ProgressLog progress(options.progress_seconds, program.trace_columns());
  TimeSplit time = resumed ? time_split_from(resumed->state.time_split) : TimeSplit{};
  // Resumed, the schedulers count their work afresh.
  const double earlier_scheduler_busy = time.scheduler_busy;
  const double per_worker = 1.0 / workers.count();
  WorkerRole* const alone = updates_in_order(options, workers.local() != nullptr) ? workers.local() : nullptr;

  // The last change of every parameter: the schedulers' weights, which a checkpoint keeps.
  std::vector<double> changes = resumed ? std::move(resumed->state.changes) : program.initial_changes();
  if (changes.size() != num_params) {
    throw std::logic_error("the program's initial_changes() has " + std::to_string(changes.size()) +
                           " entries for " + std::to_string(num_params) + " parameters");
  }
  // What the schedulers learn with the next round's feedback: what the program reported, less the
  // changes a parameter had already (a scheduler's weight is a function of the last change, so those
  // would leave it as it is). After an evaluation every live parameter gets a change, and most are
  // the zero it had: on the scaling benchmark's Lasso this cuts 200,000 entries to a few thousand,
  // work the coordinator and the schedulers would otherwise do while the rounds wait. The weights are
  // as they would be; the samplers' running sums, updated in other steps, may differ in their last
  // bits, so a draw within that rounding of an interval's edge could go the other way.
  Priorities news;
  // Takes in what the program reported: checked, kept in the bookkeeping above, passed on in `news`.
  auto note = [&](Priorities& reported) {
    check_params(reported, num_params);
    for (const auto& [param, change] : reported.changes()) {
      if (change == changes[param]) continue;
      changes[param] = change;
      news.set(param, change);
    }
    for (ParamIndex param : reported.retired()) {
      if (retired[param]) continue;
      retired[param] = true;
      --live_params;
      news.retire(param);
    }
    reported.clear();
  };

  // Shipped with the next message, so a round costs one broadcast.
  Bytes pending_commit = resumed ? std::move(resumed->commit) : Bytes{};
  // Filled by the program; resuming, the retirements so far (until the next feedback reaches the
  // schedulers, a block may still hold a retired parameter, as with staleness).
  Priorities priorities = resumed ? std::move(resumed->priorities) : Priorities{};
  if (resumed) {
    for (const ParamIndex param : resumed->state.retired) priorities.retire(param);
  }
  note(priorities);
  // The round whose feedback (`news`, already noted) is still to go. With staleness k >= 1, the block of
  // round t + 1 needs the feedback of rounds up to t - k only, so round t's is sent once round t + 1 is
  // on its way to the workers: splitting it among the scheduler ranks and sending it then overlaps
  // their compute instead of holding the next round back. Every feedback goes before an evaluation,
  // so the schedulers see the same feedback, in the same rounds, as if each went at once. (A worker in
  // the coordinator's own process computes as the round is sent: nothing to overlap there.)
  const bool overlap_feedback = options.staleness > 0 && workers.local() == nullptr;
  std::optional<std::uint64_t> unsent_feedback;
  auto send_feedback = [&] {
    if (!unsent_feedback) return;
    schedulers.feedback(*unsent_feedback - first_round, news);
    news.clear();
    unsent_feedback.reset();
  };
  // Sends it while the workers wait: the coordinator's own work, idle_s in the split.
  auto send_feedback_now = [&] {
    const auto began = Clock::now();
    send_feedback();
    time.idle += seconds_since(began);
  };
  auto evaluate = [&](std::uint64_t round, bool traced) {
    const auto sent = Clock::now();
    workers.send(make_message(Command::kEvaluate, pending_commit));
    const WorkerReply reply = workers.collect();
    const auto received = Clock::now();
    Report report = program.report(reply.summed, priorities);
    check_objective_is_finite(report, round);
    note(priorities);
    const double compute = reply.compute_seconds * per_worker;
    time.compute += compute;
    time.communication += std::max(0.0, std::chrono::duration<double>(received - sent).count() - compute);
    time.idle += seconds_since(received);
    time.scheduler_busy = earlier_scheduler_busy + schedulers.busiest_seconds();
    if (traced) {
      trace.row(round, elapsed(), report, time);
      progress.maybe_log(round, elapsed(), report);
    }
    return report;
  };
  // The workers wait while the coordinator saves: its own work, idle_s in the split.
  auto save_checkpoint = [&](std::uint64_t round) {
    const auto began = Clock::now();
    io::CheckpointState state = checkpoints.state_at(round, elapsed(), time, trace);
    state.num_params = num_params;
    state.changes = changes;
    for (std::size_t param = 0; param < num_params; ++param) {
      if (retired[param]) state.retired.push_back(static_cast<ParamIndex>(param));
    }
    state.coordinator = program.save();
    checkpoints.write(state, seconds_since(started));
    time.idle += seconds_since(began);
  };

  const auto starting = Clock::now();
  schedulers.start(changes);
  time.scheduler += seconds_since(starting);
  Summary summary;
  std::uint64_t round = first_round;
  // A resumed run's first evaluation repeats the checkpoint's last trace row: it is not traced again.
  summary.last = evaluate(round, !resumed);
  std::uint64_t rounds_since_evaluation = 0;
  for (;;) {
    summary.stopped_by = stop_reason(summary.last, round, elapsed(), options);
    if (!summary.stopped_by.empty()) break;
    const auto asked = Clock::now();
    Schedule schedule = schedulers.next(round - first_round);
    schedule.round = round;  // the schedulers count from the resume; the program sees the run's rounds
    const auto scheduled = Clock::now();
    time.scheduler += std::chrono::duration<double>(scheduled - asked).count();
    if (schedule.params.empty()) {
      send_feedback_now();
      schedulers.feedback(round - first_round, news);
      summary.stopped_by = "no parameter left to schedule";
      break;
    }
    if (alone) {
      const double aggregating = program.update_in_order(*alone, schedule, priorities);
      time.compute += seconds_since(scheduled) - aggregating;
      time.idle += aggregating;
    } else {
      workers.send(make_message(Command::kUpdate, pending_commit, schedule));
      send_feedback();  // the previous round's, while the workers compute (see above)
      const WorkerReply reply = workers.collect();
      const auto received = Clock::now();
      pending_commit = program.aggregate(schedule, reply.summed, priorities);
      const double compute = reply.compute_seconds * per_worker;
      time.compute += compute;
      time.communication +=
          std::max(0.0, std::chrono::duration<double>(received - scheduled).count() - compute);
      time.idle += seconds_since(received);
    }
    const auto noted = Clock::now();
    note(priorities);
    time.idle += seconds_since(noted);
    unsent_feedback = round;
    if (!overlap_feedback) send_feedback_now();
    ++round;
    if (evaluation_due(++rounds_since_evaluation)) {
      send_feedback_now();
      summary.last = evaluate(round, true);
      rounds_since_evaluation = 0;
      if (checkpoints.due(seconds_since(started))) save_checkpoint(round);
    }
  }
  send_feedback_now();
  if (rounds_since_evaluation > 0) summary.last = evaluate(round, true);
  if (checkpoints.enabled()) save_checkpoint(round);
  // The solve ends here; letting the workers and schedulers go is not part of it.
  close_summary(summary, round, elapsed());
  workers.send(make_message(Command::kStop, pending_commit));
  schedulers.stop();
  program.finish(summary);
  print_time_split(time, summary.seconds, options.staleness);
  return summary;
}

}  // namespace schmp::detail
