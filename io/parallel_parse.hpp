// Private to schmp_io: parsing a byte range of a file on several oneTBB threads. A line belongs to the
// sub-range holding its first byte and readers number lines from the file's start, so parsing
// consecutive sub-ranges and joining the pieces in order gives exactly what one sequential read gives.
#pragma once

#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <vector>

#include "schmp/io.hpp"

namespace schmp::io::internal {

// Fewer bytes than this per thread do not repay a thread's start and the joining.
constexpr std::uint64_t kMinBytesPerTask = std::uint64_t{4} << 20;

// parse(sub_range) for consecutive sub-ranges of `range` (in a file of `size` bytes), the pieces in
// file order. A failure is rethrown only after every piece has run: the first in file order, which holds
// the smallest line number, so the error is the one a sequential read would raise.
template <class Piece, class Parse>
std::vector<Piece> parse_in_pieces(std::uint64_t size, ByteRange range, Parse parse) {
  // ByteRange's default end lies far beyond the file; split only the bytes that exist.
  const std::uint64_t end = std::min(range.end, size);
  const std::uint64_t length = range.begin < end ? end - range.begin : 0;
  // The arena's concurrency ignores a global_control limit (launch sets one per rank); sub-ranges beyond
  // the threads that may run would only add prefix scans and copying.
  const std::uint64_t concurrency = std::min<std::uint64_t>(
      static_cast<std::uint64_t>(std::max(1, tbb::this_task_arena::max_concurrency())),
      tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism));
  const int tasks = static_cast<int>(std::clamp<std::uint64_t>(length / kMinBytesPerTask, 1, concurrency));
  std::vector<Piece> pieces(static_cast<std::size_t>(tasks));
  if (tasks == 1) {
    pieces.front() = parse(range);
    return pieces;
  }
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(tasks));
  // simple_partitioner: one task per sub-range, so that each sub-range's work can go to its own thread.
  tbb::parallel_for(
      0, tasks,
      [&](int task) {
        const ByteRange sub = split_range(length, task, tasks);
        const auto t = static_cast<std::size_t>(task);
        // Kept rather than propagated: TBB would rethrow whichever failure came first in time.
        try {
          pieces[t] = parse(ByteRange{range.begin + sub.begin, range.begin + sub.end});
        } catch (...) {
          errors[t] = std::current_exception();
        }
      },
      tbb::simple_partitioner());
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
  return pieces;
}

}  // namespace schmp::io::internal
