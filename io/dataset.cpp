#include "schmp/dataset.hpp"

#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <exception>
#include <fstream>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

namespace schmp::io {

namespace {

SparseRows rows_of_block(const std::string& data, const std::string& labels, int part, int parts) {
  if (labels.empty())
    throw InputError(data, 0, "a MatrixMarket matrix needs its labels in a separate file (--labels)");
  const Coordinates entries = read_matrix_market(data);
  const std::vector<double> all_labels = read_dense_vector(labels);
  if (all_labels.size() != entries.rows) {
    throw InputError(labels, 0,
                     "has " + std::to_string(all_labels.size()) + " labels for " +
                         std::to_string(entries.rows) + " matrix rows");
  }
  const std::uint64_t first =
      entries.rows * static_cast<std::uint64_t>(part) / static_cast<std::uint64_t>(parts);
  const std::uint64_t last =
      entries.rows * static_cast<std::uint64_t>(part + 1) / static_cast<std::uint64_t>(parts);
  std::vector<std::size_t> mine;
  for (std::size_t e = 0; e < entries.row.size(); ++e) {
    if (entries.row[e] >= first && entries.row[e] < last) mine.push_back(e);
  }
  std::sort(mine.begin(), mine.end(), [&](std::size_t a, std::size_t b) {
    return std::tie(entries.row[a], entries.column[a]) < std::tie(entries.row[b], entries.column[b]);
  });
  SparseRows rows;
  rows.labels.assign(all_labels.begin() + static_cast<std::ptrdiff_t>(first),
                     all_labels.begin() + static_cast<std::ptrdiff_t>(last));
  rows.line.assign(last - first, 0);
  rows.row_start.assign(last - first + 1, 0);
  for (std::size_t k = 0; k < mine.size(); ++k) {
    const std::size_t e = mine[k];
    if (k > 0 && entries.row[e] == entries.row[mine[k - 1]] &&
        entries.column[e] == entries.column[mine[k - 1]]) {
      throw InputError(data, std::max(entries.line[e], entries.line[mine[k - 1]]),
                       "duplicate entry (" + std::to_string(entries.row[e] + 1) + ", " +
                           std::to_string(entries.column[e] + 1) + ")");
    }
    ++rows.row_start[entries.row[e] - first + 1];
    rows.index.push_back(entries.column[e]);
    rows.value.push_back(entries.value[e]);
  }
  std::partial_sum(rows.row_start.begin(), rows.row_start.end(), rows.row_start.begin());
  return rows;
}

// Below this many bytes per task, the time to start a task and to concatenate its rows is no longer
// small against the parse itself, so small files stay on one thread.
constexpr std::uint64_t kMinBytesPerTask = std::uint64_t{4} << 20;

// Appends `piece` to `rows` as further rows.
void append_rows(SparseRows& rows, const SparseRows& piece) {
  const std::uint64_t offset = rows.index.size();
  rows.labels.insert(rows.labels.end(), piece.labels.begin(), piece.labels.end());
  for (auto start = piece.row_start.begin() + 1; start != piece.row_start.end(); ++start) {
    rows.row_start.push_back(offset + *start);
  }
  rows.index.insert(rows.index.end(), piece.index.begin(), piece.index.end());
  rows.value.insert(rows.value.end(), piece.value.begin(), piece.value.end());
  rows.line.insert(rows.line.end(), piece.line.begin(), piece.line.end());
}

// read_libsvm(path, range) on several threads: since a line belongs to the sub-range holding its first
// byte and read_libsvm numbers lines from the file start, reading consecutive sub-ranges and joining
// them in order gives exactly the rows of the whole range.
SparseRows read_libsvm_parallel(const std::string& path, std::uint64_t size, ByteRange range) {
  // ByteRange's default end lies far beyond the file; split only the bytes that exist.
  const std::uint64_t end = std::min(range.end, size);
  const std::uint64_t length = range.begin < end ? end - range.begin : 0;
  // The arena's concurrency ignores a global_control limit (launch sets one per rank); sub-ranges beyond
  // the threads that may run would only add prefix scans and copying.
  const std::uint64_t concurrency = std::min<std::uint64_t>(
      static_cast<std::uint64_t>(std::max(1, tbb::this_task_arena::max_concurrency())),
      tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism));
  const int tasks = static_cast<int>(std::clamp<std::uint64_t>(length / kMinBytesPerTask, 1, concurrency));
  if (tasks == 1) return read_libsvm(path, range);

  std::vector<SparseRows> pieces(static_cast<std::size_t>(tasks));
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(tasks));
  // simple_partitioner: one task per sub-range, so that each sub-range's work can go to its own thread.
  tbb::parallel_for(
      0, tasks,
      [&](int task) {
        const ByteRange sub = split_range(length, task, tasks);
        const auto t = static_cast<std::size_t>(task);
        // Kept rather than propagated: TBB would rethrow whichever failure came first in time.
        try {
          pieces[t] = read_libsvm(path, ByteRange{range.begin + sub.begin, range.begin + sub.end});
        } catch (...) {
          errors[t] = std::current_exception();
        }
      },
      tbb::simple_partitioner());
  // Sub-ranges lie in file order and each reports its first bad line, so the first failure in that
  // order holds the smallest line number: the error that a sequential read would raise.
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }

  SparseRows rows;
  std::size_t row_count = 0;
  std::size_t entry_count = 0;
  for (const SparseRows& piece : pieces) {
    row_count += piece.rows();
    entry_count += piece.index.size();
  }
  rows.labels.reserve(row_count);
  rows.row_start.reserve(row_count + 1);
  rows.line.reserve(row_count);
  rows.index.reserve(entry_count);
  rows.value.reserve(entry_count);
  for (const SparseRows& piece : pieces) append_rows(rows, piece);
  return rows;
}

}  // namespace

SparseRows read_rows_part(const std::string& data, const std::string& labels, int part, int parts) {
  const std::uint64_t size = file_size(data);
  if (size == 0) throw InputError(data, 0, "empty file");
  if (is_matrix_market(data)) return rows_of_block(data, labels, part, parts);
  return read_libsvm_parallel(data, size, split_range(size, part, parts));
}

}  // namespace schmp::io
