// The convergence trace: a CSV written row by row as the run goes (each row flushed), so that a run
// that is killed keeps what it had traced. Columns: round, seconds, objective, the program's own
// columns, then where the time went (cumulative seconds):
//   scheduler_s      the coordinator waiting for, or running, the schedulers;
//   compute_s        the workers' kernels (mean over workers);
//   communication_s  the rest of the workers' round time: messages and waiting for the slowest
//                    (and a rotation program's checkpoints gathering the workers' shares);
//   idle_s           the coordinator's own work (aggregating, evaluating, noting each round's
//                    changes, saving checkpoints), while workers wait; with staleness and the
//                    workers in other processes, the changes reach the schedulers within
//                    communication_s, while the next round computes;
// and, apart from that split, how hard the schedulers worked:
//   scheduler_busy_s the busiest scheduler's own work (taking in feedback, building blocks), at most
//                    the solve's seconds: near them, the schedulers hold the rounds back and more
//                    scheduler ranks help; far below, scheduler_s is latency that pipelining hides.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "schmp/program.hpp"

namespace schmp::detail {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct TimeSplit {
  double scheduler = 0;
  double compute = 0;
  double communication = 0;
  double idle = 0;
  double scheduler_busy = 0;
};

// The run's time split as one line of shares of its `seconds` ("time: compute 48.0%  communication
// ..."), with the busiest scheduler's work where there are schedulers that report it.
std::string time_split_line(const TimeSplit& time, double seconds);

// Throws std::runtime_error unless the report's objective is finite: a program that did not catch its
// own divergence must not have it taken for convergence or written as a model.
void check_objective_is_finite(const Report& report, std::uint64_t round);

// When the rounds waited for their blocks a noticeable share of the solve (5%, the most a scheduler
// should cost), what to change, as a line starting "hint: "; "" otherwise. The busiest scheduler's work
// tells the two causes apart: near the solve's length the schedulers cannot keep up, and more scheduler
// ranks share their work; well below it the blocks come late, and building them further ahead
// (--staleness) hides that. A solve under a second gets no hint.
std::string scheduler_hint(const TimeSplit& time, double seconds, int staleness);

// The trace is also kept in memory, header and rows, so that a checkpoint carries it and a resumed run
// writes it out again before its own rows.
class TraceWriter {
 public:
  // An empty path writes nothing to disk. A resumed run passes the trace of the run its checkpoint came
  // from, written before its own rows; it throws, before opening the file, unless that trace has this
  // one's header (a run with other columns, e.g. without --test, cannot continue it).
  TraceWriter(const std::string& path, const std::vector<std::string>& program_columns,
              const std::string& earlier_header = "", const std::string& earlier_rows = "");
  void row(std::uint64_t round, double seconds, const Report& report, const TimeSplit& time);
  const std::string& header() const { return header_; }
  const std::string& rows() const { return rows_; }

 private:
  void write(const std::string& text);

  struct Close {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::unique_ptr<std::FILE, Close> file_;
  std::string path_;
  std::size_t program_columns_;
  std::string header_;
  std::string rows_;
};

// The progress line on stderr, at most every `interval` seconds (0: never).
class ProgressLog {
 public:
  ProgressLog(double interval, std::vector<std::string> columns)
      : interval_(interval), columns_(std::move(columns)) {}
  void maybe_log(std::uint64_t round, double seconds, const Report& report);

 private:
  double interval_;
  double next_ = 0;
  std::vector<std::string> columns_;
};

}  // namespace schmp::detail
