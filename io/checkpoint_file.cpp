#include "checkpoint_file.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>

#include "line_reader.hpp"
#include "schmp/io.hpp"
#include "schmp/output.hpp"

namespace schmp::io {

namespace {

constexpr std::array<char, 8> kMagic = {'S', 'C', 'H', 'M', 'P', 'C', 'K', 'P'};
// 2: the time split holds the schedulers' work too; 3: the retired parameters are kept; 4: the shares
// follow the state one by one, and the checksum covers the whole file; 5: the program is named by its
// type, not by its binary's file name; 6: logistic regression's state keeps its --positive_label.
constexpr std::uint32_t kFormatVersion = 6;
constexpr std::size_t kHeaderBytes = kMagic.size() + sizeof(std::uint32_t) + 2 * sizeof(std::uint64_t);
constexpr std::size_t kChecksumBytes = sizeof(std::uint64_t);
// Files are hashed in chunks of this size, each seeded by the hash so far, and read through in them.
constexpr std::size_t kChunk = std::size_t{1} << 22;

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

// content_hash over a stream of bytes cut into kChunk pieces, each seeded by the hash so far, whatever
// pieces the bytes arrive in.
class ChunkedHash {
 public:
  void add(std::span<const std::byte> bytes) {
    while (!bytes.empty()) {
      const std::size_t taken = std::min(bytes.size(), kChunk - chunk_.size());
      if (chunk_.empty() && taken == kChunk) {
        hash_ = content_hash(bytes.first(kChunk), hash_);  // a whole chunk in place: no copy
      } else {
        chunk_.insert(chunk_.end(), bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(taken));
        if (chunk_.size() == kChunk) flush();
      }
      bytes = bytes.subspan(taken);
    }
  }
  std::uint64_t finish() {
    if (!chunk_.empty()) flush();
    return hash_;
  }

 private:
  void flush() {
    hash_ = content_hash(chunk_, hash_);
    chunk_.clear();
  }
  Bytes chunk_;
  std::uint64_t hash_ = 0;
};

// The ChunkedHash of a file's first `end` bytes, read in chunks.
std::uint64_t hash_of(internal::InputFile& file, std::uint64_t end) {
  std::uint64_t hash = 0;
  Bytes chunk(static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, end)));
  for (std::uint64_t offset = 0; offset < end; offset += kChunk) {
    const auto length = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, end - offset));
    file.read(offset, length, reinterpret_cast<char*>(chunk.data()));
    hash = content_hash(std::span(chunk).first(length), hash);
  }
  return hash;
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
  return InputFingerprint{path, file.size(), hash_of(file, file.size())};
}

std::uint64_t checkpoint_checksum(std::span<const std::byte> bytes) {
  ChunkedHash hash;
  hash.add(bytes);
  return hash.finish();
}

namespace {

template <class T>
Bytes bytes_of(const T& value) {
  Bytes bytes(sizeof value);
  put(bytes, 0, value);
  return bytes;
}

}  // namespace

void write_checkpoint(std::ostream& out, const CheckpointState& state, std::uint64_t shares,
                      const std::function<Bytes(std::uint64_t)>& share) {
  if (!state.workers.empty())
    throw std::invalid_argument("write_checkpoint: the shares go apart from the state");
  const Bytes serialised = serialize(state);
  ChunkedHash hash;
  auto write = [&](std::span<const std::byte> bytes) {
    hash.add(bytes);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  };
  Bytes header(kHeaderBytes);
  put(header, 0, kMagic);
  put(header, kMagic.size(), kFormatVersion);
  put(header, kMagic.size() + sizeof kFormatVersion, shares);
  put(header, kMagic.size() + sizeof kFormatVersion + sizeof shares, std::uint64_t{serialised.size()});
  write(header);
  write(serialised);
  for (std::uint64_t w = 0; w < shares && out; ++w) {
    const Bytes bytes = share(w);
    write(bytes_of(std::uint64_t{bytes.size()}));
    write(bytes);
  }
  const Bytes checksum = bytes_of(hash.finish());
  out.write(reinterpret_cast<const char*>(checksum.data()), static_cast<std::streamsize>(checksum.size()));
}

void write_checkpoint(const std::string& path, const CheckpointState& state, std::uint64_t shares,
                      const std::function<Bytes(std::uint64_t)>& share) {
  write_file_atomically(path, [&](std::ostream& out) { write_checkpoint(out, state, shares, share); });
}

void write_checkpoint(const std::string& path, const CheckpointState& state) {
  CheckpointState without_shares = state;
  without_shares.workers.clear();
  write_checkpoint(path, without_shares, state.workers.size(),
                   [&](std::uint64_t w) { return state.workers[w]; });
}

struct CheckpointReader::SecondPass {
  explicit SecondPass(const std::string& path) : file(path) {}
  // Reads `length` bytes at `offset`, hashing them: the second pass reads the file in order.
  Bytes read(std::uint64_t offset, std::uint64_t length) {
    Bytes bytes(static_cast<std::size_t>(length));
    file.read(offset, bytes.size(), reinterpret_cast<char*>(bytes.data()));
    hash.add(bytes);
    return bytes;
  }
  internal::InputFile file;
  ChunkedHash hash;
};

CheckpointReader::~CheckpointReader() = default;

CheckpointReader::CheckpointReader(const std::string& path)
    : path_(path), pass_(std::make_unique<SecondPass>(path)) {
  auto refuse = [&](const std::string& why) { return InputError(path, 0, why); };
  internal::InputFile& file = pass_->file;
  const std::uint64_t size = file.size();
  Bytes header(kHeaderBytes);
  file.read(0, static_cast<std::size_t>(std::min<std::uint64_t>(size, kHeaderBytes)),
            reinterpret_cast<char*>(header.data()));
  if (size < kMagic.size() || std::memcmp(header.data(), kMagic.data(), kMagic.size()) != 0)
    throw refuse("not a schmp checkpoint");
  if (size < kMagic.size() + sizeof(std::uint32_t))
    throw refuse("truncated checkpoint (the header is cut short)");
  const auto version = get<std::uint32_t>(header, kMagic.size());
  if (version != kFormatVersion) {
    throw refuse("checkpoint format " + std::to_string(version) + ", this build reads format " +
                 std::to_string(kFormatVersion));
  }
  if (size < kHeaderBytes + kChecksumBytes) throw refuse("truncated checkpoint (the header is cut short)");

  // First pass: the checksum, over every byte before it.
  const std::uint64_t body = size - kChecksumBytes;
  Bytes checksum(kChecksumBytes);
  file.read(body, kChecksumBytes, reinterpret_cast<char*>(checksum.data()));
  checksum_ = get<std::uint64_t>(checksum, 0);
  if (checksum_ != hash_of(file, body))
    throw refuse("corrupt checkpoint: its checksum does not match its content (truncated, or changed)");

  // Second pass: the state, then where each share lies. A checksum that matches makes damage unlikely
  // here, but a file made to match is still refused rather than trusted.
  pass_->hash.add(header);
  const auto shares = get<std::uint64_t>(header, kMagic.size() + sizeof version);
  const auto state_length = get<std::uint64_t>(header, kMagic.size() + sizeof version + sizeof shares);
  if (state_length > body - kHeaderBytes) throw refuse("corrupt checkpoint: the state runs past the end");
  try {
    state_ = deserialize<CheckpointState>(pass_->read(kHeaderBytes, state_length));
  } catch (const MessageError& e) {
    throw refuse(std::string("corrupt checkpoint: ") + e.what());
  }
  if (!state_.workers.empty()) throw refuse("corrupt checkpoint: shares inside the state");
  std::uint64_t offset = kHeaderBytes + state_length;
  // Each share takes its length's 8 bytes at least.
  if (shares > (body - offset) / sizeof(std::uint64_t))
    throw refuse("corrupt checkpoint: " + std::to_string(shares) + " shares cannot fit in it");
  shares_.reserve(static_cast<std::size_t>(shares));
  for (std::uint64_t w = 0; w < shares; ++w) {
    Bytes length(sizeof(std::uint64_t));
    if (body - offset < length.size())
      throw refuse("corrupt checkpoint: share " + std::to_string(w) + " is missing");
    file.read(offset, length.size(), reinterpret_cast<char*>(length.data()));
    offset += length.size();
    const auto share_length = get<std::uint64_t>(length, 0);
    if (share_length > body - offset)
      throw refuse("corrupt checkpoint: share " + std::to_string(w) + " runs past the end");
    shares_.emplace_back(offset, share_length);
    offset += share_length;
  }
  if (offset != body) throw refuse("corrupt checkpoint: bytes after the last share");
  if (shares_.empty() && pass_->hash.finish() != checksum_) refuse_changed();
}

void CheckpointReader::refuse_changed() const {
  throw InputError(path_, 0, "changed while it was read (another run writing it?)");
}

Bytes CheckpointReader::next_share() {
  if (next_ == shares_.size()) throw std::logic_error("CheckpointReader: no share left");
  const auto [offset, length] = shares_[next_++];
  // The length again, in file order for the hash; one that changed must not size the read.
  const Bytes length_field = pass_->read(offset - sizeof(std::uint64_t), sizeof(std::uint64_t));
  if (get<std::uint64_t>(length_field, 0) != length) refuse_changed();
  Bytes bytes = pass_->read(offset, length);
  if (next_ == shares_.size() && pass_->hash.finish() != checksum_) refuse_changed();
  return bytes;
}

CheckpointState read_checkpoint(const std::string& path) {
  CheckpointReader reader(path);
  CheckpointState state = reader.take_state();
  for (std::uint64_t w = 0; w < reader.shares(); ++w) state.workers.push_back(reader.next_share());
  return state;
}

}  // namespace schmp::io
