// The messages the roles exchange. Programs never see these: they see their own typed messages, which
// travel inside (commit) or are flattened into (worker replies) the ones below.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "schmp/message.hpp"
#include "schmp/program.hpp"

namespace schmp::detail {

// Coordinator -> workers, once per step. A worker of a dynamic program first applies `commit` (when
// not empty), then acts; for a rotation program `commit` carries the Step of an update round.
enum class Command : std::uint8_t {
  kSetup = 0,     // reply with the program's Setup
  kEvaluate = 1,  // reply with the program's Stats
  kUpdate = 2,    // reply with the program's Partial for `schedule`
  kStop = 3,      // no reply: leave the loop
  kKeep = 4,      // rotation programs, no reply: keep a copy of the model as it stands
  kPrepare = 5,   // rotation programs: the rotation that fills the blocks before the first evaluation
  kSave = 6,      // rotation programs, no reply: send this worker's share of a checkpoint to rank 0
};

// The program's message a round's summed reply holds, for the errors that name it.
inline std::string summed_message_name(Command command) {
  switch (command) {
    case Command::kSetup:
      return "Setup";
    case Command::kEvaluate:
      return "Stats";
    case Command::kPrepare:
      return "preparation";  // a rotation program's, always empty: it must not stand for the Partial
    default:
      return "Partial";
  }
}

struct RoundMessage {
  Command command = Command::kSetup;
  Bytes commit;
  Schedule schedule;

  template <class Visitor>
  void visit(Visitor& v) {
    v(command, commit, schedule);
  }
};

// Workers -> coordinator: a reply summed over every worker.
struct WorkerReply {
  Flat summed;
  double compute_seconds = 0;  // summed over workers too
  double stop_requests = 0;    // workers a signal asked to stop (StopSignals), summed too

  template <class Visitor>
  void visit(Visitor& v) {
    v(summed, compute_seconds, stop_requests);
  }
};

// Coordinator -> scheduler, once before the first round: the changes that seed its weights.
struct SchedulerStart {
  std::vector<double> changes;

  template <class Visitor>
  void visit(Visitor& v) {
    v(changes);
  }
};

// Scheduler -> coordinator: its part of one round's block.
struct BlockPiece {
  std::uint64_t round = 0;
  std::vector<ParamIndex> params;
  double busy_seconds = 0;      // the scheduler's work so far: taking in feedback, building blocks
  bool stop_requested = false;  // a signal asked this scheduler rank to stop (StopSignals)
  bool ended_sweep = false;     // the piece finished the scheduler's sweep (--cyclic)
  bool settled = false;         // no parameter of the scheduler is moving (--sweeps)

  template <class Visitor>
  void visit(Visitor& v) {
    v(round, params, busy_seconds, stop_requested, ended_sweep, settled);
  }
};

// Coordinator -> scheduler after each round: the changes, retirements and revivals of the parameters
// it owns, or stop.
struct Feedback {
  std::uint64_t round = 0;
  bool stop = false;
  std::vector<ParamIndex> params;
  std::vector<double> changes;
  std::vector<ParamIndex> retired;
  std::vector<ParamIndex> revived;

  template <class Visitor>
  void visit(Visitor& v) {
    v(round, stop, params, changes, retired, revived);
  }
};

}  // namespace schmp::detail
