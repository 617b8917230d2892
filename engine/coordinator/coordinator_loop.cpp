#include "coordinator_loop.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>

#include "../../runtime/protocol.hpp"
#include "../../runtime/trace.hpp"
#include "round_loop.hpp"

namespace schmp::detail {

namespace {

RoundMessage make_message(Command command, Bytes& pending_commit, Schedule schedule = {}) {
  RoundMessage message;
  message.command = command;
  message.commit = std::move(pending_commit);
  pending_commit.clear();
  message.schedule = std::move(schedule);
  return message;
}

// A program that names a parameter beyond the job's is broken: say so rather than write out of bounds.
void check_params(const Priorities& priorities, std::size_t num_params) {
  auto beyond = [&](ParamIndex param) {
    if (param >= num_params) {
      throw std::logic_error("the program reported parameter " + std::to_string(param) + " of " +
                             std::to_string(num_params));
    }
  };
  for (const auto& change : priorities.changes()) beyond(change.first);
  for (ParamIndex param : priorities.retired()) beyond(param);
  for (ParamIndex param : priorities.revived()) beyond(param);
}

}  // namespace

bool updates_in_order(const RunOptions& options, bool one_process) {
  return options.in_order && one_process && options.device == "cpu";
}

std::uint64_t auto_eval_every(std::size_t num_params, std::uint32_t schedule_size, bool cyclic) {
  const std::uint64_t evaluations_per_sweep = cyclic ? 1 : 8;
  constexpr std::uint64_t kFewestRounds = 8;
  return std::max<std::uint64_t>(
      kFewestRounds, num_params / (evaluations_per_sweep * std::max<std::uint32_t>(1, schedule_size)));
}

namespace {

// The dynamic schedule's rounds: a block from the schedulers, shipped to the workers with the previous
// round's commit; their summed partials aggregated into the next commit; the changes the program
// reports passed on to the schedulers.
class DynamicLoop final : public RoundLoop {
 public:
  DynamicLoop(CoordinatorRole& program, ScheduleSource& schedulers, WorkerGroup& workers, TraceWriter& trace,
              const RunOptions& options, std::size_t num_params, Checkpoints& checkpoints,
              std::optional<Resumed> resumed)
      : RoundLoop(trace, options, checkpoints, program.trace_columns(),
                  loop_start(resumed ? &resumed->state : nullptr), options.staleness),
        program_(program),
        schedulers_(schedulers),
        workers_(workers),
        num_params_(num_params),
        // Resumed, the schedulers count their work afresh.
        earlier_scheduler_busy_(time_.split().scheduler_busy),
        per_worker_(1.0 / workers.count()),
        alone_(updates_in_order(options, workers.local() != nullptr) ? workers.local() : nullptr),
        live_params_(num_params),
        cyclic_(options.cyclic && options.sweeps),
        retired_(num_params, false),
        changes_(resumed ? std::move(resumed->state.changes) : program.initial_changes()),
        pending_commit_(resumed ? std::move(resumed->commit) : Bytes{}),
        priorities_(resumed ? std::move(resumed->priorities) : Priorities{}),
        overlap_feedback_(options.staleness > 0 && workers.local() == nullptr) {
    if (changes_.size() != num_params) {
      throw std::logic_error("the program's initial_changes() has " + std::to_string(changes_.size()) +
                             " entries for " + std::to_string(num_params) + " parameters");
    }
    // Resuming, the retirements so far (until the next feedback reaches the schedulers, a block may
    // still hold a retired parameter, as with staleness).
    if (resumed) {
      for (const ParamIndex param : resumed->state.retired) priorities_.retire(param);
    }
    note();
  }

 private:
  void begin() override {
    const auto starting = Clock::now();
    schedulers_.start(changes_);
    time_.scheduler_since(starting);
  }

  bool play_round(std::uint64_t round) override {
    const auto asked = Clock::now();
    Schedule schedule = schedulers_.next(round - first_round());
    schedule.round = round;  // the schedulers count from the resume; the program sees the run's rounds
    const auto scheduled = Clock::now();
    time_.scheduler(asked, scheduled);
    ended_sweep_ = schedule.ends_sweep;
    settled_ = schedule.settled;
    if (schedule.params.empty()) {
      send_feedback_now();
      pass_on(round - first_round());
      return false;
    }
    if (alone_) {
      // Timing each parameter's aggregation apart took a tenth of a small problem's solve: the whole
      // round counts as compute.
      program_.update_in_order(*alone_, schedule, priorities_);
      time_.compute(seconds_since(scheduled));
    } else {
      workers_.send(make_message(Command::kUpdate, pending_commit_, schedule));
      send_feedback();  // the previous round's, while the workers compute (see unsent_feedback_)
      const WorkerReply reply = workers_.collect();
      const auto received = Clock::now();
      pending_commit_ = program_.aggregate(schedule, reply.summed, priorities_);
      time_.exchange(scheduled, received, reply.compute_seconds * per_worker_);
      time_.idle_since(received);
    }
    const auto noted = Clock::now();
    if (cyclic_) tally_sweep();
    note();
    time_.idle_since(noted);
    unsent_feedback_ = round;
    if (!overlap_feedback_) send_feedback_now();
    return true;
  }

  // Every --eval_every rounds, or when the program asks; by default as auto_eval_every says.
  bool evaluation_due(std::uint64_t rounds) const override {
    if (program_.paces_evaluations()) {
      return program_.wants_evaluation() || (options_.eval_every > 0 && rounds >= options_.eval_every);
    }
    if (options_.eval_every > 0) return rounds >= options_.eval_every;
    const std::uint64_t every =
        auto_eval_every(program_.evaluation_size(live_params_), options_.schedule_size, cyclic_);
    if (!cyclic_) return rounds >= every;
    // At a sweep's end, so that the evaluations see iterates of one fixed map once the sweeps keep
    // their length: the first after that many rounds, or the first whose summed changes fell to a tenth
    // of the first sweep's since the evaluation (the moving parameters are nearly solved: only an
    // evaluation finds what moves next; on a 10,000 x 50,000 Lasso at 0.05 lambda_max, 3x faster than
    // waiting); at once when nothing moves. Where the schedulers' sweeps seldom end together, at most
    // four times that many rounds apart.
    constexpr std::uint64_t kLongestWait = 4;
    constexpr double kSolvedSweep = 0.1;
    const bool solved = last_sweep_moved_ <= kSolvedSweep * first_sweep_moved_;
    return settled_ || (ended_sweep_ && (rounds >= every || solved)) || rounds >= kLongestWait * every;
  }

  void settle() override { send_feedback_now(); }

  Report report(std::uint64_t round) override {
    const auto sent = Clock::now();
    workers_.send(make_message(Command::kEvaluate, pending_commit_));
    const WorkerReply reply = workers_.collect();
    const auto received = Clock::now();
    Report report = program_.report(reply.summed, priorities_);
    first_sweep_moved_ = -1;
    last_sweep_moved_ = moved_in_sweep_ = 0;
    check_objective_is_finite(report, round);
    note();
    time_.exchange(sent, received, reply.compute_seconds * per_worker_);
    time_.idle_since(received);
    time_.set_scheduler_busy(earlier_scheduler_busy_ + schedulers_.busiest_seconds());
    return report;
  }

  double save(io::CheckpointState& state) override {
    state.num_params = num_params_;
    state.changes = changes_;
    for (std::size_t param = 0; param < num_params_; ++param) {
      if (retired_[param]) state.retired.push_back(static_cast<ParamIndex>(param));
    }
    state.coordinator = program_.save();
    checkpoints_.write(state, this_process());
    return 0;
  }

  void finish(const Summary& summary) override {
    workers_.send(make_message(Command::kStop, pending_commit_));
    schedulers_.stop();
    program_.finish(summary);
  }

  // Adds the round's changes to the sweep under way, and closes it when the block ended it (--cyclic).
  void tally_sweep() {
    for (const auto& change : priorities_.changes()) moved_in_sweep_ += std::abs(change.second);
    if (!ended_sweep_) return;
    if (first_sweep_moved_ < 0) first_sweep_moved_ = moved_in_sweep_;
    last_sweep_moved_ = moved_in_sweep_;
    moved_in_sweep_ = 0;
  }

  // Takes in what the program reported: checked, kept in the bookkeeping, passed on in news_.
  void note() {
    check_params(priorities_, num_params_);
    for (ParamIndex param : priorities_.retired()) {
      if (retired_[param]) continue;
      retired_[param] = true;
      --live_params_;
      standing_changed_.push_back(param);
    }
    for (ParamIndex param : priorities_.revived()) {
      if (!retired_[param]) continue;
      retired_[param] = false;
      ++live_params_;
      changes_[param] = 0;
      standing_changed_.push_back(param);
    }
    for (const auto& [param, change] : priorities_.changes()) {
      if (change == changes_[param]) continue;
      changes_[param] = change;
      news_.set(param, change);
    }
    priorities_.clear();
  }

  // Passes news_ on to the schedulers: with each parameter retired or revived since the last feedback
  // as it stands now, so that the order of several reports in between does not matter.
  void pass_on(std::uint64_t round) {
    for (ParamIndex param : standing_changed_) {
      if (retired_[param]) {
        news_.retire(param);
      } else {
        // With its change: a scheduler that never saw it retired keeps the weight it had.
        news_.revive(param);
        news_.set(param, changes_[param]);
      }
    }
    standing_changed_.clear();
    schedulers_.feedback(round, news_);
  }

  void send_feedback() {
    if (!unsent_feedback_) return;
    pass_on(*unsent_feedback_ - first_round());
    news_.clear();
    unsent_feedback_.reset();
  }
  // Sends it while the workers wait: the coordinator's own work, idle_s in the split.
  void send_feedback_now() {
    const auto began = Clock::now();
    send_feedback();
    time_.idle_since(began);
  }

  CoordinatorRole& program_;
  ScheduleSource& schedulers_;
  WorkerGroup& workers_;
  const std::size_t num_params_;
  const double earlier_scheduler_busy_;
  const double per_worker_;
  WorkerRole* const alone_;   // the job's only worker, updating a block in order (updates_in_order)
  std::size_t live_params_;   // not yet retired: an evaluation sweep is measured in them
  const bool cyclic_;         // --cyclic with --sweeps: evaluations at sweep ends
  bool ended_sweep_ = false;  // the last block finished a sweep (--cyclic)
  bool settled_ = false;      // no parameter was moving when the last block was built (--cyclic)
  // Summed |change| of the sweep under way, and of the first and the last whole sweep since the last
  // evaluation (-1: none yet) (--cyclic).
  double moved_in_sweep_ = 0;
  double first_sweep_moved_ = -1;
  double last_sweep_moved_ = 0;
  std::vector<bool> retired_;
  std::vector<ParamIndex> standing_changed_;  // retired or revived since the last feedback (pass_on)
  // The last change of every parameter: the schedulers' weights, which a checkpoint keeps.
  std::vector<double> changes_;
  // Shipped with the next message, so a round costs one broadcast.
  Bytes pending_commit_;
  Priorities priorities_;  // filled by the program
  // What the schedulers learn with the next round's feedback: what the program reported, less the
  // changes a parameter had already (a scheduler's weight is a function of the last change, so those
  // would leave it as it is). After an evaluation every live parameter gets a change, and most are
  // the zero it had: on the scaling benchmark's Lasso this cuts 200,000 entries to a few thousand,
  // work the coordinator and the schedulers would otherwise do while the rounds wait. The weights are
  // as they would be; the samplers' running sums, updated in other steps, may differ in their last
  // bits, so a draw within that rounding of an interval's edge could go the other way.
  Priorities news_;
  // The round whose feedback (news_, already noted) is still to go. With staleness k >= 1, the block
  // of round t + 1 needs the feedback of rounds up to t - k only, so round t's is sent once round t + 1
  // is on its way to the workers: splitting it among the scheduler ranks and sending it then overlaps
  // their compute instead of holding the next round back. Every feedback goes before an evaluation, so
  // the schedulers see the same feedback, in the same rounds, as if each went at once. (A worker in the
  // coordinator's own process computes as the round is sent: nothing to overlap there.)
  const bool overlap_feedback_;
  std::optional<std::uint64_t> unsent_feedback_;
};

}  // namespace

Summary run_coordinator(CoordinatorRole& program, ScheduleSource& schedulers, WorkerGroup& workers,
                        TraceWriter& trace, const RunOptions& options, std::size_t num_params,
                        Checkpoints& checkpoints, std::optional<Resumed> resumed) {
  DynamicLoop loop(program, schedulers, workers, trace, options, num_params, checkpoints, std::move(resumed));
  return loop.run();
}

}  // namespace schmp::detail
