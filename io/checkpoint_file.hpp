// Private to the framework: the checkpoint file. A checkpoint holds what a run needs to go on where it
// stopped, with any number of ranks: the framework's own state (round, clock, time split, the
// schedulers' weights, the trace so far) and the program's model, serialised by the program's typed
// messages in a form that does not depend on the rank count.
//
// On disk: the magic "SCHMPCKP", a format version (u32), the number of workers' shares (u64) and the
// state's length (u64); the state (the serialised CheckpointState, its shares left out: an empty list);
// each share as its length (u64) and its bytes; and a 64-bit checksum of every byte before it. The
// shares come last and one by one so that rank 0 can write them as they arrive and read them back one
// at a time: together they can be the largest thing a run holds (LDA's: every token's topic). Written to
// a temporary name, flushed to disk and renamed, so that a checkpoint is never seen half-written.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "schmp/message.hpp"

namespace schmp::io {

// What a checkpoint knows of an input file, to refuse resuming on other data.
struct InputFingerprint {
  std::string path;
  std::uint64_t size = 0;
  std::uint64_t hash = 0;  // of the whole content

  template <class V>
  void visit(V& v) {
    v(path, size, hash);
  }
};

struct CheckpointState {
  std::string
      program;  // its type, "schmp::lasso::Lasso": a checkpoint resumes only the program that wrote it
  std::vector<InputFingerprint> inputs;
  std::uint64_t num_params = 0;  // dynamic programs: the job's parameter count
  std::uint64_t round = 0;
  double seconds = 0;
  std::vector<double> time_split;      // scheduler, compute, communication, idle, scheduler busy: seconds
  std::vector<double> changes;         // dynamic programs: the last change of every parameter
  std::vector<std::uint32_t> retired;  // dynamic programs: the parameters retired for good
  std::string trace_header;            // the trace so far: its header line and its rows
  std::string trace_rows;
  Bytes coordinator;           // the program's coordinator state (P::Saved or P::Progress)
  std::vector<Bytes> workers;  // rotation programs: every worker's share (P::Saved), in worker order

  template <class V>
  void visit(V& v) {
    v(program, inputs, num_params, round, seconds, time_split, changes, retired, trace_header, trace_rows,
      coordinator, workers);
  }
};

// A 64-bit hash of bytes: fast (eight bytes per step) and well mixed; not cryptographic.
std::uint64_t content_hash(std::span<const std::byte> bytes, std::uint64_t seed = 0);

// The size and content hash of a file; InputError (line 0) when it cannot be read.
InputFingerprint fingerprint(const std::string& path);

// Writes `state` (whose own list of shares must be empty) and then `shares` workers' shares, share(w) giving
// the w-th in turn, each written before the next is asked for: the caller need not hold them all. Atomic
// (temporary file, fsync, rename); std::runtime_error naming the path on failure. A write that fails
// part way stops asking for shares.
void write_checkpoint(const std::string& path, const CheckpointState& state, std::uint64_t shares,
                      const std::function<Bytes(std::uint64_t)>& share);
// The same with the shares `state` holds.
void write_checkpoint(const std::string& path, const CheckpointState& state);
// The checkpoint's bytes, written to `out` as the first form writes them to its file; a stream that
// fails stops the asking for shares.
void write_checkpoint(std::ostream& out, const CheckpointState& state, std::uint64_t shares,
                      const std::function<Bytes(std::uint64_t)>& share);

// A checkpoint read in two passes, so that its workers' shares need not be in memory together. The
// constructor reads the file through once to check its frame and checksum, then decodes the state and
// finds where each share lies; next_share() reads them in turn. The second pass is hashed too: a file
// that changed between the passes is refused at the last share. A file that is not a checkpoint, is
// truncated, fails its checksum or does not decode raises InputError naming it and what is wrong.
class CheckpointReader {
 public:
  explicit CheckpointReader(const std::string& path);
  ~CheckpointReader();
  const CheckpointState& state() const { return state_; }  // its workers' shares empty
  CheckpointState take_state() { return std::move(state_); }
  std::uint64_t shares() const { return shares_.size(); }
  Bytes next_share();  // in worker order

 private:
  struct SecondPass;  // the file, and the hash of what has been read of it again
  // The file changed between the passes: their hashes, or a share's length, differ.
  [[noreturn]] void refuse_changed() const;
  std::string path_;
  std::unique_ptr<SecondPass> pass_;
  CheckpointState state_;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> shares_;  // each one's offset and length
  std::size_t next_ = 0;
  std::uint64_t checksum_ = 0;
};

// Reads a whole checkpoint, shares included, as CheckpointReader checks it.
CheckpointState read_checkpoint(const std::string& path);

// The checksum that ends a checkpoint whose bytes before it are `bytes`.
std::uint64_t checkpoint_checksum(std::span<const std::byte> bytes);

}  // namespace schmp::io
