// The checkpoint reader: any file is either read or refused with an InputError naming it. Each input is
// tried twice: as a whole file (so the frame and checksum checks are met), and with the checksum it
// needs appended (so the decoding behind the checksum is reached too: the state, the shares). A file
// that reads must be written back to the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <sstream>
#include <string>

#include "../io/checkpoint_file.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = schmp::fuzz::write_input(data, size);
  schmp::fuzz::try_read(path, [&] { schmp::io::read_checkpoint(path); });

  const auto body = std::as_bytes(std::span(data, size));
  schmp::Bytes checked(body.begin(), body.end());
  const std::uint64_t checksum = schmp::io::checkpoint_checksum(body);
  checked.resize(checked.size() + sizeof checksum);
  std::memcpy(checked.data() + body.size(), &checksum, sizeof checksum);
  const std::string& checked_path =
      schmp::fuzz::write_input(reinterpret_cast<const std::uint8_t*>(checked.data()), checked.size());
  schmp::fuzz::try_read(checked_path, [&] {
    const schmp::io::CheckpointState state = schmp::io::read_checkpoint(checked_path);
    schmp::io::CheckpointState without_shares = state;
    without_shares.workers.clear();
    std::ostringstream again;
    schmp::io::write_checkpoint(again, without_shares, state.workers.size(),
                                [&](std::uint64_t w) { return state.workers[w]; });
    const std::string bytes = again.str();
    if (bytes.size() != checked.size() || std::memcmp(bytes.data(), checked.data(), bytes.size()) != 0)
      schmp::fuzz::finding("a checkpoint that reads does not write back to its bytes");
  });
  return 0;
}
