// The coordinator's round loop, shared by both schedules: rounds until the program converges or a
// limit is reached, with an evaluation (a trace row, a progress line) when one is due and a checkpoint
// when that is due. Each schedule's loop (coordinator_loop.hpp, rotation_loop.hpp) says what a round,
// an evaluation and its part of a checkpoint are; where the time goes is kept in one recorder.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "../../io/checkpoint_file.hpp"
#include "../../runtime/checkpoints.hpp"
#include "../../runtime/trace.hpp"
#include "schmp/internal/options.hpp"
#include "schmp/program.hpp"

namespace schmp::detail {

// Where the solve's time goes, each share charged in one place.
class TimeRecorder {
 public:
  explicit TimeRecorder(const TimeSplit& start) : split_(start) {}
  // An exchange with the workers, sent at `sent` and answered at `received`: their compute (per worker)
  // and the rest of the wait, communication.
  void exchange(Clock::time_point sent, Clock::time_point received, double compute);
  // Waiting for a block, from `asked` until `answered` (or now).
  void scheduler(Clock::time_point asked, Clock::time_point answered) {
    split_.scheduler += std::chrono::duration<double>(answered - asked).count();
  }
  void scheduler_since(Clock::time_point asked) { split_.scheduler += seconds_since(asked); }
  // The coordinator's own work since `began`, while the workers wait.
  void idle_since(Clock::time_point began) { split_.idle += seconds_since(began); }
  void compute(double seconds) { split_.compute += seconds; }
  void idle(double seconds) { split_.idle += seconds; }
  void communication(double seconds) { split_.communication += seconds; }
  // The busiest scheduler's work so far, as the schedulers report it (a total, not a share).
  void set_scheduler_busy(double seconds) { split_.scheduler_busy = seconds; }
  const TimeSplit& split() const { return split_; }

 private:
  TimeSplit split_;
};

// Where a run starts: round 0 of a fresh run, or a checkpoint's round, seconds and time split.
struct LoopStart {
  std::uint64_t round = 0;
  double seconds = 0;
  TimeSplit time;
  bool resumed = false;
};
LoopStart loop_start(const io::CheckpointState* resumed);

class RoundLoop {
 public:
  virtual ~RoundLoop() = default;
  RoundLoop(const RoundLoop&) = delete;
  RoundLoop& operator=(const RoundLoop&) = delete;

  // Runs the rounds; returns how the run ended (the program's finish() has been called with it).
  Summary run();

 protected:
  // `staleness`: for runs with schedulers, the hint after the time split (print_time_split).
  RoundLoop(TraceWriter& trace, const RunOptions& options, Checkpoints& checkpoints,
            const std::vector<std::string>& columns, const LoopStart& start, std::optional<int> staleness);

  // Before the first evaluation.
  virtual void begin() {}
  // One round, `round` counted from the run's start: false when there was nothing left to schedule.
  virtual bool play_round(std::uint64_t round) = 0;
  // After `rounds` rounds since the last evaluation: whether one is due.
  virtual bool evaluation_due(std::uint64_t rounds) const = 0;
  // Before an evaluation and at the end of the rounds: what must reach the schedulers first.
  virtual void settle() {}
  // The workers' summed statistics and the program's report on them.
  virtual Report report(std::uint64_t round) = 0;
  // Adds the schedule's part to a checkpoint's state and writes it; returns the seconds spent receiving
  // the workers' shares (communication; the rest is the coordinator's own work).
  virtual double save(io::CheckpointState& state) = 0;
  // After the summary is closed: lets the workers (and schedulers) go, and hands the program the summary.
  virtual void finish(const Summary& summary) = 0;

  // Seconds of solving, earlier runs' included; and this process's, for the checkpoints' interval.
  double elapsed() const { return earlier_seconds_ + seconds_since(started_); }
  double this_process() const { return seconds_since(started_); }
  // The round this process started from: 0, or a checkpoint's.
  std::uint64_t first_round() const { return first_round_; }

  const RunOptions& options_;
  Checkpoints& checkpoints_;
  TimeRecorder time_;

 private:
  Report evaluate(std::uint64_t round, bool traced);
  void checkpoint(std::uint64_t round);

  TraceWriter& trace_;
  ProgressLog progress_;
  const Clock::time_point started_ = Clock::now();
  const std::uint64_t first_round_;
  const double earlier_seconds_;
  const bool resumed_;
  const std::optional<int> staleness_;
};

// Why a run stops before its next round ("converged", "max_rounds", "max_seconds"), or "" to go on.
std::string stop_reason(const Report& last, std::uint64_t rounds, double seconds, const RunOptions& options);

// Records how long a run went, and why it ended: "converged" (or "finished") whenever the final
// evaluation says so, whatever stopped the rounds; warns when it ended before converging.
void close_summary(Summary& summary, std::uint64_t rounds, double seconds);

// Prints, after the program's own summary, where the solve's time went and, for runs with schedulers
// (`staleness` given), a hint when the rounds waited for their blocks.
void print_time_split(const TimeSplit& time, double seconds, std::optional<int> staleness);

}  // namespace schmp::detail
