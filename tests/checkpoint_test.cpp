// The checkpoint file: what is written reads back the same, and every damaged file (cut short at any
// length, any byte changed, another format version) is refused with an InputError naming it.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <vector>

#include "../io/checkpoint_file.hpp"
#include "../runtime/checkpoints.hpp"
#include "schmp/io.hpp"
#include "test_files.hpp"

namespace schmp::io {
namespace {

CheckpointState example() {
  CheckpointState state;
  state.program = "schmp-test";
  state.inputs = {{"data.svm", 1234, 0xDEADBEEFull}, {"labels.txt", 0, 7}};
  state.num_params = 3;
  state.round = 42;
  state.seconds = 1.5;
  state.time_split = {0.1, 0.2, 0.3, 0.4, 0.05};
  state.changes = {1, 0.5, 0};
  state.retired = {2};
  state.trace_header = "round,seconds,objective\n";
  state.trace_rows = "0,0,1\n42,1.5,0.25\n";
  state.coordinator = {std::byte{1}, std::byte{2}, std::byte{3}};
  state.workers = {{std::byte{4}}, {}, {std::byte{5}, std::byte{6}}};
  return state;
}

Bytes file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto* first = reinterpret_cast<const std::byte*>(text.data());
  return Bytes(first, first + text.size());
}

// The message of reading `bytes` as a checkpoint file, which must fail with an InputError naming it.
std::string refusal(std::span<const std::byte> bytes) {
  testing::ScratchDir scratch;
  const std::string path = scratch.file("ck");
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  try {
    read_checkpoint(path);
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), path);
    return e.what();
  }
  ADD_FAILURE() << "a damaged checkpoint of " << bytes.size() << " bytes was accepted";
  return "";
}

// `bytes` with a changed header field (u64 at `at`) and the checksum made to match again: damage the
// checksum cannot see.
Bytes with_field(Bytes bytes, std::size_t at, std::uint64_t value) {
  std::memcpy(bytes.data() + at, &value, sizeof value);
  const std::size_t body = bytes.size() - sizeof(std::uint64_t);
  const std::uint64_t checksum = checkpoint_checksum(std::span(bytes).first(body));
  std::memcpy(bytes.data() + body, &checksum, sizeof checksum);
  return bytes;
}

TEST(CheckpointFile, ReadsBackWhatWasWritten) {
  testing::ScratchDir scratch;
  const std::string path = scratch.file("run.checkpoint");
  write_checkpoint(path, example());
  const CheckpointState read = read_checkpoint(path);
  EXPECT_EQ(serialize(read), serialize(example()));
  EXPECT_EQ(read.trace_rows, example().trace_rows);
  // Each field by name too, so that one left out of the serialised form on both sides is caught.
  EXPECT_EQ(read.changes, example().changes);
  EXPECT_EQ(read.retired, example().retired);
  EXPECT_EQ(read.workers.size(), 3u);
  // Written under a temporary name and renamed: nothing else is left beside it.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(scratch.file("")), {}), 1);
}

TEST(CheckpointFile, RefusesEveryTruncation) {
  testing::ScratchDir scratch;
  const std::string path = scratch.file("run.checkpoint");
  write_checkpoint(path, example());
  const Bytes bytes = file_bytes(path);
  for (std::size_t length = 0; length < bytes.size(); ++length) {
    const std::string message = refusal(std::span(bytes).first(length));
    EXPECT_TRUE(message.find("truncated") != std::string::npos ||
                message.find("not a schmp checkpoint") != std::string::npos)
        << length << ": " << message;
  }
  Bytes longer = bytes;
  longer.push_back(std::byte{0});
  EXPECT_NE(refusal(longer).find("corrupt checkpoint"), std::string::npos);
}

// Past the checksum, the frame is still checked: a header that promises other shares, or a state that
// runs past them, is refused rather than trusted.
TEST(CheckpointFile, RefusesFramesThatDoNotAddUp) {
  testing::ScratchDir scratch;
  const std::string path = scratch.file("run.checkpoint");
  write_checkpoint(path, example());
  const Bytes bytes = file_bytes(path);
  constexpr std::size_t kShares = 12;  // after the magic and the version
  constexpr std::size_t kStateLength = 20;
  EXPECT_NE(refusal(with_field(bytes, kShares, 4)).find("4 shares cannot fit in it"), std::string::npos);
  EXPECT_NE(refusal(with_field(bytes, kShares, 2)).find("bytes after the last share"), std::string::npos);
  EXPECT_NE(refusal(with_field(bytes, kStateLength, bytes.size())).find("the state runs past the end"),
            std::string::npos);
  EXPECT_NE(refusal(with_field(bytes, kStateLength, 7)).find("corrupt checkpoint"), std::string::npos);
}

// Shares handed over one at a time make the same file as a whole state, and read back one at a time.
TEST(CheckpointFile, SharesAreWrittenAndReadOneAtATime) {
  testing::ScratchDir scratch;
  const CheckpointState whole = example();
  write_checkpoint(scratch.file("whole"), whole);
  CheckpointState state = whole;
  state.workers.clear();
  std::vector<std::uint64_t> asked;
  write_checkpoint(scratch.file("streamed"), state, whole.workers.size(), [&](std::uint64_t w) {
    asked.push_back(w);
    return whole.workers[w];
  });
  EXPECT_EQ(asked, (std::vector<std::uint64_t>{0, 1, 2}));
  EXPECT_EQ(file_bytes(scratch.file("streamed")), file_bytes(scratch.file("whole")));

  CheckpointReader reader(scratch.file("streamed"));
  EXPECT_TRUE(reader.state().workers.empty());
  EXPECT_EQ(serialize(reader.state()), serialize(state));
  ASSERT_EQ(reader.shares(), 3u);
  for (std::uint64_t w = 0; w < 3; ++w) EXPECT_EQ(reader.next_share(), whole.workers[w]) << w;
  EXPECT_THROW(write_checkpoint(scratch.file("bad"), whole, 1, [&](std::uint64_t) { return Bytes{}; }),
               std::invalid_argument);
}

TEST(CheckpointFile, RefusesEveryChangedByte) {
  testing::ScratchDir scratch;
  const std::string path = scratch.file("run.checkpoint");
  write_checkpoint(path, example());
  const Bytes bytes = file_bytes(path);
  for (std::size_t at = 0; at < bytes.size(); ++at) {
    Bytes damaged = bytes;
    damaged[at] ^= std::byte{0x10};
    const std::string message = refusal(damaged);
    EXPECT_FALSE(message.empty()) << at;
  }
  // Past the header, a changed byte is caught by the checksum.
  Bytes damaged = bytes;
  damaged[bytes.size() / 2] ^= std::byte{1};
  EXPECT_NE(refusal(damaged).find("corrupt checkpoint: its checksum does not match"), std::string::npos);
  Bytes version = bytes;
  version[8] = std::byte{9};
  EXPECT_NE(refusal(version).find("checkpoint format 9"), std::string::npos);
}

// Shares larger than the 4 MiB chunks the checksum is taken in, cut across them anywhere, read back
// whole; a file changed between the reader's two passes is refused at its last share.
TEST(CheckpointFile, LargeSharesAndAFileChangedWhileRead) {
  testing::ScratchDir scratch;
  CheckpointState state = example();
  state.workers = {Bytes(5u << 20, std::byte{1}), Bytes(3, std::byte{2}), Bytes(9u << 20, std::byte{3})};
  for (std::size_t k = 0; k < state.workers[2].size(); k += 4099) state.workers[2][k] = std::byte(k % 251);
  const std::string path = scratch.file("large");
  write_checkpoint(path, state);
  EXPECT_EQ(read_checkpoint(path).workers, state.workers);

  CheckpointReader reader(path);
  ASSERT_EQ(reader.shares(), 3u);
  EXPECT_EQ(reader.next_share(), state.workers[0]);
  {
    std::fstream in_place(path, std::ios::in | std::ios::out | std::ios::binary);
    const auto middle = static_cast<std::streamoff>(std::filesystem::file_size(path) / 2);  // in share 2
    in_place.seekg(middle);
    const char byte = static_cast<char>(in_place.get() ^ 1);
    in_place.seekp(middle);
    in_place.put(byte);
  }
  EXPECT_EQ(reader.next_share(), state.workers[1]);
  try {
    reader.next_share();
    FAIL() << "a checkpoint changed between the passes was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("changed while it was read"), std::string::npos) << e.what();
  }
}

// A checkpoint that cannot be written is a warning, but every share is still taken (the workers have
// sent them); what taking a share throws is not a checkpoint's failure and ends the run.
TEST(Checkpoints, TakeEveryShareEvenWhenTheFileCannotBeWritten) {
  testing::ScratchDir scratch;
  const std::string directory = scratch.file("checkpoints");
  std::filesystem::create_directories(directory);
  RunOptions options;
  options.checkpoint = directory + "/run.checkpoint";
  detail::Checkpoints checkpoints(options, "schmp-test", {});
  std::vector<std::uint64_t> asked;
  auto share = [&](std::uint64_t w) {
    asked.push_back(w);
    return Bytes(3, std::byte{7});
  };
  std::filesystem::remove_all(directory);
  checkpoints.write(CheckpointState{}, 1.0, 3, share);
  EXPECT_EQ(asked, (std::vector<std::uint64_t>{0, 1, 2}));

  std::filesystem::create_directories(directory);
  auto failing = [&](std::uint64_t w) {
    if (w == 1) throw std::runtime_error("a worker is gone");
    return Bytes{};
  };
  EXPECT_THROW(checkpoints.write(CheckpointState{}, 2.0, 3, failing), std::runtime_error);
  EXPECT_TRUE(std::filesystem::is_empty(directory));
  asked.clear();
  checkpoints.write(CheckpointState{}, 3.0, 3, share);
  EXPECT_EQ(asked, (std::vector<std::uint64_t>{0, 1, 2}));
  EXPECT_EQ(read_checkpoint(options.checkpoint).workers, std::vector<Bytes>(3, Bytes(3, std::byte{7})));
  // Shares given both in the state and apart are a caller's mistake, not a warning.
  CheckpointState with_shares;
  with_shares.workers = {Bytes(1)};
  EXPECT_THROW(checkpoints.write(with_shares, 4.0, 1, share), std::invalid_argument);
}

TEST(CheckpointFile, RefusesFilesThatAreNotCheckpoints) {
  testing::ScratchDir scratch;
  EXPECT_THROW(read_checkpoint(scratch.file("missing")), InputError);
  const std::string text = scratch.write("text", "round,seconds,objective\n0,0,1\n");
  try {
    read_checkpoint(text);
    FAIL() << "a text file was read as a checkpoint";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), text + ": not a schmp checkpoint");
  }
}

TEST(CheckpointFile, FingerprintFollowsTheContent) {
  testing::ScratchDir scratch;
  const std::string a = scratch.write("a", "1 1:2\n-1 3:4\n");
  const std::string b = scratch.write("b", "1 1:2\n-1 3:5\n");
  const std::string a_again = scratch.write("a_again", "1 1:2\n-1 3:4\n");
  EXPECT_EQ(fingerprint(a).size, fingerprint(b).size);
  EXPECT_NE(fingerprint(a).hash, fingerprint(b).hash);
  EXPECT_EQ(fingerprint(a).hash, fingerprint(a_again).hash);
  // Content longer than the hashing chunk counts whole: a change at the very end shows.
  std::string big(5u << 20, 'x');
  const std::string big_a = scratch.write("big_a", big);
  big.back() = 'y';
  EXPECT_NE(fingerprint(big_a).hash, fingerprint(scratch.write("big_b", big)).hash);
}

}  // namespace
}  // namespace schmp::io
