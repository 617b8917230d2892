// Where the coordinator gets each round's block: from schedulers running in its own process, or from
// scheduler ranks. Both give the same blocks for the same seed: the block of round t is built after
// the feedback of rounds up to t - staleness - 1, in round order.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "../runtime/mpi.hpp"
#include "../scheduler/block_scheduler.hpp"
#include "schmp/detail/roles.hpp"
#include "schmp/options.hpp"
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
};

// The schedulers hosted by the coordinator: one per range, each with its own dependency test.
class LocalSchedulers final : public ScheduleSource {
 public:
  LocalSchedulers(std::vector<ParamRange> ranges, std::vector<std::unique_ptr<DependencyRole>> dependencies,
                  const RunOptions& options);
  void start(const std::vector<double>& initial_changes) override;
  Schedule next(std::uint64_t round) override;
  void feedback(std::uint64_t round, const Priorities& priorities) override;
  void stop() override {}

 private:
  struct Pending {
    std::uint64_t round;
    Priorities priorities;
  };
  std::vector<ParamRange> ranges_;
  std::vector<std::unique_ptr<DependencyRole>> dependencies_;
  RunOptions options_;
  std::vector<BlockScheduler> schedulers_;
  std::deque<Pending> pending_;  // feedback the schedulers may not see yet (staleness)
};

// Scheduler ranks 1..S of `world`.
class RemoteSchedulers final : public ScheduleSource {
 public:
  RemoteSchedulers(MPI_Comm world, std::vector<ParamRange> ranges, const RunOptions& options, Waiter& waiter);
  void start(const std::vector<double>& initial_changes) override;
  Schedule next(std::uint64_t round) override;
  void feedback(std::uint64_t round, const Priorities& priorities) override;
  void stop() override;

 private:
  MPI_Comm world_;
  std::vector<ParamRange> ranges_;
  RunOptions options_;
  Waiter& waiter_;
  Outbox outbox_;
};

}  // namespace schmp::detail
