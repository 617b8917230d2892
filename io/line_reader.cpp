// Reading the lines of a byte range of a file, or of a directory's part files taken together.
#include "line_reader.hpp"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <vector>

namespace schmp::io::internal {

namespace {

// The part files of a directory of shards, in name order, with their sizes; nothing else in it counts.
std::vector<PartFile> list_parts(const std::string& directory) {
  std::vector<PartFile> parts;
  std::error_code error;
  for (std::filesystem::directory_iterator entry(directory, error), end; !error && entry != end;
       entry.increment(error)) {
    if (!entry->path().filename().string().starts_with(kPartPrefix)) continue;
    // Subdirectories are not parts. Anything else named as one must be a file: a link to a missing
    // mount, say, would otherwise drop its records without a word, on every host alike.
    std::error_code kind_error;
    const std::filesystem::file_status status = entry->status(kind_error);
    if (std::filesystem::is_directory(status)) continue;
    if (!std::filesystem::is_regular_file(status)) {
      throw InputError(entry->path().string(), 0,
                       status.type() == std::filesystem::file_type::not_found
                           ? "is a link to nothing: every part-* but a directory must be a file"
                           : "is not a regular file: every part-* but a directory must be one");
    }
    parts.push_back(PartFile{entry->path().string(), 0, 0});
  }
  if (error) throw InputError(directory, 0, "cannot list the directory: " + error.message());
  if (parts.empty()) {
    throw InputError(directory, 0, "is a directory without part files (part-*): nothing to read");
  }
  // Directory order is arbitrary; the shards' order is their names'.
  std::sort(parts.begin(), parts.end(), [](const PartFile& a, const PartFile& b) { return a.path < b.path; });
  std::uint64_t begin = 0;
  for (PartFile& part : parts) {
    const std::uintmax_t size = std::filesystem::file_size(part.path, error);
    if (error) throw InputError(part.path, 0, "cannot read file");
    part.begin = begin;
    part.size = size;
    begin += size;
  }
  return parts;
}

}  // namespace

InputFile::InputFile(const std::string& path) {
  std::error_code error;
  directory_ = std::filesystem::is_directory(path, error);
  if (directory_) {
    parts_ = list_parts(path);
    size_ = parts_.back().begin + parts_.back().size;
    return;
  }
  // Opening a named pipe would wait for a writer, and none of its bytes could be read twice or in ranges.
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    throw InputError(path, 0, "is not a regular file (a pipe or a device): save it to a file first");
  stream_.open(path, std::ios::binary);
  if (!stream_) throw InputError(path, 0, "cannot open file");
  stream_.seekg(0, std::ios::end);
  const std::streamoff end = stream_.tellg();
  if (!stream_ || end < 0) throw InputError(path, 0, "cannot read file");
  size_ = static_cast<std::uint64_t>(end);
  parts_.push_back(PartFile{path, 0, size_});
}

std::size_t InputFile::part_at(std::uint64_t offset) const {
  // The last part that starts at or before `offset`: an empty part starts where the next one does, so
  // this is the part that holds the byte.
  const auto after =
      std::upper_bound(parts_.begin(), parts_.end(), offset,
                       [](std::uint64_t value, const PartFile& part) { return value < part.begin; });
  return static_cast<std::size_t>(after - parts_.begin()) - 1;
}

void InputFile::open(std::size_t part) {
  if (stream_.is_open() && open_part_ == part) return;
  stream_.close();
  stream_.clear();
  stream_.open(parts_[part].path, std::ios::binary);
  if (!stream_) throw InputError(parts_[part].path, 0, "cannot open file");
  open_part_ = part;
}

void InputFile::read(std::uint64_t offset, std::size_t length, char* destination) {
  while (length > 0) {
    const std::size_t index = part_at(offset);
    const PartFile& part = parts_[index];
    const std::uint64_t part_end = part.begin + part.size;
    const auto count = static_cast<std::size_t>(std::min<std::uint64_t>(length, part_end - offset));
    open(index);
    stream_.clear();
    stream_.seekg(static_cast<std::streamoff>(offset - part.begin));
    stream_.read(destination, static_cast<std::streamsize>(count));
    // Only bytes below the sizes measured at opening are asked for, so a short read means the file
    // shrank or the device failed.
    if (stream_.gcount() != static_cast<std::streamsize>(count)) throw InputError(part.path, 0, "read error");
    if (directory_ && offset + count == part_end && destination[count - 1] != '\n') {
      throw InputError(part.path, 0, "does not end with a newline (a line may not span two part files)");
    }
    offset += count;
    destination += count;
    length -= count;
  }
}

void InputFile::append(std::uint64_t offset, std::size_t length, std::string& out) {
  const std::size_t old_size = out.size();
  out.resize(old_size + length);
  read(offset, length, out.data() + old_size);
}

namespace {

// Newlines in a buffer, eight bytes at a time: a message's line number counts those of the whole part
// before it, and a plain byte loop is not vectorized at -O2.
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

// Passes the bytes [from, to) of the data to visit(offset, data, size) a block of 1 MiB at a time, until
// it returns false: counting the lines before a line far into a big file, for a message, holds one
// block and not the whole prefix.
template <class Visit>
void for_each_block(InputFile& file, std::uint64_t from, std::uint64_t to, Visit visit) {
  constexpr std::size_t kBlock = std::size_t{1} << 20;
  std::string block(static_cast<std::size_t>(std::min<std::uint64_t>(kBlock, to - from)), '\0');
  for (std::uint64_t offset = from; offset < to; offset += kBlock) {
    const auto count = static_cast<std::size_t>(std::min<std::uint64_t>(kBlock, to - offset));
    file.read(offset, count, block.data());
    if (!visit(offset, block.data(), count)) return;
  }
}

// Newlines in the bytes [from, to) of the data.
std::uint64_t count_newlines(InputFile& file, std::uint64_t from, std::uint64_t to) {
  std::uint64_t newlines = 0;
  for_each_block(file, from, to, [&](std::uint64_t, const char* data, std::size_t size) {
    newlines += count_newlines(data, size);
    return true;
  });
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
  result.path = path;
  result.file_size = file.size();
  const std::uint64_t end = std::min(range.end, file.size());
  if (range.begin >= end) return result;

  // A line belongs to the range that holds its first byte. Past the start of the data, the first line
  // of the range is the one after the first '\n' at or after begin - 1: reading from begin - 1 lets a
  // range that starts exactly at a line start keep that line, since the byte before it is then a '\n'.
  // A part file starts at a line start (the one before it ends with a newline), so a range starting
  // there needs no byte of the part before and never opens it.
  const bool at_line_start = file.parts()[file.part_at(range.begin)].begin == range.begin;
  const std::uint64_t read_from = at_line_start ? range.begin : range.begin - 1;
  file.append(read_from, static_cast<std::size_t>(end - read_from), result.bytes);
  if (!at_line_start) {
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

  result.offset = read_from + result.start;
  return result;
}

LinePosition locate_line(InputFile& file, std::uint64_t source) {
  if (file.size() == 0) return {};
  const std::uint64_t at = std::min(source, file.size());
  const std::size_t part = file.part_at(std::min(at, file.size() - 1));
  return {part, 1 + count_newlines(file, file.parts()[part].begin, at)};
}

std::uint64_t start_of_line(InputFile& file, std::uint64_t index) {
  if (index == 0) return 0;
  std::uint64_t newlines = 0;
  std::uint64_t start = file.size();
  for_each_block(file, 0, file.size(), [&](std::uint64_t offset, const char* data, std::size_t size) {
    for (std::size_t k = 0; k < size; ++k) {
      if (data[k] == '\n' && ++newlines == index) {
        start = offset + k + 1;
        return false;
      }
    }
    return true;
  });
  return start;
}

LineCursor::LineCursor(const RangeText& text, ByteRange range)
    : text_(text.text()), path_(&text.path), offset_(text.offset) {
  end_ = static_cast<std::size_t>(std::min<std::uint64_t>(range.end, text_.size()));
  position_ = static_cast<std::size_t>(std::min<std::uint64_t>(range.begin, end_));
  // As in read_range: the first line is the one after the first '\n' at or after begin - 1.
  if (position_ > 0 && text_[position_ - 1] != '\n') {
    const std::size_t newline = text_.find('\n', position_);
    position_ = newline == std::string_view::npos ? text_.size() : newline + 1;
  }
}

std::uint64_t line_start_from(InputFile& file, std::uint64_t offset) {
  if (offset >= file.size()) return file.size();
  if (file.parts()[file.part_at(offset)].begin == offset) return offset;
  std::string rest;
  append_rest_of_line(file, offset - 1, rest);
  return offset - 1 + rest.size();
}

ChunkReader::ChunkReader(const std::string& path, std::uint64_t chunk_bytes, ByteRange range)
    : path_(path), file_(path), chunk_bytes_(std::max<std::uint64_t>(chunk_bytes, 1)) {
  end_ = std::min(range.end, file_.size());
  if (range.begin >= end_) {
    offset_ = end_;
    return;
  }
  offset_ = line_start_from(file_, range.begin);
}

bool ChunkReader::next(RangeText& chunk) {
  chunk.path = path_;
  chunk.bytes.clear();
  chunk.start = 0;
  chunk.offset = offset_;
  chunk.file_size = file_.size();
  if (offset_ >= end_) return false;

  const auto count = static_cast<std::size_t>(std::min(chunk_bytes_, end_ - offset_));
  file_.append(offset_, count, chunk.bytes);
  if (chunk.bytes.back() != '\n') append_rest_of_line(file_, offset_ + count, chunk.bytes);
  offset_ += chunk.bytes.size();
  return true;
}

}  // namespace schmp::io::internal
