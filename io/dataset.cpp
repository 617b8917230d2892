#include "schmp/dataset.hpp"

#include <algorithm>
#include <fstream>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

#include "parallel_parse.hpp"

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
      throw InputError::at(data, std::max(entries.line[e], entries.line[mine[k - 1]]),
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

// read_libsvm(path, range) on several threads.
SparseRows read_libsvm_parallel(const std::string& path, std::uint64_t size, ByteRange range) {
  std::vector<SparseRows> pieces = internal::parse_in_pieces<SparseRows>(
      size, range, [&](ByteRange sub) { return read_libsvm(path, sub); });
  if (pieces.size() == 1) return std::move(pieces.front());
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
