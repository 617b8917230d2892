// LDA's encoding of count rows (apps/lda/documents.hpp), which blocks travel in between workers and
// parts in to rank 0: any words either decode or are refused with std::logic_error, never written
// past the rows, and what decodes is exactly what encode_rows writes for those rows, whole or one row
// at a time. The input's first 4 bytes pick K (1 to 100,000, the app's range) and the row count (up
// to 7); the rest are the encoding's 32-bit words.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <vector>

#include "../apps/lda/documents.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return 0;
  std::uint32_t shape = 0;
  std::memcpy(&shape, data, 4);
  const int topics = 1 + static_cast<int>((shape >> 3) % 100000);
  const std::size_t rows = shape & 7;
  std::vector<std::uint32_t> encoded((size - 4) / 4);
  if (!encoded.empty()) std::memcpy(encoded.data(), data + 4, encoded.size() * 4);

  const auto width = static_cast<std::size_t>(topics);
  std::vector<std::uint32_t> dense(rows * width);
  try {
    schmp::lda::decode_rows(encoded, topics, dense);
  } catch (const std::logic_error&) {
    return 0;
  }
  if (schmp::lda::encode_rows(dense, topics) != encoded)
    schmp::fuzz::finding("a decoded encoding is not what encode_rows writes for its rows");
  const std::vector<std::size_t> starts = schmp::lda::row_starts(encoded, rows);
  std::vector<std::uint32_t> row(width);
  for (std::size_t r = 0; r < rows; ++r) {
    schmp::lda::decode_rows(
        std::span<const std::uint32_t>(encoded).subspan(starts[r], starts[r + 1] - starts[r]), topics, row);
    if (!std::equal(row.begin(), row.end(), dense.begin() + static_cast<std::ptrdiff_t>(r * width)))
      schmp::fuzz::finding("a row decoded alone differs from the whole block's");
  }
  return 0;
}
