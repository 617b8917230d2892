// One scheduler's logic, free of MPI: it owns a contiguous range of parameters, keeps a sampling
// weight for each (|change|^power + eta, from the changes the coordinator reports) and builds each
// round's block by drawing parameters by weight without replacement and keeping a drawn parameter only
// if it interferes with none already kept (the greedy dependency filter).
#pragma once

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "../kernels/weighted_sampler.hpp"
#include "schmp/detail/roles.hpp"
#include "schmp/options.hpp"
#include "schmp/program.hpp"

namespace schmp::detail {

// The index-th of `count` nearly equal contiguous ranges of [0, total).
ParamRange split_params(std::size_t total, int index, int count);

struct BlockSchedulerSettings {
  std::uint32_t block_size = 32;  // this scheduler's share of the round's block
  bool priority = true;
  double priority_power = 1;
  double eta = 1e-4;
  std::uint64_t seed = 1;
  int index = 0;  // which scheduler: gives each its own random stream
};

class BlockScheduler {
 public:
  // initial_changes[k] is the change that seeds parameter owned.begin + k. `dependency` may be null
  // (no filter) and must outlive the scheduler.
  BlockScheduler(ParamRange owned, const std::vector<double>& initial_changes, DependencyRole* dependency,
                 const BlockSchedulerSettings& settings);

  std::vector<ParamIndex> next_block();
  // Changes of parameters this scheduler owns (others are ignored).
  void report_changes(const std::vector<std::pair<ParamIndex, double>>& changes);
  // Parameters never to schedule again (others than its own are ignored).
  void retire(const std::vector<ParamIndex>& params);
  double weight(ParamIndex param) const { return sampler_.weight(param - owned_.begin); }

 private:
  double weight_of(double change) const;

  ParamRange owned_;
  DependencyRole* dependency_;
  BlockSchedulerSettings settings_;
  kernels::WeightedSampler sampler_;
  std::vector<bool> retired_;
  std::mt19937_64 random_;
};

}  // namespace schmp::detail
