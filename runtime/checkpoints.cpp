#include "checkpoints.hpp"

#include <utility>

#include "schmp/io.hpp"

namespace schmp::detail {

Checkpoints::Checkpoints(const RunOptions& options, std::string program,
                         const std::vector<std::string>& inputs)
    : path_(options.checkpoint),
      every_(options.checkpoint_every),
      resume_(options.resume),
      program_(std::move(program)) {
  if (!(every_ >= 0)) throw std::runtime_error("--checkpoint_every must be 0 or more");
  if (path_.empty() && resume_.empty()) return;
  for (const std::string& input : inputs) {
    if (!input.empty()) inputs_.push_back(io::fingerprint(input));
  }
}

void Checkpoints::write(io::CheckpointState state, double seconds) {
  state.program = program_;
  state.inputs = inputs_;
  io::write_checkpoint(path_, state);
  last_ = seconds;
}

io::CheckpointState Checkpoints::load() const {
  io::CheckpointState state = io::read_checkpoint(resume_);
  auto refuse = [&](const std::string& why) { return io::InputError(resume_, 0, why); };
  if (state.program != program_) throw refuse("is a checkpoint of " + state.program + ", not of " + program_);
  if (state.inputs.size() != inputs_.size()) {
    throw refuse("was made from " + std::to_string(state.inputs.size()) + " input files, this run reads " +
                 std::to_string(inputs_.size()));
  }
  for (std::size_t k = 0; k < inputs_.size(); ++k) {
    const io::InputFingerprint& saved = state.inputs[k];
    const io::InputFingerprint& now = inputs_[k];
    if (saved.size != now.size || saved.hash != now.hash) {
      const std::string how = saved.size != now.size
                                  ? std::to_string(saved.size) + " bytes against " + std::to_string(now.size)
                                  : "same size, other content";
      throw refuse("was made from other data: " + saved.path + " is not " + now.path + " (" + how + ")");
    }
  }
  if (state.time_split.size() != 4) throw refuse("corrupt checkpoint: no time split");
  return state;
}

std::vector<double> to_values(const TimeSplit& time) {
  return {time.scheduler, time.compute, time.communication, time.idle};
}

TimeSplit time_split_from(const std::vector<double>& values) {
  return TimeSplit{values.at(0), values.at(1), values.at(2), values.at(3)};
}

}  // namespace schmp::detail
