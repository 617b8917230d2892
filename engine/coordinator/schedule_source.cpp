#include "schedule_source.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "../../runtime/protocol.hpp"
#include "../../runtime/signals.hpp"
#include "../../runtime/trace.hpp"
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

LocalSchedulers::~LocalSchedulers() { stop(); }

void LocalSchedulers::start(const std::vector<double>& initial_changes) {
  for (std::size_t s = 0; s < ranges_.size(); ++s) {
    schedulers_.emplace_back(ranges_[s], slice(initial_changes, ranges_[s]), dependencies_[s].get(),
                             scheduler_settings(options_, static_cast<int>(s)));
  }
  if (options_.staleness > 0) builder_ = std::thread([this] { build_ahead(); });
}

std::deque<LocalSchedulers::Pending> LocalSchedulers::take_visible(std::uint64_t round) {
  const auto ahead = static_cast<std::uint64_t>(options_.staleness);
  std::deque<Pending> visible;
  while (!pending_.empty() && pending_.front().round + ahead + 1 <= round) {
    visible.push_back(std::move(pending_.front()));
    pending_.pop_front();
  }
  return visible;
}

Schedule LocalSchedulers::build(std::uint64_t round, std::deque<Pending> visible) {
  const auto began = Clock::now();
  for (const Pending& pending : visible) {
    for (BlockScheduler& scheduler : schedulers_) {
      scheduler.revive(pending.priorities.revived());
      scheduler.report_changes(pending.priorities.changes());
      scheduler.retire(pending.priorities.retired());
    }
  }
  Schedule schedule;
  schedule.round = round;
  schedule.ends_sweep = schedule.settled = options_.cyclic;
  for (BlockScheduler& scheduler : schedulers_) {
    const std::vector<ParamIndex> piece = scheduler.next_block();
    schedule.params.insert(schedule.params.end(), piece.begin(), piece.end());
    schedule.ends_sweep = schedule.ends_sweep && scheduler.ended_sweep();
    schedule.settled = schedule.settled && scheduler.settled();
  }
  std::lock_guard lock(mutex_);
  busy_seconds_ += seconds_since(began);
  return schedule;
}

double LocalSchedulers::busiest_seconds() {
  std::lock_guard lock(mutex_);
  return busy_seconds_;
}

template <class Ready>
void LocalSchedulers::wait(std::unique_lock<std::mutex>& lock, const Ready& ready) {
  constexpr int kSpins = 200;
  for (int spin = 0; spin < kSpins && !ready(); ++spin) {
    lock.unlock();
    std::this_thread::yield();
    lock.lock();
  }
  changed_.wait(lock, ready);
}

void LocalSchedulers::build_ahead() {
  const auto ahead = static_cast<std::uint64_t>(options_.staleness);
  try {
    for (std::uint64_t round = 0;; ++round) {
      std::deque<Pending> visible;
      {
        std::unique_lock lock(mutex_);
        // Block `round` may be built once the feedback of every round before round - ahead is in.
        wait(lock, [&] { return stopping_ || feedback_rounds_ + ahead >= round; });
        if (stopping_) return;
        visible = take_visible(round);
      }
      Schedule schedule = build(round, std::move(visible));
      {
        std::lock_guard lock(mutex_);
        built_.push_back(std::move(schedule));
      }
      changed_.notify_all();
    }
  } catch (...) {
    std::lock_guard lock(mutex_);
    failure_ = std::current_exception();
    changed_.notify_all();
  }
}

Schedule LocalSchedulers::next(std::uint64_t round) {
  if (!builder_.joinable()) return build(round, take_visible(round));
  std::unique_lock lock(mutex_);
  wait(lock, [&] { return !built_.empty() || failure_; });
  if (built_.empty()) std::rethrow_exception(failure_);
  Schedule schedule = std::move(built_.front());
  built_.pop_front();
  if (schedule.round != round) {
    throw std::logic_error("hosted schedulers built round " + std::to_string(schedule.round) + ", expected " +
                           std::to_string(round));
  }
  return schedule;
}

void LocalSchedulers::feedback(std::uint64_t round, const Priorities& priorities) {
  {
    std::lock_guard lock(mutex_);
    pending_.push_back({round, priorities});
    feedback_rounds_ = round + 1;
  }
  changed_.notify_all();
}

void LocalSchedulers::stop() {
  if (!builder_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  builder_.join();
}

RemoteSchedulers::RemoteSchedulers(MPI_Comm world, std::vector<ParamRange> ranges, const RunOptions& options,
                                   Waiter& waiter)
    : world_(world),
      ranges_(std::move(ranges)),
      options_(options),
      waiter_(waiter),
      busy_seconds_(ranges_.size(), 0.0) {}

void RemoteSchedulers::start(const std::vector<double>& initial_changes) {
  for (std::size_t s = 0; s < ranges_.size(); ++s) {
    outbox_.send(world_, scheduler_rank(s), kTagSchedulerStart,
                 serialize(SchedulerStart{slice(initial_changes, ranges_[s])}));
  }
}

BlockPiece RemoteSchedulers::receive_piece(std::size_t s) {
  auto piece =
      deserialize<BlockPiece>(receive_bytes(world_, scheduler_rank(s), kTagSchedule, waiter_, &outbox_));
  busy_seconds_[s] = piece.busy_seconds;
  if (piece.stop_requested) StopSignals::relay();
  return piece;
}

double RemoteSchedulers::busiest_seconds() {
  return busy_seconds_.empty() ? 0.0 : *std::max_element(busy_seconds_.begin(), busy_seconds_.end());
}

Schedule RemoteSchedulers::next(std::uint64_t round) {
  Schedule schedule;
  schedule.round = round;
  schedule.ends_sweep = schedule.settled = options_.cyclic;
  for (std::size_t s = 0; s < ranges_.size(); ++s) {
    const BlockPiece piece = receive_piece(s);
    if (piece.round != round) {
      throw std::logic_error("scheduler " + std::to_string(s) + " sent round " + std::to_string(piece.round) +
                             ", expected " + std::to_string(round));
    }
    schedule.params.insert(schedule.params.end(), piece.params.begin(), piece.params.end());
    schedule.ends_sweep = schedule.ends_sweep && piece.ended_sweep;
    schedule.settled = schedule.settled && piece.settled;
  }
  return schedule;
}

void RemoteSchedulers::feedback(std::uint64_t round, const Priorities& priorities) {
  // After an evaluation every live parameter whose step changed has a change, up to all of them: the
  // messages are sized first, and runs of parameters in one range, as programs mostly report them,
  // skip the search for their owner.
  std::size_t last_owner = 0;
  const auto owner_of = [&](ParamIndex param) {
    if (!ranges_[last_owner].contains(param)) last_owner = owner(ranges_, param);
    return last_owner;
  };
  std::vector<std::size_t> counts(ranges_.size(), 0);
  for (const auto& change : priorities.changes()) ++counts[owner_of(change.first)];
  std::vector<Feedback> messages(ranges_.size());
  for (std::size_t s = 0; s < ranges_.size(); ++s) {
    messages[s].round = round;
    messages[s].params.reserve(counts[s]);
    messages[s].changes.reserve(counts[s]);
  }
  for (const auto& [param, change] : priorities.changes()) {
    Feedback& message = messages[owner_of(param)];
    message.params.push_back(param);
    message.changes.push_back(change);
  }
  for (ParamIndex param : priorities.retired()) messages[owner_of(param)].retired.push_back(param);
  for (ParamIndex param : priorities.revived()) messages[owner_of(param)].revived.push_back(param);
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
    for (int k = 0; k <= options_.staleness; ++k) receive_piece(s);
  }
  outbox_.drain(waiter_);
}

}  // namespace schmp::detail
