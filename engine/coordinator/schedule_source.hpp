// Where the coordinator gets each round's block: from schedulers running in its own process, or from
// scheduler ranks. Both give the same blocks for the same seed: the block of round t is built after
// the feedback of rounds up to t - staleness - 1, in round order.
#pragma once

#include <mpi.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "../../runtime/mpi.hpp"
#include "../../runtime/protocol.hpp"
#include "../scheduler/block_scheduler.hpp"
#include "schmp/internal/options.hpp"
#include "schmp/internal/roles.hpp"
#include "schmp/program.hpp"

namespace schmp::detail {

class ScheduleSource {
 public:
  virtual ~ScheduleSource() = default;
  // Called once, before the first round, with one change per parameter.
  virtual void start(const std::vector<double>& initial_changes) = 0;
  virtual Schedule next(std::uint64_t round) = 0;
  virtual void feedback(std::uint64_t round, const Priorities& priorities) = 0;
  // After the last round: lets the schedulers go.
  virtual void stop() = 0;
  // The busiest scheduler's work so far (taking in feedback, building blocks), in seconds: as far as
  // the coordinator knows it, a few rounds behind with scheduler ranks. Schedulers hosted by the
  // coordinator take turns on one thread, so there it is the sum of theirs.
  virtual double busiest_seconds() = 0;
};

// The schedulers hosted by the coordinator: one per range, each with its own dependency test. In
// lock-step (--staleness 0) they build each block when it is asked for. With staleness k >= 1 they
// build ahead on a thread of their own: block t needs only the feedback of rounds up to t - k - 1, so
// it is built while earlier rounds run. The thread applies feedback and builds blocks in the same
// order as lock-step hosting would, so the blocks are the same.
class LocalSchedulers final : public ScheduleSource {
 public:
  LocalSchedulers(std::vector<ParamRange> ranges, std::vector<std::unique_ptr<DependencyRole>> dependencies,
                  const RunOptions& options);
  ~LocalSchedulers() override;
  void start(const std::vector<double>& initial_changes) override;
  Schedule next(std::uint64_t round) override;
  void feedback(std::uint64_t round, const Priorities& priorities) override;
  void stop() override;
  double busiest_seconds() override;

 private:
  struct Pending {
    std::uint64_t round;
    Priorities priorities;
  };
  // Applies the pending feedback that block `round` may see, then builds it.
  Schedule build(std::uint64_t round, std::deque<Pending> visible);
  // Takes from pending_ the feedback that block `round` may see.
  std::deque<Pending> take_visible(std::uint64_t round);
  void build_ahead();  // the thread's loop
  // Waits on changed_ until ready() holds, spinning briefly first: a round is tens of microseconds.
  template <class Ready>
  void wait(std::unique_lock<std::mutex>& lock, const Ready& ready);

  std::vector<ParamRange> ranges_;
  std::vector<std::unique_ptr<DependencyRole>> dependencies_;
  RunOptions options_;
  std::vector<BlockScheduler> schedulers_;
  std::thread builder_;
  std::mutex mutex_;  // guards what follows
  std::condition_variable changed_;
  std::deque<Pending> pending_;        // feedback the schedulers may not see yet (staleness)
  std::uint64_t feedback_rounds_ = 0;  // feedback has come for rounds 0 .. feedback_rounds_ - 1
  std::deque<Schedule> built_;         // blocks built ahead, in round order
  double busy_seconds_ = 0;            // in build(): the schedulers take turns, so they add up
  bool stopping_ = false;
  std::exception_ptr failure_;  // what stopped the builder
};

// Scheduler ranks 1..S of `world`.
class RemoteSchedulers final : public ScheduleSource {
 public:
  RemoteSchedulers(MPI_Comm world, std::vector<ParamRange> ranges, const RunOptions& options, Waiter& waiter);
  void start(const std::vector<double>& initial_changes) override;
  Schedule next(std::uint64_t round) override;
  void feedback(std::uint64_t round, const Priorities& priorities) override;
  void stop() override;
  double busiest_seconds() override;

 private:
  // Takes a piece from scheduler s, noting its work so far.
  BlockPiece receive_piece(std::size_t s);

  MPI_Comm world_;
  std::vector<ParamRange> ranges_;
  RunOptions options_;
  Waiter& waiter_;
  Outbox outbox_;
  std::vector<double> busy_seconds_;  // per scheduler, from its latest piece
};

}  // namespace schmp::detail
