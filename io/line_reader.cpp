// Reading the lines of a byte range of a file.
#include "line_reader.hpp"

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace schmp::io::internal {

InputFile::InputFile(const std::string& path) : path_(path) {
  // An ifstream opens a directory without complaint and only fails on the first read; say what is wrong.
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) throw InputError(path, 0, "is a directory, not a file");
  stream_.open(path, std::ios::binary);
  if (!stream_) throw InputError(path, 0, "cannot open file");
  stream_.seekg(0, std::ios::end);
  const std::streamoff end = stream_.tellg();
  if (!stream_ || end < 0) throw InputError(path, 0, "cannot read file");
  size_ = static_cast<std::uint64_t>(end);
}

void InputFile::read(std::uint64_t offset, std::size_t length, char* destination) {
  if (length == 0) return;
  stream_.clear();
  stream_.seekg(static_cast<std::streamoff>(offset));
  stream_.read(destination, static_cast<std::streamsize>(length));
  // Only bytes below the size measured at opening are asked for, so a short read means the file
  // shrank or the device failed.
  if (stream_.gcount() != static_cast<std::streamsize>(length)) throw InputError(path_, 0, "read error");
}

void InputFile::append(std::uint64_t offset, std::size_t length, std::string& out) {
  const std::size_t old_size = out.size();
  out.resize(old_size + length);
  read(offset, length, out.data() + old_size);
}

namespace {

// Newlines in a buffer, eight bytes at a time: every worker scans the whole prefix of the file before
// its range, and a plain byte loop is not vectorized at -O2.
std::uint64_t count_newlines(const char* data, std::size_t size) {
  constexpr std::uint64_t kOnes = 0x0101010101010101;
  constexpr std::uint64_t kLow7 = 0x7f7f7f7f7f7f7f7f;
  std::uint64_t count = 0;
  std::size_t k = 0;
  for (; k + 8 <= size; k += 8) {
    std::uint64_t word = 0;
    std::memcpy(&word, data + k, 8);
    const std::uint64_t x = word ^ (kOnes * '\n');  // zero bytes where there is a '\n'
    // The high bit of a byte ends up set exactly when the byte of x is zero (no carries across bytes).
    const std::uint64_t zero_bytes = ~(((x & kLow7) + kLow7) | x | kLow7);
    // Sum the 0/1 bytes with one multiply; std::popcount would be a libgcc call without -mpopcnt.
    count += ((zero_bytes >> 7) * kOnes) >> 56;
  }
  return count + static_cast<std::uint64_t>(std::count(data + k, data + size, '\n'));
}

// Newlines in the first `length` bytes of the file: the number of lines before a range. Read in blocks
// so that a worker far into a big file does not hold the whole prefix in memory.
std::uint64_t count_newlines(InputFile& file, std::uint64_t length) {
  constexpr std::size_t kBlock = std::size_t{1} << 20;
  std::string block(static_cast<std::size_t>(std::min<std::uint64_t>(kBlock, length)), '\0');
  std::uint64_t newlines = 0;
  for (std::uint64_t offset = 0; offset < length; offset += kBlock) {
    const auto count = static_cast<std::size_t>(std::min<std::uint64_t>(kBlock, length - offset));
    file.read(offset, count, block.data());
    newlines += count_newlines(block.data(), count);
  }
  return newlines;
}

// Appends bytes from `offset` on up to and including the next '\n' (or to the end of the file), to
// complete the last line of a range that runs past the range's end.
void append_rest_of_line(InputFile& file, std::uint64_t offset, std::string& bytes) {
  // Lines are usually short: start small and grow, so a long line still takes few reads.
  std::size_t chunk = std::size_t{1} << 16;
  constexpr std::size_t kMaxChunk = std::size_t{1} << 26;
  while (offset < file.size()) {
    const auto count = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, file.size() - offset));
    const std::size_t old_size = bytes.size();
    file.append(offset, count, bytes);
    const void* newline = std::memchr(bytes.data() + old_size, '\n', count);
    if (newline != nullptr) {
      bytes.resize(static_cast<std::size_t>(static_cast<const char*>(newline) - bytes.data()) + 1);
      return;
    }
    offset += count;
    chunk = std::min(chunk * 2, kMaxChunk);
  }
}

}  // namespace

RangeText read_range(const std::string& path, ByteRange range) {
  InputFile file(path);
  RangeText result;
  result.file_size = file.size();
  const std::uint64_t end = std::min(range.end, file.size());
  if (range.begin >= end) return result;

  // A line belongs to the range that holds its first byte. Past the file start, the first line of the
  // range is the one after the first '\n' at or after begin - 1: reading from begin - 1 lets a range
  // that starts exactly at a line start keep that line, since the byte before it is then a '\n'.
  const std::uint64_t read_from = range.begin == 0 ? 0 : range.begin - 1;
  file.append(read_from, static_cast<std::size_t>(end - read_from), result.bytes);
  if (range.begin > 0) {
    const void* newline = std::memchr(result.bytes.data(), '\n', result.bytes.size());
    const std::size_t first =
        newline == nullptr
            ? result.bytes.size()
            : static_cast<std::size_t>(static_cast<const char*>(newline) - result.bytes.data()) + 1;
    // No '\n' in the range, or only as its last byte: every line here started before the range or
    // starts at its end, so none belongs to it.
    if (first == result.bytes.size()) {
      result.bytes.clear();
      return result;
    }
    result.start = first;
  }
  if (result.bytes.back() != '\n') append_rest_of_line(file, end, result.bytes);

  // Exactly one '\n' lies between read_from and the first line when begin > 0: the one found above.
  result.first_line = 1 + count_newlines(file, read_from) + (range.begin > 0 ? 1 : 0);
  return result;
}

}  // namespace schmp::io::internal
