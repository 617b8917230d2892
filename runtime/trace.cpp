#include "trace.hpp"

#include <glog/logging.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace schmp::detail {

TraceWriter::TraceWriter(const std::string& path, const std::vector<std::string>& program_columns,
                         const std::string& earlier_header, const std::string& earlier_rows)
    : path_(path), program_columns_(program_columns.size()) {
  header_ = "round,seconds,objective";
  for (const std::string& column : program_columns) header_ += "," + column;
  header_ += ",scheduler_s,compute_s,communication_s,idle_s,scheduler_busy_s\n";
  if (!earlier_header.empty() && earlier_header != header_) {
    auto line = [](const std::string& h) { return h.substr(0, h.find_last_not_of('\n') + 1); };
    throw std::runtime_error("the checkpoint's trace has the columns " + line(earlier_header) +
                             ", this run's " + line(header_) + " (give the flags the checkpointed run had)");
  }
  rows_ = earlier_rows;
  if (path.empty()) return;
  file_.reset(std::fopen(path.c_str(), "w"));
  if (!file_) throw std::runtime_error(path + ": cannot write trace: " + std::strerror(errno));
  write(header_ + rows_);
}

void TraceWriter::write(const std::string& text) {
  if (!file_) return;
  if (std::fputs(text.c_str(), file_.get()) < 0 || std::fflush(file_.get()) != 0)
    throw std::runtime_error(path_ + ": cannot write trace: " + std::strerror(errno));
}

namespace {

// Appends printf's formatting of `values`, however long: a fixed buffer would cut a long run's row
// short and glue the next one onto it.
template <class... Values>
void append_formatted(std::string& line, const char* format, Values... values) {
  const int length = std::snprintf(nullptr, 0, format, values...);
  if (length <= 0) return;
  const std::size_t at = line.size();
  line.resize(at + static_cast<std::size_t>(length) + 1);
  std::snprintf(line.data() + at, static_cast<std::size_t>(length) + 1, format, values...);
  line.pop_back();  // the terminating zero
}

}  // namespace

void TraceWriter::row(std::uint64_t round, double seconds, const Report& report, const TimeSplit& time) {
  // A row of another length would put every later value under the wrong column.
  if (report.columns.size() != program_columns_) {
    throw std::logic_error("the program's Report has " + std::to_string(report.columns.size()) +
                           " columns, its trace_columns() names " + std::to_string(program_columns_));
  }
  std::string line;
  append_formatted(line, "%llu,%.6f,%.15g", static_cast<unsigned long long>(round), seconds,
                   report.objective);
  for (double value : report.columns) append_formatted(line, ",%.10g", value);
  append_formatted(line, ",%.6f,%.6f,%.6f,%.6f,%.6f\n", time.scheduler, time.compute, time.communication,
                   time.idle, time.scheduler_busy);
  rows_ += line;
  write(line);
}

void check_objective_is_finite(const Report& report, std::uint64_t round) {
  if (!std::isfinite(report.objective)) {
    throw std::runtime_error("the objective is not finite at round " + std::to_string(round) +
                             ": the solve diverged");
  }
}

std::string time_split_line(const TimeSplit& time, double seconds) {
  const auto share = [&](const char* name, double part) {
    char cell[64];
    std::snprintf(cell, sizeof cell, "%s %.1f%%", name, seconds > 0 ? 100 * part / seconds : 0.0);
    return std::string(cell);
  };
  std::string line = "time: " + share("compute", time.compute) + "  " +
                     share("communication", time.communication) + "  " + share("scheduler", time.scheduler) +
                     "  " + share("idle", time.idle);
  if (time.scheduler_busy > 0) line += "  (" + share("busiest scheduler working", time.scheduler_busy) + ")";
  return line;
}

std::string scheduler_hint(const TimeSplit& time, double seconds, int staleness) {
  constexpr double kNoticeableShare = 0.05;
  // Working more than half the solve, a scheduler's blocks come late whenever its work and the
  // rounds jitter together: past that, sharing the work is what helps.
  constexpr double kBusyShare = 0.5;
  // Beyond this many rounds ahead, further pipelining has not helped in our measurements (docs/cluster.md).
  constexpr int kFurthestUsefulStaleness = 8;
  // A solve this short has nothing worth tuning: its split is mostly start-up noise.
  constexpr double kShortestTunedSolve = 1;
  if (seconds < kShortestTunedSolve || time.scheduler < kNoticeableShare * seconds) return "";
  char line[320];
  const double waited = 100 * time.scheduler / seconds;
  const double busy = 100 * time.scheduler_busy / seconds;
  if (staleness == 0) {
    std::snprintf(line, sizeof line,
                  "hint: the rounds waited %.1f%% of the time for their blocks, built in lock-step: "
                  "--staleness 2 builds them while earlier rounds run",
                  waited);
  } else if (time.scheduler_busy >= kBusyShare * seconds || staleness >= kFurthestUsefulStaleness) {
    std::snprintf(line, sizeof line,
                  "hint: the rounds waited %.1f%% of the time for their blocks and the busiest scheduler "
                  "worked %.1f%% of it: more scheduler ranks (--schedulers) would share that work",
                  waited, busy);
  } else {
    std::snprintf(line, sizeof line,
                  "hint: the rounds waited %.1f%% of the time for their blocks while the busiest scheduler "
                  "worked %.1f%% of it: building further ahead (--staleness above %d) hides that wait",
                  waited, busy, staleness);
  }
  return line;
}

void ProgressLog::maybe_log(std::uint64_t round, double seconds, const Report& report) {
  if (interval_ <= 0 || seconds < next_) return;
  next_ = seconds + interval_;
  std::ostringstream line;
  line << "round " << round << "  " << seconds << " s  objective " << report.objective;
  for (std::size_t k = 0; k < columns_.size() && k < report.columns.size(); ++k) {
    // A value this evaluation did not compute (nan in the trace) is left out.
    if (std::isnan(report.columns[k])) continue;
    line << "  " << columns_[k] << " " << report.columns[k];
  }
  LOG(INFO) << line.str();
}

}  // namespace schmp::detail
