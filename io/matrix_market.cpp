// MatrixMarket coordinate files, and dense vectors (MatrixMarket arrays or one number per line).
#include <algorithm>
#include <cctype>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "line_reader.hpp"
#include "schmp/io.hpp"
#include "whole_file_readers.hpp"

namespace schmp::io {

namespace {

using internal::quoted;
using internal::Where;

enum class Format { coordinate, array };
enum class Field { real, integer, pattern };

// What precedes the entries of a MatrixMarket file.
struct Header {
  Field field = Field::real;
  std::vector<std::uint64_t> sizes;  // the numbers of the size line
  std::string path;                  // the data read
  std::uint64_t size_source = 0;     // the size line's source (schmp/io.hpp)
  std::uint64_t body_begin = 0;      // byte offset of the line after it

  [[noreturn]] void fail_at_size_line(const std::string& message) const {
    throw InputError::at(path, size_source, message);
  }
};

std::string lowercase(std::string_view word) {
  std::string result(word);
  std::transform(result.begin(), result.end(), result.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return result;
}

// Blank lines and `%` comments may appear anywhere after the banner.
bool is_skipped(std::string_view line) {
  const std::string_view content = internal::trim_front(line);
  return content.empty() || content[0] == '%';
}

// Checks `%%MatrixMarket matrix <format> <field> general` and returns the field.
Field parse_banner(std::string_view line, Format format, const Where& where) {
  if (!internal::starts_with_matrix_market_banner(line)) {
    const auto first = internal::Tokenizer(line).next();
    where.fail("missing matrixmarket banner, found " + quoted(first.value_or("")));
  }
  std::vector<std::string> words;
  internal::Tokenizer tokens(line);
  while (const auto token = tokens.next()) words.push_back(lowercase(*token));
  if (words.size() != 5 || words[0] != "%%matrixmarket") {
    where.fail("banner needs 5 words: %%MatrixMarket matrix <format> <field> <symmetry>");
  }
  if (words[1] != "matrix") where.fail("unsupported object " + quoted(words[1]) + " (only 'matrix')");
  const std::string expected_format = format == Format::coordinate ? "coordinate" : "array";
  if (words[2] != expected_format) {
    where.fail("unsupported format " + quoted(words[2]) + " (expected '" + expected_format + "')");
  }
  Field field = Field::real;
  if (words[3] == "real") {
    field = Field::real;
  } else if (words[3] == "integer") {
    field = Field::integer;
  } else if (words[3] == "pattern" && format == Format::coordinate) {
    field = Field::pattern;
  } else {
    where.fail("unsupported field " + quoted(words[3]));
  }
  if (words[4] != "general") where.fail("unsupported symmetry " + quoted(words[4]) + " (only 'general')");
  return field;
}

// Reads the banner, comments and size line from the lines of `lines`, which start at the data's first
// byte; `complete` says whether they run to its end. Returns nothing when they end before the size line
// but the data goes on.
std::optional<Header> parse_header(const std::string& path, internal::LineCursor& lines, Format format,
                                   bool complete) {
  const auto banner = lines.next();
  if (!banner) {
    if (!complete) return std::nullopt;
    throw InputError(path, 0, "empty file, no matrixmarket banner");
  }
  Header header;
  header.field = parse_banner(banner->text, format, banner->where());
  std::optional<internal::Line> size_line;
  while (const auto line = lines.next()) {
    if (!is_skipped(line->text)) {
      size_line = line;
      break;
    }
  }
  if (!size_line) {
    if (!complete) return std::nullopt;
    throw InputError(path, 0, "missing size line");
  }

  const Where where = size_line->where();
  const std::size_t expected = format == Format::coordinate ? 3 : 2;
  const char* const names[] = {"row count", "column count", "entry count"};
  internal::Tokenizer tokens(size_line->text);
  bool too_many = false;
  while (const auto token = tokens.next()) {
    if (header.sizes.size() == expected) {
      too_many = true;
      break;
    }
    header.sizes.push_back(internal::parse_count(*token, names[header.sizes.size()], where));
  }
  if (too_many || header.sizes.size() != expected) {
    where.fail(std::string(format == Format::coordinate ? "size line needs 3 integers (rows columns entries)"
                                                        : "size line needs 2 integers (rows columns)") +
               ", found " + quoted(size_line->text));
  }
  header.path = path;
  header.size_source = size_line->source;
  header.body_begin = lines.position();
  return header;
}

// Reads the header from the start of the data, whatever range is read later: every worker needs the
// declared size to check its entries. Comments may make the header long, so a growing prefix is read
// until it holds the size line.
Header read_header(const std::string& path, Format format) {
  for (std::uint64_t length = std::uint64_t{1} << 16;; length *= 2) {
    const internal::RangeText text = internal::read_range(path, ByteRange{0, length});
    internal::LineCursor lines(text);
    if (auto header = parse_header(path, lines, format, length >= text.file_size)) return *std::move(header);
  }
}

// Reads the value of an entry as the field says.
double parse_value(std::string_view token, Field field, const Where& where) {
  return field == Field::integer ? internal::parse_integer_value(token, where)
                                 : internal::parse_finite(token, "value", where);
}

// A 1-based index checked against its declared bound, returned 0-based.
std::uint64_t parse_index(std::string_view token, const char* name, std::uint64_t bound, const Where& where) {
  const std::uint64_t index = internal::parse_count(token, std::string(name) + " index", where);
  if (index == 0 || index > bound) {
    where.fail(std::string(name) + " " + std::to_string(index) + " outside 1.." + std::to_string(bound));
  }
  return index - 1;
}

}  // namespace

namespace {

// The sizes of a coordinate file's header, checked.
Coordinates declared_sizes(const Header& header) {
  Coordinates result;
  result.rows = header.sizes[0];
  result.columns = header.sizes[1];
  result.declared_entries = header.sizes[2];
  result.size_source = header.size_source;
  // Columns are stored 0-based in 32 bits.
  if (result.columns > std::uint64_t{4294967295}) {
    header.fail_at_size_line("column count " + std::to_string(result.columns) +
                             " out of range (largest is 4294967295)");
  }
  return result;
}

// Appends the entries of the lines of `text` to `result`.
void parse_entries(const Header& header, const internal::RangeText& text, Coordinates& result) {
  internal::LineCursor lines(text);
  while (const auto line = lines.next()) {
    if (is_skipped(line->text)) continue;
    const Where where = line->where();
    internal::Tokenizer tokens(line->text);
    const auto row_token = tokens.next();
    const auto column_token = tokens.next();
    if (!column_token) where.fail("entry needs a row and a column, found " + quoted(*row_token));
    result.row.push_back(parse_index(*row_token, "row", result.rows, where));
    result.column.push_back(
        static_cast<std::uint32_t>(parse_index(*column_token, "column", result.columns, where)));
    if (header.field == Field::pattern) {
      result.value.push_back(1.0);
    } else {
      const auto value_token = tokens.next();
      if (!value_token) where.fail("missing value after row and column");
      result.value.push_back(parse_value(*value_token, header.field, where));
    }
    if (const auto extra = tokens.next()) where.fail("unexpected text " + quoted(*extra) + " after entry");
    result.source.push_back(line->source);
  }
}

}  // namespace

Coordinates read_matrix_market(const std::string& path, ByteRange range) {
  const Header header = read_header(path, Format::coordinate);
  Coordinates result = declared_sizes(header);

  // Lines before body_begin are the header; entries are the lines from there on.
  const ByteRange body{std::max(range.begin, header.body_begin), range.end};
  const internal::RangeText text = internal::read_range(path, body);
  // A range holding every entry (the whole file, or one worker's of a small file) is sized by the size
  // line: an entry line takes at least 4 bytes ("1 1\n"); the cap keeps a lying header from reserving much.
  if (range.begin == 0 && range.end >= text.file_size) {
    const std::uint64_t expected =
        std::min<std::uint64_t>(result.declared_entries, text.text().size() / 4 + 1);
    result.row.reserve(expected);
    result.column.reserve(expected);
    result.value.reserve(expected);
    result.source.reserve(expected);
  }
  parse_entries(header, text, result);

  // Only a read of the whole file, asked for as such, counts the entries. A range that happens to hold
  // the whole file (a worker's, when the others' are empty) is counted with the other ranges by its
  // caller, check_entry_count, like any other: the message is the same either way.
  if (range.begin == 0 && range.end == ByteRange{}.end) check_entry_count(path, result, result.row.size());
  return result;
}

namespace internal {

Coordinates read_matrix_market_in_chunks(const std::string& path, std::uint64_t chunk_bytes,
                                         const std::function<void(const Coordinates&)>& visit,
                                         ByteRange range) {
  const Header header = read_header(path, Format::coordinate);
  const Coordinates sizes = declared_sizes(header);
  ChunkReader chunks(path, chunk_bytes, ByteRange{std::max(range.begin, header.body_begin), range.end});
  RangeText chunk;
  while (chunks.next(chunk)) {
    Coordinates piece = sizes;
    parse_entries(header, chunk, piece);
    visit(piece);
  }
  return sizes;
}

}  // namespace internal

void check_entry_count(const std::string& path, const Coordinates& declared, std::uint64_t entries) {
  if (entries != declared.declared_entries) {
    throw InputError::at(path, declared.size_source,
                         "size line declares " + std::to_string(declared.declared_entries) +
                             " entries but the file has " + std::to_string(entries));
  }
}

namespace {

// The values of a MatrixMarket `matrix array` file with one column, whose lines `lines` walks from the
// first.
std::vector<double> read_array_vector(const std::string& path, const internal::RangeText& text,
                                      internal::LineCursor& lines, std::vector<std::uint64_t>* sources) {
  const Header header = *parse_header(path, lines, Format::array, true);
  const std::uint64_t declared = header.sizes[0];
  if (header.sizes[1] != 1) {
    header.fail_at_size_line("a dense vector needs 1 column, size line says " +
                             std::to_string(header.sizes[1]));
  }
  std::vector<double> values;
  values.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(declared, text.text().size() / 2 + 1)));
  while (const auto line = lines.next()) {
    if (is_skipped(line->text)) continue;
    const Where where = line->where();
    if (values.size() == declared)
      where.fail("more values than the " + std::to_string(declared) + " declared");
    internal::Tokenizer tokens(line->text);
    values.push_back(parse_value(*tokens.next(), header.field, where));
    if (sources) sources->push_back(line->source);
    if (const auto extra = tokens.next()) where.fail("unexpected text " + quoted(*extra) + " after value");
  }
  if (values.size() != declared) {
    header.fail_at_size_line("size line declares " + std::to_string(declared) + " values but the file has " +
                             std::to_string(values.size()));
  }
  return values;
}

}  // namespace

namespace internal {

std::vector<double> read_text_vector(const RangeText& text, std::vector<std::uint64_t>* sources) {
  std::vector<double> values;
  internal::LineCursor lines(text);
  while (const auto line = lines.next()) {
    internal::Tokenizer tokens(internal::before_comment(line->text, '#'));
    const auto token = tokens.next();
    if (!token) continue;  // blank, or only a comment
    const Where where = line->where();
    values.push_back(internal::parse_finite(*token, "value", where));
    if (sources) sources->push_back(line->source);
    if (const auto extra = tokens.next()) where.fail("unexpected text " + quoted(*extra) + " after value");
  }
  return values;
}

}  // namespace internal

std::vector<double> read_dense_vector(const std::string& path, std::vector<std::uint64_t>* sources) {
  const internal::RangeText text = internal::read_range(path, ByteRange{});
  const auto first = internal::LineCursor(text).next();
  if (first && internal::starts_with_matrix_market_banner(first->text)) {
    internal::LineCursor lines(text);
    return read_array_vector(path, text, lines, sources);
  }
  return internal::read_text_vector(text, sources);
}

}  // namespace schmp::io
