// read_matrix_market: the whole file, then in byte ranges (fuzz/byte_ranges.hpp); and read_dense_vector,
// which reads MatrixMarket arrays (or plain numbers), on the same input. Entries read must lie inside the
// declared size and hold finite values.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "byte_ranges.hpp"
#include "fuzz_input.hpp"
#include "schmp/io.hpp"

namespace {

using schmp::fuzz::finding;
using schmp::io::Coordinates;

void check_shape(const Coordinates& entries) {
  const std::size_t count = entries.row.size();
  if (entries.column.size() != count || entries.value.size() != count || entries.source.size() != count) {
    finding("inconsistent array sizes in Coordinates");
  }
  if (count != entries.declared_entries) finding("entry count differs from the size line's");
  for (std::size_t e = 0; e < count; ++e) {
    if (entries.row[e] >= entries.rows || entries.column[e] >= entries.columns)
      finding("entry out of bounds");
    if (!schmp::fuzz::readable_value(entries.value[e])) finding("value not finite or beyond the limit");
    if (e > 0 && entries.source[e] <= entries.source[e - 1]) finding("entry sources not increasing");
  }
}

void append(Coordinates& all, const Coordinates& part) {
  all.rows = part.rows;
  all.columns = part.columns;
  all.declared_entries = part.declared_entries;
  all.row.insert(all.row.end(), part.row.begin(), part.row.end());
  all.column.insert(all.column.end(), part.column.begin(), part.column.end());
  all.value.insert(all.value.end(), part.value.begin(), part.value.end());
  all.source.insert(all.source.end(), part.source.begin(), part.source.end());
}

bool same(const Coordinates& a, const Coordinates& b) {
  return a.rows == b.rows && a.columns == b.columns && a.declared_entries == b.declared_entries &&
         a.row == b.row && a.column == b.column && a.value == b.value && a.source == b.source;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = schmp::fuzz::write_input(data, size);
  std::optional<Coordinates> whole{Coordinates{}};
  auto error = schmp::fuzz::try_read(path, [&] { *whole = schmp::io::read_matrix_market(path); });
  std::optional<std::string> count_mismatch;  // the start of the whole read's entry count message
  if (error) {
    whole.reset();
    // Only a read of the whole file counts the entries: ranges of such a file read without error. (The
    // message is matched from its start: the input's text may appear later in other messages.)
    count_mismatch = path + ":" + std::to_string(error->line()) + ": size line declares ";
    if (std::string(error->what()).rfind(*count_mismatch, 0) == 0) {
      error.reset();
    } else {
      count_mismatch.reset();
    }
  } else {
    check_shape(*whole);
  }
  // A split whose last range starts at 0 (the others empty) reads the whole file, entry count and all:
  // its count mismatch is the whole read's, set aside above.
  const auto read_range = [&](schmp::io::ByteRange range) {
    try {
      return schmp::io::read_matrix_market(path, range);
    } catch (const schmp::io::InputError& range_error) {
      if (!count_mismatch || std::string(range_error.what()).rfind(*count_mismatch, 0) != 0) throw;
      return Coordinates{};
    }
  };
  schmp::fuzz::check_ranges(path, data, size, whole, error, read_range, append, same);

  schmp::fuzz::try_read(path, [&] {
    std::vector<std::uint64_t> sources;
    const std::vector<double> values = schmp::io::read_dense_vector(path, &sources);
    if (sources.size() != values.size()) finding("a dense vector's sources are not one per value");
    for (std::size_t k = 0; k < values.size(); ++k) {
      if (!schmp::fuzz::readable_value(values[k]))
        finding("dense vector value not finite or beyond the limit");
      if (k > 0 && sources[k] <= sources[k - 1]) finding("dense vector sources not increasing");
    }
  });
  return 0;
}
