// How much memory a process may use, and refusing inputs that ask for more.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

#include "schmp/dataset.hpp"
#include "schmp/io.hpp"

namespace schmp::io {

namespace {

// The number a control group's limit file holds, or 0 when it holds none ("max", or no file).
std::uint64_t limit_in(const std::string& path) {
  std::ifstream in(path);
  std::uint64_t limit = 0;
  if (!(in >> limit)) return 0;
  return limit;
}

// The limits of this process's memory control groups: v2 (`0::PATH`) and v1 (`N:memory:PATH`). Inside a
// container PATH may name the group as the host sees it: the root of the container's view is read too.
std::uint64_t control_group_limit() {
  std::uint64_t lowest = 0;
  const auto take = [&](std::uint64_t limit) {
    if (limit > 0) lowest = lowest == 0 ? limit : std::min(lowest, limit);
  };
  std::ifstream groups("/proc/self/cgroup");
  for (std::string line; std::getline(groups, line);) {
    const std::size_t first = line.find(':');
    const std::size_t second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string group = line.substr(second + 1);
    if (controllers.empty()) {
      take(limit_in("/sys/fs/cgroup" + group + "/memory.max"));
      take(limit_in("/sys/fs/cgroup/memory.max"));
    } else if (controllers == "memory") {
      take(limit_in("/sys/fs/cgroup/memory" + group + "/memory.limit_in_bytes"));
      take(limit_in("/sys/fs/cgroup/memory/memory.limit_in_bytes"));
    }
  }
  return lowest;
}

std::uint64_t read_memory_limit() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGESIZE);
  std::uint64_t limit = pages > 0 && page_size > 0
                            ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size)
                            : 0;
  // v1 writes "no limit" as a number near 2^63, which the physical memory is below.
  const std::uint64_t group = control_group_limit();
  if (group > 0) limit = limit == 0 ? group : std::min(limit, group);
  return limit;
}

}  // namespace

std::uint64_t memory_limit() {
  // Read once: a job of a small problem checks it in well under the time that reading it takes.
  static const std::uint64_t limit = read_memory_limit();
  return limit;
}

void check_memory(const std::string& path, std::uint64_t source, const std::string& what, double bytes) {
  const std::uint64_t limit = memory_limit();
  if (limit == 0 || bytes <= static_cast<double>(limit)) return;
  char sizes[96];
  std::snprintf(sizes, sizeof sizes, "about %.3g GB on a rank, more than the %.3g GB this process can have",
                bytes / 1e9, static_cast<double>(limit) / 1e9);
  throw InputError::at(path, source, what + " needs " + sizes);
}

void check_columns_fit(const std::string& data, const SparseRows& rows, double bytes_per_column) {
  const double columns = rows.columns();
  if (columns * bytes_per_column <= static_cast<double>(memory_limit())) return;
  // The row of the largest index, which the message names.
  std::size_t row = 0;
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    for (std::uint64_t e = rows.row_start[r]; e < rows.row_start[r + 1]; ++e) {
      if (rows.index[e] + 1.0 == columns) row = r;
    }
  }
  char per_column[64];
  std::snprintf(per_column, sizeof per_column, ", at %g bytes for each column up to it,", bytes_per_column);
  check_memory(data, rows.source.empty() ? kUnknownSource : rows.source[row],
               "column " + std::to_string(static_cast<std::uint64_t>(columns)) + per_column,
               columns * bytes_per_column);
}

}  // namespace schmp::io
