// One scheduler's logic, free of MPI: it owns a contiguous range of parameters, keeps a sampling
// weight for each (|change|^power + eta, from the changes the coordinator reports) and builds each
// round's block from candidates it picks, keeping a candidate only if it interferes with none already
// kept (the greedy dependency filter). Candidates are picked in one of two ways:
// - by weight: drawn with probability proportional to their weights, without replacement within a
//   block (STRADS's priority sampling);
// - in sweeps (--sweeps): each sweep visits the active parameters, those whose weight is above eta
//   (their last change was not zero), once each in a fresh random order of short runs of neighbours
//   (parameters next to each other in index order), and a parameter that stops moving drops out of
//   the sweep under way. This is random-permutation coordinate descent with
//   liblinear's shrinking: visiting every active parameter once per sweep converges in fewer updates
//   than drawing them independently, which revisits some and misses others. A parameter comes back
//   when the coordinator reports a change for it again, so this suits programs that restart every
//   priority at each evaluation (Lasso, logistic regression). A block ends at the first candidate that
//   the filter rejects, which opens the next block: so blocks are runs of the sweep's order, and the
//   updates follow that order as if made one after another. Testing on, past the first rejection, for
//   candidates to fill the block costs a test against the whole block each, most of them rejections
//   where parameters interfere much: 1.5 times longer to the same objective on spamassassin's
//   strongly co-occurring words, with the same blocks on sparse generated data where none interferes.
//   When no parameter is active, blocks are drawn by weight.
//   With --cyclic a sweep visits the active parameters in index order, and a block ends where its
//   sweep does: the rounds then repeat one fixed sequence of updates, a map whose iterates at the
//   sweeps' ends a program can extrapolate (schmp/extrapolation.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "schmp/internal/options.hpp"
#include "schmp/internal/roles.hpp"
#include "schmp/program.hpp"
#include "weighted_sampler.hpp"

namespace schmp::detail {

// The index-th of `count` nearly equal contiguous ranges of [0, total).
ParamRange split_params(std::size_t total, int index, int count);

struct BlockSchedulerSettings {
  std::uint32_t block_size = 32;  // this scheduler's share of the round's block
  bool priority = true;
  bool sweeps = false;
  bool cyclic = false;  // sweeps in index order, a block never spanning two
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
  // Parameters not to schedule again (others than its own are ignored)...
  void retire(const std::vector<ParamIndex>& params);
  // ...until revived: drawn again at the weight of no change.
  void revive(const std::vector<ParamIndex>& params);
  double weight(ParamIndex param) const { return sampler_.weight(param - owned_.begin); }
  // Whether the last block finished a sweep (--cyclic): every active parameter of it was updated.
  bool ended_sweep() const { return ended_sweep_; }
  // Whether no parameter is moving: the sweeps have nothing to visit (sweeps only).
  bool settled() const { return settings_.sweeps && active_.empty(); }

 private:
  double weight_of(double change) const;
  // Applies updates_, keeping the set of active parameters in step.
  void set_weights();
  // Adds k to the active parameters or takes it out, as its weight says (sweeps only).
  void note_activity(std::size_t k, double weight);
  std::vector<ParamIndex> next_block_by_weight();
  std::vector<ParamIndex> next_block_in_sweeps();

  ParamRange owned_;
  DependencyRole* dependency_;
  BlockSchedulerSettings settings_;
  WeightedSampler sampler_;
  std::vector<bool> retired_;
  std::vector<std::pair<std::size_t, double>> updates_;  // (owned offset, weight), kept for its storage
  std::mt19937_64 random_;
  // Sweeps: the active parameters (owned offsets) and each one's place there (kInactive: none); the
  // sweep under way and how far it has got; the block each parameter was last a candidate for, so
  // that a block spanning two sweeps holds no parameter twice; the candidate that ended the last block.
  std::vector<std::uint32_t> active_;
  std::vector<std::uint32_t> active_at_;
  std::vector<std::uint32_t> sweep_;
  std::size_t swept_ = 0;
  std::vector<std::uint64_t> candidate_in_block_;
  std::uint64_t blocks_ = 0;
  std::optional<std::uint32_t> opens_next_block_;
  bool ended_sweep_ = false;
};

}  // namespace schmp::detail
