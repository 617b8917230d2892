// Directories of shards as inputs, and schmp-shard: a file split into part files reads exactly as the
// file, whatever the number of shards and of workers; errors name the part file and its own line; the
// tool never leaves a half-written directory; schmp-lasso gives the same objective from either.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "e2e.hpp"
#include "io/fingerprint.hpp"
#include "local_peers.hpp"
#include "schmp/dataset.hpp"
#include "schmp/io.hpp"
#include "test_files.hpp"

namespace schmp {
namespace {

namespace fs = std::filesystem;
using io::InputError;
using io::SparseRows;
using testing::error_of;

const std::string kSourceDir = SCHMP_SOURCE_DIR;
const std::string kHeartScale = kSourceDir + "/data/heart_scale.svm";
const std::string kDocword = kSourceDir + "/data/sotu/docword.txt";

constexpr int kShardCounts[] = {1, 3, 7};
constexpr int kWorkerCounts[] = {1, 2, 3, 5};

std::string shard(const std::string& input, int parts, const std::string& out) {
  io::ShardOptions options;
  options.input = input;
  options.parts = parts;
  options.output = out;
  io::write_shards(options);
  return out;
}

// Rows as parsed, with their sources: offsets in the parts taken together, which are the file's own.
void expect_same_rows(const SparseRows& actual, const SparseRows& expected) {
  EXPECT_EQ(actual.labels, expected.labels);
  EXPECT_EQ(actual.row_start, expected.row_start);
  EXPECT_EQ(actual.index, expected.index);
  EXPECT_EQ(actual.value, expected.value);
  EXPECT_EQ(actual.source, expected.source);
}

// Every worker's rows from the directory equal its rows from the file.
void expect_same_rows_per_worker(const std::string& file, const std::string& directory) {
  for (const int workers : kWorkerCounts) {
    for (int part = 0; part < workers; ++part) {
      SCOPED_TRACE(std::to_string(part) + " of " + std::to_string(workers) + " workers");
      testing::PlaceOnly place(part, workers);
      expect_same_rows(io::read_rows_part(directory, "", place), io::read_rows_part(file, "", place));
    }
  }
}

class ShardTest : public ::testing::Test {
 protected:
  std::string dir(const std::string& name) const { return scratch_.file(name); }
  std::string write(const std::string& name, const std::string& content) const {
    return scratch_.write(name, content);
  }
  // A directory holding these files, by name.
  std::string directory(const std::string& name,
                        const std::vector<std::pair<std::string, std::string>>& files) {
    fs::create_directories(dir(name));
    for (const auto& [file, content] : files) write(name + "/" + file, content);
    return dir(name);
  }

  testing::ScratchDir scratch_;
};

TEST_F(ShardTest, LibsvmShardsReadAsTheFileForEveryWorkerCount) {
  for (const int shards : kShardCounts) {
    SCOPED_TRACE(std::to_string(shards) + " shards");
    const std::string directory = shard(kHeartScale, shards, dir("heart" + std::to_string(shards)));
    EXPECT_EQ(io::file_size(directory), io::file_size(kHeartScale));
    expect_same_rows_per_worker(kHeartScale, directory);
  }
}

TEST_F(ShardTest, FewLinesInManyShardsLeaveEmptyPartsThatReadAsTheFile) {
  // Three long rows and a short one in seven shards: most parts are empty, and the workers' ranges hold
  // no line start at all or several parts at once.
  std::string content;
  for (int row = 0; row < 3; ++row) {
    content += std::to_string(row) + " ";
    for (int index = 1; index <= 60; ++index)
      content += std::to_string(index) + ":" + std::to_string(row) + " ";
    content += "\n";
  }
  content += "-1 7:0.5";  // no final newline: the tool adds one
  const std::string file = write("few.svm", content);
  for (const int shards : kShardCounts) {
    SCOPED_TRACE(std::to_string(shards) + " shards");
    const std::string directory = shard(file, shards, dir("few" + std::to_string(shards)));
    int empty_parts = 0;
    for (const auto& entry : fs::directory_iterator(directory))
      empty_parts += fs::file_size(entry.path()) == 0;
    if (shards == 7) {
      EXPECT_GE(empty_parts, 3);
    }
    expect_same_rows_per_worker(file, directory);
  }
}

TEST_F(ShardTest, LineNumbersCountFromEachPartAndOnlyOverlappingPartsAreRead) {
  // part-00000 lacks its final newline and part-00001 holds no rows: a range over part-00002 alone
  // reads neither, and a message numbers its rows from that part's first line.
  const std::string shards = directory(
      "shards",
      {{"part-00000", "1 1:1\ngarbage"}, {"part-00001", ""}, {"part-00002", "# comment\n2 2:2\n3 3:3\n"}});
  const std::uint64_t begin = io::file_size(shards + "/part-00000");
  const SparseRows rows = io::read_libsvm(shards, io::ByteRange{begin, io::file_size(shards)});
  EXPECT_EQ(rows.labels, (std::vector<double>{2, 3}));
  // Sources are offsets in the parts taken together.
  EXPECT_EQ(rows.source, (std::vector<std::uint64_t>{begin + 10, begin + 16}));
  for (std::size_t r = 0; r < 2; ++r) {
    EXPECT_EQ(std::string(io::InputError::at(shards, rows.source[r], "here").what()),
              shards + "/part-00002:" + std::to_string(r + 2) + ": here");
  }
  const SparseRows later = io::read_libsvm(shards, io::ByteRange{begin + 12, io::file_size(shards)});
  EXPECT_EQ(later.source, (std::vector<std::uint64_t>{begin + 16}));
}

TEST_F(ShardTest, RatingsShardsReadAsTheFile) {
  std::mt19937 random(5);
  std::string content = "# user item rating\n";
  for (int k = 0; k < 400; ++k) {
    content += std::to_string(random() % 50) + " " + std::to_string(random() % 30) + " " +
               std::to_string(static_cast<int>(random() % 5) + 1) + (k % 7 == 0 ? "\r\n" : "\n");
  }
  const std::string file = write("ratings.txt", content);
  using Seen = std::vector<std::tuple<std::uint32_t, std::uint32_t, double>>;
  const auto read = [](const std::string& path) {
    Seen seen;
    io::read_ratings(path, 0, io::IdBounds{},
                     [&](const io::Rating& r) { seen.emplace_back(r.user, r.item, r.value); });
    return seen;
  };
  const Seen expected = read(file);
  ASSERT_EQ(expected.size(), 400u);
  for (const int shards : kShardCounts) {
    EXPECT_EQ(read(shard(file, shards, dir("ratings" + std::to_string(shards)))), expected)
        << shards << " shards";
  }
}

TEST_F(ShardTest, DocwordShardsKeepTheHeaderInTheFirstPartAndReadAsTheFile) {
  using Seen = std::vector<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>>;
  const auto read = [](const std::string& path, io::CorpusSize& size) {
    Seen seen;
    size = io::read_bag_of_words(
        path, [&](const io::WordCount& w) { seen.emplace_back(w.document, w.word, w.count); });
    return seen;
  };
  io::CorpusSize expected_size;
  const Seen expected = read(kDocword, expected_size);
  for (const int shards : kShardCounts) {
    SCOPED_TRACE(std::to_string(shards) + " shards");
    const std::string directory = shard(kDocword, shards, dir("sotu" + std::to_string(shards)));
    std::ifstream first(directory + "/part-00000");
    std::uint64_t documents = 0, words = 0, entries = 0;
    first >> documents >> words >> entries;
    EXPECT_EQ(documents, expected_size.documents);
    EXPECT_EQ(entries, expected_size.entries);
    io::CorpusSize size;
    EXPECT_EQ(read(directory, size), expected);
    EXPECT_EQ(size.documents, expected_size.documents);
    EXPECT_EQ(size.words, expected_size.words);
    EXPECT_EQ(size.entries, expected_size.entries);
  }
}

TEST_F(ShardTest, TextDocumentsAndVocabularyShardsReadAsTheFile) {
  std::mt19937 random(9);
  std::string documents;
  std::string vocabulary;
  for (int w = 0; w < 40; ++w) vocabulary += "word" + std::to_string(w) + "\n";
  for (int d = 0; d < 60; ++d) {
    documents += "doc" + std::to_string(d) + " label";
    for (std::uint32_t t = 0, length = random() % 20; t < length; ++t)
      documents += " word" + std::to_string(random() % 45);
    documents += "\n";
  }
  const std::string text_file = write("documents.txt", documents);
  const std::string vocabulary_file = write("vocab.txt", vocabulary);
  using Seen = std::vector<std::pair<std::string, std::vector<std::uint32_t>>>;
  const auto read = [](const std::string& text, const std::string& vocab) {
    io::Vocabulary words = io::read_vocabulary(vocab);
    Seen seen;
    const std::uint64_t left_out = io::read_text_documents(
        text, words, false, [&](const io::TextDocument& d) { seen.emplace_back(d.name, d.words); });
    return std::make_pair(seen, left_out);
  };
  const auto expected = read(text_file, vocabulary_file);
  for (const int shards : kShardCounts) {
    SCOPED_TRACE(std::to_string(shards) + " shards");
    const std::string suffix = std::to_string(shards);
    EXPECT_EQ(read(shard(text_file, shards, dir("text" + suffix)),
                   shard(vocabulary_file, shards, dir("vocab" + suffix))),
              expected);
  }
}

TEST_F(ShardTest, MatrixMarketShardsKeepTheHeaderInTheFirstPart) {
  std::string content = "%%MatrixMarket matrix coordinate real general\n% a comment\n%\n4 3 6\n";
  content += "1 1 1.5\n1 3 2\n2 2 -1\n3 1 4\n4 2 0.5\n4 3 7\n";
  const std::string labels = write("labels.txt", "1\n2\n3\n4\n");
  // Also behind a byte-order mark, which the readers pass over: the header is found after it.
  for (const std::string& file :
       {write("matrix.mtx", content), write("bom.mtx", std::string("\xEF\xBB\xBF") + content)})
    for (const int shards : kShardCounts) {
      SCOPED_TRACE(file + ", " + std::to_string(shards) + " shards");
      const std::string directory =
          shard(file, shards, dir(fs::path(file).stem().string() + std::to_string(shards)));
      std::ifstream first(directory + "/part-00000");
      std::string line;
      for (int k = 0; k < 4 && std::getline(first, line);) ++k;
      EXPECT_EQ(line, "4 3 6");
      const io::Coordinates whole = io::read_matrix_market(file);
      const io::Coordinates sharded = io::read_matrix_market(directory);
      EXPECT_EQ(sharded.row, whole.row);
      EXPECT_EQ(sharded.column, whole.column);
      EXPECT_EQ(sharded.value, whole.value);
      for (const int workers : kWorkerCounts) {
        SCOPED_TRACE(std::to_string(workers) + " workers");
        std::vector<io::SparseRows> from_directory(static_cast<std::size_t>(workers));
        std::vector<io::SparseRows> from_file(static_cast<std::size_t>(workers));
        testing::LocalPeers(workers).run([&](Peers& peers) {
          from_directory[static_cast<std::size_t>(peers.index())] =
              io::read_rows_part(directory, labels, peers);
        });
        testing::LocalPeers(workers).run([&](Peers& peers) {
          from_file[static_cast<std::size_t>(peers.index())] = io::read_rows_part(file, labels, peers);
        });
        for (int part = 0; part < workers; ++part)
          expect_same_rows(from_directory[static_cast<std::size_t>(part)],
                           from_file[static_cast<std::size_t>(part)]);
        // The blocks put together are the whole matrix.
        const io::Coordinates whole_entries = io::read_matrix_market(file);
        std::size_t rows = 0, nonzeros = 0;
        for (const io::SparseRows& block : from_file) {
          rows += block.rows();
          nonzeros += block.index.size();
        }
        EXPECT_EQ(rows, whole_entries.rows);
        EXPECT_EQ(nonzeros, whole_entries.row.size());
      }
    }
}

TEST_F(ShardTest, ErrorsNameThePartFileAndItsOwnLine) {
  const std::string libsvm =
      directory("libsvm", {{"part-00000", "1 1:1\n2 2:2\n"}, {"part-00001", "3 3:3\n4 0:1\n"}});
  const std::string expected = libsvm + "/part-00001:2: feature index 0 (indices are 1-based)";
  EXPECT_EQ(error_of([&] { io::read_libsvm(libsvm); }), expected);
  // Whichever worker holds the bad line reports it at the same place.
  for (const int workers : kWorkerCounts) {
    std::string first;
    for (int part = 0; part < workers && first.empty(); ++part) {
      testing::PlaceOnly place(part, workers);
      first = error_of([&] { io::read_rows_part(libsvm, "", place); });
    }
    EXPECT_EQ(first, expected) << workers << " workers";
  }

  const std::string ratings =
      directory("ratings", {{"part-00000", "1 1 5\n"}, {"part-00001", "2 2 4\n\n2 x 3\n"}});
  EXPECT_EQ(error_of([&] { io::read_ratings(ratings, 1, io::IdBounds{}, [](const io::Rating&) {}); }),
            ratings + "/part-00001:3: non-numeric item id 'x'");

  const std::string docword =
      directory("docword", {{"part-00000", "2\n3\n3\n1 1 2\n"}, {"part-00001", "2 3 1\n2 4 1\n"}});
  EXPECT_EQ(error_of([&] { io::read_bag_of_words(docword, [](const io::WordCount&) {}); }),
            docword + "/part-00001:2: word id 4 beyond the 3 the header declares");

  const std::string vocabulary = directory("vocab", {{"part-00000", "a\nb\n"}, {"part-00001", "c\na\n"}});
  EXPECT_EQ(error_of([&] { io::read_vocabulary(vocabulary); }),
            vocabulary + "/part-00001:2: repeated word 'a' (first on " + vocabulary + "/part-00000:1)");

  const std::string matrix =
      directory("matrix", {{"part-00000", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n"},
                           {"part-00001", "\n2 3 1\n"}});
  EXPECT_EQ(error_of([&] { io::read_matrix_market(matrix); }),
            matrix + "/part-00001:2: column 3 outside 1..2");
}

// Errors found after reading (an unexpected label, a duplicate) come from the line each record keeps:
// for a directory that names the part file too, whichever worker finds it.
TEST_F(ShardTest, RecordsKeepTheirPartForErrorsFoundAfterReading) {
  const std::string libsvm =
      directory("libsvm", {{"part-00000", "1 1:1\n2 2:2\n"}, {"part-00001", "3 3:3\n4 1:1\n"}});
  const io::SparseRows rows = io::read_libsvm(libsvm);
  ASSERT_EQ(rows.rows(), 4u);
  EXPECT_EQ(std::string(io::InputError::at(libsvm, rows.source[3], "found later").what()),
            libsvm + "/part-00001:2: found later");
  EXPECT_EQ(io::line_name(libsvm, rows.source[2], rows.source[3]), "line 1");
  EXPECT_EQ(io::line_name(libsvm, rows.source[0], rows.source[3]), libsvm + "/part-00000:1");
  // A single file keeps plain line numbers.
  const std::string file = write("rows.svm", "1 1:1\n2 2:2\n");
  EXPECT_EQ(std::string(io::InputError::at(file, io::read_libsvm(file).source[1], "found later").what()),
            file + ":2: found later");

  const std::string labels =
      directory("labels", {{"part-00000", "1 1:1\n-1 2:1\n"}, {"part-00001", "1 1:2\n3 2:2\n"}});
  testing::expect_clean_failure(testing::run(testing::mpirun(3) + SCHMP_LOGREG_BIN + " --layout all --data " +
                                             labels + " --progress_seconds 0"),
                                labels + "/part-00001:2: label 3 is not binary");

  const std::string ratings =
      directory("ratings", {{"part-00000", "1 1 5\n1 2 4\n"}, {"part-00001", "2 1 3\n1 1 2\n"}});
  testing::expect_clean_failure(
      testing::run(testing::mpirun(3) + SCHMP_MF_BIN + " --data " + ratings + " --progress_seconds 0"),
      ratings + "/part-00001:2: duplicate rating of user 1 for item 1 (first on " + ratings +
          "/part-00000:1)");

  const std::string docword =
      directory("docword", {{"part-00000", "2\n3\n3\n2 1 2\n"}, {"part-00001", "2 3 1\n1 2 1\n"}});
  testing::expect_clean_failure(testing::run(testing::mpirun(3) + SCHMP_LDA_BIN + " --data " + docword +
                                             " --topics 2 --progress_seconds 0"),
                                docword + "/part-00001:2: document 1 after document 2");
}

TEST_F(ShardTest, APartWithoutAFinalNewlineIsRefused) {
  const std::string shards = directory("shards", {{"part-00000", "1 1:1\n"}, {"part-00001", "2 2:2"}});
  EXPECT_EQ(error_of([&] { io::read_libsvm(shards); }),
            shards + "/part-00001: does not end with a newline (a line may not span two part files)");
  // Every worker count: the worker that reads the part's end refuses it.
  for (const int workers : kWorkerCounts) {
    std::string first;
    for (int part = 0; part < workers && first.empty(); ++part) {
      testing::PlaceOnly place(part, workers);
      first = error_of([&] { io::read_rows_part(shards, "", place); });
    }
    EXPECT_NE(first.find("part-00001: does not end with a newline"), std::string::npos)
        << workers << " workers";
  }
}

TEST_F(ShardTest, OnlyRegularPartFilesCountAndTheyGoInNameOrder) {
  const std::string shards = directory("shards", {{"part-00010", "3 3:3\n"},
                                                  {"part-00002", "2 2:2\n"},
                                                  {"README", "not data\n"},
                                                  {".part-00000.crc", "x\n"},
                                                  {"_SUCCESS", ""}});
  fs::create_directories(shards + "/part-00005");
  EXPECT_EQ(io::read_libsvm(shards).labels, (std::vector<double>{2, 3}));
}

TEST_F(ShardTest, APartThatIsNotAFileIsRefused) {
  const std::string linked = directory("linked", {{"part-00000", "1 1:1\n"}, {"part-00002", "2 2:2\n"}});
  fs::create_symlink(linked + "/missing/part", linked + "/part-00001");
  EXPECT_EQ(error_of([&] { io::read_libsvm(linked); }),
            linked + "/part-00001: is a link to nothing: every part-* but a directory must be a file");
  fs::remove(linked + "/part-00001");
  fs::create_symlink("part-00002", linked + "/part-00001");
  EXPECT_EQ(io::read_libsvm(linked).labels, (std::vector<double>{1, 2, 2}));
  const std::string fifo = directory("fifo", {{"part-00000", "1 1:1\n"}});
  ASSERT_EQ(::mkfifo((fifo + "/part-00001").c_str(), 0600), 0);
  EXPECT_EQ(error_of([&] { io::read_libsvm(fifo); }),
            fifo + "/part-00001: is not a regular file: every part-* but a directory must be one");
}

TEST_F(ShardTest, ADirectoryWithoutPartFilesIsRefused) {
  const std::string empty = directory("empty", {});
  EXPECT_EQ(error_of([&] { io::file_size(empty); }),
            empty + ": is a directory without part files (part-*): nothing to read");
  const std::string others = directory("others", {{"data.svm", "1 1:1\n"}, {".part-00000", "1 1:1\n"}});
  EXPECT_EQ(error_of([&] { io::read_rows(others, ""); }),
            others + ": is a directory without part files (part-*): nothing to read");
}

// Hosts that each hold other shards, or another copy of the file, would split different data and skip
// or repeat parts of it: the job is refused, naming the worker whose copy differs and its host. Each worker
// here reads a path of its own, as each host would read its own disk at the one path given.
// What a worker reports seeing of data no larger than the sample (256 KiB): its size, and the checksum
// of all of it.
std::string seen_whole(const std::string& content) {
  io::internal::Fingerprint fingerprint;
  fingerprint.add(content);
  return std::to_string(content.size()) + " bytes (sampled checksum " + fingerprint.checksum() + ")";
}

TEST_F(ShardTest, WorkersThatSeeDifferentDataAreRefused) {
  const std::vector<std::pair<std::string, std::string>> parts = {{"part-00000", "1 1:1\n"},
                                                                  {"part-00001", "2 2:2\n"},
                                                                  {"part-00002", "3 3:3\n"},
                                                                  {"part-00003", "4 4:4\n"}};
  const auto ranges_of = [](const std::vector<std::string>& paths) {
    std::vector<io::ByteRange> ranges(paths.size());
    testing::LocalPeers(static_cast<int>(paths.size())).run([&](Peers& peers) {
      const auto index = static_cast<std::size_t>(peers.index());
      ranges[index] = io::worker_range(paths[index], peers);
    });
    return ranges;
  };
  const std::vector<io::ByteRange> same = ranges_of({directory("a", parts), directory("b", parts)});
  EXPECT_EQ(same[0].begin, 0u);
  EXPECT_EQ(same[0].end, 12u);
  EXPECT_EQ(same[1].begin, 12u);
  EXPECT_EQ(same[1].end, 24u);

  // Which copy is stale is not for the workers to say: every copy is named, with its workers and hosts.
  char host[256] = {};
  ASSERT_EQ(::gethostname(host, sizeof host - 1), 0);
  const std::string on = std::string(" on host ") + host;
  const std::vector<std::string> halves = {directory("first", {parts[0], parts[1]}),
                                           directory("second", {parts[2], parts[3]})};
  EXPECT_EQ(error_of([&] { ranges_of(halves); }),
            halves[0] + ": differs between the workers' hosts: worker 0" + on +
                " sees 2 part files, part-00000 to part-00001, of " + seen_whole("1 1:1\n2 2:2\n") +
                "; worker 1" + on + " sees 2 part files, part-00002 to part-00003, of " +
                seen_whole("3 3:3\n4 4:4\n") + ": every host must see the same files at this path");
  const std::string whole = write("whole.svm", "1 1:1\n2 2:2\n3 3:3\n");
  const std::string stale = write("stale.svm", "1 1:1\n2 2:2\n");
  EXPECT_EQ(error_of([&] {
              ranges_of({whole, stale, whole});
            }),
            whole + ": differs between the workers' hosts: 2 workers, on host " + host + ", see " +
                seen_whole("1 1:1\n2 2:2\n3 3:3\n") + "; worker 1" + on + " sees " +
                seen_whole("1 1:1\n2 2:2\n") + ": every host must see the same files at this path");
  // A copy of the same size that holds other values is told apart by its content.
  const std::string edited = write("edited.svm", "1 1:1\n2 2:2\n3 3:4\n");
  EXPECT_EQ(error_of([&] {
              ranges_of({whole, edited});
            }),
            whole + ": differs between the workers' hosts: worker 0" + on + " sees " +
                seen_whole("1 1:1\n2 2:2\n3 3:3\n") + "; worker 1" + on + " sees " +
                seen_whole("1 1:1\n2 2:2\n3 3:4\n") + ": every host must see the same files at this path");
  // A host that lacks the file, or cannot read it, is named beside those that read it; when none can, the
  // error is the reader's own.
  const std::string missing = dir("missing.svm");
  EXPECT_EQ(error_of([&] {
              ranges_of({whole, missing, whole});
            }),
            whole + ": differs between the workers' hosts: 2 workers, on host " + host + ", see " +
                seen_whole("1 1:1\n2 2:2\n3 3:3\n") + "; worker 1" + on +
                " sees no readable file (cannot open file): every host must see the "
                "same files at this path");
  EXPECT_EQ(error_of([&] { ranges_of({missing, missing}); }), error_of([&] { io::file_size(missing); }));
}

// Shards of the same data cut otherwise read the same (each worker's range is cut from the whole), and
// a copy that no worker can read, spelt otherwise on each, is the reader's own error, not a difference.
TEST_F(ShardTest, WorkersCompareTheDataNotItsSpellingOrItsCuts) {
  const std::string first =
      directory("cut-2-1", {{"part-00000", "1 1:1\n2 2:2\n"}, {"part-00001", "3 3:3\n"}});
  const std::string second =
      directory("cut-1-2", {{"part-00000", "1 1:1\n"}, {"part-00001", "2 2:2\n3 3:3\n"}});
  const std::vector<std::string> paths = {first, second + "/"};
  std::vector<io::ByteRange> ranges(2);
  testing::LocalPeers(2).run([&](Peers& peers) {
    const auto index = static_cast<std::size_t>(peers.index());
    ranges[index] = io::worker_range(paths[index], peers);
  });
  EXPECT_EQ(ranges[0].end, ranges[1].begin);
  EXPECT_EQ(ranges[1].end, 18u);
  const std::string missing = dir("missing.svm");
  const std::string spelt[] = {missing, fs::path(missing).parent_path().string() + "/./missing.svm"};
  const std::string error = error_of([&] {
    testing::LocalPeers(2).run(
        [&](Peers& peers) { io::worker_range(spelt[static_cast<std::size_t>(peers.index())], peers); });
  });
  EXPECT_NE(error.find("missing.svm: cannot open file"), std::string::npos) << error;
  EXPECT_EQ(error.find("differs"), std::string::npos) << error;
  // A bad part on one host is named by its part file.
  const std::string unterminated =
      directory("unterminated", {{"part-00000", "1 1:1\n"}, {"part-00001", "2 2:2"}});
  const std::string whole = directory("terminated", {{"part-00000", "1 1:1\n"}, {"part-00001", "2 2:2\n"}});
  const std::string bad_part = error_of([&] {
    testing::LocalPeers(2).run(
        [&](Peers& peers) { io::worker_range(peers.index() == 0 ? whole : unterminated, peers); });
  });
  EXPECT_NE(bad_part.find(" sees no readable file (part-00001: does not end with a newline"),
            std::string::npos)
      << bad_part;
}

// A file that reads otherwise at a second look is being written: refused as such, not blamed on the
// hosts, which may all be one.
TEST_F(ShardTest, AFileThatChangesWhileReadIsNotBlamedOnTheHosts) {
  std::vector<int> looks(2, 0);
  const std::string error = error_of([&] {
    testing::LocalPeers(2).run([&](Peers& peers) {
      const auto index = static_cast<std::size_t>(peers.index());
      io::internal::check_read_on_every_worker("growing.svm", peers, [&] {
        // Worker 1 looks later than worker 0, and again later still.
        const int look = looks[index]++;
        return io::internal::Seen{index == 0 ? 10u : 20u + static_cast<std::uint64_t>(look), "some bytes"};
      });
    });
  });
  EXPECT_EQ(error,
            "growing.svm: changed while the workers read it: wait until it is complete (a file still "
            "being written reads otherwise from one look to the next)");
}

// Past 1 MiB the content is sampled: 256 blocks of 4 KiB, the first at the start and the last at the
// end. A change in a sampled block is seen; one between the blocks is not (docs/cluster.md says so).
TEST_F(ShardTest, LargeDataIsComparedByASampleOfItsContent) {
  std::string content;
  for (int row = 0; content.size() < 3000000; ++row)
    content += "1 " + std::to_string(row % 97 + 1) + ":0.5\n";
  const auto refused = [&](std::size_t at) {
    std::string changed = content;
    changed[at] = '6';
    const std::string paths[] = {write("large.svm", content), write("changed.svm", changed)};
    try {
      testing::LocalPeers(2).run(
          [&](Peers& peers) { io::worker_range(paths[static_cast<std::size_t>(peers.index())], peers); });
    } catch (const InputError& error) {
      return std::string(error.what()).find("differs between the workers' hosts") != std::string::npos;
    }
    return false;
  };
  const std::size_t step = (content.size() - 4096) / 255;
  EXPECT_TRUE(refused(content.rfind('5', 100)));
  EXPECT_TRUE(refused(content.rfind('5', step * 100 + 100)));
  EXPECT_TRUE(refused(content.rfind('5')));
  EXPECT_FALSE(refused(content.rfind('5', step * 100 - 100)));
}

// A MatrixMarket matrix's labels file is read whole by every worker: a stale copy on one host gave its
// rows other labels, and the model a blend of the two.
TEST_F(ShardTest, WorkersThatSeeDifferentLabelsAreRefused) {
  const std::string matrix =
      write("x.mtx", "%%MatrixMarket matrix coordinate real general\n3 2 3\n1 1 1\n2 2 1\n3 1 -1\n");
  const std::string labels = write("y.txt", "1\n-1\n1\n");
  const std::string stale = write("stale-y.txt", "1\n1\n1\n");
  const std::vector<std::string> seen = {labels, labels, stale};
  char host[256] = {};
  ASSERT_EQ(::gethostname(host, sizeof host - 1), 0);
  const std::string error = error_of([&] {
    testing::LocalPeers(3).run([&](Peers& peers) {
      io::read_rows_part(matrix, seen[static_cast<std::size_t>(peers.index())], peers);
    });
  });
  // The two copies have as many labels: what tells them apart is their checksums.
  const std::string most = labels + ": differs between the workers' hosts: 2 workers, on host " + host +
                           ", see 3 labels of checksum ";
  const std::string odd = "; worker 2 on host " + std::string(host) + " sees 3 labels of checksum ";
  const std::string end = ": every host must see the same files at this path";
  ASSERT_EQ(error.rfind(most, 0), 0u) << error;
  const std::size_t odd_at = error.find(odd);
  ASSERT_NE(odd_at, std::string::npos) << error;
  EXPECT_EQ(error.substr(odd_at + odd.size() + 8), end) << error;
  EXPECT_NE(error.substr(most.size(), 8), error.substr(odd_at + odd.size(), 8)) << error;
}

// ---------------------------------------------------------------------------------------------------
// schmp-shard

TEST_F(ShardTest, ToolBalancesParts) {
  const std::vector<std::string> parts = [&] {
    io::ShardOptions options;
    options.input = kHeartScale;
    options.parts = 3;
    options.output = dir("heart") + "/";
    return io::write_shards(options);
  }();
  ASSERT_EQ(parts.size(), 3u);
  const double share = static_cast<double>(io::file_size(kHeartScale)) / 3;
  for (const std::string& part : parts)
    EXPECT_NEAR(static_cast<double>(fs::file_size(part)), share, 200) << part;
  EXPECT_EQ(fs::path(parts[2]).filename(), "part-00002");
}

TEST_F(ShardTest, ToolKeepsTheHeaderLinesAskedFor) {
  const std::string file = write("table.txt", "name value\nunit count\n1\n2\n3\n4\n");
  io::ShardOptions options;
  options.input = file;
  options.parts = 4;
  options.output = dir("table");
  options.header_lines = 2;
  io::write_shards(options);
  std::ifstream first(options.output + "/part-00000");
  std::string line;
  std::getline(first, line);
  std::getline(first, line);
  EXPECT_EQ(line, "unit count");
  EXPECT_EQ(io::parse_shard_format("docword"), io::ShardFormat::docword);
  EXPECT_THROW(io::parse_shard_format("csv"), std::invalid_argument);
}

TEST_F(ShardTest, ToolFailureLeavesNoDirectory) {
  // The input is itself a directory whose second part lacks its final newline: the tool fails while
  // copying, after it has written the first part.
  const std::string input = directory("input", {{"part-00000", "1 1:1\n2 2:2\n"}, {"part-00001", "3 3:3"}});
  io::ShardOptions options;
  options.input = input;
  options.parts = 2;
  options.output = dir("out");
  EXPECT_THROW(io::write_shards(options), InputError);
  EXPECT_FALSE(fs::exists(options.output));
  for (const auto& entry : fs::directory_iterator(dir(""))) {
    EXPECT_EQ(entry.path().filename().string().find(".out.shard"), std::string::npos) << entry.path();
  }
  options.input = dir("missing.svm");
  EXPECT_THROW(io::write_shards(options), InputError);
  EXPECT_FALSE(fs::exists(options.output));
}

// A stop asked for midway (the tool asks on SIGINT and SIGTERM) leaves neither the output nor the
// hidden directory the parts were being written into; asked for at no point, the split completes.
TEST_F(ShardTest, StopMidwayLeavesNoDirectory) {
  std::string lines;
  while (lines.size() < (std::size_t{5} << 20)) lines += "1 1:1 2:0.5 3:0.25\n";
  io::ShardOptions options;
  options.input = write("big.svm", lines);
  options.parts = 2;
  options.output = dir("out");
  int asked = 0;
  options.stop_requested = [&] { return ++asked == 3; };
  EXPECT_THROW(io::write_shards(options), std::runtime_error);
  EXPECT_EQ(asked, 3);
  EXPECT_FALSE(fs::exists(options.output));
  for (const auto& entry : fs::directory_iterator(dir(""))) {
    EXPECT_EQ(entry.path().filename().string().find(".out.shard"), std::string::npos) << entry.path();
  }
  options.stop_requested = [] { return false; };
  EXPECT_EQ(io::write_shards(options).size(), 2u);
  EXPECT_EQ(io::file_size(options.output), lines.size());
}

TEST_F(ShardTest, ToolRefusesANonEmptyDirectoryUnlessForced) {
  const std::string out = directory("out", {{"keep.txt", "mine\n"}});
  io::ShardOptions options;
  options.input = kHeartScale;
  options.parts = 2;
  options.output = out;
  try {
    io::write_shards(options);
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& error) {
    EXPECT_EQ(std::string(error.what()), out + ": exists and is not empty (--force replaces it)");
  }
  EXPECT_TRUE(fs::exists(out + "/keep.txt"));
  options.force = true;
  io::write_shards(options);
  EXPECT_FALSE(fs::exists(out + "/keep.txt"));
  expect_same_rows(io::read_libsvm(out), io::read_libsvm(kHeartScale));
  // An empty directory is taken as it is; a file is never replaced.
  options.force = false;
  options.output = directory("empty", {});
  io::write_shards(options);
  EXPECT_TRUE(fs::exists(options.output + "/part-00001"));
  options.output = write("file", "x\n");
  options.force = true;
  EXPECT_THROW(io::write_shards(options), std::runtime_error);
  EXPECT_EQ(testing::read_text(options.output), "x\n");
}

TEST_F(ShardTest, ToolNeverReplacesADirectoryHoldingItsInput) {
  const std::string out =
      directory("data", {{"big.svm", testing::read_text(kHeartScale)}, {"other.txt", "x\n"}});
  io::ShardOptions options;
  options.input = out + "/big.svm";
  options.parts = 2;
  options.output = out;
  options.force = true;
  try {
    io::write_shards(options);
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& error) {
    EXPECT_EQ(std::string(error.what()),
              out + ": holds the input " + options.input +
                  ", which replacing it would delete: --out must name another directory");
  }
  EXPECT_EQ(testing::read_text(options.input), testing::read_text(kHeartScale));
  EXPECT_TRUE(fs::exists(out + "/other.txt"));
  // A directory of shards split again into itself is read whole first: that stays allowed.
  const std::string shards = shard(kHeartScale, 3, dir("shards"));
  options.input = shards;
  options.output = shards;
  io::write_shards(options);
  EXPECT_FALSE(fs::exists(shards + "/part-00002"));
  expect_same_rows(io::read_libsvm(shards), io::read_libsvm(kHeartScale));
}

TEST_F(ShardTest, ToolRefusesALinkAsOutputAndAbsurdPartCounts) {
  io::ShardOptions options;
  options.input = kHeartScale;
  options.parts = 2;
  options.output = dir("link");
  fs::create_directory_symlink(directory("target", {}), options.output);
  try {
    io::write_shards(options);
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& error) {
    EXPECT_EQ(std::string(error.what()),
              options.output + ": is a symbolic link: --out must name the directory itself");
  }
  EXPECT_TRUE(fs::is_empty(dir("target")));
  options.output = dir("many");
  options.parts = 2000000000;
  EXPECT_THROW(io::write_shards(options), std::invalid_argument);
  EXPECT_FALSE(fs::exists(options.output));
}

TEST_F(ShardTest, ToolBinaryFailsWithOneLine) {
  const testing::Output out = testing::run(std::string(SCHMP_SHARD_BIN) + " --input " + dir("missing.svm") +
                                           " --parts 2 --out " + dir("out"));
  EXPECT_EQ(out.status, 1);
  EXPECT_EQ(out.text, "schmp-shard: error: " + dir("missing.svm") + ": cannot open file\n");
  // Mistakes on the command line are the tool's one line too, not gflags' own report.
  const testing::Output typed = testing::run(std::string(SCHMP_SHARD_BIN) + " --input " + kDocword +
                                             " --parts three --out " + dir("out"));
  EXPECT_EQ(typed.status, 1);
  EXPECT_EQ(typed.text, "schmp-shard: error: --parts=three: expected a whole number that fits 32 bits\n");
  const testing::Output misspelt =
      testing::run(std::string(SCHMP_SHARD_BIN) + " --input " + kDocword + " --part 3 --out " + dir("out"));
  EXPECT_EQ(misspelt.status, 1);
  EXPECT_EQ(misspelt.text, "schmp-shard: error: unknown flag --part: did you mean --parts?\n");
  const testing::Output made =
      testing::run(std::string(SCHMP_SHARD_BIN) + " --input " + kDocword + " --parts 3 --out " + dir("sotu"));
  EXPECT_EQ(made.status, 0) << made.text;
  EXPECT_TRUE(fs::exists(dir("sotu") + "/part-00002"));
  // The directory it runs in cannot be renamed into place, even empty: refused before any work.
  const std::string empty = directory("here", {});
  for (const std::string& out : {std::string("."), std::string(".."), empty}) {
    const testing::Output here = testing::run("cd " + empty + " && " + SCHMP_SHARD_BIN + " --input " +
                                              kHeartScale + " --parts 2 --out " + out);
    EXPECT_EQ(here.status, 1);
    EXPECT_EQ(here.text,
              "schmp-shard: error: " + out +
                  ": is the current directory or holds it: --out must name a directory beside it\n");
  }
  EXPECT_TRUE(fs::is_empty(empty));
  // Nor can a mount point (/proc is one on every Linux): refused before the parts are written beside it.
  const testing::Output mount = testing::run(std::string(SCHMP_SHARD_BIN) + " --input " + kHeartScale +
                                             " --parts 2 --out /proc --force");
  EXPECT_EQ(mount.status, 1);
  EXPECT_EQ(mount.text,
            "schmp-shard: error: /proc: is a mount point, which cannot be replaced: --out must "
            "name a directory in it\n");
}

// ---------------------------------------------------------------------------------------------------
// End to end

TEST_F(ShardTest, LassoReadsADirectoryAsTheFileItWasSplitFrom) {
  const std::string directory = shard(kSourceDir + "/data/diabetes.svm", 4, dir("diabetes"));
  const std::string flags = " --lambda_ratio 0.01 --tol 1e-8 --progress_seconds 0";
  const testing::Output from_file =
      testing::run(testing::mpirun(3) + SCHMP_LASSO_BIN + " --layout all --data " + kSourceDir +
                   "/data/diabetes.svm" + flags);
  const testing::Output from_directory =
      testing::run(testing::mpirun(3) + SCHMP_LASSO_BIN + " --layout all --data " + directory + "/" + flags);
  ASSERT_EQ(from_file.status, 0) << from_file.text;
  ASSERT_EQ(from_directory.status, 0) << from_directory.text;
  ASSERT_FALSE(std::isnan(testing::objective_of(from_file))) << from_file.text;
  // The same rows on every worker: the same run, to the last bit.
  EXPECT_EQ(testing::objective_of(from_directory), testing::objective_of(from_file));

  // A bad row in a shard stops the job with one line naming the part file and its line.
  write("diabetes/part-00002", "1 0:1\n");
  const testing::Output bad =
      testing::run(testing::mpirun(3) + SCHMP_LASSO_BIN + " --layout all --data " + directory + flags);
  testing::expect_clean_failure(bad, directory + "/part-00002:1: feature index 0 (indices are 1-based)");
}

// Two workers each meet a bad line: the one reported is the earlier in the data, though its line number
// within its part file is the larger.
TEST_F(ShardTest, TheEarliestErrorInTheDataIsReportedAcrossParts) {
  std::string first, second;
  for (int line = 1; line <= 1000; ++line) {
    first += line == 900 ? "1 1:x\n" : "1 1:1\n";
    second += line == 2 ? "1 1:y\n" : "1 1:1\n";
  }
  // Parts of equal size: of 4 ranks (the coordinator, a scheduler, 2 workers) worker 0 reads the first,
  // worker 1 the second.
  const std::string shards = directory("bad", {{"part-00000", first}, {"part-00001", second}});
  const testing::Output out = testing::run(testing::mpirun(4) + SCHMP_LASSO_BIN + " --layout all --data " +
                                           shards + "/ --progress_seconds 0");
  testing::expect_clean_failure(out, shards + "/part-00000:900: ");
  EXPECT_EQ(out.text.find("part-00001"), std::string::npos) << out.text;
}

}  // namespace
}  // namespace schmp
