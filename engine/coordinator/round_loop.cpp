#include "round_loop.hpp"

#include <glog/logging.h>

#include <algorithm>
#include <cstdio>

#include "../../runtime/signals.hpp"

namespace schmp::detail {

void TimeRecorder::exchange(Clock::time_point sent, Clock::time_point received, double compute) {
  split_.compute += compute;
  split_.communication += std::max(0.0, std::chrono::duration<double>(received - sent).count() - compute);
}

LoopStart loop_start(const io::CheckpointState* resumed) {
  if (!resumed) return {};
  return {resumed->round, resumed->seconds, time_split_from(resumed->time_split), true};
}

RoundLoop::RoundLoop(TraceWriter& trace, const RunOptions& options, Checkpoints& checkpoints,
                     const std::vector<std::string>& columns, const LoopStart& start,
                     std::optional<int> staleness)
    : options_(options),
      checkpoints_(checkpoints),
      time_(start.time),
      trace_(trace),
      progress_(options.progress_seconds, columns),
      first_round_(start.round),
      earlier_seconds_(start.seconds),
      resumed_(start.resumed),
      staleness_(staleness) {}

Summary RoundLoop::run() {
  begin();
  Summary summary;
  std::uint64_t round = first_round_;
  // A resumed run's first evaluation repeats the checkpoint's last trace row: it is not traced again.
  summary.last = evaluate(round, !resumed_);
  std::uint64_t rounds_since_evaluation = 0;
  for (;;) {
    summary.stopped_by = stop_reason(summary.last, round, elapsed(), options_);
    if (!summary.stopped_by.empty()) break;
    if (!play_round(round)) {
      summary.stopped_by = "no parameter left to schedule";
      break;
    }
    ++round;
    if (evaluation_due(++rounds_since_evaluation)) {
      summary.last = evaluate(round, true);
      rounds_since_evaluation = 0;
      if (checkpoints_.due(this_process())) checkpoint(round);
    }
  }
  settle();
  if (rounds_since_evaluation > 0) summary.last = evaluate(round, true);
  if (checkpoints_.enabled()) checkpoint(round);
  // The solve ends here; letting the workers go (and gathering their parts of the model) is not part
  // of it.
  close_summary(summary, round, elapsed());
  finish(summary);
  if (!options_.quiet) print_time_split(time_.split(), summary.seconds, staleness_);
  return summary;
}

Report RoundLoop::evaluate(std::uint64_t round, bool traced) {
  settle();
  Report report = this->report(round);
  if (traced) {
    trace_.row(round, elapsed(), report, time_.split());
    progress_.maybe_log(round, elapsed(), report);
  }
  return report;
}

// The workers wait while the coordinator saves: its own work, idle_s in the split, but for the time
// spent receiving their shares.
void RoundLoop::checkpoint(std::uint64_t round) {
  const auto began = Clock::now();
  io::CheckpointState state = checkpoints_.state_at(round, elapsed(), time_.split(), trace_);
  const double receiving = save(state);
  time_.communication(receiving);
  time_.idle(seconds_since(began) - receiving);
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

}  // namespace schmp::detail
