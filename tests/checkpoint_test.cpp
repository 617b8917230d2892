// The checkpoint file: what is written reads back the same, and every damaged file (cut short at any
// length, any byte changed, another format version) is refused with an InputError naming it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "../io/checkpoint_file.hpp"
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

// The message of decoding `bytes` as a checkpoint, which must fail with an InputError naming "ck".
std::string refusal(std::span<const std::byte> bytes) {
  try {
    decode_checkpoint("ck", bytes);
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "ck");
    return e.what();
  }
  ADD_FAILURE() << "a damaged checkpoint of " << bytes.size() << " bytes was accepted";
  return "";
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
  EXPECT_NE(refusal(longer).find("bytes after its end"), std::string::npos);
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
