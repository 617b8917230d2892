#include "checkpoints.hpp"

#include <glog/logging.h>

#include <exception>
#include <stdexcept>
#include <utility>

#include "memory.hpp"
#include "schmp/io.hpp"
#include "schmp/output.hpp"

namespace schmp::detail {

Checkpoints::Checkpoints(const RunOptions& options, std::string program,
                         const std::vector<std::string>& inputs)
    : path_(options.checkpoint),
      every_(options.checkpoint_every),
      resume_(options.resume),
      program_(std::move(program)) {
  if (!path_.empty()) io::check_writable(path_);
  if (path_.empty() && resume_.empty()) return;
  for (const std::string& input : inputs) {
    if (!input.empty()) inputs_.push_back(io::fingerprint(input));
  }
}

io::CheckpointState Checkpoints::state_at(std::uint64_t round, double seconds, const TimeSplit& time,
                                          const TraceWriter& trace) const {
  io::CheckpointState state;
  state.program = program_;
  state.inputs = inputs_;
  state.round = round;
  state.seconds = seconds;
  state.time_split = {time.scheduler, time.compute, time.communication, time.idle, time.scheduler_busy};
  state.trace_header = trace.header();
  state.trace_rows = trace.rows();
  return state;
}

void Checkpoints::write(const io::CheckpointState& state, double seconds) { write(state, seconds, 0, {}); }

void Checkpoints::write(const io::CheckpointState& state, double seconds, std::uint64_t shares,
                        const std::function<Bytes(std::uint64_t)>& share) {
  last_ = seconds;
  std::uint64_t taken = 0;
  std::exception_ptr share_failure;
  try {
    io::write_checkpoint(path_, state, shares, [&](std::uint64_t w) {
      ++taken;
      try {
        return share(w);
      } catch (...) {
        share_failure = std::current_exception();
        throw;
      }
    });
  } catch (const std::logic_error&) {
    throw;  // a caller's mistake, not a file that cannot be written
  } catch (const std::exception& e) {
    if (share_failure) std::rethrow_exception(share_failure);
    LOG(WARNING) << "no checkpoint written: " << e.what();
  }
  // A write that failed part way asked for fewer shares than there are.
  for (; taken < shares; ++taken) share(taken);
  return_freed_memory();
}

std::unique_ptr<io::CheckpointReader> Checkpoints::load() const {
  auto reader = std::make_unique<io::CheckpointReader>(resume_);
  const io::CheckpointState& state = reader->state();
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
  if (state.time_split.size() != 5) throw refuse("corrupt checkpoint: no time split");
  return reader;
}

TimeSplit time_split_from(const std::vector<double>& values) {
  return TimeSplit{values.at(0), values.at(1), values.at(2), values.at(3), values.at(4)};
}

}  // namespace schmp::detail
