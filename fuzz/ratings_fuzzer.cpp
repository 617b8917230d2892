// read_ratings, on `user item rating` text and on MatrixMarket files, with ids counted from 0 and from 1
// and under several bounds: every rating visited must lie below its bounds and hold a finite value.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "fuzz_input.hpp"
#include "schmp/io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = schmp::fuzz::write_input(data, size);
  // The default (LIBMF's 2^31 - 1), small bounds the seeds cross, and bounds beyond 32-bit ids.
  const schmp::io::IdBounds bounds[] = {{}, {5, 3}, {std::uint64_t{1} << 33, std::uint64_t{1} << 40}};
  for (const int index_base : {0, 1}) {
    for (const schmp::io::IdBounds& bound : bounds) {
      std::optional<std::uint64_t> previous_source;
      schmp::fuzz::try_read(path, [&] {
        schmp::io::read_ratings(path, index_base, bound, [&](const schmp::io::Rating& rating) {
          if (rating.user >= bound.users || rating.item >= bound.items)
            schmp::fuzz::finding("id beyond bound");
          if (!schmp::fuzz::readable_value(rating.value))
            schmp::fuzz::finding("rating not finite or beyond the limit");
          if (previous_source && rating.source <= *previous_source)
            schmp::fuzz::finding("rating sources not increasing");
          previous_source = rating.source;
        });
      });
    }
  }
  return 0;
}
