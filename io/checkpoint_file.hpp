// Private to the framework: the checkpoint file. A checkpoint holds what a run needs to go on where it
// stopped, with any number of ranks: the framework's own state (round, clock, time split, the
// schedulers' weights, the trace so far) and the program's model, serialised by the program's typed
// messages in a form that does not depend on the rank count.
//
// On disk: the magic "SCHMPCKP", a format version (u32), the payload's length (u64), the payload (the
// serialised CheckpointState), and a 64-bit checksum of the payload. Written to a temporary name,
// flushed to disk and renamed, so that a checkpoint is never seen half-written.
#pragma once

#include <cstdint>
#include <span>
#include <string>
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
  std::string program;  // "schmp-lasso": a checkpoint resumes only the program that wrote it
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

// The bytes of a checkpoint file around a payload (the serialised CheckpointState): header and checksum.
Bytes frame_checkpoint(std::span<const std::byte> payload);

// Writes atomically (temporary file, fsync, rename); std::runtime_error naming the path on failure.
void write_checkpoint(const std::string& path, const CheckpointState& state);

// Reads and verifies a checkpoint: a file that is not one, is truncated, fails its checksum or does not
// decode raises InputError naming the file and what is wrong.
CheckpointState read_checkpoint(const std::string& path);

// The same, from bytes already in memory (what read_checkpoint does after reading the file).
CheckpointState decode_checkpoint(const std::string& path, std::span<const std::byte> file);

}  // namespace schmp::io
