#include "schmp/dataset.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <numeric>
#include <string>
#include <tuple>

namespace schmp::io {

namespace {

bool is_matrix_market(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, "cannot open file");
  std::string banner(14, '\0');
  in.read(banner.data(), static_cast<std::streamsize>(banner.size()));
  banner.resize(static_cast<std::size_t>(in.gcount()));
  // The banner's words are case-insensitive, as read_matrix_market reads them.
  std::transform(banner.begin(), banner.end(), banner.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return banner == "%%matrixmarket";
}

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

}  // namespace

SparseRows read_rows_part(const std::string& data, const std::string& labels, int part, int parts) {
  const std::uint64_t size = file_size(data);
  if (size == 0) throw InputError(data, 0, "empty file");
  if (is_matrix_market(data)) return rows_of_block(data, labels, part, parts);
  return read_libsvm(data, split_range(size, part, parts));
}

}  // namespace schmp::io
