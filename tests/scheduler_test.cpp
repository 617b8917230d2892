// The scheduler's pieces: priority sampling frequencies, the greedy dependency filter, staleness.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "engine/scheduler/block_scheduler.hpp"
#include "engine/scheduler/weighted_sampler.hpp"

namespace schmp::detail {
namespace {

// Pearson's chi-square statistic of observed counts against expected probabilities.
double chi_square(const std::vector<double>& observed, const std::vector<double>& probability, double draws) {
  double statistic = 0;
  for (std::size_t k = 0; k < observed.size(); ++k) {
    if (probability[k] == 0) continue;
    const double expected = probability[k] * draws;
    statistic += (observed[k] - expected) * (observed[k] - expected) / expected;
  }
  return statistic;
}

TEST(WeightedSampler, FrequenciesMatchTheWeights) {
  const std::vector<double> weights = {1, 2, 3, 4, 0, 10, 0.5};
  detail::WeightedSampler sampler(weights);
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> uniform(0, 1);
  const int draws = 200000;
  std::vector<double> counts(weights.size(), 0);
  for (int d = 0; d < draws; ++d) counts[sampler.sample(uniform(random))] += 1;
  EXPECT_EQ(counts[4], 0) << "a weight-zero index was drawn";
  std::vector<double> probability(weights.size());
  for (std::size_t k = 0; k < weights.size(); ++k) probability[k] = weights[k] / 20.5;
  // 5 degrees of freedom (6 drawable indices): the 0.1% critical value is 20.5.
  EXPECT_LT(chi_square(counts, probability, draws), 20.5);
}

TEST(WeightedSampler, TotalsFollowUpdates) {
  std::vector<double> weights(1000, 1.0);
  detail::WeightedSampler sampler(weights);
  std::mt19937_64 random(3);
  std::uniform_real_distribution<double> uniform(0, 1);
  for (int step = 0; step < 20000; ++step) {
    const auto k = static_cast<std::size_t>(uniform(random) * 1000);
    weights[k] = uniform(random) < 0.1 ? 0.0 : uniform(random);
    sampler.set(k, weights[k]);
  }
  double total = 0;
  for (double w : weights) total += w;
  EXPECT_NEAR(sampler.total(), total, 1e-9 * total);
  for (int d = 0; d < 1000; ++d) EXPECT_GT(weights[sampler.sample(uniform(random))], 0);
}

// Over 5,000 weights the tree has five levels: every draw must land in the interval of the running
// sum that holds u * total, as a sequential scan in long double finds it (draws within a rounding
// error of an interval's edge may go either way, and are skipped).
TEST(WeightedSampler, DrawsMatchAScanOfTheRunningSum) {
  std::mt19937_64 random(11);
  std::uniform_real_distribution<double> uniform(0, 1);
  std::vector<double> weights(5000);
  for (double& w : weights) w = uniform(random) < 0.3 ? 0.0 : uniform(random);
  detail::WeightedSampler sampler(weights);
  for (int step = 0; step < 3000; ++step) {  // the sums move by updates as well
    const auto k = static_cast<std::size_t>(uniform(random) * static_cast<double>(weights.size()));
    weights[k] = uniform(random) < 0.3 ? 0.0 : uniform(random);
    sampler.set(k, weights[k]);
  }
  long double total = 0;
  for (double w : weights) total += w;
  int compared = 0;
  for (int d = 0; d < 20000; ++d) {
    const double u = uniform(random);
    const long double target = u * total;
    long double below = 0;
    std::size_t expected = 0;
    while (expected + 1 < weights.size() && below + weights[expected] <= target) below += weights[expected++];
    const long double margin = 1e-9L * total;
    if (target - below < margin || below + weights[expected] - target < margin) continue;
    EXPECT_EQ(sampler.sample(u), expected) << "u = " << u;
    ++compared;
  }
  EXPECT_GT(compared, 19000);
}

// set_many() rebuilds the tree for many updates and walks it for few: either way the sampler ends as
// if each update had been set() in turn (repeated indices included: the last one stands).
TEST(WeightedSampler, SetManyIsSetInTurn) {
  std::mt19937_64 random(5);
  std::uniform_real_distribution<double> uniform(0, 1);
  std::vector<double> weights(5000);
  for (double& w : weights) w = uniform(random);
  detail::WeightedSampler in_turn(weights);
  detail::WeightedSampler at_once(weights);
  for (const std::size_t count : {100, 3000, 5000}) {  // the walk, then two rebuilds
    std::vector<std::pair<std::size_t, double>> updates(count);
    for (auto& [k, w] : updates) {
      k = static_cast<std::size_t>(uniform(random) * static_cast<double>(weights.size()));
      w = uniform(random) < 0.3 ? 0.0 : uniform(random);
      in_turn.set(k, w);
    }
    at_once.set_many(updates);
    for (std::size_t k = 0; k < weights.size(); ++k) ASSERT_EQ(at_once.weight(k), in_turn.weight(k)) << k;
    EXPECT_NEAR(at_once.total(), in_turn.total(), 1e-9 * in_turn.total());
    int same = 0;
    for (int d = 0; d < 10000; ++d) {
      const double u = uniform(random);
      same += at_once.sample(u) == in_turn.sample(u) ? 1 : 0;
    }
    EXPECT_GE(same, 9990) << "draws differ beyond rounding at interval edges";
  }
  std::vector<std::pair<std::size_t, double>> zeros(weights.size());
  for (std::size_t k = 0; k < zeros.size(); ++k) zeros[k] = {k, 0.0};
  at_once.set_many(zeros);
  EXPECT_FALSE(at_once.any_positive());
  at_once.set_many(std::vector<std::pair<std::size_t, double>>{{42, 0.5}});
  EXPECT_TRUE(at_once.any_positive());
  EXPECT_EQ(at_once.sample(0.7), 42u);
}

TEST(WeightedSampler, EdgeDrawsNeverLandOnZeroWeight) {
  detail::WeightedSampler sampler({0, 0, 5, 0});
  EXPECT_EQ(sampler.sample(0.0), 2u);
  EXPECT_EQ(sampler.sample(0.999999999), 2u);
}

TEST(WeightedSampler, KnowsWhenEveryWeightIsZero) {
  detail::WeightedSampler sampler({0.1, 0.7, 0.3});
  EXPECT_TRUE(sampler.any_positive());
  sampler.set(0, 0);
  sampler.set(2, 0);
  sampler.set(1, 0);  // the tree's total may keep a rounding residue here
  EXPECT_FALSE(sampler.any_positive());
  sampler.set(2, 1e-300);
  EXPECT_TRUE(sampler.any_positive());
  EXPECT_EQ(sampler.sample(0.5), 2u);
}

// Parameters a and b interfere when they are neighbours on a ring of `size` or share a residue mod 7.
// Every candidate the scheduler offers is logged with the answer.
class RingDependency final : public DependencyRole {
 public:
  explicit RingDependency(ParamIndex size) : size_(size) {}
  static bool interferes(ParamIndex a, ParamIndex b, ParamIndex size) {
    return (a + 1) % size == b || (b + 1) % size == a || (a % 7 == b % 7 && a != b);
  }
  void clear() override {
    kept_.clear();
    offered_.clear();
  }
  void prepare(ParamIndex) override {}
  bool admit(ParamIndex candidate) override {
    bool independent = true;
    for (ParamIndex k : kept_) independent = independent && !interferes(candidate, k, size_);
    if (independent) kept_.push_back(candidate);
    offered_.push_back(candidate);
    return independent;
  }
  const std::vector<ParamIndex>& offered() const { return offered_; }

 private:
  ParamIndex size_;
  std::vector<ParamIndex> kept_;
  std::vector<ParamIndex> offered_;
};

TEST(BlockScheduler, KeepsExactlyTheCandidatesThatInterfereWithNoneKept) {
  const ParamIndex size = 60;
  RingDependency dependency(size);
  BlockSchedulerSettings settings;
  settings.block_size = 12;
  settings.seed = 11;
  BlockScheduler scheduler({0, size}, std::vector<double>(size, 1.0), &dependency, settings);
  for (int round = 0; round < 100; ++round) {
    const std::vector<ParamIndex> block = scheduler.next_block();
    ASSERT_FALSE(block.empty());
    // Replay the candidates in the order they were drawn: each is kept if and only if it interferes
    // with none kept before it.
    std::vector<ParamIndex> expected;
    int rejected_in_a_row = 0;
    for (ParamIndex candidate : dependency.offered()) {
      bool independent = true;
      for (ParamIndex k : expected)
        independent = independent && !RingDependency::interferes(candidate, k, size);
      if (independent) {
        expected.push_back(candidate);
        rejected_in_a_row = 0;
      } else {
        ++rejected_in_a_row;
      }
    }
    EXPECT_EQ(block, expected);
    const std::set<ParamIndex> distinct(dependency.offered().begin(), dependency.offered().end());
    EXPECT_EQ(distinct.size(), dependency.offered().size()) << "a candidate was drawn twice in one block";
    // The block stops when full, after 8 rejections in a row, or after 4 draws per kept slot.
    EXPECT_TRUE(block.size() == settings.block_size || rejected_in_a_row == 8 ||
                dependency.offered().size() == 4 * settings.block_size)
        << "block of " << block.size() << " after " << dependency.offered().size() << " draws";
  }
}

TEST(BlockScheduler, PrefersParametersThatChangeMore) {
  BlockSchedulerSettings settings;
  settings.block_size = 1;
  settings.eta = 0.01;
  settings.seed = 5;
  // Changes 0, 1 and 3 for parameters 100..102: weights 0.01, 1.01, 3.01.
  BlockScheduler scheduler({100, 103}, {0.0, 1.0, 3.0}, nullptr, settings);
  std::vector<double> counts(3, 0);
  const int draws = 60000;
  for (int d = 0; d < draws; ++d) counts[scheduler.next_block().at(0) - 100] += 1;
  EXPECT_LT(chi_square(counts, {0.01 / 4.03, 1.01 / 4.03, 3.01 / 4.03}, draws), 13.8);  // 2 dof, 0.1%
  // Reported changes take effect; parameters outside the range are ignored.
  scheduler.report_changes({{100, 5.0}, {101, 0.0}, {102, 0.0}, {7, 100.0}});
  EXPECT_DOUBLE_EQ(scheduler.weight(100), 5.01);
  EXPECT_DOUBLE_EQ(scheduler.weight(101), 0.01);
}

TEST(BlockScheduler, UniformWhenPriorityIsOffAndSquaredWhenAsked) {
  BlockSchedulerSettings settings;
  settings.priority = false;
  BlockScheduler uniform({0, 4}, {0.0, 1.0, 2.0, 3.0}, nullptr, settings);
  for (ParamIndex j = 0; j < 4; ++j) EXPECT_EQ(uniform.weight(j), 1.0);
  settings.priority = true;
  settings.priority_power = 2;
  settings.eta = 0;
  BlockScheduler squared({0, 2}, {0.5, -3.0}, nullptr, settings);
  EXPECT_DOUBLE_EQ(squared.weight(0), 0.25);
  EXPECT_DOUBLE_EQ(squared.weight(1), 9.0);
}

TEST(BlockScheduler, SameSeedSameBlocks) {
  // Seeds that differ only above their low 32 bits are other seeds too.
  for (const std::uint64_t other : {std::uint64_t{43}, std::uint64_t{42} + (std::uint64_t{1} << 32)}) {
    for (bool sweeps : {false, true}) {
      BlockSchedulerSettings settings;
      settings.block_size = 8;
      settings.seed = 42;
      settings.sweeps = sweeps;
      BlockScheduler a({0, 1000}, std::vector<double>(1000, 0.5), nullptr, settings);
      BlockScheduler b({0, 1000}, std::vector<double>(1000, 0.5), nullptr, settings);
      settings.seed = other;
      BlockScheduler other_seed({0, 1000}, std::vector<double>(1000, 0.5), nullptr, settings);
      bool differs = false;
      for (int round = 0; round < 20; ++round) {
        const std::vector<ParamIndex> block = a.next_block();
        EXPECT_EQ(block, b.next_block()) << "sweeps " << sweeps;
        differs = differs || block != other_seed.next_block();
      }
      EXPECT_TRUE(differs) << "seed " << other << " should give other blocks (sweeps " << sweeps << ")";
    }
  }
}

// The coordinator passes on only the changes that differ from a parameter's last one: sound only if
// reporting a parameter's last change again leaves its weight, and so the blocks, as they were,
// drawing by weight and in sweeps alike, also for a parameter that has just stopped or started moving.
// (The sampler's running sums then take other updates, and may round differently in their last bits:
// a draw within that rounding of an interval's edge could go the other way.)
TEST(BlockScheduler, ReportingTheLastChangeAgainChangesNothing) {
  for (bool sweeps : {false, true}) {
    BlockSchedulerSettings settings;
    settings.block_size = 6;
    settings.seed = 9;
    settings.sweeps = sweeps;
    std::vector<double> initial(300, 0.0);
    for (std::size_t k = 0; k < initial.size(); k += 3) initial[k] = 1.0;
    RingDependency told_once_filter(300);
    RingDependency told_again_filter(300);
    BlockScheduler told_once({0, 300}, initial, &told_once_filter, settings);
    BlockScheduler told_again({0, 300}, initial, &told_again_filter, settings);
    std::vector<double> last = initial;
    std::mt19937_64 random(17);
    std::uniform_int_distribution<int> kind(0, 2);
    for (int round = 0; round < 200; ++round) {
      const std::vector<ParamIndex> block = told_once.next_block();
      ASSERT_EQ(block, told_again.next_block()) << "sweeps " << sweeps << ", round " << round;
      std::vector<std::pair<ParamIndex, double>> news;
      std::vector<std::pair<ParamIndex, double>> with_repeats;
      for (ParamIndex j : block) {
        // A third stop moving, a third move by a new amount, a third repeat their last change.
        const int what = kind(random);
        const double change = what == 0 ? 0.0 : what == 1 ? 0.5 + round % 5 : last[j];
        if (change != last[j]) news.emplace_back(j, change);
        with_repeats.emplace_back(j, change);
        last[j] = change;
      }
      // An evaluation's worth of repeats: every parameter's last change, now and then.
      if (round % 25 == 24) {
        for (ParamIndex j = 0; j < 300; ++j) with_repeats.emplace_back(j, last[j]);
      }
      told_once.report_changes(news);
      told_again.report_changes(with_repeats);
      for (ParamIndex j = 0; j < 300; ++j) ASSERT_EQ(told_once.weight(j), told_again.weight(j));
    }
  }
}

TEST(BlockScheduler, SweepsVisitEveryMovingParameterOncePerSweep) {
  // Parameters 200..299; those with an even offset moved (change 1), the others did not (weight eta).
  BlockSchedulerSettings settings;
  settings.sweeps = true;
  settings.block_size = 10;
  settings.seed = 3;
  std::vector<double> changes(100, 0.0);
  for (std::size_t k = 0; k < changes.size(); k += 2) changes[k] = 1.0;
  BlockScheduler scheduler({200, 300}, changes, nullptr, settings);
  std::set<ParamIndex> moving;
  for (ParamIndex j = 200; j < 300; j += 2) moving.insert(j);
  std::vector<ParamIndex> first_order;
  for (int sweep = 0; sweep < 3; ++sweep) {
    std::vector<ParamIndex> visited;
    for (int block = 0; block < 5; ++block) {
      const std::vector<ParamIndex> drawn = scheduler.next_block();
      ASSERT_EQ(drawn.size(), 10u);
      visited.insert(visited.end(), drawn.begin(), drawn.end());
    }
    EXPECT_EQ(std::set<ParamIndex>(visited.begin(), visited.end()), moving) << "sweep " << sweep;
    if (sweep == 0) {
      first_order = visited;
    } else {
      EXPECT_NE(visited, first_order) << "every sweep takes a fresh order";
    }
  }
  // A parameter that stops moving leaves the sweep under way; one that starts joins the next sweep.
  // The opening block and three more stay within one sweep (40 of its 49 remaining after the stop).
  const std::vector<ParamIndex> opening = scheduler.next_block();
  scheduler.report_changes({{opening[0], 0.0}, {201, 2.0}});
  std::set<ParamIndex> rest_of_sweep;
  for (int block = 0; block < 3; ++block) {
    for (ParamIndex j : scheduler.next_block()) rest_of_sweep.insert(j);
  }
  EXPECT_EQ(rest_of_sweep.size(), 30u);
  EXPECT_EQ(rest_of_sweep.count(opening[0]), 0u);
  EXPECT_EQ(rest_of_sweep.count(201), 0u);
  // The next 60 candidates cover the 9 left and all of the next sweep (49 moving and 201).
  std::set<ParamIndex> next_sweep;
  for (int block = 0; block < 6; ++block) {
    for (ParamIndex j : scheduler.next_block()) next_sweep.insert(j);
  }
  EXPECT_EQ(next_sweep.count(opening[0]), 0u);
  EXPECT_EQ(next_sweep.count(201), 1u);
}

TEST(BlockScheduler, SweepsStayFullWhenMostParametersStopMidSweep) {
  // An evaluation after the first block finds 53 of 2,000 parameters still moving: the rest of the
  // sweep under way is mostly parameters that stopped, and the blocks must not shrink to the few
  // moving ones each stretch of it holds.
  BlockSchedulerSettings settings;
  settings.sweeps = true;
  settings.block_size = 32;
  settings.seed = 5;
  const ParamIndex size = 2000;
  BlockScheduler scheduler({0, size}, std::vector<double>(size, 1.0), nullptr, settings);
  const std::vector<ParamIndex> first = scheduler.next_block();
  ASSERT_EQ(first.size(), 32u);
  // The moving ones are all still to come in this sweep, so two blocks take them all: 32, then 21.
  std::vector<std::pair<ParamIndex, double>> stopped;
  std::set<ParamIndex> moving;
  for (ParamIndex j = 0; j < size; ++j) {
    const bool visited = std::find(first.begin(), first.end(), j) != first.end();
    if (j % 37 == 0 && !visited && moving.size() < 53) {
      moving.insert(j);
    } else {
      stopped.emplace_back(j, 0.0);
    }
  }
  scheduler.report_changes(stopped);
  std::set<ParamIndex> kept;
  std::size_t blocks = 0;
  while (kept.size() < moving.size() && blocks < 2) {
    const std::vector<ParamIndex> block = scheduler.next_block();
    ++blocks;
    ASSERT_FALSE(block.empty());
    for (ParamIndex j : block) {
      EXPECT_EQ(moving.count(j), 1u) << j << " stopped moving";
      kept.insert(j);
    }
  }
  EXPECT_EQ(kept, moving) << "after " << blocks << " blocks";
}

TEST(BlockScheduler, SweepsEndABlockAtTheFirstRejection) {
  const ParamIndex size = 60;
  RingDependency dependency(size);
  BlockSchedulerSettings settings;
  settings.sweeps = true;
  settings.block_size = 12;
  settings.seed = 8;
  BlockScheduler scheduler({0, size}, std::vector<double>(size, 1.0), &dependency, settings);
  std::optional<ParamIndex> rejected;  // the candidate that ended the last block, if the filter did
  std::vector<ParamIndex> previous;    // the last block, if it ended at a candidate it held already
  std::vector<ParamIndex> order;       // every parameter kept, in the order kept
  std::vector<int> times_kept(size, 0);
  int ended_by_rejection = 0;
  for (int round = 0; round < 200; ++round) {
    const std::vector<ParamIndex> block = scheduler.next_block();
    ASSERT_FALSE(block.empty());
    const std::vector<ParamIndex>& offered = dependency.offered();
    // What ended the last block opens this one.
    if (rejected) {
      EXPECT_EQ(block.front(), *rejected) << "round " << round;
    }
    if (!previous.empty()) {
      EXPECT_NE(std::find(previous.begin(), previous.end(), block.front()), previous.end())
          << "round " << round;
    }
    // The block is what was offered up to the first rejection, if any, which is the last offered.
    ASSERT_GE(offered.size(), block.size());
    EXPECT_TRUE(std::equal(block.begin(), block.end(), offered.begin())) << "round " << round;
    EXPECT_LE(offered.size(), block.size() + 1) << "round " << round;
    rejected.reset();
    previous.clear();
    if (offered.size() > block.size()) {
      rejected = offered.back();
      ++ended_by_rejection;
    } else if (block.size() < settings.block_size) {
      previous = block;  // the next sweep came to a parameter this block holds
    }
    order.insert(order.end(), block.begin(), block.end());
    for (ParamIndex j : block) ++times_kept[j];
  }
  EXPECT_GT(ended_by_rejection, 100) << "the ring should end most blocks early";
  // Kept in the sweeps' order: the rejection that opens the next block is kept there, so every 60
  // kept in a row are the 60 parameters once each.
  for (std::size_t sweep = 0; sweep + 1 < order.size() / size; ++sweep) {
    const std::set<ParamIndex> swept(order.begin() + static_cast<std::ptrdiff_t>(sweep * size),
                                     order.begin() + static_cast<std::ptrdiff_t>((sweep + 1) * size));
    EXPECT_EQ(swept.size(), static_cast<std::size_t>(size)) << "sweep " << sweep;
  }
  // Nothing starves: over 200 blocks every parameter is kept about equally often.
  const auto [fewest, most] = std::minmax_element(times_kept.begin(), times_kept.end());
  EXPECT_GT(*fewest, 0);
  EXPECT_LE(*most - *fewest, 1);
}

TEST(BlockScheduler, SweepsFallBackToWeightsWhenNothingMoves) {
  BlockSchedulerSettings settings;
  settings.sweeps = true;
  settings.block_size = 4;
  settings.eta = 0.01;
  BlockScheduler scheduler({0, 10}, std::vector<double>(10, 0.0), nullptr, settings);
  EXPECT_EQ(scheduler.next_block().size(), 4u);  // drawn by weight: every parameter weighs eta
  scheduler.retire({0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  EXPECT_TRUE(scheduler.next_block().empty());
}

TEST(BlockScheduler, RevivedParametersAreDrawnAgain) {
  // Parameters 20..29, all retired, then 23 and 27 revived: only they are drawn, at eta's weight, until
  // a change puts one ahead. A revival of a parameter not retired, or of another scheduler's, is nothing.
  BlockSchedulerSettings settings;
  settings.block_size = 2;
  settings.eta = 0.01;
  BlockScheduler scheduler({20, 30}, std::vector<double>(10, 1.0), nullptr, settings);
  scheduler.retire({20, 21, 22, 23, 24, 25, 26, 27, 28, 29});
  EXPECT_TRUE(scheduler.next_block().empty());
  scheduler.revive({23, 27, 40});
  EXPECT_DOUBLE_EQ(scheduler.weight(23), 0.01);
  EXPECT_DOUBLE_EQ(scheduler.weight(21), 0.0);
  for (int round = 0; round < 20; ++round) {
    std::vector<ParamIndex> block = scheduler.next_block();
    std::sort(block.begin(), block.end());
    EXPECT_EQ(block, (std::vector<ParamIndex>{23, 27}));
  }
  scheduler.report_changes({{27, 3.0}, {21, 5.0}});  // 21 stays retired
  EXPECT_DOUBLE_EQ(scheduler.weight(27), 3.0 + 0.01);
  EXPECT_DOUBLE_EQ(scheduler.weight(21), 0.0);
  scheduler.revive({27});
  EXPECT_DOUBLE_EQ(scheduler.weight(27), 3.0 + 0.01);
}

TEST(BlockScheduler, LargeSweepsVisitRunsOfNeighboursInRandomOrder) {
  // Every parameter moves. A sweep of n takes runs of min(16, n / 64) neighbours, the runs in random
  // order: 2,048 parameters in 128 runs of 16, 500 in 72 runs of 7 (the last of 3).
  for (const auto& [count, length] : {std::pair<std::size_t, std::size_t>{2048, 16}, {500, 7}}) {
    BlockSchedulerSettings settings;
    settings.sweeps = true;
    settings.block_size = 50;
    const ParamIndex begin = 1000;
    BlockScheduler scheduler({begin, begin + static_cast<ParamIndex>(count)}, std::vector<double>(count, 1.0),
                             nullptr, settings);
    std::vector<ParamIndex> visited;
    while (visited.size() < count) {
      const std::vector<ParamIndex> block = scheduler.next_block();
      ASSERT_FALSE(block.empty());
      visited.insert(visited.end(), block.begin(), block.end());
    }
    visited.resize(count);  // the last block may open the next sweep
    ASSERT_EQ(std::set<ParamIndex>(visited.begin(), visited.end()).size(), count) << count;
    std::vector<ParamIndex> run_starts;
    for (std::size_t i = 0; i < count;) {
      const ParamIndex start = visited[i];
      ASSERT_EQ((start - begin) % length, 0u) << count << ": a run starts at " << start;
      const std::size_t run = std::min<std::size_t>(length, begin + count - start);
      for (std::size_t k = 0; k < run; ++k)
        ASSERT_EQ(visited[i + k], start + k) << count << ": run at " << start;
      run_starts.push_back(start);
      i += run;
    }
    EXPECT_EQ(run_starts.size(), (count + length - 1) / length);
    EXPECT_FALSE(std::is_sorted(run_starts.begin(), run_starts.end()))
        << count << ": the runs are in random order";
  }
}

TEST(BlockScheduler, CyclicSweepsRepeatIndexOrderAndEndABlockWithTheSweep) {
  // Parameters 100..149; 23 of them move. Blocks of 10 take them in index order, the third block holds
  // the 3 left and ends the sweep, and every sweep is the same.
  BlockSchedulerSettings settings;
  settings.sweeps = true;
  settings.cyclic = true;
  settings.block_size = 10;
  std::vector<double> changes(50, 0.0);
  std::vector<ParamIndex> moving;
  for (std::size_t k = 0; k < changes.size() && moving.size() < 23; k += 2) {
    changes[k] = 1.0;
    moving.push_back(static_cast<ParamIndex>(100 + k));
  }
  BlockScheduler scheduler({100, 150}, changes, nullptr, settings);
  for (int sweep = 0; sweep < 3; ++sweep) {
    std::vector<ParamIndex> visited;
    for (const std::size_t size : {10u, 10u, 3u}) {
      const std::vector<ParamIndex> block = scheduler.next_block();
      ASSERT_EQ(block.size(), size) << "sweep " << sweep;
      EXPECT_EQ(scheduler.ended_sweep(), size == 3u) << "sweep " << sweep;
      visited.insert(visited.end(), block.begin(), block.end());
    }
    EXPECT_EQ(visited, moving) << "sweep " << sweep;
    EXPECT_FALSE(scheduler.settled());
  }
  // When every parameter stops, nothing moves: blocks are drawn by weight and say so.
  std::vector<std::pair<ParamIndex, double>> stopped;
  for (ParamIndex j : moving) stopped.emplace_back(j, 0.0);
  scheduler.report_changes(stopped);
  EXPECT_FALSE(scheduler.next_block().empty());
  EXPECT_TRUE(scheduler.settled());
  EXPECT_FALSE(scheduler.ended_sweep());
}

TEST(SpreadPositions, TakeEveryPlaceOfTheBlockInTurn) {
  Schedule block;
  block.params = {10, 11, 12, 13, 20, 21, 22, 30, 31, 32};  // three schedulers' shares
  block.round = 7;
  EXPECT_EQ(spread_positions(block, 32), (std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  std::vector<int> taken(block.params.size(), 0);
  for (std::uint64_t round = 0; round < block.params.size(); ++round) {
    block.round = round;
    const std::vector<std::size_t> positions = spread_positions(block, 3);
    ASSERT_EQ(positions.size(), 3u);
    EXPECT_EQ(std::set<std::size_t>(positions.begin(), positions.end()).size(), 3u) << "round " << round;
    for (std::size_t k : positions) ++taken[k];
  }
  // Over as many rounds as the block is long, every place (every scheduler's share) moves as often.
  EXPECT_EQ(taken, std::vector<int>(block.params.size(), 3));
}

TEST(SplitParams, CoversTheRangeContiguously) {
  for (int count : {1, 2, 3, 7}) {
    ParamIndex expected_begin = 0;
    for (int s = 0; s < count; ++s) {
      const ParamRange range = split_params(100, s, count);
      EXPECT_EQ(range.begin, expected_begin);
      expected_begin = range.end;
    }
    EXPECT_EQ(expected_begin, 100u);
  }
}

}  // namespace
}  // namespace schmp::detail
