// Input readers shared by every app: LIBSVM rows, MatrixMarket coordinate entries and dense vectors.
//
// Each reader can read a byte range of its file so that every worker parses only its own part: a line
// belongs to the range that holds its first byte. Line numbers in errors are the file's real line
// numbers (1-based), whatever range was read. Blank lines, comment lines, CRLF endings and a UTF-8
// byte-order mark at the start are accepted everywhere; lines ended by CR alone, and anything else that
// is not well-formed, raise InputError.
//
// Wherever a path is read, it may name a directory of shards instead of a file: the directory stands
// for the concatenation of its part files (regular files named part-*, in name order; other names and
// subdirectories do not count, any other part-* is refused), so it reads exactly as the file it was
// split from, byte ranges and sizes included. A reader opens only the part files that its byte range
// overlaps. Every part must end with a newline, so that no line spans two parts. Errors name the part
// file and its own line number (docs/sharding.md).
//
// What the readers return keeps, for each record, the source of its line: where it starts in the data.
// A line number is worked out only when a message names it, so that a worker reading a byte range far
// into a big file reads none of the bytes before its range.
//
// Memory: read_libsvm and read_matrix_market hold their range's text and what they return. The readers
// that pass records to a callback (read_ratings on text, read_bag_of_words, read_text_documents,
// read_vocabulary) stream their input (or range) instead: they read and parse it in consecutive chunks
// of whole lines of 64 MiB (plus the rest of the line that crosses the edge) and let each chunk go before
// reading the next, so whatever the input's size they hold one chunk's text, and for ratings that
// chunk's parsed records too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace schmp {
class Peers;  // schmp/peers.hpp
}  // namespace schmp

namespace schmp::io {

// A bad or unreadable input. what() reads "file:line: message", or "file: message" when the problem
// concerns the whole file (line 0).
class InputError : public std::runtime_error {
 public:
  InputError(std::string file, std::uint64_t line, const std::string& message);
  // At a record's source (below) in the data at `path`: names the part file for a directory.
  static InputError at(const std::string& path, std::uint64_t source, const std::string& message);
  const std::string& file() const { return file_; }
  std::uint64_t line() const { return line_; }
  // What is wrong, without the file and line.
  const std::string& message() const { return message_; }
  // Where the error lies, to tell which of several came first: its line's place in the data (byte
  // offset, across the part files of a directory) when known, else its line number (0: the whole file).
  std::uint64_t order() const { return order_; }

 private:
  std::string file_;
  std::uint64_t line_;
  std::uint64_t order_;
  std::string message_;
};

// Records keep the source of the line they were read from, for messages raised after parsing (a
// duplicate found later, an unexpected label): the byte offset where the line starts in the data (for a
// directory of shards, in its part files taken together). InputError::at turns it into the file and
// line number by counting the newlines before it in its file, reading that file up to the line.
//
// A record whose line is not known (a MatrixMarket row, whose entries lie on lines of their own) has
// kUnknownSource: a message at it names the whole file.
inline constexpr std::uint64_t kUnknownSource = ~std::uint64_t{0};
//
// How a message raised at source `from` names the line at `source` of the same data: "line N" in the
// same file, "PART:N" in another part file of a directory.
std::string line_name(const std::string& path, std::uint64_t source, std::uint64_t from);

// Half-open byte interval [begin, end) of a file; the default covers the whole file.
struct ByteRange {
  std::uint64_t begin = 0;
  std::uint64_t end = std::numeric_limits<std::uint64_t>::max();
};

// Size of a file in bytes (of a directory of shards: of its part files together); InputError if it
// cannot be opened.
std::uint64_t file_size(const std::string& path);

// Whether a file starts with the MatrixMarket banner; InputError if it cannot be opened.
bool is_matrix_market(const std::string& path);

// The part-th of `parts` nearly equal byte ranges of a file of `size` bytes.
ByteRange split_range(std::uint64_t size, int part, int parts);

// This worker's byte range of `data` (a file, or a directory of shards taken as the concatenation of
// its part files), after checking with the other workers that every one of them sees the same data
// there: the same size and, for a directory, the same part files by name and size. Hosts that each
// hold only some of the shards, or a stale copy of the file, would otherwise split different data and
// silently skip or repeat parts of it. Every worker calls it (Peers::sum); a worker that sees other data
// than most workers do is named, with its host.
ByteRange worker_range(const std::string& data, Peers& peers);

// Rows of a sparse matrix with one label per row, in compressed-row form.
struct SparseRows {
  std::vector<double> labels;               // one per row
  std::vector<std::uint64_t> row_start{0};  // row r holds entries [row_start[r], row_start[r+1])
  std::vector<std::uint32_t> index;         // 0-based column, strictly increasing within a row
  std::vector<double> value;
  std::vector<std::uint64_t> source;  // of each row's line, for messages raised after parsing

  std::size_t rows() const { return labels.size(); }
  std::uint32_t columns() const;  // 1 + the largest column index present (0 when there is none)
};

// LIBSVM / SVMlight: `label index:value index:value ...`, indices 1-based. Entries of a row may come
// in any order but an index may not repeat. `#` starts a comment that runs to the end of the line.
// Rejected: index 0 or beyond 2^32 - 2, a missing or non-numeric label or value, NaN or infinity or a
// number beyond 1e100 in magnitude (as everywhere in data: its square would make sums of squares overflow),
// text after a value, a duplicate index.
//
// Labels written as words (classes by name: `setosa 1:5.1 ...`) are read as the index of their word in
// `names` (sorted, with every word of the file: read_label_names); without names they are refused.
SparseRows read_libsvm(const std::string& path, ByteRange range = {},
                       const std::vector<std::string>& names = {});

// The entries of a MatrixMarket `matrix coordinate` file (real, integer or pattern; general).
struct Coordinates {
  std::uint64_t rows = 0, columns = 0, declared_entries = 0;  // from the size line
  std::uint64_t size_source = 0;                              // the size line's source
  std::vector<std::uint64_t> row;                             // 0-based
  std::vector<std::uint32_t> column;                          // 0-based
  std::vector<double> value;                                  // 1 for pattern files
  std::vector<std::uint64_t> source;                          // of each entry's line
};

// Reads the header and size line (always from the start of the file) and the entries whose lines
// start inside `range`. Rejected: a missing or unsupported banner, a bad size line, an index outside
// the declared size, non-numeric or non-finite values (or beyond 1e100 in magnitude). When the whole file is
// read (no range given), a count of entries that differs from the declared one is rejected too; readers of
// ranges count them together (check_entry_count).
Coordinates read_matrix_market(const std::string& path, ByteRange range = {});

// InputError at the size line unless `entries` (of every range) is the number the size line declares.
void check_entry_count(const std::string& path, const Coordinates& declared, std::uint64_t entries);

// One rating of a user for an item, 0-based ids.
struct Rating {
  std::uint32_t user = 0;
  std::uint32_t item = 0;
  double value = 0;
  std::uint64_t source = 0;  // of its line, for messages raised later (a duplicate, say)
};

// Upper bounds on ids: a larger id is an error, not a huge model. Defaults: 2^31 - 1, LIBMF's limit.
struct IdBounds {
  std::uint64_t users = 0x7FFFFFFF;
  std::uint64_t items = 0x7FFFFFFF;
};

// Ratings, passed to `visit` in file order: either `user item rating` lines (LIBMF's text format;
// ids counted from `index_base`, 0 or 1; `#` comments) or a MatrixMarket coordinate file (1-based
// whatever `index_base` says; its size line bounds the ids too). Rejected: a missing or extra field, a
// negative id, an id below the base or not below its bound, a non-numeric or non-finite rating (or
// one beyond 1e100 in magnitude).
// Text is read a chunk at a time (see the top of this file) and each chunk parsed on several threads, so
// this holds at most a chunk's text and its ratings (24 bytes per line) at once; a MatrixMarket file is
// read whole, its entries (24 bytes each with their sources) all held before the first is visited.
// An error is raised at the first bad line, after the ratings before it were visited. With a byte range,
// only the ratings whose lines start in it are visited (a MatrixMarket file's header is still read from
// its start, and its declared entry count is checked only when the whole file is read: a caller that
// reads ranges adds up their counts and calls check_entry_count with the header's sizes).
struct RatingsRead {
  std::uint64_t ratings = 0;                 // visited
  std::optional<Coordinates> matrix_market;  // a MatrixMarket file's sizes (no entries)
};
RatingsRead read_ratings(const std::string& path, int index_base, const IdBounds& bounds,
                         const std::function<void(const Rating&)>& visit, ByteRange range = {});

// One entry of a bag-of-words corpus: how often a word occurs in a document (0-based ids).
struct WordCount {
  std::uint32_t document = 0;
  std::uint32_t word = 0;
  std::uint32_t count = 0;
  std::uint64_t source = 0;  // of its line, for messages raised later
};

// The sizes a UCI bag-of-words file declares in its header.
struct CorpusSize {
  std::uint64_t documents = 0;         // D
  std::uint64_t words = 0;             // W, the vocabulary
  std::uint64_t entries = 0;           // NNZ, the entry lines that follow
  std::uint64_t documents_source = 0;  // of D's line, for messages raised later (sizes too large)
  std::uint64_t words_source = 0;      // of W's line
};

// UCI bag-of-words (docword.txt): the header lines D, W and NNZ, then `doc word count` lines with
// 1-based ids, passed to `visit` in file order; returns the header. Blank lines are skipped. Rejected: a
// missing or non-numeric header value, a document id of 0 or beyond D, a word id of 0 or beyond W, a
// count of 0 or below, a missing or extra field, and a number of entries that differs from NNZ (found at
// the end, after every entry was visited). Holds one chunk of text at a time.
CorpusSize read_bag_of_words(const std::string& path, const std::function<void(const WordCount&)>& visit);

// The header and the entries of one byte range of a bag-of-words file.
struct BagOfWordsRange {
  CorpusSize declared;        // the header, read from the start of the file whatever the range
  std::uint64_t entries = 0;  // entry lines that start in the range (header lines are never entries)
};

// read_bag_of_words on the entries whose lines start in `range`, checked as above except for the count
// of entries: the ranges' counts add up to the file's, which check_entry_count compares with NNZ.
BagOfWordsRange read_bag_of_words(const std::string& path, ByteRange range,
                                  const std::function<void(const WordCount&)>& visit);

// InputError (line 0 of `path`) unless `entries` is the number of entries the header declares.
void check_entry_count(const std::string& path, const CorpusSize& declared, std::uint64_t entries);

// Words and their ids, in order of first appearance.
class Vocabulary {
 public:
  Vocabulary() = default;
  explicit Vocabulary(std::vector<std::string> words);  // word i gets id i; repeated words are an error
  std::uint32_t size() const { return static_cast<std::uint32_t>(words_.size()); }
  const std::string& word(std::uint32_t id) const { return words_[id]; }
  // The word's id, or kUnknown.
  std::uint32_t find(std::string_view word) const;
  // The word's id, a new one when it is new.
  std::uint32_t add(std::string_view word);
  static constexpr std::uint32_t kUnknown = 0xFFFFFFFF;

 private:
  std::vector<std::string> words_;
  std::unordered_map<std::string, std::uint32_t> ids_;
};

// A vocabulary file (vocab.txt): line i holds word i (1-based lines, 0-based ids). A blank line or a
// repeated word is an error: either would shift or confuse the ids of the words after it. Holds one
// chunk of text at a time besides the vocabulary.
Vocabulary read_vocabulary(const std::string& path);

// One document of a text corpus: its name and its tokens as word ids.
struct TextDocument {
  std::string name;
  std::vector<std::uint32_t> words;
  std::uint64_t source = 0;  // of its line, for messages raised later
};

// Documents one per line, as Mallet imports them: `name label word word ...` (fields separated by
// blanks; the label is read and ignored). Words get ids from `vocabulary`: new words are added when
// `grow`, else left out and counted. Blank lines are skipped; a line with a name and no label is an
// error. Returns the number of tokens left out. Holds one chunk of text and one document at a time. With
// a byte range, only the documents whose lines start in it are read.
std::uint64_t read_text_documents(const std::string& path, Vocabulary& vocabulary, bool grow,
                                  const std::function<void(const TextDocument&)>& visit,
                                  ByteRange range = {});

// A dense vector: either a MatrixMarket `matrix array` file with one column, or plain text holding
// one number per line. With `sources`, the source of each value's line goes there too.
std::vector<double> read_dense_vector(const std::string& path, std::vector<std::uint64_t>* sources = nullptr);

// The next line of a file whose writer ends every line with a newline, as the model files' writers do:
// false at the end of the file. A last line without one was cut short (a copy or a write stopped
// mid-number) and would read as a wrong value: InputError at line `number` of `path`.
bool read_whole_line(std::istream& in, std::string& line, const std::string& path, std::uint64_t number);

// The error for such a file whose last line has no newline (line 0: the line is not counted).
InputError cut_short(const std::string& path, std::uint64_t number);

// The memory this process may use: the machine's physical memory, or its control group's limit (cgroup
// v2 memory.max, v1 memory.limit_in_bytes) where lower; 0 when neither can be read.
std::uint64_t memory_limit();

// InputError at the line at `source` of `path` (kUnknownSource: the whole file) when
// `bytes` is more than memory_limit(): "WHAT needs about X GB on a rank, more than ...". An input that
// names a huge id or size would otherwise have a rank promised memory it cannot have, and killed part
// way once it touched it, with no word of which file or line asked for it.
void check_memory(const std::string& path, std::uint64_t source, const std::string& what, double bytes);

// How write_shards finds the header lines that stay in the first part.
enum class ShardFormat {
  automatic,      // matrix_market when the file starts with its banner, docword when it looks like one
  libsvm,         // no header
  ratings,        // no header (a MatrixMarket ratings file is matrix_market)
  docword,        // the first three non-blank lines: D, W and NNZ
  matrix_market,  // the banner, the comment and blank lines after it, and the size line
  text,           // no header: Mallet documents, vocabularies, dense vectors
};

// Parses "auto", "libsvm", "ratings", "docword", "matrix_market" or "text"; std::invalid_argument else.
ShardFormat parse_shard_format(const std::string& name);

struct ShardOptions {
  std::string input;   // a file, or a directory of shards to split again
  int parts = 1;       // at least 1
  std::string output;  // the directory of shards to create
  ShardFormat format = ShardFormat::automatic;
  // Header lines to keep in the first part, counted as plain lines; when set, `format` is not used.
  std::optional<std::uint64_t> header_lines;
  bool force = false;  // replace an existing non-empty output directory
  // Asked between blocks of a megabyte; true stops the split as a failure does, leaving no `output`
  // and no hidden directory (the tool answers SIGINT and SIGTERM so).
  std::function<bool()> stop_requested;
};

// Splits `input` at line starts into `parts` files part-00000, part-00001, ... (five digits, more when
// `parts` needs them) of nearly equal sizes, the header lines all in the first part; parts may be
// empty when lines are long or few. A final newline is added when the input lacks one, so that every
// part ends with one. The parts are written and flushed into a hidden directory beside `output` and
// renamed to `output` only when complete: a failure leaves no `output` behind. Returns the paths of the
// parts. InputError for an unreadable input; std::runtime_error naming `output` when it exists and is
// not an empty directory (without `force`), is not a directory, or cannot be written.
std::vector<std::string> write_shards(const ShardOptions& options);

}  // namespace schmp::io
