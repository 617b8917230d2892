#include "coordinator_loop.hpp"

#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <sstream>

#include "../runtime/protocol.hpp"
#include "../runtime/trace.hpp"

namespace schmp::detail {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

RoundMessage make_message(Command command, Bytes& pending_commit, Schedule schedule = {}) {
  RoundMessage message;
  message.command = static_cast<std::uint8_t>(command);
  message.commit = std::move(pending_commit);
  pending_commit.clear();
  message.schedule = std::move(schedule);
  return message;
}

class Progress {
 public:
  Progress(double interval, std::vector<std::string> columns)
      : interval_(interval), columns_(std::move(columns)) {}
  void maybe_log(std::uint64_t round, double seconds, const Report& report) {
    if (interval_ <= 0 || seconds < next_) return;
    next_ = seconds + interval_;
    std::ostringstream line;
    line << "round " << round << "  " << seconds << " s  objective " << report.objective;
    for (std::size_t k = 0; k < columns_.size() && k < report.columns.size(); ++k) {
      line << "  " << columns_[k] << " " << report.columns[k];
    }
    LOG(INFO) << line.str();
  }

 private:
  double interval_;
  double next_ = 0;
  std::vector<std::string> columns_;
};

}  // namespace

std::uint64_t auto_eval_every(std::size_t num_params, std::uint32_t schedule_size) {
  return std::max<std::uint64_t>(1, num_params / std::max<std::uint32_t>(1, schedule_size));
}

Summary run_coordinator(CoordinatorRole& program, ScheduleSource& schedulers, WorkerGroup& workers,
                        const RunOptions& options, std::size_t num_params) {
  const auto started = Clock::now();
  // Parameters not yet retired: an evaluation sweep is measured in them.
  std::size_t live_params = num_params;
  std::vector<bool> retired(num_params, false);
  auto eval_every = [&] {
    return options.eval_every > 0 ? options.eval_every : auto_eval_every(live_params, options.schedule_size);
  };
  const std::vector<std::string> columns = program.trace_columns();
  TraceWriter trace(options.trace, columns);
  Progress progress(options.progress_seconds, columns);
  TimeSplit time;
  const double per_worker = 1.0 / workers.count();

  Bytes pending_commit;   // shipped with the next message, so a round costs one broadcast
  Priorities priorities;  // what the schedulers learn with the next round's feedback
  auto evaluate = [&](std::uint64_t round) {
    const auto sent = Clock::now();
    workers.send(make_message(Command::kEvaluate, pending_commit));
    const WorkerReply reply = workers.collect();
    const auto received = Clock::now();
    Report report = program.report(reply.summed, priorities);
    for (ParamIndex param : priorities.retired()) {
      if (param < num_params && !retired[param]) {
        retired[param] = true;
        --live_params;
      }
    }
    const double compute = reply.compute_seconds * per_worker;
    time.compute += compute;
    time.communication += std::max(0.0, std::chrono::duration<double>(received - sent).count() - compute);
    time.idle += seconds_since(received);
    const double elapsed = seconds_since(started);
    trace.row(round, elapsed, report, time);
    progress.maybe_log(round, elapsed, report);
    return report;
  };

  schedulers.start(program.initial_changes());
  Summary summary;
  summary.last = evaluate(0);
  std::uint64_t round = 0;
  std::uint64_t rounds_since_evaluation = 0;
  for (;;) {
    if (summary.last.converged) {
      summary.stopped_by = "converged";
      break;
    }
    if (round >= options.max_rounds) {
      summary.stopped_by = "max_rounds";
      break;
    }
    if (seconds_since(started) >= options.max_seconds) {
      summary.stopped_by = "max_seconds";
      break;
    }
    const auto asked = Clock::now();
    Schedule schedule = schedulers.next(round);
    const auto scheduled = Clock::now();
    time.scheduler += std::chrono::duration<double>(scheduled - asked).count();
    if (schedule.params.empty()) {
      schedulers.feedback(round, priorities);
      summary.stopped_by = "no parameter left to schedule";
      break;
    }
    workers.send(make_message(Command::kUpdate, pending_commit, schedule));
    const WorkerReply reply = workers.collect();
    const auto received = Clock::now();
    pending_commit = program.aggregate(schedule, reply.summed, priorities);
    schedulers.feedback(round, priorities);
    priorities.clear();
    const double compute = reply.compute_seconds * per_worker;
    time.compute += compute;
    time.communication +=
        std::max(0.0, std::chrono::duration<double>(received - scheduled).count() - compute);
    time.idle += seconds_since(received);
    ++round;
    if (++rounds_since_evaluation >= eval_every()) {
      summary.last = evaluate(round);
      rounds_since_evaluation = 0;
    }
  }
  if (!pending_commit.empty()) summary.last = evaluate(round);
  workers.send(make_message(Command::kStop, pending_commit));
  schedulers.stop();
  summary.rounds = round;
  summary.seconds = seconds_since(started);
  program.finish(summary);
  return summary;
}

}  // namespace schmp::detail
