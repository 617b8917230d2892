// Tests of the input readers in schmp/io.hpp: LIBSVM, MatrixMarket, dense vectors and byte ranges.
#include "schmp/io.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "../io/whole_file_readers.hpp"
#include "local_peers.hpp"
#include "schmp/dataset.hpp"
#include "schmp/output.hpp"
#include "test_files.hpp"

namespace {

namespace fs = std::filesystem;
using schmp::io::ByteRange;
using schmp::io::Coordinates;
using schmp::io::InputError;
using schmp::io::SparseRows;
using schmp::testing::error_of;

// Gives each test a fresh directory for its input files and removes it afterwards.
class IoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device random;
    const std::string test_name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    directory_ = fs::temp_directory_path() /
                 ("schmp_io_test_" + test_name + "_" + std::to_string(random()) + std::to_string(random()));
    fs::create_directories(directory_);
  }

  void TearDown() override {
    std::error_code error;
    fs::remove_all(directory_, error);
  }

  // Writes `content` byte for byte (CRLF stays CRLF) and returns the file's path.
  std::string write(const std::string& name, const std::string& content) {
    const std::string path = (directory_ / name).string();
    std::ofstream out(path, std::ios::binary);
    out << content;
    out.close();
    EXPECT_TRUE(out) << "cannot write " << path;
    return path;
  }

  std::string missing(const std::string& name) const { return (directory_ / name).string(); }

 private:
  fs::path directory_;
};

// Succeeds when `read` throws InputError for `path` at `line` with exactly this message.
::testing::AssertionResult FailsWith(const std::function<void()>& read, const std::string& path,
                                     std::uint64_t line, const std::string& message) {
  const std::string expected = (line == 0 ? path : path + ":" + std::to_string(line)) + ": " + message;
  try {
    read();
  } catch (const InputError& error) {
    if (error.file() != path || error.line() != line || error.what() != expected) {
      return ::testing::AssertionFailure() << "got \"" << error.what() << "\" (line " << error.line()
                                           << "), expected \"" << expected << "\"";
    }
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "no InputError, expected \"" << expected << "\"";
}

// The line number of a record's source (schmp/io.hpp), as a message names it.
std::uint64_t line_number(const std::string& path, std::uint64_t source) {
  return InputError::at(path, source, "").line();
}

std::vector<std::uint64_t> line_numbers(const std::string& path, const std::vector<std::uint64_t>& sources) {
  std::vector<std::uint64_t> numbers;
  for (const std::uint64_t source : sources) numbers.push_back(line_number(path, source));
  return numbers;
}

// A file that a reader must refuse: its content, and the line and message of the InputError.
struct BadFile {
  std::string content;
  std::uint64_t line;
  std::string message;
};

// The entries of row r as (0-based index, value) pairs.
std::vector<std::pair<std::uint32_t, double>> row_entries(const SparseRows& rows, std::size_t r) {
  std::vector<std::pair<std::uint32_t, double>> entries;
  for (auto k = rows.row_start[r]; k < rows.row_start[r + 1]; ++k)
    entries.emplace_back(rows.index[k], rows.value[k]);
  return entries;
}

using Entries = std::vector<std::pair<std::uint32_t, double>>;

// Appends `part` to `all` as further rows.
void append_rows(SparseRows& all, const SparseRows& part) {
  const std::uint64_t offset = all.index.size();
  all.labels.insert(all.labels.end(), part.labels.begin(), part.labels.end());
  for (std::size_t r = 1; r < part.row_start.size(); ++r) all.row_start.push_back(offset + part.row_start[r]);
  all.index.insert(all.index.end(), part.index.begin(), part.index.end());
  all.value.insert(all.value.end(), part.value.begin(), part.value.end());
  all.source.insert(all.source.end(), part.source.begin(), part.source.end());
}

void expect_same_rows(const SparseRows& actual, const SparseRows& expected) {
  EXPECT_EQ(actual.labels, expected.labels);
  EXPECT_EQ(actual.row_start, expected.row_start);
  EXPECT_EQ(actual.index, expected.index);
  EXPECT_EQ(actual.value, expected.value);
  EXPECT_EQ(actual.source, expected.source);
}

// ---------------------------------------------------------------------------------------------------
// InputError and byte ranges

TEST(InputErrorTest, WhatNamesFileAndLine) {
  const InputError at_line("data.svm", 7, "feature index 0 (indices are 1-based)");
  EXPECT_STREQ(at_line.what(), "data.svm:7: feature index 0 (indices are 1-based)");
  EXPECT_EQ(at_line.file(), "data.svm");
  EXPECT_EQ(at_line.line(), 7u);
  const InputError whole_file("missing.svm", 0, "cannot open file");
  EXPECT_STREQ(whole_file.what(), "missing.svm: cannot open file");
  EXPECT_EQ(whole_file.line(), 0u);
}

// A record whose line is unknown (a MatrixMarket row) names the whole file, and so does one whose data
// can no longer be read to count its lines.
TEST(InputErrorTest, UnknownOrUnreadableSourcesNameTheWholeFile) {
  const InputError unknown = InputError::at("data.mtx", schmp::io::kUnknownSource, "label 3 is not binary");
  EXPECT_STREQ(unknown.what(), "data.mtx: label 3 is not binary");
  EXPECT_EQ(unknown.line(), 0u);
  EXPECT_EQ(schmp::io::line_name("data.mtx", schmp::io::kUnknownSource, 0), "data.mtx");
  const InputError gone = InputError::at("no-such-file.svm", 12, "duplicate");
  EXPECT_STREQ(gone.what(), "no-such-file.svm: duplicate");
}

TEST(SplitRangeTest, PartsAreContiguousAndNearlyEqual) {
  for (const std::uint64_t size : {0ull, 1ull, 5ull, 100ull, 1001ull}) {
    for (const int parts : {1, 2, 3, 7, 64}) {
      std::uint64_t next = 0;
      for (int part = 0; part < parts; ++part) {
        const ByteRange range = schmp::io::split_range(size, part, parts);
        EXPECT_EQ(range.begin, next) << size << " " << part << "/" << parts;
        EXPECT_LE(range.begin, range.end);
        const std::uint64_t length = range.end - range.begin;
        EXPECT_TRUE(length == size / parts || length == size / parts + 1);
        next = range.end;
      }
      EXPECT_EQ(next, size);
    }
  }
}

TEST(SplitRangeTest, HugeSizesDoNotOverflow) {
  const std::uint64_t size = std::numeric_limits<std::uint64_t>::max() - 10;
  const ByteRange last = schmp::io::split_range(size, 6, 7);
  EXPECT_EQ(last.end, size);
  EXPECT_EQ(schmp::io::split_range(size, 5, 7).end, last.begin);
}

TEST(SplitRangeTest, RejectsBadParts) {
  EXPECT_THROW(schmp::io::split_range(10, 0, 0), std::invalid_argument);
  EXPECT_THROW(schmp::io::split_range(10, 3, 3), std::invalid_argument);
  EXPECT_THROW(schmp::io::split_range(10, -1, 3), std::invalid_argument);
}

TEST_F(IoTest, FileSize) {
  const std::string path = write("size.txt", "12345\n789");
  EXPECT_EQ(schmp::io::file_size(path), 9u);
  EXPECT_EQ(schmp::io::file_size(write("empty.txt", "")), 0u);
}

TEST_F(IoTest, MissingFileIsAnErrorAtLineZero) {
  const std::string path = missing("missing.svm");
  EXPECT_TRUE(FailsWith([&] { schmp::io::read_libsvm(path); }, path, 0, "cannot open file"));
  EXPECT_TRUE(FailsWith([&] { schmp::io::read_matrix_market(path); }, path, 0, "cannot open file"));
  EXPECT_TRUE(FailsWith([&] { schmp::io::read_dense_vector(path); }, path, 0, "cannot open file"));
  EXPECT_TRUE(FailsWith([&] { schmp::io::file_size(path); }, path, 0, "cannot open file"));
  try {
    schmp::io::read_libsvm(path);
  } catch (const InputError& error) {
    EXPECT_EQ(std::string(error.what()), path + ": cannot open file");
  }
}

// ---------------------------------------------------------------------------------------------------
// LIBSVM

TEST_F(IoTest, LibsvmGoodFile) {
  const std::string path = write("good.svm",
                                 "+1 1:0.5 3:-2 10:1e3\n"
                                 "-1 2:4\n"
                                 "0.25 1:1 4294967294:7\n");
  const SparseRows rows = schmp::io::read_libsvm(path);
  ASSERT_EQ(rows.rows(), 3u);
  EXPECT_EQ(rows.labels, (std::vector<double>{1.0, -1.0, 0.25}));
  EXPECT_EQ(rows.row_start, (std::vector<std::uint64_t>{0, 3, 4, 6}));
  EXPECT_EQ(row_entries(rows, 0), (Entries{{0, 0.5}, {2, -2.0}, {9, 1000.0}}));
  EXPECT_EQ(row_entries(rows, 1), (Entries{{1, 4.0}}));
  EXPECT_EQ(row_entries(rows, 2), (Entries{{0, 1.0}, {4294967293u, 7.0}}));
  EXPECT_EQ(line_numbers(path, rows.source), (std::vector<std::uint64_t>{1, 2, 3}));
  EXPECT_EQ(rows.columns(), 4294967294u);
}

// Plain decimals take a shortcut past the general parser: it must give the same doubles, bit for bit,
// and leave everything else (exponents, more digits than a double holds exactly, points without digits
// on both sides, junk) to that parser.
TEST_F(IoTest, LibsvmDecimalsReadAsTheGeneralParserWould) {
  std::vector<std::string> tokens = {"0",
                                     "-0",
                                     "+7",
                                     "007",
                                     "-12",
                                     "123456789012345",
                                     "1234567890123456789",
                                     "1.5",
                                     "2e3",
                                     "-0.0",
                                     "1E0",
                                     "0.0441195",
                                     "-3.25",
                                     "9007199254740993",
                                     "0.1",
                                     "1.",
                                     ".5",
                                     "-.5",
                                     "0.000000001",
                                     "12345678.9012345",
                                     "1.23456789012345678",
                                     "00.10",
                                     "0.0000000000000009",
                                     "99999999999999.9"};
  // Random decimals of every length and point position the shortcut takes, and some beyond.
  std::mt19937_64 random(17);
  for (int k = 0; k < 2000; ++k) {
    const auto digits = 1 + random() % 17;
    std::string token = random() % 2 ? "-" : "";
    const auto point = random() % (digits + 1);
    for (std::uint64_t d = 0; d < digits; ++d) {
      if (d == point && d > 0) token.push_back('.');
      token.push_back(static_cast<char>('0' + random() % 10));
    }
    tokens.push_back(token);
  }
  std::string text = "1";
  for (std::size_t k = 0; k < tokens.size(); ++k)
    text.append(" ").append(std::to_string(k + 1)).append(":").append(tokens[k]);
  const SparseRows rows = schmp::io::read_libsvm(write("decimals.svm", text.append("\n")));
  ASSERT_EQ(rows.value.size(), tokens.size());
  for (std::size_t k = 0; k < tokens.size(); ++k) {
    const std::string plain = tokens[k][0] == '+' ? tokens[k].substr(1) : tokens[k];
    double expected = 0;
    std::from_chars(plain.data(), plain.data() + plain.size(), expected);
    EXPECT_EQ(rows.value[k], expected) << tokens[k];
    EXPECT_EQ(std::signbit(rows.value[k]), std::signbit(expected)) << tokens[k];
  }
  for (const std::string_view bad : {"1-", "-", "12a", "--1", "1..2", "1.2.3", ".", "-."}) {
    std::string line = "1 1:";  // appended: GCC 12 raises a false -Wrestrict on "..." + std::string
    line.append(bad).append("\n");
    EXPECT_THROW(schmp::io::read_libsvm(write("bad-decimal.svm", line)), InputError) << bad;
  }
}

TEST_F(IoTest, LibsvmSortsUnsortedEntries) {
  const std::string path = write("unsorted.svm", "1 5:5 2:2 9:9 1:1\n2 3:3 1:1\n");
  const SparseRows rows = schmp::io::read_libsvm(path);
  ASSERT_EQ(rows.rows(), 2u);
  EXPECT_EQ(row_entries(rows, 0), (Entries{{0, 1.0}, {1, 2.0}, {4, 5.0}, {8, 9.0}}));
  EXPECT_EQ(row_entries(rows, 1), (Entries{{0, 1.0}, {2, 3.0}}));
  EXPECT_EQ(rows.columns(), 9u);
}

TEST_F(IoTest, LibsvmSkipsCommentsBlankLinesAndCrlf) {
  const std::string path = write("comments.svm",
                                 "# a header comment\r\n"        // 1
                                 "1 1:1 # trailing comment\r\n"  // 2
                                 "\r\n"                          // 3
                                 "   \t \n"                      // 4
                                 "  # indented comment\n"        // 5
                                 "\t-1\t2:2.5  3:3\r\n"          // 6
                                 "#1 5:5\n"                      // 7
                                 "2 4:4\n"                       // 8
                                 "\n"                            // 9
                                 "  \r\n"                        // 10
                                 "\n");                          // 11
  const SparseRows rows = schmp::io::read_libsvm(path);
  ASSERT_EQ(rows.rows(), 3u);
  EXPECT_EQ(rows.labels, (std::vector<double>{1.0, -1.0, 2.0}));
  EXPECT_EQ(row_entries(rows, 0), (Entries{{0, 1.0}}));
  EXPECT_EQ(row_entries(rows, 1), (Entries{{1, 2.5}, {2, 3.0}}));
  EXPECT_EQ(row_entries(rows, 2), (Entries{{3, 4.0}}));
  EXPECT_EQ(line_numbers(path, rows.source), (std::vector<std::uint64_t>{2, 6, 8}));
}

TEST_F(IoTest, LibsvmLabelOnlyRowsHaveNoEntries) {
  const std::string path = write("labels.svm", "1\n-1 # nothing here\n3 2:1\n0");
  const SparseRows rows = schmp::io::read_libsvm(path);
  ASSERT_EQ(rows.rows(), 4u);
  EXPECT_EQ(rows.labels, (std::vector<double>{1.0, -1.0, 3.0, 0.0}));
  EXPECT_EQ(rows.row_start, (std::vector<std::uint64_t>{0, 0, 0, 1, 1}));
  EXPECT_EQ(row_entries(rows, 2), (Entries{{1, 1.0}}));
  EXPECT_EQ(line_numbers(path, rows.source), (std::vector<std::uint64_t>{1, 2, 3, 4}));
  EXPECT_EQ(rows.columns(), 2u);

  const SparseRows only_labels = schmp::io::read_libsvm(write("only_labels.svm", "1\n2\n"));
  EXPECT_EQ(only_labels.rows(), 2u);
  EXPECT_EQ(only_labels.columns(), 0u);
}

// Labels that are words: read_label_names gives them sorted (none when every label is a number), and
// rows read with them are labelled by their word's place; a word not among them is refused at its line,
// as are words read without names.
TEST_F(IoTest, LibsvmLabelsThatAreWords) {
  const std::string words =
      write("words.svm", "setosa 1:5.1\n# a comment\nvirginica 1:6.3\nsetosa 1:4.9\n2.5 1:1\n");
  const std::vector<std::string> names = schmp::io::read_label_names(words);
  EXPECT_EQ(names, (std::vector<std::string>{"2.5", "setosa", "virginica"}));
  const SparseRows rows = schmp::io::read_libsvm(words, {}, names);
  EXPECT_EQ(rows.labels, (std::vector<double>{1, 2, 1, 0}));
  schmp::Peers alone;
  EXPECT_EQ(schmp::io::read_rows_part(words, "", alone, names).labels, rows.labels);
  EXPECT_TRUE(schmp::io::read_label_names(write("numbers.svm", "+1 1:1\n-1 2:1\n3.5\n")).empty());
  EXPECT_TRUE(FailsWith(
      [&] {
        schmp::io::read_libsvm(words, {}, {"setosa", "virginica"});
      },
      words, 5, "label '2.5' is not one of the classes"));
  EXPECT_TRUE(FailsWith([&] { schmp::io::read_libsvm(words); }, words, 1, "non-numeric label 'setosa'"));
  EXPECT_TRUE(FailsWith([&] { schmp::io::read_label_names(write("bad.svm", "a 1:1\n1:2\n")); },
                        missing("bad.svm"), 2, "missing label before '1:2'"));
}

TEST_F(IoTest, LibsvmEmptyFile) {
  for (const char* content : {"", "\n\n", "# only a comment\n"}) {
    const SparseRows rows = schmp::io::read_libsvm(write("empty.svm", content));
    EXPECT_EQ(rows.rows(), 0u);
    EXPECT_EQ(rows.row_start, (std::vector<std::uint64_t>{0}));
    EXPECT_TRUE(rows.index.empty());
    EXPECT_EQ(rows.columns(), 0u);
  }
}

TEST_F(IoTest, LibsvmValuesTooSmallForADoubleReadAsZero) {
  // Below the smallest subnormal is not out of range, as strtod and LIBSVM read it; above the largest is.
  const std::string path = write("tiny.svm", "1e-400 1:1e-400 2:-1e-400 3:4.9e-324\n");
  const auto rows = schmp::io::read_libsvm(path);
  ASSERT_EQ(rows.rows(), 1u);
  EXPECT_EQ(rows.labels[0], 0.0);
  ASSERT_EQ(rows.value.size(), 3u);
  EXPECT_EQ(rows.value[0], 0.0);
  EXPECT_EQ(rows.value[1], 0.0);
  EXPECT_TRUE(std::signbit(rows.value[1]));
  EXPECT_EQ(rows.value[2], std::numeric_limits<double>::denorm_min());
}

TEST_F(IoTest, LibsvmValuesUpTo1e100InMagnitudeRead) {
  const auto rows = schmp::io::read_libsvm(write("large.svm", "-1e100 1:1e100 2:-1e100\n"));
  ASSERT_EQ(rows.value.size(), 2u);
  EXPECT_EQ(rows.labels[0], -1e100);
  EXPECT_EQ(rows.value[0], 1e100);
  EXPECT_EQ(rows.value[1], -1e100);
}

struct BadLibsvm {
  std::string last_line;  // put after a few good, comment, blank and CRLF lines
  std::string message;
};

TEST_F(IoTest, LibsvmBadInputsNameTheLine) {
  // The bad line is line 6: comment, blank and CRLF lines before it must all be counted.
  const std::string prefix = "1 1:1\r\n# comment\n\n  \r\n-1 2:2 # x\n";
  const std::vector<BadLibsvm> cases = {
      {"1 0:2", "feature index 0 (indices are 1-based)"},
      {"1 3:abc", "non-numeric value 'abc'"},
      {"1 3:nan", "value is not finite: nan"},
      {"1 3:-inf", "value is not finite: -inf"},
      {"1 3:1e999", "value out of range: 1e999"},
      {"1 3:1e160",
       "value 1e160 too large: the limit is 1e100 in magnitude, so that squares and their sums stay finite"},
      {"1 3:-1.1e100",
       "value -1.1e100 too large: the limit is 1e100 in magnitude, so that squares and their sums stay "
       "finite"},
      {"-2e101 3:1",
       "label -2e101 too large: the limit is 1e100 in magnitude, so that squares and their sums stay finite"},
      {"1 3:1.5x", "non-numeric value '1.5x'"},
      {"1 3:", "missing value in '3:'"},
      {"1 :3", "missing feature index in ':3'"},
      {"1 x:3", "non-numeric feature index 'x'"},
      {"abc 1:2", "non-numeric label 'abc'"},
      {"nan 1:2", "label is not finite: nan"},
      {"1:2 3:4", "missing label before '1:2'"},
      {"1 5", "feature '5' has no ':'"},
      {"1 4:1 abc", "feature 'abc' has no ':'"},
      {"1 4294967295:1", "feature index 4294967295 out of range (largest is 4294967294)"},
      {"1 99999999999999999999999:1", "feature index 99999999999999999999999 out of range"},
      {"1 -3:1", "negative feature index -3"},
      {"1 2:1 5:1 2:3", "duplicate feature index 2"},
      {"1 7:1 7:1", "duplicate feature index 7"},
  };
  for (const BadLibsvm& bad : cases) {
    // The bad line ends in LF, in CRLF, or ends the file without a newline.
    for (const char* rest : {"\n1 1:1\n", "\r\n1 1:1\n", ""}) {
      const std::string path = write("bad.svm", prefix + bad.last_line + rest);
      EXPECT_TRUE(FailsWith([&] { schmp::io::read_libsvm(path); }, path, 6, bad.message)) << bad.last_line;
    }
  }
}

// About 50 lines mixing rows, comments, blank lines, CRLF endings, label-only and unsorted rows, with no
// newline at the end. Returns the content and, through `row_lines`, the line of every row.
std::string mixed_libsvm(std::vector<std::uint64_t>& row_lines) {
  std::string content;
  for (int i = 1; i <= 52; ++i) {
    const bool last = i == 52;
    const std::string ending = last ? "" : (i % 7 == 0 ? "\r\n" : "\n");
    if (i % 11 == 0) {
      content += "# comment ";
      content += std::to_string(i) + ending;
    } else if (i % 13 == 0) {
      content += "   " + ending;
    } else if (i % 17 == 0) {
      content += "+1" + ending;
      row_lines.push_back(i);
    } else {
      std::string line = i % 2 == 0 ? "+1" : "-1";
      const int features = 1 + i % 5;
      for (int j = 0; j < features; ++j) {
        // Every 6th row lists its entries backwards, so it must be sorted.
        const int k = i % 6 == 0 ? features - 1 - j : j;
        line += ' ';
        line += std::to_string(i + 3 * k) + ":" + std::to_string(0.5 * i + k);
      }
      content += line + ending;
      row_lines.push_back(i);
    }
  }
  return content;
}

TEST_F(IoTest, LibsvmByteRangesReadEveryLineOnce) {
  std::vector<std::uint64_t> row_lines;
  const std::string path = write("mixed.svm", mixed_libsvm(row_lines));
  const SparseRows whole = schmp::io::read_libsvm(path);
  EXPECT_EQ(line_numbers(path, whole.source), row_lines);
  for (std::size_t r = 0; r < whole.rows(); ++r) {
    for (auto k = whole.row_start[r] + 1; k < whole.row_start[r + 1]; ++k) {
      EXPECT_LT(whole.index[k - 1], whole.index[k]);
    }
  }

  const std::uint64_t size = schmp::io::file_size(path);
  for (const int parts : {1, 2, 3, 7, 64, static_cast<int>(size), static_cast<int>(size) + 5}) {
    SparseRows joined;
    int empty_parts = 0;
    for (int part = 0; part < parts; ++part) {
      const SparseRows piece = schmp::io::read_libsvm(path, schmp::io::split_range(size, part, parts));
      if (piece.rows() == 0) ++empty_parts;
      append_rows(joined, piece);
    }
    SCOPED_TRACE("parts = " + std::to_string(parts));
    expect_same_rows(joined, whole);
    if (parts >= 64) {
      EXPECT_GT(empty_parts, 0);
    }
  }
}

// Bytes this process has read so far (Linux's count of read() calls' bytes).
std::uint64_t bytes_read() {
  std::ifstream io("/proc/self/io");
  std::string key;
  std::uint64_t value = 0;
  while (io >> key >> value) {
    if (key == "rchar:") return value;
  }
  return 0;
}

// A worker far into a big file reads its range and nothing before it: its rows' line numbers are
// worked out only when a message names one.
TEST_F(IoTest, ARangeReadsNoByteBeforeIt) {
  if (!std::ifstream("/proc/self/io")) GTEST_SKIP() << "no /proc/self/io to count the bytes read";
  // Line 1, then 64 MiB of zero bytes (line 2, a hole on disk), then lines 3 and 4.
  const std::string path = missing("sparse.svm");
  constexpr std::uint64_t kHole = std::uint64_t{64} << 20;
  {
    std::ofstream out(path, std::ios::binary);
    out << "1 1:1\n";
    out.seekp(static_cast<std::streamoff>(kHole), std::ios::cur);
    out << "\n2 2:2\n3 3:3\n";
  }
  const std::uint64_t size = schmp::io::file_size(path);
  const std::uint64_t before = bytes_read();
  const SparseRows rows = schmp::io::read_libsvm(path, {size - 12, size});
  const std::uint64_t read = bytes_read() - before;
  EXPECT_EQ(rows.labels, (std::vector<double>{2.0, 3.0}));
  EXPECT_LT(read, std::uint64_t{1} << 20) << "the range's reader read the bytes before it";
  EXPECT_EQ(line_numbers(path, rows.source), (std::vector<std::uint64_t>{3, 4}));
}

TEST_F(IoTest, LibsvmRangeStartingAtALineStartKeepsThatLine) {
  const std::string content = "1 1:1\n2 2:2\n3 3:3\n4 4:4\n";
  const std::string path = write("starts.svm", content);
  const std::uint64_t third = content.find("3 3:3");
  const SparseRows at_start = schmp::io::read_libsvm(path, {third, third + 1});
  EXPECT_EQ(at_start.labels, (std::vector<double>{3.0}));
  EXPECT_EQ(line_numbers(path, at_start.source), (std::vector<std::uint64_t>{3}));
  // Starting on the '\n' before it: the line holding that byte began earlier, so line 3 is first.
  const SparseRows on_newline = schmp::io::read_libsvm(path, {third - 1, content.size()});
  EXPECT_EQ(on_newline.labels, (std::vector<double>{3.0, 4.0}));
  // One byte later: line 3 began before the range.
  const SparseRows after = schmp::io::read_libsvm(path, {third + 1, content.size()});
  EXPECT_EQ(after.labels, (std::vector<double>{4.0}));
  EXPECT_EQ(line_numbers(path, after.source), (std::vector<std::uint64_t>{4}));
  // Ending exactly at a line start leaves that line out.
  const SparseRows before = schmp::io::read_libsvm(path, {0, third});
  EXPECT_EQ(before.labels, (std::vector<double>{1.0, 2.0}));
  // Empty and out-of-file ranges read nothing.
  EXPECT_EQ(schmp::io::read_libsvm(path, {third, third}).rows(), 0u);
  EXPECT_EQ(schmp::io::read_libsvm(path, {content.size(), content.size() + 10}).rows(), 0u);
  EXPECT_EQ(schmp::io::read_libsvm(path, {5, 3}).rows(), 0u);
}

TEST_F(IoTest, LibsvmErrorInSecondRangeReportsFileLine) {
  // 50 lines of 10 bytes each; line 40 is bad and lies in the second half.
  std::string content;
  for (int i = 1; i <= 50; ++i) content += i == 40 ? "1 0:2.500\n" : "1 1:2.500\n";
  ASSERT_EQ(content.size(), 500u);
  const std::string path = write("late_error.svm", content);
  const std::uint64_t size = content.size();
  const SparseRows first = schmp::io::read_libsvm(path, schmp::io::split_range(size, 0, 2));
  EXPECT_EQ(first.rows(), 25u);
  EXPECT_EQ(line_number(path, first.source.back()), 25u);
  EXPECT_TRUE(FailsWith([&] { schmp::io::read_libsvm(path, schmp::io::split_range(size, 1, 2)); }, path, 40,
                        "feature index 0 (indices are 1-based)"));
  // With 7 parts, line 40 (bytes 390..399) is in part 5 (bytes 358..429); the others read cleanly.
  for (int part = 0; part < 7; ++part) {
    const ByteRange range = schmp::io::split_range(size, part, 7);
    if (part == 5) {
      EXPECT_TRUE(FailsWith([&] { schmp::io::read_libsvm(path, range); }, path, 40,
                            "feature index 0 (indices are 1-based)"));
    } else {
      EXPECT_NO_THROW(schmp::io::read_libsvm(path, range)) << "part " << part;
    }
  }
}

TEST_F(IoTest, LibsvmLineNumbersAfterMegabytesOfPrefix) {
  // Over 1 MiB before the last range, so the newline count before it spans several read blocks.
  constexpr int kLines = 200000;
  std::string content;
  content.reserve(6 * kLines);
  for (int i = 1; i <= kLines; ++i) content += i % 3 == 0 ? "1 1:1\n" : "2 2:2\n";
  content.replace(6 * (kLines - 10), 6, "1 1:x\n");  // line kLines - 9
  const std::string path = write("many.svm", content);
  const std::uint64_t size = content.size();
  const SparseRows third = schmp::io::read_libsvm(path, schmp::io::split_range(size, 2, 4));
  ASSERT_GT(third.rows(), 0u);
  EXPECT_EQ(line_number(path, third.source.front()), static_cast<std::uint64_t>(kLines / 2 + 1));
  EXPECT_EQ(line_number(path, third.source.back()), static_cast<std::uint64_t>(3 * kLines / 4));
  EXPECT_TRUE(FailsWith([&] { schmp::io::read_libsvm(path, schmp::io::split_range(size, 3, 4)); }, path,
                        kLines - 9, "non-numeric value 'x'"));
}

TEST_F(IoTest, LibsvmLongLineCrossingRangeEnd) {
  // A line far longer than the range forces the reader to fetch the rest of it in several steps.
  std::string long_line = "7";
  for (int i = 1; i <= 30000; ++i) {
    long_line += ' ';
    long_line += std::to_string(i) + ":1";
  }
  const std::string content = "1 1:1\n" + long_line + "\n2 2:2\n";
  const std::string path = write("long.svm", content);
  const SparseRows first = schmp::io::read_libsvm(path, {0, 10});
  ASSERT_EQ(first.rows(), 2u);
  EXPECT_EQ(first.labels[1], 7.0);
  EXPECT_EQ(first.row_start[2] - first.row_start[1], 30000u);
  const SparseRows rest = schmp::io::read_libsvm(path, {10, content.size()});
  EXPECT_EQ(rest.labels, (std::vector<double>{2.0}));
  EXPECT_EQ(line_numbers(path, rest.source), (std::vector<std::uint64_t>{3}));
}

// ---------------------------------------------------------------------------------------------------
// MatrixMarket

TEST_F(IoTest, MatrixMarketRealFile) {
  const std::string path = write("good.mtx",
                                 "%%MatrixMarket Matrix COORDINATE Real General\r\n"  // 1
                                 "% a comment\r\n"                                    // 2
                                 "\r\n"                                               // 3
                                 "3 4 3\r\n"                                          // 4
                                 "1 1 1.5\r\n"                                        // 5
                                 "% another comment\n"                                // 6
                                 "3 4 -2e-3\n"                                        // 7
                                 "\n"                                                 // 8
                                 "2 2 +7\n"                                           // 9
                                 "\n");
  const Coordinates entries = schmp::io::read_matrix_market(path);
  EXPECT_EQ(entries.rows, 3u);
  EXPECT_EQ(entries.columns, 4u);
  EXPECT_EQ(entries.declared_entries, 3u);
  EXPECT_EQ(entries.row, (std::vector<std::uint64_t>{0, 2, 1}));
  EXPECT_EQ(entries.column, (std::vector<std::uint32_t>{0, 3, 1}));
  EXPECT_EQ(entries.value, (std::vector<double>{1.5, -2e-3, 7.0}));
  EXPECT_EQ(line_numbers(path, entries.source), (std::vector<std::uint64_t>{5, 7, 9}));
}

TEST_F(IoTest, MatrixMarketIntegerAndPatternFiles) {
  const std::string integer = write("int.mtx",
                                    "%%MatrixMarket matrix coordinate integer general\n"
                                    "2 2 2\n"
                                    "1 2 -5\n"
                                    "2 1 12\n");
  const Coordinates ints = schmp::io::read_matrix_market(integer);
  EXPECT_EQ(ints.row, (std::vector<std::uint64_t>{0, 1}));
  EXPECT_EQ(ints.column, (std::vector<std::uint32_t>{1, 0}));
  EXPECT_EQ(ints.value, (std::vector<double>{-5.0, 12.0}));

  const std::string pattern = write("pattern.mtx",
                                    "%%matrixmarket matrix coordinate pattern general\n"
                                    "%\n"
                                    "5 3 3\n"
                                    "5 3\n"
                                    "1 1\n"
                                    "2 2\n");
  const Coordinates ones = schmp::io::read_matrix_market(pattern);
  EXPECT_EQ(ones.rows, 5u);
  EXPECT_EQ(ones.columns, 3u);
  EXPECT_EQ(ones.row, (std::vector<std::uint64_t>{4, 0, 1}));
  EXPECT_EQ(ones.column, (std::vector<std::uint32_t>{2, 0, 1}));
  EXPECT_EQ(ones.value, (std::vector<double>{1.0, 1.0, 1.0}));
  EXPECT_EQ(line_numbers(pattern, ones.source), (std::vector<std::uint64_t>{4, 5, 6}));

  const Coordinates none = schmp::io::read_matrix_market(
      write("none.mtx", "%%MatrixMarket matrix coordinate real general\n0 0 0\n"));
  EXPECT_TRUE(none.row.empty());
  EXPECT_EQ(none.declared_entries, 0u);
}

TEST_F(IoTest, MatrixMarketBadBanner) {
  const std::vector<BadFile> cases = {
      {"% comment first\n%%MatrixMarket matrix coordinate real general\n1 1 0\n", 1,
       "missing matrixmarket banner, found '%'"},
      {"1 1 0\n", 1, "missing matrixmarket banner, found '1'"},
      {"%%MatrixMarket matrix coordinate real symmetric\n1 1 0\n", 1,
       "unsupported symmetry 'symmetric' (only 'general')"},
      {"%%MatrixMarket matrix array real general\n1 1\n", 1,
       "unsupported format 'array' (expected 'coordinate')"},
      {"%%MatrixMarket matrix coordinate complex general\n1 1 0\n", 1, "unsupported field 'complex'"},
      {"%%MatrixMarket vector coordinate real general\n1 1 0\n", 1,
       "unsupported object 'vector' (only 'matrix')"},
      {"%%MatrixMarket matrix coordinate real\n1 1 0\n", 1,
       "banner needs 5 words: %%MatrixMarket matrix <format> <field> <symmetry>"},
      {"", 0, "empty file, no matrixmarket banner"},
      {"%%MatrixMarket matrix coordinate real general\n% no size line\n", 0, "missing size line"},
      {"%%MatrixMarket matrix coordinate real general\n%\n3 3\n", 3,
       "size line needs 3 integers (rows columns entries), found '3 3'"},
      {"%%MatrixMarket matrix coordinate real general\n3 3 1 1\n", 2,
       "size line needs 3 integers (rows columns entries), found '3 3 1 1'"},
      {"%%MatrixMarket matrix coordinate real general\n3 x 1\n", 2, "non-numeric column count 'x'"},
      {"%%MatrixMarket matrix coordinate real general\n-3 3 1\n", 2, "negative row count -3"},
  };
  for (const BadFile& bad : cases) {
    const std::string path = write("banner.mtx", bad.content);
    EXPECT_TRUE(FailsWith([&] { schmp::io::read_matrix_market(path); }, path, bad.line, bad.message));
  }
}

TEST_F(IoTest, MatrixMarketBadEntries) {
  const std::string header = "%%MatrixMarket matrix coordinate real general\n% c\n10 4 3\n1 1 1\n\n";
  struct Case {
    std::string line;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"11 1 1", "row 11 outside 1..10"},
      {"0 1 1", "row 0 outside 1..10"},
      {"1 5 1", "column 5 outside 1..4"},
      {"1 0 1", "column 0 outside 1..4"},
      {"a 1 1", "non-numeric row index 'a'"},
      {"1 -2 1", "negative column index -2"},
      {"1 1 abc", "non-numeric value 'abc'"},
      {"1 1 nan", "value is not finite: nan"},
      {"1 1 3e200",
       "value 3e200 too large: the limit is 1e100 in magnitude, so that squares and their sums stay finite"},
      {"1 1", "missing value after row and column"},
      {"1", "entry needs a row and a column, found '1'"},
      {"1 1 1 9", "unexpected text '9' after entry"},
  };
  for (const Case& bad : cases) {
    // The bad entry is on line 6.
    const std::string path = write("entries.mtx", header + bad.line + "\r\n2 2 2\n");
    EXPECT_TRUE(FailsWith([&] { schmp::io::read_matrix_market(path); }, path, 6, bad.message)) << bad.line;
  }
  const std::string integer =
      write("int.mtx", "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n");
  EXPECT_TRUE(
      FailsWith([&] { schmp::io::read_matrix_market(integer); }, integer, 3, "non-integer value '1.5'"));
}

TEST_F(IoTest, MatrixMarketCountMismatch) {
  const std::string fewer =
      write("fewer.mtx", "%%MatrixMarket matrix coordinate real general\n% c\n3 3 3\n1 1 1\n2 2 2\n");
  EXPECT_TRUE(FailsWith([&] { schmp::io::read_matrix_market(fewer); }, fewer, 3,
                        "size line declares 3 entries but the file has 2"));
  const std::string more =
      write("more.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1\n2 2 2\n");
  EXPECT_TRUE(FailsWith([&] { schmp::io::read_matrix_market(more); }, more, 2,
                        "size line declares 1 entries but the file has 2"));
  // A range cannot know the count, so it does not check it, even one that happens to hold the whole
  // file (a worker's, when the others' are empty): its caller counts every range's entries together.
  const Coordinates part = schmp::io::read_matrix_market(fewer, {0, schmp::io::file_size(fewer) - 1});
  EXPECT_EQ(part.row.size(), 2u);
  const Coordinates all = schmp::io::read_matrix_market(fewer, {0, schmp::io::file_size(fewer)});
  EXPECT_EQ(all.row.size(), 2u);
}

TEST_F(IoTest, MatrixMarketByteRangesReadEveryEntryOnce) {
  std::string content = "%%MatrixMarket matrix coordinate real general\n% generated\n40 30 45\n";
  std::vector<std::uint64_t> lines;
  std::uint64_t line = 3;
  for (int i = 0; i < 45; ++i) {
    if (i % 9 == 4) {
      content += "% comment\r\n";
      ++line;
    }
    content += std::to_string(1 + i % 40) + " " + std::to_string(1 + (7 * i) % 30) + " " + std::to_string(i) +
               (i % 5 == 0 ? ".25\r\n" : "\n");
    lines.push_back(++line);
  }
  const std::string path = write("split.mtx", content);
  const Coordinates whole = schmp::io::read_matrix_market(path);
  ASSERT_EQ(whole.row.size(), 45u);
  EXPECT_EQ(line_numbers(path, whole.source), lines);

  const std::uint64_t size = schmp::io::file_size(path);
  for (const int parts : {1, 2, 3, 7, 64, 500}) {
    Coordinates joined;
    for (int part = 0; part < parts; ++part) {
      const Coordinates piece =
          schmp::io::read_matrix_market(path, schmp::io::split_range(size, part, parts));
      EXPECT_EQ(piece.rows, 40u);
      EXPECT_EQ(piece.columns, 30u);
      EXPECT_EQ(piece.declared_entries, 45u);
      joined.row.insert(joined.row.end(), piece.row.begin(), piece.row.end());
      joined.column.insert(joined.column.end(), piece.column.begin(), piece.column.end());
      joined.value.insert(joined.value.end(), piece.value.begin(), piece.value.end());
      joined.source.insert(joined.source.end(), piece.source.begin(), piece.source.end());
    }
    SCOPED_TRACE("parts = " + std::to_string(parts));
    EXPECT_EQ(joined.row, whole.row);
    EXPECT_EQ(joined.column, whole.column);
    EXPECT_EQ(joined.value, whole.value);
    EXPECT_EQ(joined.source, whole.source);
  }
}

TEST_F(IoTest, MatrixMarketErrorInLaterRangeReportsFileLine) {
  std::string content = "%%MatrixMarket matrix coordinate real general\n5 5 30\n";
  for (int i = 3; i <= 32; ++i) content += i == 30 ? "6 1 1\n" : "1 1 1\n";
  const std::string path = write("late.mtx", content);
  const std::uint64_t size = schmp::io::file_size(path);
  EXPECT_NO_THROW(schmp::io::read_matrix_market(path, schmp::io::split_range(size, 0, 2)));
  EXPECT_TRUE(FailsWith([&] { schmp::io::read_matrix_market(path, schmp::io::split_range(size, 1, 2)); },
                        path, 30, "row 6 outside 1..5"));
}

// ---------------------------------------------------------------------------------------------------
// Dense vectors

TEST_F(IoTest, DenseVectorMatrixMarketArray) {
  const std::string path = write("vector.mtx",
                                 "%%MatrixMarket matrix array real general\r\n"
                                 "% comment\r\n"
                                 "3 1\r\n"
                                 "1.5\r\n"
                                 "\n"
                                 "-2\n"
                                 "3e1");
  EXPECT_EQ(schmp::io::read_dense_vector(path), (std::vector<double>{1.5, -2.0, 30.0}));
  const std::string integer = write("int.mtx", "%%MatrixMarket matrix array integer general\n2 1\n4\n-5\n");
  EXPECT_EQ(schmp::io::read_dense_vector(integer), (std::vector<double>{4.0, -5.0}));
}

TEST_F(IoTest, DenseVectorPlainText) {
  const std::string path =
      write("vector.txt", "# weights\r\n1\r\n\n  -2.5  # inline comment\n   \n+3e-1\n\n");
  EXPECT_EQ(schmp::io::read_dense_vector(path), (std::vector<double>{1.0, -2.5, 0.3}));
  EXPECT_TRUE(schmp::io::read_dense_vector(write("empty.txt", "")).empty());
}

TEST_F(IoTest, DenseVectorBadValues) {
  const std::string text = write("bad.txt", "1\n# c\n\n2\nabc\n3\n");
  EXPECT_TRUE(FailsWith([&] { schmp::io::read_dense_vector(text); }, text, 5, "non-numeric value 'abc'"));
  const std::string infinite = write("inf.txt", "1\r\ninf\r\n");
  EXPECT_TRUE(
      FailsWith([&] { schmp::io::read_dense_vector(infinite); }, infinite, 2, "value is not finite: inf"));
  const std::string two = write("two.txt", "1 2\n");
  EXPECT_TRUE(
      FailsWith([&] { schmp::io::read_dense_vector(two); }, two, 1, "unexpected text '2' after value"));

  const std::string array = write("bad.mtx", "%%MatrixMarket matrix array real general\n% c\n3 1\n1\nx\n3\n");
  EXPECT_TRUE(FailsWith([&] { schmp::io::read_dense_vector(array); }, array, 5, "non-numeric value 'x'"));
  const std::string nan = write("nan.mtx", "%%MatrixMarket matrix array real general\n2 1\nnan\n1\n");
  EXPECT_TRUE(FailsWith([&] { schmp::io::read_dense_vector(nan); }, nan, 3, "value is not finite: nan"));
  const std::string wide = write("wide.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n");
  EXPECT_TRUE(FailsWith([&] { schmp::io::read_dense_vector(wide); }, wide, 2,
                        "a dense vector needs 1 column, size line says 2"));
  const std::string short_vector =
      write("short.mtx", "%%MatrixMarket matrix array real general\n3 1\n1\n2\n");
  EXPECT_TRUE(FailsWith([&] { schmp::io::read_dense_vector(short_vector); }, short_vector, 2,
                        "size line declares 3 values but the file has 2"));
  const std::string long_vector = write("long.mtx", "%%MatrixMarket matrix array real general\n1 1\n1\n2\n");
  EXPECT_TRUE(FailsWith([&] { schmp::io::read_dense_vector(long_vector); }, long_vector, 4,
                        "more values than the 1 declared"));
  const std::string coordinate =
      write("coord.mtx", "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1\n");
  EXPECT_TRUE(FailsWith([&] { schmp::io::read_dense_vector(coordinate); }, coordinate, 1,
                        "unsupported format 'coordinate' (expected 'array')"));
}

// ---------------------------------------------------------------------------------------------------
// read_rows_part on LIBSVM files: large ranges are parsed on several threads

// Runs `body` in an arena of 4 threads, so that read_rows_part splits large ranges even on fewer cores:
// the arena sets the concurrency it sees, and global_control lifts TBB's default worker limit (cores - 1)
// that would leave the arena's extra slots empty.
void with_four_threads(const std::function<void()>& body) {
  tbb::global_control workers(tbb::global_control::max_allowed_parallelism, 4);
  tbb::task_arena arena(4);
  arena.execute(body);
}

// At least `min_bytes` of random LIBSVM rows of varied length, with comments, blank lines, CRLF endings,
// label-only and unsorted rows, and no newline at the end. The same bytes on every run.
std::string large_libsvm(std::size_t min_bytes) {
  std::mt19937 random(12345);
  std::string content;
  content.reserve(min_bytes + 1000);
  while (content.size() < min_bytes) {
    const unsigned kind = random() % 100;
    const std::string ending = random() % 10 == 0 ? "\r\n" : "\n";
    if (kind < 2) {
      content += "# comment " + std::to_string(random()) + ending;
      continue;
    }
    if (kind < 4) {
      content += "  " + ending;
      continue;
    }
    std::string line =
        random() % 2 == 0 ? "+1" : std::to_string(static_cast<int>(random() % 2001) - 1000) + ".25";
    std::vector<std::string> features;
    const unsigned count = kind < 6 ? 0 : 1 + random() % 60;
    std::uint64_t index = 0;
    for (unsigned k = 0; k < count; ++k) {
      index += 1 + random() % 1000;
      const std::string value = random() % 4 == 0
                                    ? std::to_string(random() % 10)
                                    : std::to_string((static_cast<double>(random()) - 2e9) / 3e5);
      features.push_back(std::to_string(index) + ":" + value);
    }
    if (kind < 10) std::reverse(features.begin(), features.end());
    for (const std::string& feature : features) line += (random() % 8 == 0 ? "\t" : " ") + feature;
    if (kind >= 95) line += " # trailing comment";
    content += line + ending;
  }
  if (content.back() == '\n') content.pop_back();
  if (content.back() == '\r') content.pop_back();
  return content;
}

// The rows of `rows` with only the entries of columns [begin, end).
SparseRows only_columns(const SparseRows& rows, std::uint32_t begin, std::uint32_t end) {
  SparseRows kept;
  kept.labels = rows.labels;
  kept.source = rows.source;
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    for (std::uint64_t e = rows.row_start[r]; e < rows.row_start[r + 1]; ++e) {
      if (rows.index[e] < begin || rows.index[e] >= end) continue;
      kept.index.push_back(rows.index[e]);
      kept.value.push_back(rows.value[e]);
    }
    kept.row_start.push_back(kept.index.size());
  }
  return kept;
}

TEST_F(IoTest, ColumnBlockKeepsItsColumnsOfEveryRowReadAChunkAtATime) {
  const std::string path = write("block.svm", large_libsvm(std::size_t{200} << 10));
  const SparseRows whole = schmp::io::read_libsvm(path);
  // The same matrix in MatrixMarket form, its entries last row first.
  std::ostringstream market;
  market.precision(17);
  market << "%%MatrixMarket matrix coordinate real general\n"
         << whole.rows() << ' ' << whole.columns() << ' ' << whole.index.size() << '\n';
  for (std::size_t r = whole.rows(); r-- > 0;) {
    for (std::uint64_t e = whole.row_start[r]; e < whole.row_start[r + 1]; ++e)
      market << r + 1 << ' ' << whole.index[e] + 1 << ' ' << whole.value[e] << '\n';
  }
  const std::string market_path = write("block.mtx", market.str());
  const std::uint32_t columns = whole.columns();
  for (const std::uint64_t chunk_bytes :
       {std::uint64_t{1}, std::uint64_t{997}, std::uint64_t{40000}, schmp::io::internal::kChunkBytes}) {
    for (const auto& [begin, end] : {std::pair{0u, columns}, std::pair{columns / 3, 2 * columns / 3}}) {
      SCOPED_TRACE("columns " + std::to_string(begin) + ".." + std::to_string(end) + " in chunks of " +
                   std::to_string(chunk_bytes));
      const schmp::io::ColumnBlock block =
          schmp::io::internal::read_column_block(path, begin, end, chunk_bytes);
      EXPECT_EQ(block.columns, columns);
      expect_same_rows(block.rows, only_columns(whole, begin, end));
      const schmp::io::ColumnBlock from_market =
          schmp::io::internal::read_column_block(market_path, begin, end, chunk_bytes);
      EXPECT_EQ(from_market.columns, columns);
      const SparseRows expected = only_columns(whole, begin, end);
      EXPECT_EQ(from_market.rows.row_start, expected.row_start);
      EXPECT_EQ(from_market.rows.index, expected.index);
      EXPECT_EQ(from_market.rows.value, expected.value);
    }
  }
}

TEST_F(IoTest, LargeColumnBlockParsedOnSeveralThreadsPerChunkAsInOneGo) {
  // 10 MiB: one chunk, parsed as 2 pieces on 4 threads.
  const std::string path = write("large-block.svm", large_libsvm(std::size_t{10} << 20));
  const SparseRows whole = schmp::io::read_libsvm(path);
  const std::uint32_t columns = whole.columns();
  with_four_threads([&] {
    const schmp::io::ColumnBlock block = schmp::io::internal::read_column_block(
        path, columns / 4, columns / 2, schmp::io::internal::kChunkBytes);
    EXPECT_EQ(block.columns, columns);
    expect_same_rows(block.rows, only_columns(whole, columns / 4, columns / 2));
  });
}

TEST_F(IoTest, ReadRowsPartLargeLibsvmMatchesSequentialRead) {
  // 25 MiB: a single part splits into 4 sub-ranges and each of 3 parts into 2 (one per 4 MiB at most).
  const std::string path = write("large.svm", large_libsvm(std::size_t{25} << 20));
  const std::uint64_t size = schmp::io::file_size(path);
  with_four_threads([&] {
    for (const int parts : {1, 3}) {
      for (int part = 0; part < parts; ++part) {
        SCOPED_TRACE("part " + std::to_string(part) + " of " + std::to_string(parts));
        const SparseRows expected = schmp::io::read_libsvm(path, schmp::io::split_range(size, part, parts));
        ASSERT_GT(expected.rows(), 10000u);
        schmp::testing::PlaceOnly place(part, parts);
        expect_same_rows(schmp::io::read_rows_part(path, "", place), expected);
      }
    }
  });
}

// Inserts `line` at the first line start after byte `at` and returns its line number.
std::uint64_t insert_line(std::string& content, std::size_t at, const std::string& line) {
  const std::size_t start = content.find('\n', at) + 1;
  content.insert(start, line);
  return 1 + static_cast<std::uint64_t>(
                 std::count(content.begin(), content.begin() + static_cast<std::ptrdiff_t>(start), '\n'));
}

TEST_F(IoTest, ReadRowsPartLargeLibsvmReportsFirstBadLine) {
  // 10 MiB: read as one part, it splits into 2 sub-ranges; the bad lines lie at 1/5 and 4/5 of the file,
  // one in each.
  const std::string good = large_libsvm(std::size_t{10} << 20);
  std::string late_only = good;
  const std::uint64_t late_alone = insert_line(late_only, 4 * good.size() / 5, "1 1:x\n");
  std::string both = good;
  const std::uint64_t early = insert_line(both, good.size() / 5, "1 0:1\n");
  const std::uint64_t late = insert_line(both, 4 * good.size() / 5, "1 1:x\n");
  ASSERT_LT(early, late);
  const std::string late_path = write("late.svm", late_only);
  const std::string both_path = write("both.svm", both);
  with_four_threads([&] {
    EXPECT_TRUE(FailsWith([&] { schmp::io::read_rows(late_path, ""); }, late_path, late_alone,
                          "non-numeric value 'x'"));
    // Whichever sub-range fails first in time, the error is the sequential reader's: the earlier line.
    EXPECT_TRUE(FailsWith([&] { schmp::io::read_rows(both_path, ""); }, both_path, early,
                          "feature index 0 (indices are 1-based)"));
    EXPECT_TRUE(FailsWith([&] { schmp::io::read_libsvm(both_path); }, both_path, early,
                          "feature index 0 (indices are 1-based)"));
  });
}

// ---------------------------------------------------------------------------------------------------
// Corpora: UCI bag-of-words, vocabularies, Mallet-style text documents

std::vector<schmp::io::WordCount> read_entries(const std::string& path,
                                               schmp::io::CorpusSize* size = nullptr) {
  std::vector<schmp::io::WordCount> entries;
  const auto declared =
      schmp::io::read_bag_of_words(path, [&](const auto& entry) { entries.push_back(entry); });
  if (size) *size = declared;
  return entries;
}

TEST_F(IoTest, BagOfWordsReadsUciDocword) {
  const std::string path = write("docword.txt", "3\r\n5\r\n4\r\n1 2 3\r\n\r\n1 5 1\r\n3 1 2\r\n2 4 7\r\n");
  schmp::io::CorpusSize size;
  const auto entries = read_entries(path, &size);
  EXPECT_EQ(size.documents, 3u);
  EXPECT_EQ(size.words, 5u);
  EXPECT_EQ(size.entries, 4u);
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_EQ(entries[0].document, 0u);
  EXPECT_EQ(entries[0].word, 1u);
  EXPECT_EQ(entries[0].count, 3u);
  EXPECT_EQ(line_number(path, entries[1].source), 6u);
  EXPECT_EQ(entries[3].document, 1u);
  EXPECT_EQ(entries[3].word, 3u);
  EXPECT_EQ(entries[3].count, 7u);
}

TEST_F(IoTest, BagOfWordsRefusesBadFiles) {
  const std::string header = "2\n3\n2\n";
  const std::vector<BadFile> cases{
      {"2\n3\n", 2, "missing the header's entry count NNZ"},
      {"2\nthree\n1\n", 2, "non-numeric word count W 'three'"},
      {"2 3\n", 1, "unexpected '3' after the document count D (the header is three lines: D, W, NNZ)"},
      {header + "0 1 1\n1 1 1\n", 4, "document id 0 (ids are 1-based)"},
      {header + "3 1 1\n1 1 1\n", 4, "document id 3 beyond the 2 the header declares"},
      {header + "1 4 1\n1 1 1\n", 4, "word id 4 beyond the 3 the header declares"},
      {header + "1 1 0\n1 2 1\n", 4, "count 0 (an entry says how often the word occurs: at least once)"},
      {header + "1 1 -2\n1 2 1\n", 4, "negative count -2"},
      {header + "1 1\n", 4, "expected 'doc word count'"},
      {header + "1 1 1 1\n", 4, "unexpected '1' after 'doc word count'"},
      {header + "1 1 1\n", 0, "the header declares 2 entries (NNZ) but the file holds 1"},
      {header + "1 1 1\n1 2 1\n2 3 1\n", 0, "the header declares 2 entries (NNZ) but the file holds 3"},
  };
  for (const BadFile& c : cases) {
    const std::string path = write("bad.txt", c.content);
    EXPECT_TRUE(FailsWith([&] { read_entries(path); }, path, c.line, c.message)) << c.content;
  }
}

TEST_F(IoTest, VocabularyNamesWordsByLine) {
  const schmp::io::Vocabulary vocabulary =
      schmp::io::read_vocabulary(write("vocab.txt", "apple\r\npear\nfig\n\n\n"));
  ASSERT_EQ(vocabulary.size(), 3u);
  EXPECT_EQ(vocabulary.word(1), "pear");
  EXPECT_EQ(vocabulary.find("fig"), 2u);
  EXPECT_EQ(vocabulary.find("plum"), schmp::io::Vocabulary::kUnknown);
  const std::string blank = write("blank.txt", "apple\n\npear\n");
  EXPECT_TRUE(FailsWith([&] { schmp::io::read_vocabulary(blank); }, blank, 2,
                        "blank line: line i names word i, so every line must hold a word"));
  const std::string repeated = write("repeated.txt", "apple\npear\napple\n");
  EXPECT_TRUE(FailsWith([&] { schmp::io::read_vocabulary(repeated); }, repeated, 3,
                        "repeated word 'apple' (first on line 1)"));
  const std::string two = write("two.txt", "apple pie\n");
  EXPECT_TRUE(FailsWith([&] { schmp::io::read_vocabulary(two); }, two, 1, "unexpected 'pie' after the word"));
}

TEST_F(IoTest, TextDocumentsGrowOrKeepTheVocabulary) {
  const std::string path = write("docs.txt", "d1 x the cat sat\n\nd2 y the dog\nd3 z\n");
  schmp::io::Vocabulary vocabulary;
  std::vector<schmp::io::TextDocument> documents;
  EXPECT_EQ(
      schmp::io::read_text_documents(path, vocabulary, true, [&](const auto& d) { documents.push_back(d); }),
      0u);
  ASSERT_EQ(documents.size(), 3u);
  EXPECT_EQ(documents[0].name, "d1");
  EXPECT_EQ(documents[0].words, (std::vector<std::uint32_t>{0, 1, 2}));
  EXPECT_EQ(documents[1].words, (std::vector<std::uint32_t>{0, 3}));
  EXPECT_EQ(line_number(path, documents[1].source), 3u);
  EXPECT_TRUE(documents[2].words.empty());
  EXPECT_EQ(vocabulary.size(), 4u);

  // A fixed vocabulary leaves unknown words out and counts them.
  schmp::io::Vocabulary fixed(std::vector<std::string>{"dog", "the"});
  documents.clear();
  EXPECT_EQ(
      schmp::io::read_text_documents(path, fixed, false, [&](const auto& d) { documents.push_back(d); }), 2u);
  EXPECT_EQ(documents[0].words, (std::vector<std::uint32_t>{1}));
  EXPECT_EQ(documents[1].words, (std::vector<std::uint32_t>{1, 0}));
  EXPECT_EQ(fixed.size(), 2u);

  const std::string unlabelled = write("bad.txt", "d1 x a\nd2\n");
  EXPECT_TRUE(
      FailsWith([&] { schmp::io::read_text_documents(unlabelled, vocabulary, true, [](const auto&) {}); },
                unlabelled, 2, "expected 'name label word word ...': no label after the name"));
}

TEST_F(IoTest, ByteOrderMarksAreSkippedAndCarriageReturnsAloneRefused) {
  // A UTF-8 byte-order mark starts a file saved by a Windows editor: no part of the first word or label.
  const schmp::io::Vocabulary vocabulary = schmp::io::read_vocabulary(write("bom.vocab",
                                                                            "\xEF\xBB\xBF"
                                                                            "apple\npear\n"));
  EXPECT_EQ(vocabulary.word(0), "apple");
  EXPECT_EQ(schmp::io::read_libsvm(write("bom.svm",
                                         "\xEF\xBB\xBF"
                                         "-1 1:1\n1 2:2\n"))
                .labels,
            (std::vector<double>{-1, 1}));
  // A MatrixMarket file behind one is still known as one, which is how the apps tell it from LIBSVM.
  const std::string market = write("bom.mtx",
                                   "\xEF\xBB\xBF"
                                   "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 2\n");
  EXPECT_TRUE(schmp::io::is_matrix_market(market));
  EXPECT_EQ(schmp::io::read_matrix_market(market).value, (std::vector<double>{2}));
  EXPECT_FALSE(schmp::io::is_matrix_market(write("bom_only.svm", "\xEF\xBB\xBF")));
  // Lines ended by CR alone read as one long line: a text corpus would become one document.
  const std::string message = "carriage return inside a line: lines must end in LF or CRLF, not CR";
  const std::string text = write("cr.txt", "d1 x apple banana\rd2 x cherry date\rd3 x egg fig\r");
  schmp::io::Vocabulary grown;
  EXPECT_TRUE(FailsWith([&] { schmp::io::read_text_documents(text, grown, true, [](const auto&) {}); }, text,
                        1, message));
  const std::string svm = write("cr.svm", "1 1:1\n1 1:1\r-1 2:2\r");
  EXPECT_TRUE(FailsWith([&] { schmp::io::read_libsvm(svm); }, svm, 2, message));
}

TEST_F(IoTest, FilesThatBelongTogetherArePublishedAllOrNone) {
  const std::string data = write("data.svm", "old data\n");
  const std::string truth = missing("data.svm.truth");
  const auto text = [](const std::string& content) {
    return [content](std::ostream& out) { out << content; };
  };
  // The second file fails as a full disk would: neither is published, the older first one stays.
  const auto full_disk = [](std::ostream& out) { out.setstate(std::ios::badbit); };
  const auto content = [](const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  try {
    schmp::io::write_files_atomically({{data, text("new data\n")}, {truth, full_disk}});
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& error) {
    EXPECT_EQ(std::string(error.what()), truth + ": cannot write: write failed");
  }
  EXPECT_EQ(content(data), "old data\n");
  EXPECT_FALSE(fs::exists(truth));
  EXPECT_EQ(std::distance(fs::directory_iterator(fs::path(data).parent_path()), fs::directory_iterator()), 1)
      << "a temporary file was left";
  schmp::io::write_files_atomically({{data, text("new data\n")}, {truth, text("1 0.5\n")}});
  EXPECT_EQ(content(data), "new data\n");
  EXPECT_EQ(content(truth), "1 0.5\n");
}

// An output named through a link (a checkpoint on a shared filesystem, linked from the run's directory)
// is written where the link points: publishing it had replaced the link with a local file.
TEST_F(IoTest, AnOutputThroughALinkUpdatesTheFileItNames) {
  const std::string shared = write("shared.ckpt", "old\n");
  const fs::path link = fs::path(shared).parent_path() / "link.ckpt";
  fs::create_symlink("shared.ckpt", link);
  const fs::path chain = fs::path(shared).parent_path() / "chain.ckpt";
  fs::create_symlink(link, chain);  // absolute, to a link
  const auto content = [](const fs::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  schmp::io::write_file_atomically(chain.string(), [](std::ostream& out) { out << "new\n"; });
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_TRUE(fs::is_symlink(chain));
  EXPECT_EQ(content(shared), "new\n");
  // A link into a directory that is not there cannot be written, as the run is told before it starts.
  const fs::path nowhere = fs::path(shared).parent_path() / "nowhere.ckpt";
  fs::create_symlink("no/such/directory/run.ckpt", nowhere);
  EXPECT_THROW(schmp::io::check_writable(nowhere.string()), std::runtime_error);
  schmp::io::check_writable(chain.string());
  // A loop of links is refused, not replaced by a file.
  const fs::path loop = fs::path(shared).parent_path() / "loop1.ckpt";
  fs::create_symlink("loop2.ckpt", loop);
  fs::create_symlink("loop1.ckpt", fs::path(shared).parent_path() / "loop2.ckpt");
  EXPECT_THROW(schmp::io::check_writable(loop.string()), std::runtime_error);
  EXPECT_THROW(schmp::io::write_file_atomically(loop.string(), [](std::ostream& out) { out << "x\n"; }),
               std::runtime_error);
  EXPECT_TRUE(fs::is_symlink(loop));
  // A link to a file not there yet makes it, and two such links are one output.
  const fs::path dangling = fs::path(shared).parent_path() / "dangling.ckpt";
  const fs::path other = fs::path(shared).parent_path() / "other.ckpt";
  fs::create_symlink("later.ckpt", other);
  fs::create_symlink("later.ckpt", dangling);
  EXPECT_TRUE(schmp::io::same_file(dangling.string(), other.string()));
  schmp::io::write_file_atomically(dangling.string(), [](std::ostream& out) { out << "first\n"; });
  EXPECT_TRUE(fs::is_symlink(dangling));
  EXPECT_EQ(content(fs::path(shared).parent_path() / "later.ckpt"), "first\n");
}

TEST_F(IoTest, PipesAreNeitherReadNorReplaced) {
  // Reading a named pipe waited for a writer forever; an output published onto one (or onto a device
  // such as /dev/null) replaced it by a regular file.
  const std::string pipe = missing("pipe");
  ASSERT_EQ(::mkfifo(pipe.c_str(), 0600), 0);
  EXPECT_TRUE(FailsWith([&] { schmp::io::read_libsvm(pipe); }, pipe, 0,
                        "is not a regular file (a pipe or a device): save it to a file first"));
  const std::string refusal =
      pipe + ": cannot write: not a regular file (a device or a pipe), which would be replaced";
  const auto message = [](const std::function<void()>& write) {
    try {
      write();
    } catch (const std::runtime_error& error) {
      return std::string(error.what());
    }
    return std::string();
  };
  EXPECT_EQ(message([&] { schmp::io::check_writable(pipe); }), refusal);
  EXPECT_EQ(message([&] { schmp::io::write_file_atomically(pipe, [](std::ostream& out) { out << "x"; }); }),
            refusal);
  EXPECT_TRUE(fs::is_fifo(pipe));
  // Nor through a link to it, as /dev/stdout is one.
  const std::string link = missing("link");
  fs::create_symlink(pipe, link);
  EXPECT_EQ(message([&] { schmp::io::check_writable(link); }),
            link + ": cannot write: not a regular file (a device or a pipe), which would be replaced");
  EXPECT_TRUE(fs::is_symlink(link));
}

TEST_F(IoTest, SizesBeyondTheMemoryAreRefusedAtTheLineThatAsksForThem) {
  const std::uint64_t limit = schmp::io::memory_limit();
  ASSERT_GT(limit, 0u);
  const std::string path = write("rows.svm", "1 1:1 3:1\n# comment\n-1 2:1 9:1 4:1\n1 5:1\n");
  const auto rows = schmp::io::read_libsvm(path);
  // Within the memory: nothing said.
  schmp::io::check_columns_fit(path, rows, 8);
  schmp::io::check_memory(path, schmp::io::kUnknownSource, "the sizes", static_cast<double>(limit));
  // Beyond it: at the line of the largest column (9, on line 3), or the whole file.
  const auto memory = static_cast<double>(limit);
  const double per_column = 2 * memory / 9;
  char expected[200];
  std::snprintf(
      expected, sizeof expected,
      "column 9, at %g bytes for each column up to it, needs about %.3g GB on a rank, more than the "
      "%.3g GB this process can have",
      per_column, 2 * memory / 1e9, memory / 1e9);
  EXPECT_TRUE(FailsWith([&] { schmp::io::check_columns_fit(path, rows, per_column); }, path, 3, expected));
  std::snprintf(expected, sizeof expected,
                "the sizes needs about 1e+21 GB on a rank, more than the %.3g GB this process can have",
                memory / 1e9);
  EXPECT_TRUE(FailsWith([&] { schmp::io::check_memory(path, schmp::io::kUnknownSource, "the sizes", 1e30); },
                        path, 0, expected));
}

TEST_F(IoTest, AnOutputNamingAnInputOrAnotherOutputIsRefused) {
  namespace fs = std::filesystem;
  const std::string data = write("data.svm", "1 1:1\n");
  const auto message = [](const std::vector<schmp::io::FlagFile>& outputs,
                          const std::vector<schmp::io::FlagFile>& inputs) {
    try {
      schmp::io::refuse_overwriting(outputs, inputs);
    } catch (const std::runtime_error& error) {
      return std::string(error.what());
    }
    return std::string();
  };
  const std::string overwrite = ": --output names the file of --data, which the run would overwrite";
  EXPECT_EQ(message({{"--output", data}}, {{"--labels", ""}, {"--data", data}}), data + overwrite);
  // Other spellings of the same path, and a link to the file.
  const std::string dotted = (fs::path(data).parent_path() / "." / "data.svm").string();
  EXPECT_EQ(message({{"--output", dotted}}, {{"--data", data}}), dotted + overwrite);
  const std::string link = missing("link.svm");
  fs::create_symlink(data, link);
  EXPECT_EQ(message({{"--output", link}}, {{"--data", data}}), link + overwrite);
  // A file in a directory of shards given as an input.
  const std::string shards = missing("shards");
  fs::create_directory(shards);
  const std::string part = write("shards/part-00000", "1 1:1\n");
  EXPECT_EQ(message({{"--output", part}}, {{"--data", shards}}),
            part + ": --output lies in the directory of --data, whose part files the run would overwrite");
  EXPECT_EQ(message({{"--output", missing("shards-model")}}, {{"--data", shards}}), "");
  // Two outputs on one file, existing or not.
  const std::string model = missing("model.txt");
  EXPECT_EQ(message({{"--output", model}, {"--trace", model}}, {{"--data", data}}),
            model + ": --trace and --output name the same file: one would replace the other");
  // Distinct files, and flags not given, pass.
  EXPECT_EQ(message({{"--output", model}, {"--trace", ""}, {"--checkpoint", missing("c")}},
                    {{"--data", data}, {"--test", ""}}),
            "");
  EXPECT_EQ(fs::file_size(data), 6u);
}

// ---------------------------------------------------------------------------------------------------
// Inputs found while fuzzing the readers (fuzz/, docs/fuzzing.md)

std::vector<schmp::io::Rating> read_all_ratings(const std::string& path, int index_base,
                                                const schmp::io::IdBounds& bounds) {
  std::vector<schmp::io::Rating> ratings;
  schmp::io::read_ratings(path, index_base, bounds, [&](const auto& rating) { ratings.push_back(rating); });
  return ratings;
}

TEST_F(IoTest, ControlCharactersInMessagesAreEscaped) {
  // A NUL byte in a message cut it short wherever it was printed as a C string, and other control
  // characters (the terminal's escape sequences among them) went out raw.
  using namespace std::string_literals;
  const std::string libsvm = write("nul.svm", "1 1:2\n1 1:\x01\0x\n"s);
  EXPECT_TRUE(
      FailsWith([&] { schmp::io::read_libsvm(libsvm); }, libsvm, 2, "non-numeric value '\\x01\\x00x'"));
  const std::string banner = write("banner.mtx", "%%Ma\x01\0rket matrix coordinate real general\n1 1 0\n"s);
  EXPECT_TRUE(FailsWith([&] { schmp::io::read_matrix_market(banner); }, banner, 1,
                        "missing matrixmarket banner, found '%%Ma\\x01\\x00rket'"));
  const std::string ratings = write("ratings.txt", "1 1 5\r\n2 3\x0e\0 1"s);
  EXPECT_TRUE(
      FailsWith([&] { read_all_ratings(ratings, 1, {}); }, ratings, 2, "non-numeric item id '3\\x0e\\x00'"));
  const std::string docword = write("docword.txt", "2\n3\n1\n-\x7f 2 1\n"s);
  EXPECT_TRUE(FailsWith([&] { read_entries(docword); }, docword, 4, "non-numeric document id '-\\x7f'"));
  const std::string vocabulary = write("vocab.txt", "apple pi\x1b[2Je\n"s);
  EXPECT_TRUE(FailsWith([&] { schmp::io::read_vocabulary(vocabulary); }, vocabulary, 1,
                        "unexpected 'pi\\x1b[2Je' after the word"));
}

TEST_F(IoTest, IdsWithLeadingZerosAreShownAsNumbers) {
  // The message repeated the token, however many zeros it started with.
  const std::string zeros(5000, '0');
  const std::string docword = write("docword.txt", "2\n3\n1\n1 " + zeros + "4 1\n");
  EXPECT_TRUE(
      FailsWith([&] { read_entries(docword); }, docword, 4, "word id 4 beyond the 3 the header declares"));
  const std::string count = write("count.txt", "2\n3\n1\n1 1 " + zeros + "4294967296\n");
  EXPECT_TRUE(FailsWith([&] { read_entries(count); }, count, 4, "count 4294967296 out of range"));
  const std::string ratings = write("ratings.txt", "0 " + zeros + "7 1\n");
  const schmp::io::IdBounds bounds{10, 5};
  EXPECT_TRUE(FailsWith([&] { read_all_ratings(ratings, 0, bounds); }, ratings, 1,
                        "item id 7 beyond the bound: 0-based ids must be below 5"));
}

TEST_F(IoTest, BagOfWordsHeaderBeyondThirtyTwoBitIdsNamesItsLine) {
  const std::string words = write("words.txt", "2\n1000000000000000\n1\n1 1 1\n");
  EXPECT_TRUE(FailsWith([&] { read_entries(words); }, words, 2,
                        "word count W 1000000000000000 out of range (largest is 4294967294)"));
  const std::string documents = write("documents.txt", "4294967295\n3\n1\n1 1 1\n");
  EXPECT_TRUE(FailsWith([&] { read_entries(documents); }, documents, 1,
                        "document count D 4294967295 out of range (largest is 4294967294)"));
  const std::string largest = write("largest.txt", "4294967294\n4294967294\n1\n4294967294 4294967294 1\n");
  const auto entries = read_entries(largest);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].document, 4294967293u);
  EXPECT_EQ(entries[0].word, 4294967293u);
}

TEST_F(IoTest, RatingIdsBeyondThirtyTwoBitsAreRefusedWhateverTheBound) {
  // Bounds beyond 2^32 let such ids through, cut to 32 bits: user 2^32 became user 0.
  const schmp::io::IdBounds huge{std::uint64_t{1} << 40, std::uint64_t{1} << 40};
  // The largest id leaves the count of ids (it + 1) a 32-bit number too.
  const std::string text = write("ratings.txt", "4294967294 0 1\n4294967295 0 1\n");
  EXPECT_TRUE(FailsWith([&] { read_all_ratings(text, 0, huge); }, text, 2,
                        "user id 4294967295 beyond the bound: 0-based ids must be below 4294967295"));
  const std::string one_based = write("one_based.txt", "4294967295 1 1\n");
  const auto ratings = read_all_ratings(one_based, 1, huge);
  ASSERT_EQ(ratings.size(), 1u);
  EXPECT_EQ(ratings[0].user, 4294967294u);
  const std::string matrix =
      write("ratings.mtx", "%%MatrixMarket matrix coordinate real general\n8589934592 1 1\n1 1 5\n");
  EXPECT_TRUE(
      FailsWith([&] { read_all_ratings(matrix, 1, huge); }, matrix, 0,
                "declared size 8589934592 x 1 beyond the bound of 4294967295 users x 4294967295 items"));
}

TEST(CorpusSharedData, SotuSizesMatchItsReadme) {
  const std::string dir = std::string(SCHMP_SHARED_DATA) + "/lda/sotu_lda";
  if (!fs::exists(dir + "/docword.txt")) GTEST_SKIP() << "no " << dir;
  std::uint64_t tokens = 0;
  const auto size =
      schmp::io::read_bag_of_words(dir + "/docword.txt", [&](const auto& e) { tokens += e.count; });
  EXPECT_EQ(size.documents, 233u);
  EXPECT_EQ(size.words, 15533u);
  EXPECT_EQ(size.entries, 260982u);
  EXPECT_EQ(tokens, 436214u);
  EXPECT_EQ(schmp::io::read_vocabulary(dir + "/vocab.txt").size(), 15533u);
}

// ---------------------------------------------------------------------------------------------------
// Whole-file readers read their input in chunks: the chunk size changes nothing they pass on or report

namespace internal = schmp::io::internal;

// The repository's data/, found from this file's path (CMake compiles it by its absolute path).
const std::string kDataDir = (fs::path(__FILE__).parent_path().parent_path() / "data").string();

// Chunks so small that most lines straddle an edge, then the chunk size the public readers use.
constexpr std::uint64_t kSmallChunks[] = {64, 1024};

// Splits `input` into `parts` part files in the new directory `output`.
std::string shard_into(const std::string& input, int parts, const std::string& output,
                       schmp::io::ShardFormat format) {
  schmp::io::ShardOptions options;
  options.input = input;
  options.parts = parts;
  options.output = output;
  options.format = format;
  schmp::io::write_shards(options);
  return output;
}

// The number of lines of a file, to locate a line of the whole in one of its parts.
std::uint64_t lines_in(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  const std::string text = content.str();
  return static_cast<std::uint64_t>(std::count(text.begin(), text.end(), '\n'));
}

// Where a line of the file that `directory` was split from lies: its part file and its line there.
std::pair<std::string, std::uint64_t> part_and_line(const std::string& directory, std::uint64_t line) {
  for (int part = 0;; ++part) {
    char name[32];
    std::snprintf(name, sizeof name, "/part-%05d", part);
    const std::string path = directory + name;
    const std::uint64_t lines = lines_in(path);
    if (line <= lines) return {path, line};
    line -= lines;
  }
}

using RatingRecord = std::tuple<std::uint32_t, std::uint32_t, double, std::uint64_t>;

// The ratings of a byte range of `path` (ids `index_base`-based), read in chunks of `chunk_bytes`.
std::vector<RatingRecord> ratings_of_range(const std::string& path, int index_base,
                                           schmp::io::ByteRange range, std::uint64_t chunk_bytes) {
  std::vector<RatingRecord> ratings;
  internal::read_ratings(
      path, index_base, {}, [&](const auto& r) { ratings.emplace_back(r.user, r.item, r.value, r.source); },
      range, chunk_bytes);
  return ratings;
}

std::vector<RatingRecord> ratings_in_chunks(const std::string& path, std::uint64_t chunk_bytes) {
  return ratings_of_range(path, 0, schmp::io::ByteRange{}, chunk_bytes);
}

// At least `min_bytes` of `user item rating` lines (0-based ids) with comments, blank lines, CRLF
// endings and no newline at the end. The same bytes for the same seed.
std::string ratings_text(std::size_t min_bytes, unsigned seed) {
  std::mt19937 random(seed);
  std::string content = "# user item rating\n";
  while (content.size() < min_bytes) {
    const unsigned kind = random() % 50;
    const std::string ending = kind % 7 == 0 ? "\r\n" : "\n";
    if (kind == 0) {
      content += "  " + ending;
    } else if (kind == 1) {
      content += "# comment " + std::to_string(random()) + ending;
    } else {
      content += std::to_string(random() % 5000) + " " + std::to_string(random() % 800) +
                 (kind == 2 ? "\t" : " ") + std::to_string(1 + random() % 5) +
                 (kind == 3 ? ".5 # note" : "") + ending;
    }
  }
  if (content.back() == '\n') content.pop_back();
  if (content.back() == '\r') content.pop_back();
  return content;
}

TEST_F(IoTest, RatingsReadInSmallChunksAsInOneGo) {
  const std::string file = write("ratings.txt", ratings_text(200'000, 3));
  const std::vector<RatingRecord> expected = ratings_in_chunks(file, internal::kChunkBytes);
  ASSERT_GT(expected.size(), 10000u);
  std::vector<RatingRecord> public_read;
  for (const auto& r : read_all_ratings(file, 0, {}))
    public_read.emplace_back(r.user, r.item, r.value, r.source);
  EXPECT_EQ(public_read, expected);
  for (const std::uint64_t chunk : kSmallChunks) EXPECT_EQ(ratings_in_chunks(file, chunk), expected) << chunk;

  for (const int parts : {3, 7}) {
    SCOPED_TRACE(std::to_string(parts) + " shards");
    const std::string shards =
        shard_into(file, parts, missing("shards" + std::to_string(parts)), schmp::io::ShardFormat::ratings);
    // Sources are offsets in the parts taken together: the file's own.
    const std::vector<RatingRecord> whole = ratings_in_chunks(shards, internal::kChunkBytes);
    EXPECT_EQ(whole, expected);
    for (const std::uint64_t chunk : kSmallChunks)
      EXPECT_EQ(ratings_in_chunks(shards, chunk), whole) << chunk;
  }
}

// The records of `parts` byte ranges (split_range), read one range after another in chunks.
template <class Record, class ReadRange>
std::vector<Record> records_of_ranges(const std::string& path, int parts, ReadRange read_range) {
  const std::uint64_t size = schmp::io::file_size(path);
  std::vector<Record> records;
  for (int part = 0; part < parts; ++part) {
    const std::vector<Record> range = read_range(schmp::io::split_range(size, part, parts));
    records.insert(records.end(), range.begin(), range.end());
  }
  return records;
}

TEST_F(IoTest, RatingsOfByteRangesAddUpToTheWholeWithTheirLines) {
  const std::string file = write("ratings.txt", ratings_text(50'000, 6));
  const std::string shards = shard_into(file, 4, missing("shards"), schmp::io::ShardFormat::ratings);
  for (const std::string& path : {file, shards}) {
    const std::vector<RatingRecord> whole = ratings_in_chunks(path, internal::kChunkBytes);
    for (const int parts : {1, 2, 3, 7, 16, 5000}) {
      for (const std::uint64_t chunk : {std::uint64_t{1}, std::uint64_t{300}, internal::kChunkBytes}) {
        if (parts > 2 && chunk < 300) continue;
        SCOPED_TRACE(path + ": " + std::to_string(parts) + " ranges, chunks of " + std::to_string(chunk));
        EXPECT_EQ(records_of_ranges<RatingRecord>(
                      path, parts,
                      [&](schmp::io::ByteRange range) { return ratings_of_range(path, 0, range, chunk); }),
                  whole);
      }
    }
  }
  // A MatrixMarket ratings file: the header stays out of every range's entries.
  const std::string market = write("ratings.mtx",
                                   "%%MatrixMarket matrix coordinate real general\n% c\n3 4 5\n1 1 5\n1 4 "
                                   "3\n2 2 1.5\n3 1 2\n3 3 4\n");
  const std::vector<RatingRecord> whole = ratings_in_chunks(market, internal::kChunkBytes);
  ASSERT_EQ(whole.size(), 5u);
  // It is read a chunk at a time too, so that a rank holds only a chunk's text.
  for (const int parts : {1, 2, 3, 40}) {
    for (const std::uint64_t chunk : {std::uint64_t{1}, std::uint64_t{7}, internal::kChunkBytes}) {
      SCOPED_TRACE(std::to_string(parts) + " ranges, chunks of " + std::to_string(chunk));
      EXPECT_EQ(records_of_ranges<RatingRecord>(
                    market, parts,
                    [&](schmp::io::ByteRange range) { return ratings_of_range(market, 1, range, chunk); }),
                whole);
    }
  }
  // Read whole, its size line's entry count is checked; a range alone cannot tell.
  const std::string short_market =
      write("short.mtx", "%%MatrixMarket matrix coordinate real general\n3 4 6\n1 1 5\n2 2 1.5\n");
  EXPECT_TRUE(FailsWith([&] { ratings_in_chunks(short_market, 4); }, short_market, 2,
                        "size line declares 6 entries but the file has 2"));
  EXPECT_EQ(records_of_ranges<RatingRecord>(short_market, 2,
                                            [&](schmp::io::ByteRange range) {
                                              return ratings_of_range(short_market, 1, range,
                                                                      internal::kChunkBytes);
                                            })
                .size(),
            2u);
}

TEST_F(IoTest, RatingsErrorInALaterChunkNamesTheSameFileAndLine) {
  std::string content = ratings_text(100'000, 4);
  const std::uint64_t bad = insert_line(content, 3 * content.size() / 4, "7 x 1\n");
  const std::string file = write("ratings.txt", content);
  const std::string shards = shard_into(file, 3, missing("shards"), schmp::io::ShardFormat::ratings);
  const auto [part, part_line] = part_and_line(shards, bad);
  EXPECT_NE(part, shards + "/part-00000");
  for (const std::uint64_t chunk :
       {std::uint64_t{1}, std::uint64_t{64}, std::uint64_t{1024}, internal::kChunkBytes}) {
    SCOPED_TRACE("chunks of " + std::to_string(chunk));
    EXPECT_TRUE(FailsWith([&] { ratings_in_chunks(file, chunk); }, file, bad, "non-numeric item id 'x'"));
    EXPECT_TRUE(
        FailsWith([&] { ratings_in_chunks(shards, chunk); }, part, part_line, "non-numeric item id 'x'"));
  }
}

TEST_F(IoTest, LargeRatingsParsedOnSeveralThreadsPerChunkAsInOneGo) {
  // 12 MiB: one default chunk parsed as 3 sub-ranges; in chunks of 9 MiB, 2 sub-ranges then 1.
  const std::string good = ratings_text(std::size_t{12} << 20, 5);
  std::string both = good;
  const std::uint64_t early = insert_line(both, std::size_t{2} << 20, "1 2 nan\n");
  const std::uint64_t late = insert_line(both, std::size_t{7} << 20, "1 -2 3\n");
  std::string late_only = good;
  const std::uint64_t late_alone = insert_line(late_only, std::size_t{11} << 20, "1 2\n");
  const std::string file = write("ratings.txt", good);
  const std::string both_path = write("both.txt", both);
  const std::string late_path = write("late.txt", late_only);
  ASSERT_LT(early, late);
  with_four_threads([&] {
    const std::vector<RatingRecord> expected = ratings_in_chunks(file, internal::kChunkBytes);
    for (const std::uint64_t chunk : {std::uint64_t{9} << 20, std::uint64_t{1} << 20}) {
      SCOPED_TRACE("chunks of " + std::to_string(chunk));
      EXPECT_EQ(ratings_in_chunks(file, chunk), expected);
      EXPECT_TRUE(FailsWith([&] { ratings_in_chunks(both_path, chunk); }, both_path, early,
                            "rating is not finite: nan"));
      EXPECT_TRUE(FailsWith([&] { ratings_in_chunks(late_path, chunk); }, late_path, late_alone,
                            "expected 'user item rating'"));
    }
    EXPECT_TRUE(FailsWith([&] { read_all_ratings(both_path, 0, {}); }, both_path, early,
                          "rating is not finite: nan"));
  });
}

using WordRecord = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint64_t>;

std::vector<WordRecord> words_in_chunks(const std::string& path, std::uint64_t chunk_bytes,
                                        schmp::io::CorpusSize* size = nullptr) {
  std::vector<WordRecord> entries;
  const auto read = internal::read_bag_of_words(
      path, schmp::io::ByteRange{},
      [&](const auto& e) { entries.emplace_back(e.document, e.word, e.count, e.source); }, chunk_bytes);
  schmp::io::check_entry_count(path, read.declared, read.entries);
  if (size) *size = read.declared;
  return entries;
}

void expect_same_size(const schmp::io::CorpusSize& actual, const schmp::io::CorpusSize& expected) {
  EXPECT_EQ(actual.documents, expected.documents);
  EXPECT_EQ(actual.words, expected.words);
  EXPECT_EQ(actual.entries, expected.entries);
}

TEST_F(IoTest, BagOfWordsReadInSmallChunksAsInOneGo) {
  const std::string file = kDataDir + "/sotu/docword.txt";
  schmp::io::CorpusSize expected_size;
  const std::vector<WordRecord> expected = words_in_chunks(file, internal::kChunkBytes, &expected_size);
  EXPECT_EQ(expected_size.documents, 60u);
  EXPECT_EQ(expected_size.words, 6391u);
  ASSERT_EQ(expected.size(), expected_size.entries);
  schmp::io::CorpusSize public_size;
  const auto public_read = read_entries(file, &public_size);
  ASSERT_EQ(public_read.size(), expected.size());
  EXPECT_EQ(public_read.back().source, std::get<3>(expected.back()));
  expect_same_size(public_size, expected_size);
  for (const std::uint64_t chunk : kSmallChunks) {
    schmp::io::CorpusSize size;
    EXPECT_EQ(words_in_chunks(file, chunk, &size), expected) << chunk;
    expect_same_size(size, expected_size);
  }

  for (const int parts : {3, 7}) {
    SCOPED_TRACE(std::to_string(parts) + " shards");
    const std::string shards =
        shard_into(file, parts, missing("shards" + std::to_string(parts)), schmp::io::ShardFormat::docword);
    const std::vector<WordRecord> whole = words_in_chunks(shards, internal::kChunkBytes);
    EXPECT_EQ(whole, expected);
    for (const std::uint64_t chunk : kSmallChunks) {
      schmp::io::CorpusSize size;
      EXPECT_EQ(words_in_chunks(shards, chunk, &size), whole) << chunk;
      expect_same_size(size, expected_size);
    }
  }
}

TEST_F(IoTest, BagOfWordsOfByteRangesAddUpToTheWholeWithTheirLines) {
  const std::string file = kDataDir + "/sotu/docword.txt";
  const std::string shards = shard_into(file, 3, missing("shards"), schmp::io::ShardFormat::docword);
  for (const std::string& path : {file, shards}) {
    schmp::io::CorpusSize expected_size;
    const std::vector<WordRecord> whole = words_in_chunks(path, internal::kChunkBytes, &expected_size);
    // 3,000 ranges of the 80 KiB corpus: most are empty, and the first few cut the header's lines.
    for (const int parts : {1, 2, 5, 16, 3000}) {
      for (const std::uint64_t chunk : {std::uint64_t{1}, std::uint64_t{512}, internal::kChunkBytes}) {
        if (parts > 2 && chunk < 512) continue;
        SCOPED_TRACE(path + ": " + std::to_string(parts) + " ranges, chunks of " + std::to_string(chunk));
        std::uint64_t entries = 0;
        const auto records = records_of_ranges<WordRecord>(path, parts, [&](schmp::io::ByteRange range) {
          std::vector<WordRecord> read;
          const schmp::io::BagOfWordsRange counted = internal::read_bag_of_words(
              path, range, [&](const auto& e) { read.emplace_back(e.document, e.word, e.count, e.source); },
              chunk);
          expect_same_size(counted.declared, expected_size);
          EXPECT_EQ(counted.entries, read.size());
          entries += counted.entries;
          return read;
        });
        EXPECT_EQ(records, whole);
        EXPECT_EQ(entries, expected_size.entries);
      }
    }
  }
}

TEST_F(IoTest, BagOfWordsErrorsAcrossChunksNameTheSameFileAndLine) {
  // Chunks of one line each (1 byte) split the header too; the counts are checked after the last chunk.
  const std::vector<BadFile> cases{
      {"2\n\n3\n", 3, "missing the header's entry count NNZ"},
      {"2\r\n3\r\n\r\nx\r\n", 4, "non-numeric entry count NNZ 'x'"},
      {"2\n3\n2\n1 1 1\n\n2 4 1\n", 6, "word id 4 beyond the 3 the header declares"},
      {"2\n3\n2\n1 1 1\n2 3 1\n1 2 1\n", 0, "the header declares 2 entries (NNZ) but the file holds 3"},
  };
  for (const BadFile& c : cases) {
    const std::string path = write("bad.txt", c.content);
    for (const std::uint64_t chunk : {std::uint64_t{1}, std::uint64_t{4}, internal::kChunkBytes}) {
      EXPECT_TRUE(FailsWith([&] { words_in_chunks(path, chunk); }, path, c.line, c.message))
          << c.content << " in chunks of " << chunk;
    }
  }

  // A bad entry near the end of the sotu corpus, as a file and as shards.
  std::ifstream in(kDataDir + "/sotu/docword.txt", std::ios::binary);
  std::ostringstream docword;
  docword << in.rdbuf();
  std::string content = docword.str();
  const std::uint64_t bad = insert_line(content, 9 * content.size() / 10, "3 6392 1\n");
  const std::string file = write("docword.txt", content);
  const std::string shards = shard_into(file, 3, missing("shards"), schmp::io::ShardFormat::docword);
  const auto [part, part_line] = part_and_line(shards, bad);
  EXPECT_EQ(part, shards + "/part-00002");
  const std::string message = "word id 6392 beyond the 6391 the header declares";
  for (const std::uint64_t chunk : {std::uint64_t{64}, std::uint64_t{1024}, internal::kChunkBytes}) {
    SCOPED_TRACE("chunks of " + std::to_string(chunk));
    EXPECT_TRUE(FailsWith([&] { words_in_chunks(file, chunk); }, file, bad, message));
    EXPECT_TRUE(FailsWith([&] { words_in_chunks(shards, chunk); }, part, part_line, message));
  }
}

using DocumentRecord = std::tuple<std::string, std::vector<std::uint32_t>, std::uint64_t>;

// The documents, the words of the vocabulary afterwards and the number of tokens left out.
struct TextRead {
  std::vector<DocumentRecord> documents;
  std::vector<std::string> words;
  std::uint64_t left_out = 0;
};

TextRead text_in_chunks(const std::string& path, schmp::io::Vocabulary vocabulary, bool grow,
                        std::uint64_t chunk_bytes) {
  TextRead read;
  read.left_out = internal::read_text_documents(
      path, vocabulary, grow, [&](const auto& d) { read.documents.emplace_back(d.name, d.words, d.source); },
      schmp::io::ByteRange{}, chunk_bytes);
  for (std::uint32_t id = 0; id < vocabulary.size(); ++id) read.words.push_back(vocabulary.word(id));
  return read;
}

void expect_same_text(const TextRead& actual, const TextRead& expected) {
  EXPECT_EQ(actual.documents, expected.documents);
  EXPECT_EQ(actual.words, expected.words);
  EXPECT_EQ(actual.left_out, expected.left_out);
}

// Mallet-style documents of up to 40 words from a vocabulary of 3000, with blank lines and CRLF endings.
std::string mallet_text(int documents, unsigned seed) {
  std::mt19937 random(seed);
  std::string content;
  for (int d = 0; d < documents; ++d) {
    const std::string ending = d % 9 == 0 ? "\r\n" : "\n";
    if (d % 13 == 0) content += " " + ending;
    content += "doc" + std::to_string(d) + "\tlabel" + std::to_string(random() % 3);
    for (std::uint32_t t = 0, length = random() % 40; t < length; ++t)
      content += " w" + std::to_string(random() % 3000);
    content += ending;
  }
  return content;
}

TEST_F(IoTest, TextDocumentsAndVocabularyReadInSmallChunksAsInOneGo) {
  const std::string file = write("documents.txt", mallet_text(600, 6));
  const TextRead grown = text_in_chunks(file, {}, true, internal::kChunkBytes);
  ASSERT_EQ(grown.documents.size(), 600u);
  EXPECT_EQ(grown.left_out, 0u);
  const std::string sotu_vocabulary = kDataDir + "/sotu/vocab.txt";
  const schmp::io::Vocabulary vocabulary = schmp::io::read_vocabulary(sotu_vocabulary);
  ASSERT_EQ(vocabulary.size(), 6391u);
  // Half the words kept from a vocabulary of the others: some tokens are left out.
  std::vector<std::string> half;
  for (std::size_t w = 0; w < grown.words.size(); w += 2) half.push_back(grown.words[w]);
  const TextRead kept = text_in_chunks(file, schmp::io::Vocabulary(half), false, internal::kChunkBytes);
  EXPECT_GT(kept.left_out, 0u);

  for (const std::uint64_t chunk : kSmallChunks) {
    SCOPED_TRACE("chunks of " + std::to_string(chunk));
    expect_same_text(text_in_chunks(file, {}, true, chunk), grown);
    expect_same_text(text_in_chunks(file, schmp::io::Vocabulary(half), false, chunk), kept);
    const schmp::io::Vocabulary small = internal::read_vocabulary(sotu_vocabulary, chunk);
    ASSERT_EQ(small.size(), vocabulary.size());
    for (std::uint32_t id = 0; id < vocabulary.size(); ++id) ASSERT_EQ(small.word(id), vocabulary.word(id));
  }

  for (const int parts : {3, 7}) {
    SCOPED_TRACE(std::to_string(parts) + " shards");
    const std::string shards =
        shard_into(file, parts, missing("shards" + std::to_string(parts)), schmp::io::ShardFormat::text);
    const TextRead whole = text_in_chunks(shards, {}, true, internal::kChunkBytes);
    expect_same_text(whole, grown);
    for (const std::uint64_t chunk : kSmallChunks) {
      expect_same_text(text_in_chunks(shards, {}, true, chunk), whole);
      expect_same_text(text_in_chunks(shards, schmp::io::Vocabulary(half), false, chunk), kept);
    }
  }
}

TEST_F(IoTest, TextAndVocabularyErrorsInLaterChunksNameTheSameFileAndLine) {
  std::string content = mallet_text(300, 7);
  const std::uint64_t bad = insert_line(content, 3 * content.size() / 4, "lonely\n");
  const std::string file = write("documents.txt", content);
  const std::string shards = shard_into(file, 3, missing("shards"), schmp::io::ShardFormat::text);
  const auto [part, part_line] = part_and_line(shards, bad);
  const std::string message = "expected 'name label word word ...': no label after the name";
  for (const std::uint64_t chunk : {std::uint64_t{64}, std::uint64_t{1024}, internal::kChunkBytes}) {
    SCOPED_TRACE("chunks of " + std::to_string(chunk));
    EXPECT_TRUE(FailsWith([&] { text_in_chunks(file, {}, true, chunk); }, file, bad, message));
    EXPECT_TRUE(FailsWith([&] { text_in_chunks(shards, {}, true, chunk); }, part, part_line, message));
  }

  // A word repeated in a later part names where it first was; a blank line is reported where it lies.
  fs::create_directories(missing("vocab"));
  write("vocab/part-00000", "a\nb\n");
  write("vocab/part-00001", "c\nd\ne\na\n");
  const std::string blank = write("blank.txt", "apple\npear\n\nfig\n");
  for (const std::uint64_t chunk : {std::uint64_t{1}, std::uint64_t{3}, internal::kChunkBytes}) {
    SCOPED_TRACE("chunks of " + std::to_string(chunk));
    EXPECT_EQ(error_of([&] { internal::read_vocabulary(missing("vocab"), chunk); }),
              missing("vocab") + "/part-00001:4: repeated word 'a' (first on " + missing("vocab") +
                  "/part-00000:1)");
    EXPECT_TRUE(FailsWith([&] { internal::read_vocabulary(blank, chunk); }, blank, 3,
                          "blank line: line i names word i, so every line must hold a word"));
  }
}

}  // namespace
