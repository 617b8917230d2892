// Rank 0's side of checkpoint and resume (--checkpoint, --checkpoint_every, --resume): when a
// checkpoint is due, and writing it; reading the one to resume from and refusing it unless it comes
// from the same program and the same input files. The file format is io/checkpoint_file.hpp; what goes
// in it is filled by the coordinator loops.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "../io/checkpoint_file.hpp"
#include "schmp/internal/options.hpp"
#include "trace.hpp"

namespace schmp::detail {

class Checkpoints {
 public:
  // Fingerprints the input files when the run checkpoints or resumes (only then: it reads them whole),
  // and refuses a --checkpoint path it cannot write before the run starts.
  Checkpoints(const RunOptions& options, std::string program, const std::vector<std::string>& inputs);

  bool enabled() const { return !path_.empty(); }
  // At an evaluation `seconds` into this process's run: whether a checkpoint is due.
  bool due(double seconds) const { return enabled() && seconds - last_ >= every_; }
  // The framework's part of a checkpoint: this program and its inputs, where the run stands (`seconds`
  // of solving in all, earlier runs' included) and its trace. The loops add the program's state.
  io::CheckpointState state_at(std::uint64_t round, double seconds, const TimeSplit& time,
                               const TraceWriter& trace) const;
  // Writes the file and restarts the interval at `seconds` (this process's). A checkpoint that cannot
  // be written is a warning, not the end of the run: the model is still to be written.
  void write(const io::CheckpointState& state, double seconds);
  // The same with `shares` workers' shares after the state, share(w) giving each in turn (rotation
  // programs: rank 0 receives them as it writes). share() is called for every share even when the
  // file cannot be written, since they are on their way; what it throws ends the run.
  void write(const io::CheckpointState& state, double seconds, std::uint64_t shares,
             const std::function<Bytes(std::uint64_t)>& share);

  // The checkpoint named by --resume, verified to be this program's, on these inputs; its workers'
  // shares are still in the file.
  std::unique_ptr<io::CheckpointReader> load() const;

 private:
  std::string path_;
  double every_;
  double last_ = 0;
  std::string resume_;
  std::string program_;
  std::vector<io::InputFingerprint> inputs_;
};

// The time split as a checkpoint stores it.
TimeSplit time_split_from(const std::vector<double>& values);

}  // namespace schmp::detail
