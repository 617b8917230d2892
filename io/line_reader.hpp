// Private to schmp_io: reading the lines of a byte range of a file, splitting them into tokens and
// turning tokens into numbers with InputError messages that name the file line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

#include "schmp/io.hpp"

namespace schmp::io::internal {

// An input file opened for reading at arbitrary offsets; closed by its destructor. Every failure is an
// InputError at line 0, since it concerns the whole file.
class InputFile {
 public:
  explicit InputFile(const std::string& path);

  std::uint64_t size() const { return size_; }

  // Reads exactly `length` bytes at `offset` into `destination`.
  void read(std::uint64_t offset, std::size_t length, char* destination);

  // Reads exactly `length` bytes at `offset` and appends them to `out`.
  void append(std::uint64_t offset, std::size_t length, std::string& out);

 private:
  std::string path_;
  std::ifstream stream_;
  std::uint64_t size_ = 0;
};

// The lines of a file that start inside a byte range, read in one go.
struct RangeText {
  std::string bytes;             // holds the lines from offset `start` on
  std::size_t start = 0;         // where the first line begins in `bytes`
  std::uint64_t first_line = 1;  // file line number (1-based) of the first line
  std::uint64_t file_size = 0;   // size of the whole file

  // Whole lines, each ending in '\n' except perhaps the last one of the file.
  std::string_view text() const { return std::string_view(bytes).substr(start); }
};

// Reads the lines whose first byte lies in `range` (clamped to the file), plus the rest of the last
// such line, and counts the newlines before them so that line numbers are those of the file.
// InputError (line 0) if the file cannot be opened or read.
RangeText read_range(const std::string& path, ByteRange range);

struct Line {
  std::string_view text;  // without the line ending ("\n" or "\r\n")
  std::uint64_t number;   // 1-based file line number
};

// Walks over the lines of a text, numbering them from `first_line`.
class LineCursor {
 public:
  LineCursor(std::string_view text, std::uint64_t first_line) : text_(text), next_number_(first_line) {}

  std::optional<Line> next() {
    if (position_ >= text_.size()) return std::nullopt;
    const char* begin = text_.data() + position_;
    const std::size_t remaining = text_.size() - position_;
    // memchr is much faster than a byte loop on long lines.
    const void* newline = std::memchr(begin, '\n', remaining);
    const std::size_t length =
        newline != nullptr ? static_cast<std::size_t>(static_cast<const char*>(newline) - begin) : remaining;
    position_ += length + 1;
    std::string_view line(begin, length);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return Line{line, next_number_++};
  }

 private:
  std::string_view text_;
  std::size_t position_ = 0;
  std::uint64_t next_number_;
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

// The position of a line, to raise InputError there.
struct Where {
  const std::string& file;
  std::uint64_t line;

  [[noreturn]] void fail(const std::string& message) const { throw InputError(file, line, message); }
};

// A finite double; `what` names the field in messages ("non-numeric value 'abc'", "value is not
// finite: nan"). A leading '+' is accepted because LIBSVM labels are often written "+1".
double parse_finite(std::string_view token, std::string_view what, const Where& where);

// A whole number written in decimal, for integer MatrixMarket values.
double parse_integer_value(std::string_view token, const Where& where);

// A non-negative decimal integer (an index or a count); rejects negatives with their own message.
std::uint64_t parse_count(std::string_view token, std::string_view what, const Where& where);

}  // namespace schmp::io::internal
