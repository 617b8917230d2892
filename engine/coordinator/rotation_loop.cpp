#include "rotation_loop.hpp"

#include <utility>
#include <vector>

#include "../../runtime/signals.hpp"
#include "round_loop.hpp"

namespace schmp::detail {

namespace {

// The rotation schedule's rounds: the program's step shipped to every worker, worker 0's part played
// here, the summed replies aggregated.
class RotationLoop final : public RoundLoop {
 public:
  RotationLoop(RotationCoordinatorRole& program, RotationWorkerRole& own_worker, const Ring& ring,
               TraceWriter& trace, const RunOptions& options, Waiter& waiter, Checkpoints& checkpoints,
               const LoopStart& start)
      : RoundLoop(trace, options, checkpoints, program.trace_columns(), start, std::nullopt),
        program_(program),
        own_worker_(own_worker),
        ring_(ring),
        waiter_(waiter) {}

 private:
  void begin() override {
    if (!own_worker_.prepares()) return;
    RoundMessage prepare;
    prepare.command = Command::kPrepare;
    exchange(std::move(prepare));
  }

  bool play_round(std::uint64_t) override {
    const auto asked = Clock::now();
    RoundMessage message;
    message.command = Command::kUpdate;
    message.commit = program_.schedule();
    time_.scheduler_since(asked);
    const WorkerReply reply = exchange(std::move(message));
    const auto received = Clock::now();
    program_.aggregate(reply.summed);
    time_.idle_since(received);
    return true;
  }

  bool evaluation_due(std::uint64_t rounds) const override {
    return program_.wants_evaluation() || (options_.eval_every > 0 && rounds >= options_.eval_every);
  }

  Report report(std::uint64_t round) override {
    RoundMessage message;
    message.command = Command::kEvaluate;
    const WorkerReply reply = exchange(std::move(message));
    const auto received = Clock::now();
    Report report = program_.report(reply.summed);
    check_objective_is_finite(report, round);
    if (report.keep) {
      tell_other_workers(Command::kKeep);
      own_worker_.keep();
    }
    time_.idle_since(received);
    return report;
  }

  // The coordinator's state, the clock and the trace, then every worker's share, each written as it
  // arrives so that rank 0 holds one at a time. Receiving the shares is communication: across hosts it
  // moves the whole model.
  double save(io::CheckpointState& state) override {
    state.coordinator = program_.save();
    tell_other_workers(Command::kSave);
    double receiving = 0;
    checkpoints_.write(state, this_process(), static_cast<std::uint64_t>(ring_.count), [&](std::uint64_t w) {
      if (w == 0) return own_worker_.save();
      const auto asked = Clock::now();
      Bytes share = receive_bytes(ring_.comm, static_cast<int>(w), kTagSaved, waiter_);
      receiving += seconds_since(asked);
      return share;
    });
    return receiving;
  }

  // Gathering the workers' parts of the model is output, as writing it is: across hosts it moves the
  // whole model, which would otherwise count in the solve's seconds but in no share of them.
  void finish(const Summary& summary) override {
    std::vector<Bytes> parts;
    parts.push_back(own_worker_.part());
    tell_other_workers(Command::kStop);
    for (int worker = 1; worker < ring_.count; ++worker)
      parts.push_back(receive_bytes(ring_.comm, worker, kTagPart, waiter_));
    program_.finish(summary, std::move(parts));
  }

  // A command without a reply, to every worker but this one.
  void tell_other_workers(Command command) {
    if (ring_.count == 1) return;
    RoundMessage message;
    message.command = command;
    Bytes bytes = serialize(message);
    broadcast_bytes(ring_.comm, 0, bytes, waiter_);
  }

  // Ships the message to every worker, plays worker 0's part and returns the summed reply.
  WorkerReply exchange(RoundMessage message) {
    const auto sent = Clock::now();
    if (ring_.count > 1) {
      Bytes bytes = serialize(message);
      broadcast_bytes(ring_.comm, 0, bytes, waiter_);
    }
    WorkerReply reply = rotate(own_worker_, message, ring_, waiter_, shapes_);
    sum_onto_first(reply, message.command, ring_, waiter_, shapes_);
    if (reply.stop_requests > 0) StopSignals::relay();
    time_.exchange(sent, Clock::now(), reply.compute_seconds / ring_.count);
    return reply;
  }

  RotationCoordinatorRole& program_;
  RotationWorkerRole& own_worker_;
  const Ring& ring_;
  Waiter& waiter_;
  SameShape shapes_;
};

}  // namespace

Summary run_rotation_coordinator(RotationCoordinatorRole& program, RotationWorkerRole& own_worker,
                                 const Ring& ring, TraceWriter& trace, const RunOptions& options,
                                 Waiter& waiter, Checkpoints& checkpoints,
                                 std::optional<io::CheckpointState> resumed) {
  const LoopStart start = loop_start(resumed ? &*resumed : nullptr);
  resumed.reset();
  RotationLoop loop(program, own_worker, ring, trace, options, waiter, checkpoints, start);
  return loop.run();
}

}  // namespace schmp::detail
