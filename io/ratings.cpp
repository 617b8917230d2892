// Ratings files: `user item rating` lines, or MatrixMarket coordinate entries.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "line_reader.hpp"
#include "parallel_parse.hpp"
#include "schmp/io.hpp"
#include "whole_file_readers.hpp"

namespace schmp::io {

namespace {

using internal::Where;

// Ratings hold 32-bit ids, and so must the count of ids the largest one implies (it + 1): a bound
// beyond 2^32 - 1 allows no more than that does.
constexpr std::uint64_t kMostIds = (std::uint64_t{1} << 32) - 1;

std::uint64_t effective_bound(std::uint64_t bound) { return std::min(bound, kMostIds); }

std::uint32_t parse_id(std::string_view token, const char* what, int index_base, std::uint64_t bound,
                       const Where& where) {
  const std::uint64_t id = internal::parse_count(token, what, where);
  if (id < static_cast<std::uint64_t>(index_base)) {
    where.fail(std::string(what) + " 0 (ids are 1-based here; --index_base 0 reads 0-based ids)");
  }
  const std::uint64_t zero_based = id - static_cast<std::uint64_t>(index_base);
  if (zero_based >= effective_bound(bound)) {
    where.fail(std::string(what) + " " + std::to_string(id) +
               " beyond the bound: 0-based ids must be below " + std::to_string(effective_bound(bound)));
  }
  return static_cast<std::uint32_t>(zero_based);
}

// The ratings of the lines of `chunk` that start in `range` (offsets into its text).
std::vector<Rating> parse_ratings(const internal::RangeText& chunk, ByteRange range, int index_base,
                                  const IdBounds& bounds) {
  internal::LineCursor lines(chunk, range);
  const std::string_view text = chunk.text();
  const auto first = static_cast<std::ptrdiff_t>(std::min<std::uint64_t>(range.begin, text.size()));
  const auto last = static_cast<std::ptrdiff_t>(std::min<std::uint64_t>(range.end, text.size()));
  std::vector<Rating> ratings;
  ratings.reserve(static_cast<std::size_t>(std::count(text.begin() + first, text.begin() + last, '\n')) + 1);
  while (const auto line = lines.next()) {
    const Where where = line->where();
    internal::Tokenizer tokens(internal::before_comment(line->text, '#'));
    const auto user = tokens.next();
    if (!user) continue;
    const auto item = tokens.next();
    const auto value = tokens.next();
    if (!item || !value) where.fail("expected 'user item rating'");
    if (const auto extra = tokens.next()) {
      where.fail("unexpected " + internal::quoted(*extra) + " after 'user item rating'");
    }
    Rating& rating = ratings.emplace_back();
    rating.user = parse_id(*user, "user id", index_base, bounds.users, where);
    rating.item = parse_id(*item, "item id", index_base, bounds.items, where);
    rating.value = internal::parse_finite(*value, "rating", where);
    rating.source = line->source;
  }
  return ratings;
}

}  // namespace

namespace internal {

RatingsRead read_ratings(const std::string& path, int index_base, const IdBounds& bounds,
                         const std::function<void(const Rating&)>& visit, ByteRange range,
                         std::uint64_t chunk_bytes) {
  if (index_base != 0 && index_base != 1) {
    throw std::invalid_argument("index base must be 0 or 1, not " + std::to_string(index_base));
  }
  RatingsRead read;
  if (!is_matrix_market(path)) {
    // One chunk at a time, each parsed on several threads, then visited in file order and let go.
    ChunkReader chunks(path, chunk_bytes, range);
    RangeText chunk;
    while (chunks.next(chunk)) {
      const auto pieces = parse_in_pieces<std::vector<Rating>>(
          chunk.text().size(), ByteRange{0, chunk.text().size()},
          [&](ByteRange range) { return parse_ratings(chunk, range, index_base, bounds); });
      for (const auto& piece : pieces) {
        for (const Rating& rating : piece) visit(rating);
        read.ratings += piece.size();
      }
    }
    return read;
  }
  // Chunk by chunk as well: a rank holds its parsed ratings only until visit() has seen them.
  const std::uint64_t users = effective_bound(bounds.users);
  const std::uint64_t items = effective_bound(bounds.items);
  const auto check_bounds = [&](const Coordinates& sizes) {
    if (sizes.rows > users || sizes.columns > items) {
      throw InputError(path, 0,
                       "declared size " + std::to_string(sizes.rows) + " x " + std::to_string(sizes.columns) +
                           " beyond the bound of " + std::to_string(users) + " users x " +
                           std::to_string(items) + " items");
    }
  };
  Coordinates sizes = read_matrix_market_in_chunks(
      path, chunk_bytes,
      [&](const Coordinates& entries) {
        check_bounds(entries);
        for (std::size_t e = 0; e < entries.value.size(); ++e) {
          visit(Rating{static_cast<std::uint32_t>(entries.row[e]), entries.column[e], entries.value[e],
                       entries.source[e]});
        }
        read.ratings += entries.value.size();
      },
      range);
  check_bounds(sizes);
  // Only a reader that saw every entry can tell whether the count is right.
  if (range.begin == 0 && range.end >= file_size(path)) check_entry_count(path, sizes, read.ratings);
  read.matrix_market = std::move(sizes);
  return read;
}

}  // namespace internal

RatingsRead read_ratings(const std::string& path, int index_base, const IdBounds& bounds,
                         const std::function<void(const Rating&)>& visit, ByteRange range) {
  return internal::read_ratings(path, index_base, bounds, visit, range, internal::kChunkBytes);
}

}  // namespace schmp::io
