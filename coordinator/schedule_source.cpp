#include "schedule_source.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "../runtime/protocol.hpp"
#include "../scheduler/scheduler_rank.hpp"

namespace schmp::detail {

namespace {

std::vector<double> slice(const std::vector<double>& all, ParamRange range) {
  return {all.begin() + range.begin, all.begin() + range.end};
}

// Scheduler s runs on world rank s + 1 (see Layout).
int scheduler_rank(std::size_t s) { return static_cast<int>(s) + 1; }

// Which range holds `param`: ranges are contiguous, sorted and cover every parameter.
std::size_t owner(const std::vector<ParamRange>& ranges, ParamIndex param) {
  const auto it = std::upper_bound(ranges.begin(), ranges.end(), param,
                                   [](ParamIndex p, const ParamRange& r) { return p < r.end; });
  return static_cast<std::size_t>(it - ranges.begin());
}

}  // namespace

LocalSchedulers::LocalSchedulers(std::vector<ParamRange> ranges,
                                 std::vector<std::unique_ptr<DependencyRole>> dependencies,
                                 const RunOptions& options)
    : ranges_(std::move(ranges)), dependencies_(std::move(dependencies)), options_(options) {}

void LocalSchedulers::start(const std::vector<double>& initial_changes) {
  for (std::size_t s = 0; s < ranges_.size(); ++s) {
    schedulers_.emplace_back(ranges_[s], slice(initial_changes, ranges_[s]), dependencies_[s].get(),
                             scheduler_settings(options_, static_cast<int>(s)));
  }
}

Schedule LocalSchedulers::next(std::uint64_t round) {
  const auto ahead = static_cast<std::uint64_t>(options_.staleness);
  while (!pending_.empty() && pending_.front().round + ahead + 1 <= round) {
    for (BlockScheduler& scheduler : schedulers_) {
      scheduler.report_changes(pending_.front().priorities.changes());
      scheduler.retire(pending_.front().priorities.retired());
    }
    pending_.pop_front();
  }
  Schedule schedule;
  schedule.round = round;
  for (BlockScheduler& scheduler : schedulers_) {
    const std::vector<ParamIndex> piece = scheduler.next_block();
    schedule.params.insert(schedule.params.end(), piece.begin(), piece.end());
  }
  return schedule;
}

void LocalSchedulers::feedback(std::uint64_t round, const Priorities& priorities) {
  pending_.push_back({round, priorities});
}

RemoteSchedulers::RemoteSchedulers(MPI_Comm world, std::vector<ParamRange> ranges, const RunOptions& options,
                                   Waiter& waiter)
    : world_(world), ranges_(std::move(ranges)), options_(options), waiter_(waiter) {}

void RemoteSchedulers::start(const std::vector<double>& initial_changes) {
  for (std::size_t s = 0; s < ranges_.size(); ++s) {
    outbox_.send(world_, scheduler_rank(s), kTagSchedulerStart,
                 serialize(SchedulerStart{slice(initial_changes, ranges_[s])}));
  }
}

Schedule RemoteSchedulers::next(std::uint64_t round) {
  Schedule schedule;
  schedule.round = round;
  for (std::size_t s = 0; s < ranges_.size(); ++s) {
    const auto piece =
        deserialize<BlockPiece>(receive_bytes(world_, scheduler_rank(s), kTagSchedule, waiter_, &outbox_));
    if (piece.round != round) {
      throw std::logic_error("scheduler " + std::to_string(s) + " sent round " + std::to_string(piece.round) +
                             ", expected " + std::to_string(round));
    }
    schedule.params.insert(schedule.params.end(), piece.params.begin(), piece.params.end());
  }
  return schedule;
}

void RemoteSchedulers::feedback(std::uint64_t round, const Priorities& priorities) {
  std::vector<Feedback> messages(ranges_.size());
  for (Feedback& message : messages) message.round = round;
  for (const auto& [param, change] : priorities.changes()) {
    Feedback& message = messages[owner(ranges_, param)];
    message.params.push_back(param);
    message.changes.push_back(change);
  }
  for (ParamIndex param : priorities.retired()) messages[owner(ranges_, param)].retired.push_back(param);
  for (std::size_t s = 0; s < ranges_.size(); ++s) {
    outbox_.send(world_, scheduler_rank(s), kTagFeedback, serialize(messages[s]));
  }
}

void RemoteSchedulers::stop() {
  Feedback stop;
  stop.stop = true;
  for (std::size_t s = 0; s < ranges_.size(); ++s) {
    outbox_.send(world_, scheduler_rank(s), kTagFeedback, serialize(stop));
  }
  // Each scheduler is staleness + 1 pieces ahead of the rounds that ran: receive them so that no
  // message is left in flight.
  for (std::size_t s = 0; s < ranges_.size(); ++s) {
    for (int k = 0; k <= options_.staleness; ++k) {
      receive_bytes(world_, scheduler_rank(s), kTagSchedule, waiter_, &outbox_);
    }
  }
  outbox_.drain(waiter_);
}

}  // namespace schmp::detail
