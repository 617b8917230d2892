// read_libsvm: the whole file, then in byte ranges (fuzz/byte_ranges.hpp). Rows read must keep the
// documented shape: sorted 1-based indices within bounds, finite numbers, a source per row.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "byte_ranges.hpp"
#include "fuzz_input.hpp"
#include "schmp/io.hpp"

namespace {

using schmp::fuzz::finding;
using schmp::io::SparseRows;

void check_shape(const SparseRows& rows) {
  if (rows.row_start.size() != rows.rows() + 1 || rows.source.size() != rows.rows() ||
      rows.row_start.front() != 0 || rows.row_start.back() != rows.index.size() ||
      rows.value.size() != rows.index.size()) {
    finding("inconsistent array sizes in SparseRows");
  }
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    if (!schmp::fuzz::readable_value(rows.labels[r])) finding("label not finite or beyond the limit");
    if (r > 0 && rows.source[r] <= rows.source[r - 1]) finding("row sources not increasing");
    if (rows.row_start[r + 1] < rows.row_start[r]) finding("row_start decreasing");
    for (auto k = rows.row_start[r]; k < rows.row_start[r + 1]; ++k) {
      if (k > rows.row_start[r] && rows.index[k] <= rows.index[k - 1]) finding("indices not increasing");
      if (rows.index[k] > 4294967293u) finding("index beyond 2^32 - 3");
      if (!schmp::fuzz::readable_value(rows.value[k])) finding("value not finite or beyond the limit");
    }
  }
}

void append(SparseRows& all, const SparseRows& part) {
  const std::uint64_t offset = all.index.size();
  all.labels.insert(all.labels.end(), part.labels.begin(), part.labels.end());
  for (std::size_t r = 1; r < part.row_start.size(); ++r) all.row_start.push_back(offset + part.row_start[r]);
  all.index.insert(all.index.end(), part.index.begin(), part.index.end());
  all.value.insert(all.value.end(), part.value.begin(), part.value.end());
  all.source.insert(all.source.end(), part.source.begin(), part.source.end());
}

bool same(const SparseRows& a, const SparseRows& b) {
  return a.labels == b.labels && a.row_start == b.row_start && a.index == b.index && a.value == b.value &&
         a.source == b.source;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = schmp::fuzz::write_input(data, size);
  std::optional<SparseRows> whole{SparseRows{}};
  const auto error = schmp::fuzz::try_read(path, [&] { *whole = schmp::io::read_libsvm(path); });
  if (error) {
    whole.reset();
  } else {
    check_shape(*whole);
  }
  schmp::fuzz::check_ranges(
      path, data, size, whole, error,
      [&](schmp::io::ByteRange range) { return schmp::io::read_libsvm(path, range); }, append, same);
  return 0;
}
