#include "block_scheduler.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <stdexcept>
#include <utility>

namespace schmp::detail {

namespace {

// Drawing by weight, a round draws at most this many candidates per parameter it keeps, and gives up
// after this many rejections in a row: with strongly interfering parameters the block comes out smaller
// rather than the search growing without bound (each rejection costs a dependency test against the
// whole block).
constexpr std::uint32_t kDrawsPerKept = 4;
constexpr std::uint32_t kRejectionsInARow = 8;
constexpr std::uint32_t kInactive = 0xffffffffu;
constexpr std::size_t kPrepareAhead = 8;

// Each scheduler draws from its own stream, fixed by the seed and its index. A seed_seq keeps 32 bits
// of each value: a seed's high half goes in as a value of its own, after the others so that seeds
// below 2^32 keep the streams they always had.
std::mt19937_64 random_stream(const BlockSchedulerSettings& settings) {
  const auto low = static_cast<std::uint32_t>(settings.seed);
  const auto high = static_cast<std::uint32_t>(settings.seed >> 32);
  const auto index = static_cast<std::uint32_t>(settings.index);
  if (high == 0) {
    std::seed_seq seeds{low, index};
    return std::mt19937_64(seeds);
  }
  std::seed_seq seeds{low, index, high};
  return std::mt19937_64(seeds);
}

// A random sweep visits runs of up to this many parameters, neighbours in index order, with the runs
// in random order. Neighbours' data sit together in memory (a program's columns and per-parameter
// arrays), so a run reads them in order; the runs' random order keeps the convergence of a random
// permutation. On sparse sets with thousands of moving coefficients this took about a fifth less time
// to the same objective than single parameters in random order, and the same elsewhere. A sweep has at
// least kRunsInASweep runs (runs of one below that many parameters): a sweep of a few long runs would
// be nearly cyclic, a different method, where the memory it saves is small.
constexpr std::size_t kSweepRun = 16;
constexpr std::size_t kRunsInASweep = 64;

// Puts `order` (any order of distinct offsets) in random order of runs of neighbours.
void shuffle_in_runs(std::vector<std::uint32_t>& order, std::mt19937_64& random) {
  const std::size_t length = std::clamp<std::size_t>(order.size() / kRunsInASweep, 1, kSweepRun);
  if (length == 1) {
    std::shuffle(order.begin(), order.end(), random);
    return;
  }
  std::sort(order.begin(), order.end());
  std::vector<std::size_t> runs((order.size() + length - 1) / length);
  std::iota(runs.begin(), runs.end(), std::size_t{0});
  std::shuffle(runs.begin(), runs.end(), random);
  std::vector<std::uint32_t> sorted;
  sorted.swap(order);
  for (const std::size_t run : runs) {
    const auto begin = sorted.begin() + static_cast<std::ptrdiff_t>(run * length);
    const auto end =
        sorted.begin() + static_cast<std::ptrdiff_t>(std::min(sorted.size(), (run + 1) * length));
    order.insert(order.end(), begin, end);
  }
}

}  // namespace

ParamRange split_params(std::size_t total, int index, int count) {
  const auto begin = total * static_cast<std::size_t>(index) / static_cast<std::size_t>(count);
  const auto end = total * static_cast<std::size_t>(index + 1) / static_cast<std::size_t>(count);
  return {static_cast<ParamIndex>(begin), static_cast<ParamIndex>(end)};
}

BlockScheduler::BlockScheduler(ParamRange owned, const std::vector<double>& initial_changes,
                               DependencyRole* dependency, const BlockSchedulerSettings& settings)
    : owned_(owned),
      dependency_(dependency),
      settings_(settings),
      sampler_([&] {
        if (initial_changes.size() != owned.size())
          throw std::invalid_argument("initial changes: wrong size");
        std::vector<double> weights(initial_changes.size());
        std::transform(initial_changes.begin(), initial_changes.end(), weights.begin(),
                       [&](double c) { return weight_of(c); });
        return weights;
      }()),
      retired_(owned.size(), false),
      random_(random_stream(settings)) {
  if (!settings_.sweeps) return;
  active_at_.assign(owned.size(), kInactive);
  candidate_in_block_.assign(owned.size(), 0);
  for (std::size_t k = 0; k < owned.size(); ++k) note_activity(k, sampler_.weight(k));
}

void BlockScheduler::set_weights() {
  // Only the owned updates count, so that schedulers hosted by the coordinator, which see every
  // parameter's change, update their samplers exactly as scheduler ranks do.
  sampler_.set_many(updates_);
  if (!settings_.sweeps) return;
  for (const auto& [k, weight] : updates_) note_activity(k, weight);
}

void BlockScheduler::note_activity(std::size_t k, double weight) {
  const bool active = settings_.priority ? weight > settings_.eta : weight > 0;
  if (active && active_at_[k] == kInactive) {
    active_at_[k] = static_cast<std::uint32_t>(active_.size());
    active_.push_back(static_cast<std::uint32_t>(k));
  } else if (!active && active_at_[k] != kInactive) {
    const std::uint32_t last = active_.back();
    active_[active_at_[k]] = last;
    active_at_[last] = active_at_[k];
    active_.pop_back();
    active_at_[k] = kInactive;
  }
}

double BlockScheduler::weight_of(double change) const {
  if (!settings_.priority) return 1.0;
  const double magnitude = std::abs(change);
  const double scaled =
      settings_.priority_power == 1 ? magnitude : std::pow(magnitude, settings_.priority_power);
  return std::isfinite(scaled) ? scaled + settings_.eta : settings_.eta;
}

std::vector<ParamIndex> BlockScheduler::next_block() {
  ended_sweep_ = false;
  if (settings_.sweeps) {
    std::vector<ParamIndex> kept = next_block_in_sweeps();
    if (!kept.empty()) return kept;
  }
  return next_block_by_weight();
}

std::vector<ParamIndex> BlockScheduler::next_block_in_sweeps() {
  std::vector<ParamIndex> kept;
  if (dependency_) dependency_->clear();
  ++blocks_;
  std::optional<std::uint32_t> opening = std::exchange(opens_next_block_, std::nullopt);
  // Each active candidate is looked at once: the one that ended the last block, then the sweep,
  // starting a new one at most once. Entries of parameters that stopped moving since the sweep began
  // are passed over without counting, or a sweep that most of its parameters have left would yield
  // blocks of one or two for the rest of its length.
  std::size_t candidates_left = (opening ? 1 : 0) + active_.size();
  bool started_sweep = false;
  while (kept.size() < settings_.block_size && candidates_left > 0) {
    std::uint32_t k = 0;
    if (opening) {
      k = *opening;
      opening.reset();
    } else {
      if (swept_ == sweep_.size()) {
        if (started_sweep || active_.empty() || (settings_.cyclic && !kept.empty())) break;
        sweep_ = active_;
        if (settings_.cyclic) {
          std::sort(sweep_.begin(), sweep_.end());
        } else {
          shuffle_in_runs(sweep_, random_);
        }
        swept_ = 0;
        started_sweep = true;
      }
      k = sweep_[swept_++];
      // Candidates' columns sit at scattered places: the filter fetches a later one's meanwhile.
      if (dependency_ && swept_ + kPrepareAhead < sweep_.size())
        dependency_->prepare(owned_.begin + sweep_[swept_ + kPrepareAhead]);
    }
    if (active_at_[k] == kInactive) continue;
    --candidates_left;
    const ParamIndex candidate = owned_.begin + k;
    // A block ends at a candidate it holds already (from the sweep before) as at one that interferes:
    // either opens the next block, so that no sweep misses it.
    if (candidate_in_block_[k] == blocks_ || (dependency_ && !dependency_->admit(candidate))) {
      opens_next_block_ = k;
      break;
    }
    candidate_in_block_[k] = blocks_;
    kept.push_back(candidate);
  }
  ended_sweep_ = settings_.cyclic && !kept.empty() && swept_ == sweep_.size() && !opens_next_block_;
  return kept;
}

std::vector<ParamIndex> BlockScheduler::next_block_by_weight() {
  std::vector<ParamIndex> kept;
  std::vector<std::pair<std::size_t, double>> drawn;  // to restore the weights after the round
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  if (dependency_) dependency_->clear();
  const std::uint64_t max_draws =
      std::min<std::uint64_t>(owned_.size(), std::uint64_t{settings_.block_size} * kDrawsPerKept);
  std::uint32_t rejections_in_a_row = 0;
  std::size_t examined = 0;  // drawn[examined..] are drawn but not yet offered to the filter
  while (kept.size() < settings_.block_size && rejections_in_a_row < kRejectionsInARow) {
    if (examined == drawn.size()) {
      // Draw as many candidates as the block still needs before testing any, so that the filter can
      // fetch all their data from memory at once.
      const std::size_t wanted =
          std::min<std::uint64_t>(settings_.block_size - kept.size(), max_draws - drawn.size());
      for (std::size_t d = 0; d < wanted && sampler_.any_positive(); ++d) {
        const std::size_t k = sampler_.sample(uniform(random_));
        drawn.emplace_back(k, sampler_.weight(k));
        sampler_.set(k, 0.0);  // without replacement
        if (dependency_) dependency_->prepare(owned_.begin + static_cast<ParamIndex>(k));
      }
      if (examined == drawn.size()) break;
    }
    const ParamIndex candidate = owned_.begin + static_cast<ParamIndex>(drawn[examined++].first);
    // Every candidate is checked, also those whose last change was zero (STRADS skipped them): on
    // strongly correlated columns, several coefficients leaving zero together make the parallel
    // update diverge.
    if (!dependency_ || dependency_->admit(candidate)) {
      kept.push_back(candidate);
      rejections_in_a_row = 0;
    } else {
      ++rejections_in_a_row;
    }
  }
  for (const auto& [k, weight] : drawn) sampler_.set(k, weight);
  return kept;
}

void BlockScheduler::report_changes(const std::vector<std::pair<ParamIndex, double>>& changes) {
  updates_.clear();
  for (const auto& [param, change] : changes) {
    if (owned_.contains(param) && !retired_[param - owned_.begin])
      updates_.emplace_back(param - owned_.begin, weight_of(change));
  }
  set_weights();
}

void BlockScheduler::revive(const std::vector<ParamIndex>& params) {
  updates_.clear();
  for (ParamIndex param : params) {
    if (!owned_.contains(param) || !retired_[param - owned_.begin]) continue;
    retired_[param - owned_.begin] = false;
    updates_.emplace_back(param - owned_.begin, weight_of(0.0));
  }
  set_weights();
}

void BlockScheduler::retire(const std::vector<ParamIndex>& params) {
  updates_.clear();
  for (ParamIndex param : params) {
    if (!owned_.contains(param)) continue;
    retired_[param - owned_.begin] = true;
    updates_.emplace_back(param - owned_.begin, 0.0);
  }
  set_weights();
}

}  // namespace schmp::detail
