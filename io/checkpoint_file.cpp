#include "checkpoint_file.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include "line_reader.hpp"
#include "schmp/io.hpp"
#include "schmp/output.hpp"

namespace schmp::io {

namespace {

constexpr std::array<char, 8> kMagic = {'S', 'C', 'H', 'M', 'P', 'C', 'K', 'P'};
// 2: the time split holds the schedulers' work too; 3: the retired parameters are kept.
constexpr std::uint32_t kFormatVersion = 3;
constexpr std::size_t kHeaderBytes = kMagic.size() + sizeof(std::uint32_t) + sizeof(std::uint64_t);
constexpr std::size_t kChecksumBytes = sizeof(std::uint64_t);

constexpr std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

template <class T>
void put(Bytes& out, std::size_t offset, const T& value) {
  std::memcpy(out.data() + offset, &value, sizeof value);
}

template <class T>
T get(std::span<const std::byte> in, std::size_t offset) {
  T value;
  std::memcpy(&value, in.data() + offset, sizeof value);
  return value;
}

}  // namespace

std::uint64_t content_hash(std::span<const std::byte> bytes, std::uint64_t seed) {
  std::uint64_t h = mix(seed ^ 0x9E3779B97F4A7C15ull ^ bytes.size());
  std::size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) h = mix(h ^ get<std::uint64_t>(bytes, i)) + 0x632BE59BD9B4E019ull;
  std::uint64_t tail = 0;
  std::memcpy(&tail, bytes.data() + i, bytes.size() - i);
  return mix(h ^ tail ^ (static_cast<std::uint64_t>(bytes.size() - i) << 56));
}

InputFingerprint fingerprint(const std::string& path) {
  internal::InputFile file(path);
  InputFingerprint print{path, file.size(), 0};
  // Chunks hashed in turn, each seeded by the hash so far: the whole content counts.
  constexpr std::size_t kChunk = std::size_t{1} << 22;
  std::vector<char> chunk(kChunk);
  for (std::uint64_t offset = 0; offset < file.size(); offset += kChunk) {
    const auto length = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, file.size() - offset));
    file.read(offset, length, chunk.data());
    print.hash = content_hash(std::as_bytes(std::span(chunk.data(), length)), print.hash);
  }
  return print;
}

namespace {

// The header of a checkpoint whose payload has `payload_bytes` bytes, and the checksum after it.
Bytes header_for(std::uint64_t payload_bytes) {
  Bytes header(kHeaderBytes);
  put(header, 0, kMagic);
  put(header, kMagic.size(), kFormatVersion);
  put(header, kMagic.size() + sizeof kFormatVersion, payload_bytes);
  return header;
}

Bytes checksum_of(std::span<const std::byte> payload) {
  Bytes checksum(kChecksumBytes);
  put(checksum, 0, content_hash(payload));
  return checksum;
}

}  // namespace

Bytes frame_checkpoint(std::span<const std::byte> payload) {
  Bytes file = header_for(payload.size());
  file.resize(kHeaderBytes + payload.size() + kChecksumBytes);
  if (!payload.empty()) std::memcpy(file.data() + kHeaderBytes, payload.data(), payload.size());
  put(file, kHeaderBytes + payload.size(), content_hash(payload));
  return file;
}

void write_checkpoint(const std::string& path, const CheckpointState& state) {
  // The payload is written where it lies, never copied into a frame: a checkpoint may be most of rank
  // 0's memory.
  const Bytes payload = serialize(state);
  const Bytes header = header_for(payload.size());
  const Bytes checksum = checksum_of(payload);
  write_file_atomically(path, [&](std::ostream& out) {
    for (const Bytes* part : {&header, &payload, &checksum})
      out.write(reinterpret_cast<const char*>(part->data()), static_cast<std::streamsize>(part->size()));
  });
}

CheckpointState decode_checkpoint(const std::string& path, std::span<const std::byte> file) {
  auto refuse = [&](const std::string& why) { return InputError(path, 0, why); };
  if (file.size() < kMagic.size() || std::memcmp(file.data(), kMagic.data(), kMagic.size()) != 0)
    throw refuse("not a schmp checkpoint");
  if (file.size() < kHeaderBytes) throw refuse("truncated checkpoint (the header is cut short)");
  const auto version = get<std::uint32_t>(file, kMagic.size());
  if (version != kFormatVersion) {
    throw refuse("checkpoint format " + std::to_string(version) + ", this build reads format " +
                 std::to_string(kFormatVersion));
  }
  const auto length = get<std::uint64_t>(file, kMagic.size() + sizeof(std::uint32_t));
  const std::uint64_t available = file.size() - kHeaderBytes;
  if (length > available || available - length < kChecksumBytes) {
    throw refuse("truncated checkpoint: " + std::to_string(file.size()) +
                 " bytes where the header promises " +
                 std::to_string(length + kHeaderBytes + kChecksumBytes));
  }
  if (available - length > kChecksumBytes) throw refuse("checkpoint has bytes after its end");
  const std::span<const std::byte> payload = file.subspan(kHeaderBytes, static_cast<std::size_t>(length));
  if (get<std::uint64_t>(file, kHeaderBytes + payload.size()) != content_hash(payload))
    throw refuse("corrupt checkpoint: its checksum does not match its content");
  try {
    return deserialize<CheckpointState>(payload);
  } catch (const MessageError& e) {
    throw refuse(std::string("corrupt checkpoint: ") + e.what());
  }
}

CheckpointState read_checkpoint(const std::string& path) {
  internal::InputFile file(path);
  std::vector<std::byte> bytes(static_cast<std::size_t>(file.size()));
  file.read(0, bytes.size(), reinterpret_cast<char*>(bytes.data()));
  return decode_checkpoint(path, bytes);
}

}  // namespace schmp::io
