// Private to schmp_io: reading the lines of a byte range of a file (or of a directory of part files,
// taken as their concatenation), splitting them into tokens and turning tokens into numbers with
// InputError messages that name the file (or part file) and its line.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "schmp/io.hpp"

namespace schmp::io::internal {

// One file behind a data path, and where its bytes lie in the data.
struct PartFile {
  std::string path;
  std::uint64_t begin = 0;  // offset of its first byte in the concatenation of the parts
  std::uint64_t size = 0;
};

// The prefix that marks a part file in a directory of shards.
inline constexpr std::string_view kPartPrefix = "part-";

// The data a path names, opened for reading at arbitrary offsets: a file, or a directory standing for
// the concatenation of its part files (regular files named part-*, in name order). Parts are opened only
// when bytes of theirs are read, so a reader of one byte range never touches the others. Every failure
// is an InputError at line 0 naming the file it concerns: the path, or the part file.
class InputFile {
 public:
  explicit InputFile(const std::string& path);

  std::uint64_t size() const { return size_; }

  // The files behind the path in order: the file itself, or the directory's part files.
  const std::vector<PartFile>& parts() const { return parts_; }

  // The index of the part that holds byte `offset` (below size()).
  std::size_t part_at(std::uint64_t offset) const;

  // Reads exactly `length` bytes at `offset` into `destination`. A read that takes the last byte of a
  // part file of a directory checks that it is a newline: a line may not span two parts.
  void read(std::uint64_t offset, std::size_t length, char* destination);

  // Reads exactly `length` bytes at `offset` and appends them to `out`.
  void append(std::uint64_t offset, std::size_t length, std::string& out);

 private:
  // Makes `stream_` read part `part`.
  void open(std::size_t part);

  bool directory_ = false;
  std::vector<PartFile> parts_;
  std::size_t open_part_ = 0;  // the part `stream_` reads, when it is open
  std::ifstream stream_;
  std::uint64_t size_ = 0;
};

// The first line start at or after `offset`, or the data's size when there is none: as read_range takes
// lines, `offset` itself at the start of a part file, else one past the first '\n' at or after offset - 1.
std::uint64_t line_start_from(InputFile& file, std::uint64_t offset);

// The lines of a file (or of a directory's parts) that start inside a byte range, read in one go.
struct RangeText {
  std::string path;             // the data: a file, or a directory of shards
  std::string bytes;            // holds the lines from offset `start` on
  std::size_t start = 0;        // where the first line begins in `bytes`
  std::uint64_t offset = 0;     // where text() begins in the data
  std::uint64_t file_size = 0;  // size of the whole data: the file, or all the parts together

  // Whole lines, each ending in '\n' except perhaps the last one of the file.
  std::string_view text() const { return std::string_view(bytes).substr(start); }
};

// Reads the lines whose first byte lies in `range` (clamped to the data), plus the rest of the last
// such line. Only those bytes are read: nothing before the range (line numbers are worked out only for
// messages, see Where), and of a directory only the parts the range overlaps. InputError (line 0) if
// the data cannot be opened or read.
RangeText read_range(const std::string& path, ByteRange range);

// The part file (its index) and 1-based line number of the line that starts at `source` (schmp/io.hpp),
// found by counting the newlines before it in its part: for messages only, since that reads the part up
// to the line.
struct LinePosition {
  std::size_t part = 0;
  std::uint64_t line = 0;
};
LinePosition locate_line(InputFile& file, std::uint64_t source);

// Where the line with 0-based index `index` among all the lines of the data starts (the data's size
// when it has fewer lines), by counting newlines from its start: for messages only.
std::uint64_t start_of_line(InputFile& file, std::uint64_t index);

// The position of a line, to raise InputError there: the message names its file (the part file of a
// directory) and line number, worked out only then.
struct Where {
  const std::string& path;  // the data: a file, or a directory of shards
  std::uint64_t source;

  [[noreturn]] void fail(const std::string& message) const { throw InputError::at(path, source, message); }
};

struct Line {
  std::string_view text;    // without the line ending ("\n" or "\r\n")
  std::uint64_t source;     // where the line starts in the data (schmp/io.hpp)
  const std::string* path;  // the data: a file, or a directory of shards

  Where where() const { return Where{*path, source}; }
};

inline constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";

// Whether a line starts with the MatrixMarket banner, whose words are case-insensitive.
inline bool starts_with_matrix_market_banner(std::string_view line) {
  constexpr std::string_view kBanner = "%%matrixmarket";
  return line.size() >= kBanner.size() &&
         std::equal(kBanner.begin(), kBanner.end(), line.begin(), [](char banner, char c) {
           return banner == std::tolower(static_cast<unsigned char>(c));
         });
}

// Walks over the lines of a RangeText, each with its source.
class LineCursor {
 public:
  explicit LineCursor(const RangeText& text) : text_(text.text()), path_(&text.path), offset_(text.offset) {}

  // Only the lines whose first byte lies in `range` of text.text() (offsets into it), so that several
  // threads can parse consecutive ranges of text already read; the last line may run past the range.
  LineCursor(const RangeText& text, ByteRange range);

  std::optional<Line> next() {
    if (position_ >= end_) return std::nullopt;
    const char* begin = text_.data() + position_;
    const std::size_t remaining = text_.size() - position_;
    // memchr is much faster than a byte loop on long lines.
    const void* newline = std::memchr(begin, '\n', remaining);
    const std::size_t length =
        newline != nullptr ? static_cast<std::size_t>(static_cast<const char*>(newline) - begin) : remaining;
    const std::uint64_t source = offset_ + position_;
    position_ += length + 1;
    std::string_view line(begin, length);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    // A file of CR-only line endings is one long line, which some formats would read without a word
    // (a text corpus as one document): refused wherever it is read.
    if (std::memchr(line.data(), '\r', line.size()) != nullptr) {
      throw InputError::at(*path_, source,
                           "carriage return inside a line: lines must end in LF or CRLF, not CR");
    }
    // Editors on Windows start UTF-8 files with a byte-order mark, which is no part of the data.
    if (source == 0 && line.starts_with(kByteOrderMark)) line.remove_prefix(kByteOrderMark.size());
    return Line{line, source, path_};
  }

  // Where the next line starts in the text (one past its end once a last line without '\n' was read).
  std::size_t position() const { return position_; }

 private:
  std::string_view text_;
  const std::string* path_;
  std::uint64_t offset_;  // of the text in the data
  std::size_t position_ = 0;
  std::size_t end_ = text_.size();  // no line starting here or after is read
};

// Reads the data of a path (a file, or a directory's parts) in consecutive chunks of lines: each holds
// about `chunk_bytes` bytes, from a line start up to and including the end of the line holding its last
// byte (a line longer than that is a chunk of its own). Only the lines whose first byte lies in `range`
// are read, as read_range would take them (the whole data by default).
class ChunkReader {
 public:
  ChunkReader(const std::string& path, std::uint64_t chunk_bytes, ByteRange range = {});

  // Replaces `chunk` with the next chunk's lines, reusing its buffer so that one chunk is held at a
  // time; false, with `chunk` empty, once the range is read. InputError (line 0) if it cannot be read.
  bool next(RangeText& chunk);

 private:
  std::string path_;
  InputFile file_;
  std::uint64_t chunk_bytes_;
  std::uint64_t end_ = 0;     // no line starting here or after is read
  std::uint64_t offset_ = 0;  // where the next chunk starts: a line start
};

// The lines of a path (of a byte range of it, as ChunkReader takes them) in order, each with its source,
// read chunk by chunk. A Line (its text) stays valid only until the next call: copy what must outlive it.
class LineStream {
 public:
  LineStream(const std::string& path, std::uint64_t chunk_bytes, ByteRange range = {})
      : chunks_(path, chunk_bytes, range) {}

  std::optional<Line> next() {
    while (true) {
      if (cursor_) {
        if (auto line = cursor_->next()) return line;
        cursor_.reset();
      }
      if (!chunks_.next(chunk_)) return std::nullopt;
      cursor_.emplace(chunk_);
    }
  }

  // Where the line after the last one next() returned starts in the data.
  std::uint64_t offset() const { return chunk_.offset + (cursor_ ? cursor_->position() : 0); }

 private:
  ChunkReader chunks_;
  RangeText chunk_;
  std::optional<LineCursor> cursor_;  // over chunk_
};

inline bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// Splits a line into tokens separated by blanks.
class Tokenizer {
 public:
  explicit Tokenizer(std::string_view text) : rest_(text) {}

  std::optional<std::string_view> next() {
    std::size_t begin = 0;
    while (begin < rest_.size() && is_blank(rest_[begin])) ++begin;
    if (begin == rest_.size()) {
      rest_ = {};
      return std::nullopt;
    }
    std::size_t end = begin;
    while (end < rest_.size() && !is_blank(rest_[end])) ++end;
    const std::string_view token = rest_.substr(begin, end - begin);
    rest_.remove_prefix(end);
    return token;
  }

 private:
  std::string_view rest_;
};

// The part of a line before the comment character, if any.
inline std::string_view before_comment(std::string_view line, char comment) {
  return line.substr(0, line.find(comment));
}

// The line without its leading blanks.
inline std::string_view trim_front(std::string_view line) {
  std::size_t begin = 0;
  while (begin < line.size() && is_blank(line[begin])) ++begin;
  return line.substr(begin);
}

// A token quoted for a message, shortened so that a runaway token cannot flood the log.
std::string quoted(std::string_view token);

// The largest magnitude of a data value (parse_finite).
inline constexpr double kLargestDataValue = 1e100;

// A finite double of at most kLargestDataValue in magnitude; `what` names the field in messages
// ("non-numeric value 'abc'", "value is not finite: nan"). A leading '+' is accepted because LIBSVM
// labels are often written "+1".
double parse_finite(std::string_view token, std::string_view what, const Where& where);
// Whether the whole token reads as a number, as parse_finite reads it (finite or not).
bool is_number(std::string_view token);

// A whole number written in decimal, for integer MatrixMarket values.
double parse_integer_value(std::string_view token, const Where& where);

// A non-negative decimal integer (an index or a count); rejects negatives with their own message.
std::uint64_t parse_count(std::string_view token, std::string_view what, const Where& where);

}  // namespace schmp::io::internal
