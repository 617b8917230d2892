#include "trace.hpp"

#include <glog/logging.h>

#include <cerrno>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace schmp::detail {

TraceWriter::TraceWriter(const std::string& path, const std::vector<std::string>& program_columns)
    : path_(path) {
  if (path.empty()) return;
  file_.reset(std::fopen(path.c_str(), "w"));
  if (!file_) throw std::runtime_error(path + ": cannot write trace: " + std::strerror(errno));
  std::fprintf(file_.get(), "round,seconds,objective");
  for (const std::string& column : program_columns) std::fprintf(file_.get(), ",%s", column.c_str());
  std::fprintf(file_.get(), ",scheduler_s,compute_s,communication_s,idle_s\n");
  std::fflush(file_.get());
}

void TraceWriter::row(std::uint64_t round, double seconds, const Report& report, const TimeSplit& time) {
  if (!file_) return;
  std::FILE* f = file_.get();
  std::fprintf(f, "%llu,%.6f,%.15g", static_cast<unsigned long long>(round), seconds, report.objective);
  for (double value : report.columns) std::fprintf(f, ",%.10g", value);
  std::fprintf(f, ",%.6f,%.6f,%.6f,%.6f\n", time.scheduler, time.compute, time.communication, time.idle);
  if (std::fflush(f) != 0) throw std::runtime_error(path_ + ": cannot write trace: " + std::strerror(errno));
}

void ProgressLog::maybe_log(std::uint64_t round, double seconds, const Report& report) {
  if (interval_ <= 0 || seconds < next_) return;
  next_ = seconds + interval_;
  std::ostringstream line;
  line << "round " << round << "  " << seconds << " s  objective " << report.objective;
  for (std::size_t k = 0; k < columns_.size() && k < report.columns.size(); ++k) {
    line << "  " << columns_[k] << " " << report.columns[k];
  }
  LOG(INFO) << line.str();
}

}  // namespace schmp::detail
