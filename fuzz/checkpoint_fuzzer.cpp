// The checkpoint reader: any file is either read or refused with an InputError naming it. Each input is
// tried twice: as a whole file (so header, length and checksum checks are met), and as the payload of a
// well-framed file (so the decoding of the state behind the checksum is reached too). A payload that
// decodes must encode back to the same bytes.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "../io/checkpoint_file.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = schmp::fuzz::write_input(data, size);
  schmp::fuzz::try_read(path, [&] { schmp::io::read_checkpoint(path); });

  const auto payload = std::as_bytes(std::span(data, size));
  const schmp::Bytes framed = schmp::io::frame_checkpoint(payload);
  schmp::fuzz::try_read(path, [&] {
    const schmp::io::CheckpointState state = schmp::io::decode_checkpoint(path, framed);
    const schmp::Bytes again = schmp::serialize(state);
    if (!std::equal(again.begin(), again.end(), payload.begin(), payload.end()))
      schmp::fuzz::finding("a decoded checkpoint does not encode back to its bytes");
  });
  return 0;
}
