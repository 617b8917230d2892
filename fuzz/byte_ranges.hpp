// Shared by the targets of readers that can read a byte range of a file: read in consecutive ranges, a
// file must give exactly what one read of the whole file gives, and a bad file the same first error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fuzz_input.hpp"
#include "schmp/io.hpp"

namespace schmp::fuzz {

// Consecutive ranges covering a file of `size` bytes, several ways: halves and thirds as workers take
// them, and three ranges cut at offsets picked from the input's bytes (so that the fuzzer can move the
// cuts), the last one with the default, open end.
inline std::vector<std::vector<io::ByteRange>> range_splits(const std::uint8_t* data, std::size_t size) {
  std::vector<std::vector<io::ByteRange>> splits;
  for (const int parts : {2, 3}) {
    std::vector<io::ByteRange>& split = splits.emplace_back();
    for (int part = 0; part < parts; ++part) split.push_back(io::split_range(size, part, parts));
  }
  std::uint64_t hash = 14695981039346656037ull;  // FNV-1a
  for (std::size_t k = 0; k < size; ++k) hash = (hash ^ data[k]) * 1099511628211ull;
  std::uint64_t first = (hash & 0xFFFFFFFF) % (size + 1);
  std::uint64_t second = (hash >> 32) % (size + 1);
  if (first > second) std::swap(first, second);
  splits.push_back({{0, first}, {first, second}, {second, std::numeric_limits<std::uint64_t>::max()}});
  return splits;
}

inline std::string describe(const std::vector<io::ByteRange>& split) {
  std::string text;
  for (const io::ByteRange& range : split) {
    text += "[" + std::to_string(range.begin) + ", " + std::to_string(range.end) + ") ";
  }
  return text;
}

// Reads the file at `path` (the input `data`) in the ranges of every split, with `read(range)`, joining
// the results of consecutive ranges with `append(joined, part)`, and checks them against the whole
// file's: the first range that fails must raise `whole_error`, and when none fails the joined result
// must equal `*whole` by `same(a, b)` (not checked when `whole` is empty).
template <class Result, class Read, class Append, class Same>
void check_ranges(const std::string& path, const std::uint8_t* data, std::size_t size,
                  const std::optional<Result>& whole, const std::optional<io::InputError>& whole_error,
                  Read read, Append append, Same same) {
  for (const std::vector<io::ByteRange>& split : range_splits(data, size)) {
    Result joined{};
    std::optional<io::InputError> error;
    for (const io::ByteRange& range : split) {
      Result part{};
      error = try_read(path, [&] { part = read(range); });
      if (error) break;
      append(joined, part);
    }
    const std::string expected = whole_error ? whole_error->what() : "success";
    const std::string got = error ? error->what() : "success";
    if (expected != got) {
      finding("ranges " + describe(split) + "give '" + got + "', the whole file '" + expected + "'");
    }
    if (!error && whole && !same(joined, *whole)) {
      finding("ranges " + describe(split) + "read other contents than the whole file");
    }
  }
}

}  // namespace schmp::fuzz
