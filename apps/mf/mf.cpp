#include "mf.hpp"

#include <tbb/parallel_for.h>

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <stdexcept>

#include "model.hpp"
#include "schmp/kernels/device.hpp"
#include "schmp/kernels/fast_random.hpp"
#include "schmp/output.hpp"
#include "schmp/packed_symmetric.hpp"
#include "schmp/peers.hpp"

namespace schmp::mf {

namespace {

double sum_of(const std::vector<double>& values) {
  return std::accumulate(values.begin(), values.end(), 0.0);
}

void reset(std::vector<double>& values) { std::fill(values.begin(), values.end(), 0.0); }

// A number as the user would write it back: the shortest text that reads as the same double.
std::string shortest(double value) {
  char text[32];
  return std::string(text, std::to_chars(text, text + sizeof text, value).ptr);
}

// The worker grid: eight times as many groups as threads. A diagonal of the grid ends when its
// largest cell does, so small cells keep the threads evenly loaded (measured on 5M ratings with two
// threads: an epoch takes 15% less time with 16 groups than with 4).
int grid_groups(int threads) { return threads > 1 ? 8 * threads : 1; }

// The k x k Gram matrix F'F of `rank` latent columns of rows `width` wide.
std::vector<double> gram_of(const std::vector<double>& factors, int width, int rank) {
  const auto k = static_cast<std::size_t>(rank);
  std::vector<double> gram(k * k, 0.0);
  for (std::size_t at = 0; at < factors.size(); at += static_cast<std::size_t>(width)) {
    const double* row = &factors[at];
    for (std::size_t f = 0; f < k; ++f) {
      if (row[f] == 0) continue;
      for (std::size_t g = f; g < k; ++g) gram[f * k + g] += row[f] * row[g];
    }
  }
  for (std::size_t f = 0; f < k; ++f) {
    for (std::size_t g = 0; g < f; ++g) gram[f * k + g] = gram[g * k + f];
  }
  return gram;
}

}  // namespace

std::vector<io::Rating> MatrixFactorization::Worker::read_own_ratings(
    const std::string& path, const WorkerContext& context,
    const std::function<void(const io::Rating&)>& count) {
  const auto workers = static_cast<std::uint32_t>(context.count);
  std::vector<std::vector<io::Rating>> by_owner(workers);
  Peers& peers = peers_of(context);
  const io::ByteRange range = io::worker_range(path, peers);
  const io::RatingsRead read = io::read_ratings(
      path, config_.index_base, config_.bounds,
      [&](const io::Rating& rating) {
        // An interaction counted 0 times is no interaction: its cell weighs 1 with target 0, as any other.
        if (config_.implicit && !is_interaction(path, rating)) return;
        count(rating);
        by_owner[rating.user % workers].push_back(rating);
      },
      range);
  // A MatrixMarket file's size line counts the entries of every range.
  std::vector<std::uint64_t> ratings{read.ratings};
  peers.sum(ratings);
  if (read.matrix_market) io::check_entry_count(path, *read.matrix_market, ratings[0]);
  std::vector<io::Rating> mine = peers.route(by_owner);
  // Ids as the file writes them: a MatrixMarket file's are 1-based whatever --index_base says.
  const int shown_base = read.matrix_market ? 1 : config_.index_base;
  // Duplicates are refused, in training and test data alike: LIBMF would count both, a database would
  // keep one; neither is what a user who has them meant. A user's ratings all reach one worker. With
  // --implicit the lines are events (a play, a click), so a pair's counts add up instead.
  std::sort(mine.begin(), mine.end(), [](const io::Rating& a, const io::Rating& b) {
    return std::tie(a.user, a.item, a.source) < std::tie(b.user, b.item, b.source);
  });
  if (config_.implicit) {
    std::size_t kept = 0;
    for (std::size_t e = 0; e < mine.size(); ++e) {
      if (kept > 0 && mine[kept - 1].user == mine[e].user && mine[kept - 1].item == mine[e].item) {
        mine[kept - 1].value += mine[e].value;
      } else {
        mine[kept++] = mine[e];
      }
    }
    mine.resize(kept);
    return mine;
  }
  for (std::size_t e = 1; e < mine.size(); ++e) {
    if (mine[e].user == mine[e - 1].user && mine[e].item == mine[e - 1].item) {
      throw io::InputError::at(path, mine[e].source,
                               "duplicate rating of user " + std::to_string(mine[e].user + shown_base) +
                                   " for item " + std::to_string(mine[e].item + shown_base) + " (first on " +
                                   io::line_name(path, mine[e - 1].source, mine[e].source) + ")");
    }
  }
  return mine;
}

bool is_interaction(const std::string& path, const io::Rating& rating) {
  if (rating.value < 0) {
    throw io::InputError::at(
        path, rating.source,
        "negative count " + shortest(rating.value) + " (--implicit reads how often each user met each item)");
  }
  return rating.value > 0;
}

double rating_scale(const MatrixFactorization::Setup& summed, const Config& config) {
  if (config.implicit) return 1;
  const double mean_offset = summed.sum_of_offsets / summed.ratings;
  const double variance = summed.sum_of_squared_offsets / summed.ratings - mean_offset * mean_offset;
  const double deviation = std::sqrt(std::max(0.0, variance));
  // Any spread, however small beside the ratings (1e8 +- 1e-5), is their unit. (LIBMF's floor, an
  // absolute 1e-4, left ratings of 1e-5 stars unscaled, which the solvers' start and rate did not fit.)
  // Ratings that do not vary at all are interactions, not ratings (the offsets are exact: equal ratings
  // give 0): the best explicit model of them is their mean, and no factor learns anything.
  if (deviation > 0) return deviation;
  throw io::InputError(config.data, 0,
                       "every rating is " + shortest(summed.sum / summed.ratings) +
                           ", which leaves the factors nothing to fit; for interactions (clicks, plays, a 1 "
                           "where something happened) use --implicit");
}

ColumnBlock columns_of(const Config& config, std::uint32_t component) {
  if (!config.implicit) return {static_cast<int>(component), 1};
  const int first = static_cast<int>(component) * config.block_size;
  return {first, std::min(config.block_size, config.rank - first)};
}

std::uint32_t component_count(const Config& config) {
  if (config.implicit)
    return static_cast<std::uint32_t>((config.rank + config.block_size - 1) / config.block_size);
  return static_cast<std::uint32_t>(kernels::RowLayout{config.rank, config.biases}.width());
}

double confidence_extra(double count, const Config& config) {
  return config.confidence == Confidence::kLog ? config.alpha * std::log1p(count / config.epsilon)
                                               : config.alpha * count;
}

void check(const Config& config) {
  if (config.data.empty()) throw std::runtime_error("--data is required");
  if (config.early_stop > 0 && config.test.empty())
    throw std::runtime_error("--early_stop watches the test RMSE: it needs --test");
  if (config.algorithm == Algorithm::kCcd && config.lambda == 0)
    throw std::runtime_error("--algorithm ccd needs --lambda > 0 (each coordinate step divides by it)");
  if (!config.implicit) return;
  if (config.algorithm != Algorithm::kCcd)
    throw std::runtime_error(
        "--implicit is fitted by --algorithm ccd: every cell counts, and sgd would sample them");
  if (config.biases) throw std::runtime_error("--implicit fits no biases: its targets are 0 and 1");
  if (config.early_stop > 0)
    throw std::runtime_error("--early_stop watches the test RMSE, which --implicit has not");
}

// ---------------------------------------------------------------------------------------------------
// Worker

MatrixFactorization::Worker::Worker(const Config& config, const WorkerContext& context)
    // The GPU first: --device gpu where none can be used fails at once, before the data is read.
    : config_(config),
      layout_{config.rank, config.biases},
      context_(context),
      gpu_(kernels::pick_gpu(context)) {
  check(config);
  if (config.implicit && gpu_ >= 0)
    throw std::runtime_error("--implicit runs on the CPU: leave out --device gpu");
  const auto workers = static_cast<std::uint32_t>(context.count);
  const auto me = static_cast<std::uint32_t>(context.index);
  // On a GPU a block is one cell: the kernels are parallel within it.
  const int groups = gpu_ >= 0 ? 1 : grid_groups(context.threads);

  // Each worker reads its byte range of the file and hands every rating to the owner of its user; the
  // workers add up the item counts and agree on the job's sizes.
  Peers& peers = peers_of(context);
  std::vector<std::uint64_t> item_counts;
  std::uint64_t user_bound = 0;  // 1 + the largest user id read
  // Rank 0 ends holding the whole model twice (docs/memory.md), 16 bytes per factor of every user and item up
  // to the largest ids, beside its worker's share of the rows and their sums (8 bytes per factor and 32 more
  // per id). A stray huge id is refused at its line, not met by the OOM killer.
  const double bytes_per_id = 16.0 * layout_.width() + (8.0 * layout_.width() + 32) / workers;
  // Asked once: a file sorted by user raises the largest id at nearly every line.
  const auto memory = static_cast<double>(io::memory_limit());
  const auto check_ids = [&](const io::Rating& rating, const char* kind, std::uint32_t id,
                             std::uint64_t users, std::uint64_t items) {
    const double bytes = static_cast<double>(users + items) * bytes_per_id;
    if (memory == 0 || bytes <= memory) return;
    const int shown_base = io::is_matrix_market(config.data) ? 1 : config.index_base;
    io::check_memory(config.data, rating.source,
                     std::string(kind) + " id " + std::to_string(std::uint64_t{id} + shown_base) + ", at " +
                         std::to_string(static_cast<int>(bytes_per_id)) +
                         " bytes for each user and item up to the largest ids,",
                     bytes);
  };
  std::vector<io::Rating> mine = read_own_ratings(config.data, context, [&](const io::Rating& rating) {
    if (rating.user >= user_bound) {
      check_ids(rating, "user", rating.user, rating.user + std::uint64_t{1}, item_counts.size());
      user_bound = rating.user + std::uint64_t{1};
    }
    if (rating.item >= item_counts.size()) {
      check_ids(rating, "item", rating.item, user_bound, rating.item + std::uint64_t{1});
      item_counts.resize(rating.item + std::size_t{1}, 0);
    }
    ++item_counts[rating.item];
  });
  users_ = static_cast<std::uint32_t>(peers.max(user_bound));
  peers.sum(item_counts);
  if (users_ == 0) throw io::InputError(config.data, 0, "no ratings");
  items_ = static_cast<std::uint32_t>(item_counts.size());
  item_counts_.assign(item_counts.begin(), item_counts.end());

  // The origin of Setup's offsets: the first rating of the first worker that holds any, which each
  // worker hands every other.
  std::vector<std::vector<double>> first_rating(workers);
  if (!mine.empty()) {
    for (auto& to : first_rating) to.push_back(mine.front().value);
  }
  const std::vector<double> first_ratings = peers.route(first_rating);
  offset_origin_ = first_ratings.empty() ? 0.0 : first_ratings.front();

  const std::uint32_t own_users = users_ > me ? (users_ - me + workers - 1) / workers : 0;
  user_counts_.assign(own_users, 0.0);
  // A user group is a contiguous range of rows, so that threads on different cells rarely write
  // neighbouring users' 8-byte sums. Items go to sub-blocks by id modulo the group count instead:
  // popular items often have neighbouring ids, and ranges would pile them into one cell.
  auto cell_of = [&](Cells & cells, std::uint32_t user_row, std::uint32_t item) -> auto& {
    const std::uint32_t block = item % workers;
    const std::uint64_t item_row = item / workers;
    const auto group =
        static_cast<int>(std::uint64_t{user_row} * static_cast<std::uint64_t>(groups) / own_users);
    const auto sub_block = static_cast<int>(item_row % static_cast<std::uint64_t>(groups));
    return cells.at(static_cast<int>(block), group, sub_block);
  };
  train_ = Cells(context.count, groups);
  test_ = Cells(context.count, groups);
  if (config.implicit && !config.test.empty())
    hold_out(mine, read_own_ratings(config.test, context, [](const io::Rating&) {}));
  for (const io::Rating& rating : mine) {
    const std::uint32_t user_row = rating.user / workers;
    user_counts_[user_row] += 1;
    cell_of(train_, user_row, rating.item)
        .push_back(kernels::CellRating{user_row, rating.item / workers, rating.value});
  }
  mine = std::vector<io::Rating>();  // a fresh vector: assigning {} would keep the memory

  if (!config.test.empty() && !config.implicit) {
    for (const io::Rating& rating : read_own_ratings(config.test, context, [](const io::Rating&) {})) {
      const std::uint32_t user_row = rating.user / workers;
      const bool known = rating.user < users_ && user_counts_[user_row] > 0 && rating.item < items_ &&
                         item_counts_[rating.item] > 0;
      if (!known) {
        cold_test_.push_back(rating.value);
        continue;
      }
      cell_of(test_, user_row, rating.item)
          .push_back(kernels::CellRating{user_row, rating.item / workers, rating.value});
    }
  }
}

void MatrixFactorization::Worker::hold_out(const std::vector<io::Rating>& mine,
                                           std::vector<io::Rating> held_out) {
  const auto workers = static_cast<std::uint32_t>(context_.count);
  const std::size_t rows = user_counts_.size();
  seen_.assign(rows, {});
  held_out_.assign(rows, {});
  for (const io::Rating& rating : mine) seen_[rating.user / workers].push_back(rating.item);
  for (const io::Rating& rating : held_out) {
    const std::uint32_t row = rating.user / workers;
    if (row < rows && !std::binary_search(seen_[row].begin(), seen_[row].end(), rating.item))
      held_out_[row].push_back(rating.item);  // sorted: the reader sorts by user and item
  }
  for (std::uint32_t row = 0; row < rows; ++row) {
    if (!seen_[row].empty() && !held_out_[row].empty()) ranked_rows_.push_back(row);
  }
  top_.assign(ranked_rows_.size(), TopItems(config_.top));
}

void MatrixFactorization::Worker::rank_block(std::uint32_t block, const Block& held) {
  if (ranked_rows_.empty()) return;
  const auto width = static_cast<std::size_t>(layout_.width());
  const auto workers = static_cast<std::uint32_t>(context_.count);
  const std::size_t items = held.factors.size() / width;
  std::vector<double> ranked_factors;
  for (const std::uint32_t row : ranked_rows_) {
    const auto from = user_factors_.begin() + static_cast<std::ptrdiff_t>(row * width);
    ranked_factors.insert(ranked_factors.end(), from, from + static_cast<std::ptrdiff_t>(width));
  }
  score_all(ranked_factors, held.factors, width, [&](std::size_t r, const double* scores) {
    offer_unseen(top_[r], scores, items, block, workers, seen_[ranked_rows_[r]],
                 [&](std::uint32_t item) { return item_counts_[item] > 0; });
  });
}

MatrixFactorization::Setup MatrixFactorization::Worker::setup() const {
  Setup setup;
  for (const auto& cell : train_.all()) {
    for (const kernels::CellRating& rating : cell) {
      setup.ratings += 1;
      setup.sum += rating.value;
      const double offset = rating.value - offset_origin_;
      setup.sum_of_offsets += offset;
      setup.sum_of_squared_offsets += offset * offset;
    }
  }
  for (const auto& cell : test_.all()) setup.test_ratings += static_cast<double>(cell.size());
  setup.test_ratings += static_cast<double>(cold_test_.size());
  for (const std::uint32_t row : ranked_rows_)
    setup.test_ratings += static_cast<double>(held_out_[row].size());
  return setup;
}

void MatrixFactorization::Worker::start(const Setup& summed) {
  mean_ = summed.sum / summed.ratings;
  scale_ = rating_scale(summed, config_);
  lambda_ = config_.lambda / scale_;
  if (config_.implicit) {
    for (auto& cell : train_.all()) {
      for (kernels::CellRating& rating : cell) rating.value = confidence_extra(rating.value, config_);
    }
  } else {
    // With biases the model predicts mean + b_u + c_j + w.h, so the internal ratings are centred.
    const double offset = config_.biases ? mean_ : 0.0;
    for (Cells* cells : {&train_, &test_}) {
      for (auto& cell : cells->all()) {
        for (kernels::CellRating& rating : cell) rating.value = (rating.value - offset) / scale_;
      }
    }
  }
  // Unknown users or items are predicted by the mean: their error is fixed, in internal units.
  for (const double value : cold_test_) {
    cold_squared_error_ += (value - mean_) * (value - mean_) / (scale_ * scale_);
    cold_absolute_error_ += std::abs(value - mean_) / scale_;
  }
  cold_test_ = std::vector<double>();

  const auto width = static_cast<std::size_t>(layout_.width());
  user_factors_.assign(user_counts_.size() * width, 0.0);
  for (std::size_t row = 0; row < user_counts_.size(); ++row) {
    if (user_counts_[row] > 0)
      initialise(&user_factors_[row * width], row * context_.count + context_.index, /*user=*/true,
                 /*random=*/true);
  }
  if (config_.algorithm == Algorithm::kSgd) {
    user_gradient_sums_.assign(user_counts_.size(), 1.0);
  } else {
    numerator_.assign(user_counts_.size() * gathered_per_row(), 0.0);
    denominator_.assign(user_counts_.size() * packed_size(gathered_per_row()), 0.0);
    // Items and biases start at zero (see make_block), so the residuals start as the targets themselves.
    residuals_.clear();
    for (const auto& cell : train_.all()) {
      std::vector<double>& residuals = residuals_.emplace_back(cell.size());
      for (std::size_t e = 0; e < cell.size(); ++e) residuals[e] = target(cell[e]);
    }
  }
  const auto groups = static_cast<std::size_t>(train_.groups());
  error_by_group_.assign(groups, 0.0);
  absolute_by_group_.assign(groups, 0.0);
  test_error_by_group_.assign(groups, 0.0);
  if (gpu_ >= 0) {
    device_ = kernels::make_factor_device(gpu_, layout_, train_.all(), test_.all(), user_counts_);
    move_users_to_gpu();
  }
}

void MatrixFactorization::Worker::move_users_to_gpu() {
  device_->set_users(user_factors_, user_gradient_sums_);
  if (config_.algorithm == Algorithm::kCcd) device_->set_residuals(residuals_);
  user_factors_ = std::vector<double>();
  user_gradient_sums_ = std::vector<double>();
  residuals_ = {};
}

std::vector<double> MatrixFactorization::Worker::current_user_factors() const {
  return device_ ? device_->user_factors() : user_factors_;
}

std::vector<double> MatrixFactorization::Worker::current_user_gradient_sums() const {
  return device_ ? device_->user_gradient_sums() : user_gradient_sums_;
}

void MatrixFactorization::Worker::initialise(double* row, std::uint64_t id, bool user, bool random) const {
  // Latent entries U(0, 1) / sqrt(rank) in internal units, as LIBMF starts; biases 0 beside their 1.
  // They are hashed from the seed and the id alone, so they do not depend on how many workers there are.
  std::uint64_t state = context_.seed * 0x2545F4914F6CDD1Dull + id * 2 + (user ? 0 : 1);
  const double scale = 1.0 / std::sqrt(static_cast<double>(layout_.rank));
  for (int d = 0; d < layout_.rank; ++d) {
    row[d] = random ? static_cast<double>(kernels::splitmix64(state) >> 11) * 0x1.0p-53 * scale : 0.0;
  }
  if (layout_.biases) {
    row[layout_.user_bias()] = user ? 0.0 : 1.0;
    row[layout_.item_bias()] = user ? 1.0 : 0.0;
  }
}

std::uint32_t MatrixFactorization::Worker::block_items(std::uint32_t block) const {
  const auto workers = static_cast<std::uint32_t>(context_.count);
  return items_ > block ? (items_ - block + workers - 1) / workers : 0;
}

MatrixFactorization::Block MatrixFactorization::Worker::make_block() const {
  const auto home = static_cast<std::uint32_t>(context_.index);
  const std::uint32_t rows = block_items(home);
  const auto width = static_cast<std::size_t>(layout_.width());
  const bool sgd = config_.algorithm == Algorithm::kSgd;
  Block block;
  block.factors.assign(rows * width, 0.0);
  // CCD++ starts the items at zero: a user round then has something to fit against once they move.
  for (std::uint32_t row = 0; row < rows; ++row) {
    const std::uint64_t item = static_cast<std::uint64_t>(row) * context_.count + home;
    if (item_counts_[item] > 0) initialise(&block.factors[row * width], item, /*user=*/false, /*random=*/sgd);
  }
  if (sgd) block.gradient_sums.assign(rows, 1.0);
  return block;
}

template <class Work>
void MatrixFactorization::Worker::for_each_cell(std::uint32_t block, Work work) {
  const int groups = train_.groups();
  const int b = static_cast<int>(block);
  if (groups == 1) {
    work(train_.index(b, 0, 0), 0);
    return;
  }
  for (int diagonal = 0; diagonal < groups; ++diagonal) {
    tbb::parallel_for(0, groups,
                      [&](int group) { work(train_.index(b, group, (group + diagonal) % groups), group); });
  }
}

void MatrixFactorization::Worker::update(const Step& step, std::uint32_t block, Block& held) {
  // On a GPU the block is one cell (see the constructor).
  const std::size_t gpu_cell = train_.index(static_cast<int>(block), 0, 0);
  if (step.algorithm == Algorithm::kSgd) {
    if (device_) {
      error_by_group_[0] +=
          device_->sgd_pass(gpu_cell, held.factors, held.gradient_sums, lambda_, config_.learning_rate);
      return;
    }
    for_each_cell(block, [&](std::size_t cell, int group) {
      error_by_group_[static_cast<std::size_t>(group)] += kernels::sgd_pass(
          train_.all()[cell], {user_factors_.data(), user_gradient_sums_.data()},
          {held.factors.data(), held.gradient_sums.data()}, layout_, lambda_, config_.learning_rate);
    });
    return;
  }
  if (step.gram) return;  // summed at the round's end
  if (!step.users && held.numerator.empty()) {
    // The block's first gathering this round: its home worker's, at the first sub-round.
    const std::size_t rows = block_items(block);
    held.numerator.assign(rows * gathered_per_row(), 0.0);
    held.denominator.assign(rows * packed_size(gathered_per_row()), 0.0);
  }
  const int component = static_cast<int>(step.component);
  const bool relift = lifted_ != component;
  const int lifted = relift ? lifted_ : -1;
  const ColumnBlock columns = columns_of(config_, step.component);
  const ColumnBlock lifted_columns =
      lifted >= 0 ? columns_of(config_, static_cast<std::uint32_t>(lifted)) : ColumnBlock{-1, 0};
  if (block == static_cast<std::uint32_t>(context_.index) && context_.count > 1)
    narrow(held, columns, lifted_columns);
  const kernels::FactorColumns items =
      narrow_ ? kernels::FactorColumns{held.factors.data(),
                                       columns.span + lifted_columns.span,
                                       0,
                                       lifted >= 0 ? columns.span : -1,
                                       columns.span,
                                       lifted_columns.span}
              : kernels::FactorColumns{held.factors.data(),  layout_.width(), columns.first,
                                       lifted_columns.first, columns.span,    lifted_columns.span};
  if (device_) {
    device_->ccd_gather(gpu_cell, component, lifted, items, block_items(block), relift, step.users,
                        held.numerator, held.denominator);
    return;
  }
  const kernels::FactorColumns users{user_factors_.data(), layout_.width(), columns.first,
                                     lifted_columns.first, columns.span,    lifted_columns.span};
  double* numerator = step.users ? numerator_.data() : held.numerator.data();
  double* denominator = step.users ? denominator_.data() : held.denominator.data();
  const auto gather = config_.implicit ? kernels::ccd_gather_one_class : kernels::ccd_gather;
  for_each_cell(block, [&](std::size_t cell, int) {
    gather(train_.all()[cell], residuals_[cell], users, items, relift, step.users, numerator, denominator);
  });
}

void MatrixFactorization::Worker::narrow(Block& home, ColumnBlock columns, ColumnBlock lifted) {
  // A CCD++ round reads the round's columns and the lifted ones of the item rows and writes none (the
  // home worker solves at the end), so the block travels as a copy of those: (k + 2) / 2 times fewer
  // bytes around the ring for one column each.
  const auto width = static_cast<std::size_t>(layout_.width());
  const auto round_span = static_cast<std::size_t>(columns.span);
  const auto lifted_span = static_cast<std::size_t>(lifted.first >= 0 ? lifted.span : 0);
  const std::size_t copied = round_span + lifted_span;
  home_factors_.swap(home.factors);
  const std::size_t rows = home_factors_.size() / width;
  home.factors.resize(rows * copied);
  for (std::size_t row = 0; row < rows; ++row) {
    const double* from = &home_factors_[row * width];
    double* to = &home.factors[row * copied];
    std::copy_n(from + columns.first, round_span, to);
    if (lifted_span > 0) std::copy_n(from + lifted.first, lifted_span, to + round_span);
  }
  narrow_ = true;
}

MatrixFactorization::Partial MatrixFactorization::Worker::end_update(const Step& step, Block& home) {
  Partial partial;
  if (step.algorithm == Algorithm::kSgd) {
    partial.squared_error = sum_of(error_by_group_);
    reset(error_by_group_);
    return partial;
  }
  const int width = layout_.width();
  if (step.gram) {
    partial.gram = gram_of(user_factors_, width, layout_.rank);
    const std::vector<double> items = gram_of(home.factors, width, layout_.rank);
    partial.gram.insert(partial.gram.end(), items.begin(), items.end());
    return partial;
  }
  if (narrow_) {
    home.factors.swap(home_factors_);  // the full rows again; the narrow copy has done its travels
    narrow_ = false;
  }
  // The exact minimiser of each row's entry `component`: a quadratic a x^2 - 2 b x + c with
  // a = lambda n + denominator and b = numerator, so the objective falls by a (x_old - x_new)^2. (The
  // coordinator never asks for a fixed 1 of the bias layout: a user round on the item bias, say.)
  const std::size_t f = step.component;
  auto solve = [&](std::vector<double>& factors, std::vector<double>& numerator,
                   std::vector<double>& denominator, auto count_of) {
    if (config_.implicit) return solve_one_class(step, factors, numerator, denominator, count_of, partial);
    for (std::size_t row = 0; row < numerator.size(); ++row) {
      const double count = count_of(row);
      if (count > 0) {
        double& x = factors[row * static_cast<std::size_t>(width) + f];
        const double curvature = lambda_ * count + denominator[row];
        const double solved = numerator[row] / curvature;
        partial.decrease += curvature * (x - solved) * (x - solved);
        x = solved;
      }
      numerator[row] = 0;
      denominator[row] = 0;
    }
  };
  if (step.users && device_) {
    partial.decrease = device_->ccd_solve_users(static_cast<int>(step.component), lambda_);
  } else if (step.users) {
    solve(user_factors_, numerator_, denominator_, [&](std::size_t row) { return user_counts_[row]; });
  } else {
    const std::uint64_t home_block = static_cast<std::uint64_t>(context_.index);
    solve(home.factors, home.numerator, home.denominator, [&](std::size_t row) {
      return item_counts_[row * static_cast<std::uint64_t>(context_.count) + home_block];
    });
    home.numerator.clear();
    home.denominator.clear();
  }
  lifted_ = static_cast<int>(step.component);
  return partial;
}

template <class CountOf>
void MatrixFactorization::Worker::solve_one_class(const Step& step, std::vector<double>& factors,
                                                  std::vector<double>& numerator,
                                                  std::vector<double>& denominator, CountOf count_of,
                                                  Partial& partial) const {
  // Each row's block x_B minimises x' A x - 2 b' x with A = lambda I + G_BB + the gathered (c - 1) h h'
  // and b = the gathered sums less G_{B,-B} x_{-B} (mf.hpp), G the other side's Gram rows of B: a
  // Cholesky solve. The objective falls by (x_old - x_new)' A (x_old - x_new). Rows go in fixed chunks
  // whose sums are added in order, so that the threads do not change the result.
  const ColumnBlock columns = columns_of(config_, step.component);
  const auto span = static_cast<std::size_t>(columns.span), first = static_cast<std::size_t>(columns.first);
  const auto k = static_cast<std::size_t>(layout_.rank), width = static_cast<std::size_t>(layout_.width());
  const std::size_t packed = packed_size(span), rows = factors.size() / width;
  constexpr std::size_t kChunk = 256;
  const std::size_t chunks = (rows + kChunk - 1) / kChunk;
  std::vector<double> decrease(chunks, 0.0), gram(chunks * span * k, 0.0);
  // G's rows of the block by column, so that G_{B,-B} x_{-B} sums every row of the block at once, each
  // in the order of g: the span sums are independent and vectorise.
  std::vector<double> by_column(k * span);
  for (std::size_t c = 0; c < span; ++c) {
    for (std::size_t g = 0; g < k; ++g) by_column[g * span + c] = step.gram_row[c * k + g];
  }
  tbb::parallel_for(std::size_t{0}, chunks, [&](std::size_t chunk) {
    // Made once per chunk: a row's solve allocates nothing.
    Eigen::MatrixXd a(span, span);
    Eigen::LLT<Eigen::MatrixXd> factored(static_cast<Eigen::Index>(span));
    Eigen::VectorXd b(span), solved(span), step_taken(span), moved(span), others(span);
    double* chunk_gram = &gram[chunk * span * k];
    for (std::size_t row = chunk * kChunk; row < std::min(rows, (chunk + 1) * kChunk); ++row) {
      double* x = &factors[row * width];
      const double* sums = &numerator[row * span];
      const double* products = &denominator[row * packed];
      if (count_of(row) > 0) {
        others.setZero();
        auto add_column = [&](std::size_t g) {
          const double* column = &by_column[g * span];
          for (std::size_t c = 0; c < span; ++c) others(c) += column[c] * x[g];
        };
        for (std::size_t g = 0; g < first; ++g) add_column(g);
        for (std::size_t g = first + span; g < k; ++g) add_column(g);
        for (std::size_t c = 0; c < span; ++c) {
          const double* gram_row = &step.gram_row[c * k];
          b(c) = sums[c] - others(c);
          for (std::size_t d = 0; d <= c; ++d)
            a(c, d) = a(d, c) = gram_row[first + d] + products[packed_index(d, c)];
          a(c, c) += lambda_;
        }
        factored.compute(a);
        solved = b;
        factored.solveInPlace(solved);
        for (std::size_t c = 0; c < span; ++c) step_taken(c) = x[first + c] - solved(c);
        moved.noalias() = a * step_taken;
        decrease[chunk] += step_taken.dot(moved);
        for (std::size_t c = 0; c < span; ++c) x[first + c] = solved(c);
        for (std::size_t c = 0; c < span; ++c) {
          for (std::size_t g = 0; g < k; ++g) chunk_gram[c * k + g] += x[first + c] * x[g];
        }
      }
      std::fill_n(&numerator[row * span], span, 0.0);
      std::fill_n(&denominator[row * packed], packed, 0.0);
    }
  });
  partial.gram.assign(span * k, 0.0);
  for (std::size_t chunk = 0; chunk < chunks; ++chunk) {
    partial.decrease += decrease[chunk];
    for (std::size_t e = 0; e < span * k; ++e) partial.gram[e] += gram[chunk * span * k + e];
  }
}

void MatrixFactorization::Worker::evaluate(std::uint32_t block, const Block& held) {
  if (device_) {
    const auto [train, test] = device_->error_sums(train_.index(static_cast<int>(block), 0, 0), held.factors);
    error_by_group_[0] += train.squared;
    test_error_by_group_[0] += test.squared;
    absolute_by_group_[0] += test.absolute;
    return;
  }
  const int width = layout_.width();
  if (config_.implicit) {
    for_each_cell(block, [&](std::size_t cell, int group) {
      error_by_group_[static_cast<std::size_t>(group)] +=
          kernels::one_class_loss(train_.all()[cell], user_factors_.data(), held.factors.data(), width);
    });
    rank_block(block, held);
    return;
  }
  for_each_cell(block, [&](std::size_t cell, int group) {
    const auto g = static_cast<std::size_t>(group);
    error_by_group_[g] +=
        kernels::error_sums(train_.all()[cell], user_factors_.data(), held.factors.data(), width).squared;
    const kernels::ErrorSums test =
        kernels::error_sums(test_.all()[cell], user_factors_.data(), held.factors.data(), width);
    test_error_by_group_[g] += test.squared;
    absolute_by_group_[g] += test.absolute;
  });
}

MatrixFactorization::Stats MatrixFactorization::Worker::end_evaluation(const Block& home) {
  Stats stats;
  stats.squared_error = sum_of(error_by_group_);
  stats.test_squared_error = sum_of(test_error_by_group_) + cold_squared_error_;
  stats.test_absolute_error = sum_of(absolute_by_group_) + cold_absolute_error_;
  reset(error_by_group_);
  reset(test_error_by_group_);
  reset(absolute_by_group_);
  if (config_.implicit) {
    // Every cell's (w.h)^2 and the penalty follow from the Gram matrices.
    stats.gram_users = gram_of(user_factors_, layout_.width(), layout_.rank);
    stats.gram_items = gram_of(home.factors, layout_.width(), layout_.rank);
    for (std::size_t r = 0; r < ranked_rows_.size(); ++r)
      add_ranking(top_[r].take(), held_out_[ranked_rows_[r]], config_.top, stats.ranking);
    return stats;
  }
  // The penalty covers every entry but the fixed 1 of a biased row.
  const auto width = static_cast<std::size_t>(layout_.width());
  auto squared_norm = [&](const std::vector<double>& factors, std::size_t row, int fixed) {
    double sum = 0;
    for (std::size_t d = 0; d < width; ++d) {
      if (static_cast<int>(d) != fixed) sum += factors[row * width + d] * factors[row * width + d];
    }
    return sum;
  };
  const int user_fixed = layout_.biases ? layout_.item_bias() : -1;
  const int item_fixed = layout_.biases ? layout_.user_bias() : -1;
  const std::vector<double> downloaded = device_ ? device_->user_factors() : std::vector<double>{};
  const std::vector<double>& user_factors = device_ ? downloaded : user_factors_;
  for (std::size_t row = 0; row < user_counts_.size(); ++row)
    stats.penalty += user_counts_[row] * squared_norm(user_factors, row, user_fixed);
  const std::size_t home_rows = home.factors.size() / width;
  for (std::size_t row = 0; row < home_rows; ++row) {
    stats.penalty += item_counts_[row * static_cast<std::size_t>(context_.count) +
                                  static_cast<std::size_t>(context_.index)] *
                     squared_norm(home.factors, row, item_fixed);
  }
  return stats;
}

void MatrixFactorization::Worker::keep(const Block& home) {
  kept_ = true;
  kept_user_factors_ = current_user_factors();
  kept_item_factors_ = home.factors;
}

MatrixFactorization::Part MatrixFactorization::Worker::part(const Block& home) const {
  Part part;
  part.users = users_;
  part.items = items_;
  part.user_factors = kept_ ? kept_user_factors_ : current_user_factors();
  for (const double count : user_counts_) part.user_trained.push_back(count > 0 ? 1 : 0);
  part.item_factors = kept_ ? kept_item_factors_ : home.factors;
  const std::size_t rows = home.factors.size() / static_cast<std::size_t>(layout_.width());
  for (std::size_t row = 0; row < rows; ++row) {
    const std::size_t item =
        row * static_cast<std::size_t>(context_.count) + static_cast<std::size_t>(context_.index);
    part.item_trained.push_back(item_counts_[item] > 0 ? 1 : 0);
  }
  return part;
}

MatrixFactorization::Saved MatrixFactorization::Worker::save(const Block& home) const {
  Saved saved;
  saved.worker = static_cast<std::uint32_t>(context_.index);
  saved.workers = static_cast<std::uint32_t>(context_.count);
  saved.user_factors = current_user_factors();
  saved.user_gradient_sums = current_user_gradient_sums();
  saved.item_factors = home.factors;
  saved.item_gradient_sums = home.gradient_sums;
  if (kept_) {
    saved.kept = 1;
    saved.kept_user_factors = kept_user_factors_;
    saved.kept_item_factors = kept_item_factors_;
  }
  return saved;
}

void MatrixFactorization::Worker::restore(const Saved& share, Block& home) {
  const auto width = static_cast<std::size_t>(layout_.width());
  const bool ccd = config_.algorithm == Algorithm::kCcd;
  if (!restoring_) {
    if (share.workers == 0) throw std::runtime_error("a share of the checkpoint counts no workers");
    restoring_.emplace(Restoring{0, share.workers, share.kept != 0, {}});
    // CCD++'s residuals need the rows of every item its ratings meet, which are spread over the shares.
    if (ccd) restoring_->item_factors.resize(static_cast<std::size_t>(items_) * width);
  }
  Restoring& restoring = *restoring_;
  if (share.worker != restoring.shares || share.workers != restoring.workers ||
      (share.kept != 0) != restoring.kept)
    throw std::runtime_error("the checkpoint's shares are out of order");
  ++restoring.shares;
  const auto workers = static_cast<std::uint64_t>(share.workers);
  // A share holds exactly its worker's rows of every user and item: ratings read otherwise (another
  // --index_base shifts every id by one) count other users or items, and their rows would land on
  // other ids unnoticed.
  const auto rows_of = [&](std::uint64_t ids) {
    return ids > share.worker ? (ids - share.worker + workers - 1) / workers : 0;
  };
  const std::uint64_t share_users = rows_of(users_), share_items = rows_of(items_);
  const auto fits = [&](const std::vector<double>& values, std::uint64_t rows, std::size_t per_row) {
    return values.size() == rows * per_row;
  };
  const bool kept_fit = share.kept == 0 || (fits(share.kept_user_factors, share_users, width) &&
                                            fits(share.kept_item_factors, share_items, width));
  const bool sums_fit = ccd || (fits(share.user_gradient_sums, share_users, 1) &&
                                fits(share.item_gradient_sums, share_items, 1));
  if (!fits(share.user_factors, share_users, width) || !fits(share.item_factors, share_items, width) ||
      !kept_fit || !sums_fit) {
    throw std::runtime_error(
        "the checkpoint does not fit this data: it holds the factors of other users or "
        "items (another --index_base?)");
  }
  // The rows of this worker's `rows` (users or its home items) that this share holds: those of id
  // `id` with id mod workers = share.worker. Width doubles of `from` each, or one of a per-row field.
  auto copy_rows = [&](std::size_t rows, const std::vector<double>& from, std::size_t per_row,
                       std::vector<double>& into) {
    into.resize(rows * per_row);
    for (std::size_t row = 0; row < rows; ++row) {
      const std::uint64_t id =
          row * static_cast<std::uint64_t>(context_.count) + static_cast<std::uint64_t>(context_.index);
      if (id % workers != share.worker) continue;
      const std::size_t at = static_cast<std::size_t>(id / workers) * per_row;
      std::copy_n(from.begin() + static_cast<std::ptrdiff_t>(at), per_row,
                  into.begin() + static_cast<std::ptrdiff_t>(row * per_row));
    }
  };
  const std::size_t users = user_counts_.size();
  const std::size_t items = home.factors.size() / width;
  copy_rows(users, share.user_factors, width, user_factors_);
  copy_rows(items, share.item_factors, width, home.factors);
  if (!ccd) {
    copy_rows(users, share.user_gradient_sums, 1, user_gradient_sums_);
    copy_rows(items, share.item_gradient_sums, 1, home.gradient_sums);
  }
  if (keeps_restored_model()) {
    copy_rows(users, share.kept_user_factors, width, kept_user_factors_);
    copy_rows(items, share.kept_item_factors, width, kept_item_factors_);
  }
  if (ccd) {
    for (std::uint64_t item = share.worker; item < items_; item += workers) {
      const std::size_t at = static_cast<std::size_t>(item / workers) * width;
      std::copy_n(share.item_factors.begin() + static_cast<std::ptrdiff_t>(at), width,
                  restoring.item_factors.begin() + static_cast<std::ptrdiff_t>(item * width));
    }
  }
}

void MatrixFactorization::Worker::finish_restore(Block&) {
  if (!restoring_) throw std::runtime_error("the checkpoint has no workers' shares");
  if (restoring_->shares != restoring_->workers) {
    throw std::runtime_error("the checkpoint holds " + std::to_string(restoring_->shares) + " of its " +
                             std::to_string(restoring_->workers) + " workers' shares");
  }
  kept_ = keeps_restored_model();
  if (config_.algorithm == Algorithm::kCcd) {
    // CCD++: every residual r - w.h with no component lifted, as at the start. (With --device gpu the
    // host's residuals were dropped: they are made anew here.)
    const auto width = static_cast<std::size_t>(layout_.width());
    const std::vector<double>& item_factors = restoring_->item_factors;
    lifted_ = -1;
    const auto cells_per_block = static_cast<std::size_t>(train_.groups() * train_.groups());
    residuals_.resize(train_.all().size());
    for (std::size_t c = 0; c < train_.all().size(); ++c) {
      const auto block = static_cast<std::uint64_t>(c / cells_per_block);
      const auto& cell = train_.all()[c];
      residuals_[c].resize(cell.size());
      for (std::size_t e = 0; e < cell.size(); ++e) {
        const std::uint64_t item = cell[e].item * static_cast<std::uint64_t>(context_.count) + block;
        const double* h = &item_factors[item * width];
        const double* w = &user_factors_[cell[e].user * width];
        residuals_[c][e] = target(cell[e]) - std::inner_product(w, w + width, h, 0.0);
      }
    }
  }
  restoring_.reset();
  if (device_) move_users_to_gpu();
}

// ---------------------------------------------------------------------------------------------------
// Coordinator

MatrixFactorization::Coordinator::Coordinator(const Config& config, const Setup& summed, int)
    : config_(config),
      setup_(summed),
      scale_(rating_scale(summed, config)),
      lambda_(config.lambda / scale_),
      layout_{config.rank, config.biases},
      component_decrease_(component_count(config), 0.0) {
  // Without a rating the test RMSE would print as a perfect 0.
  if (!config.test.empty() && summed.test_ratings == 0) {
    throw io::InputError(config.test, 0,
                         config.implicit
                             ? "no held-out interaction of a user met in training, beyond the training ones"
                             : "no ratings");
  }
  if (!config.output.empty()) io::check_writable(config.output);
}

std::vector<std::string> MatrixFactorization::Coordinator::trace_columns() const {
  std::vector<std::string> columns{"iteration"};
  if (config_.implicit) {
    if (config_.test.empty()) return columns;
    const std::string at = "_at_" + std::to_string(config_.top);
    for (const char* metric : {"precision", "recall", "ndcg", "map"}) columns.push_back(metric + at);
    columns.push_back("ranked_users");
    return columns;
  }
  columns.push_back("train_rmse");
  if (!config_.test.empty()) {
    columns.push_back("test_rmse");
    columns.push_back("test_mae");
  }
  return columns;
}

std::uint32_t MatrixFactorization::Coordinator::pick_component() {
  // Priority orders each sweep by how much each component's last update lowered the objective, still
  // moving first. Sampling components by that decrease instead (with replacement, as the dynamic
  // schedulers sample parameters) starved some components and converged more slowly on MovieLens.
  const auto components = static_cast<std::uint64_t>(component_decrease_.size());
  const auto position = static_cast<std::size_t>(component_updates_ % components);
  if (position == 0) {
    sweep_order_.resize(components);
    std::iota(sweep_order_.begin(), sweep_order_.end(), 0u);
    if (config_.priority) {
      std::stable_sort(sweep_order_.begin(), sweep_order_.end(), [&](std::uint32_t a, std::uint32_t b) {
        return component_decrease_[a] > component_decrease_[b];
      });
    }
  }
  return sweep_order_[position];
}

MatrixFactorization::Step MatrixFactorization::Coordinator::schedule() {
  Step step;
  step.algorithm = config_.algorithm;
  if (config_.algorithm == Algorithm::kSgd) return step;
  if (config_.implicit && !grams_known_) {
    step.gram = true;
    return step;
  }
  const auto bias_column = [&](int column) {
    return layout_.biases && component_ == static_cast<std::uint32_t>(column);
  };
  if (rounds_left_ == 0) {
    component_ = pick_component();
    // A bias meets a fixed 1 on the other side: one round per update, on its own side.
    const bool bias = bias_column(layout_.user_bias()) || bias_column(layout_.item_bias());
    rounds_left_ = (bias ? 1 : 2) * config_.inner;
    decrease_ = 0;
  }
  const bool user_bias = bias_column(layout_.user_bias());
  const bool item_bias = bias_column(layout_.item_bias());
  step.component = component_;
  // Items first: they start at zero, and a user round against zero items would zero the users too.
  step.users = user_bias || (!item_bias && rounds_left_ % 2 == 1);
  if (config_.implicit) {
    const std::vector<double>& other = gram(!step.users);
    const auto k = static_cast<std::ptrdiff_t>(layout_.rank);
    const ColumnBlock columns = columns_of(config_, component_);
    step.gram_row.assign(other.begin() + columns.first * k,
                         other.begin() + (columns.first + columns.span) * k);
  }
  return step;
}

void MatrixFactorization::Coordinator::aggregate(const Step& step, const Partial& summed) {
  iteration_done_ = false;
  if (step.algorithm == Algorithm::kSgd) {
    ++iterations_;
    iteration_done_ = true;
    return;
  }
  if (step.gram) {
    const auto k2 = static_cast<std::ptrdiff_t>(layout_.rank * layout_.rank);
    gram_users_.assign(summed.gram.begin(), summed.gram.begin() + k2);
    gram_items_.assign(summed.gram.begin() + k2, summed.gram.end());
    grams_known_ = true;
    return;
  }
  if (config_.implicit) {
    std::vector<double>& updated = gram(step.users);
    const auto k = static_cast<std::size_t>(layout_.rank);
    const ColumnBlock columns = columns_of(config_, step.component);
    for (std::size_t c = 0; c < static_cast<std::size_t>(columns.span); ++c) {
      const std::size_t f = static_cast<std::size_t>(columns.first) + c;
      for (std::size_t g = 0; g < k; ++g) updated[f * k + g] = updated[g * k + f] = summed.gram[c * k + g];
    }
  }
  decrease_ += summed.decrease;
  if (--rounds_left_ > 0) return;
  component_decrease_[component_] = decrease_;
  ++component_updates_;
  if (component_updates_ % component_decrease_.size() == 0) {
    ++iterations_;
    iteration_done_ = true;
  }
}

Report MatrixFactorization::Coordinator::report(const Stats& summed) {
  const double square = scale_ * scale_;
  Report report;
  report.columns.push_back(static_cast<double>(iterations_));
  if (config_.implicit) {
    // Every cell's (w.h)^2 is sum_uj (w_u.h_j)^2 = trace(W'W H'H); the penalty the Gram traces.
    const auto k = static_cast<std::size_t>(layout_.rank);
    double every_cell = 0, penalty = 0;
    for (std::size_t e = 0; e < k * k; ++e) every_cell += summed.gram_users[e] * summed.gram_items[e];
    for (std::size_t f = 0; f < k; ++f)
      penalty += summed.gram_users[f * k + f] + summed.gram_items[f * k + f];
    report.objective = summed.squared_error + every_cell + lambda_ * penalty;
    if (!config_.test.empty()) {
      for (const double mean : summed.ranking.means()) report.columns.push_back(mean);
      report.columns.push_back(summed.ranking.users);
    }
  } else {
    report.objective = (summed.squared_error + lambda_ * summed.penalty) * square;
    report.columns.push_back(std::sqrt(summed.squared_error / setup_.ratings) * scale_);
    if (!config_.test.empty()) {
      const double count = std::max(1.0, setup_.test_ratings);
      report.columns.push_back(std::sqrt(summed.test_squared_error / count) * scale_);
      report.columns.push_back(summed.test_absolute_error / count * scale_);
    }
  }
  if (!std::isfinite(report.objective)) {
    throw std::runtime_error("the objective is no longer finite after iteration " +
                             std::to_string(iterations_) +
                             (config_.algorithm == Algorithm::kSgd ? ": sgd diverged, lower --learning_rate"
                                                                   : ": the ratings overflow"));
  }
  // --tol weighs whole iterations: evaluations within one (--eval_every, CCD's rounds) follow a
  // single component's update, which may lower the objective very little long before the model settles.
  if (at_iteration_boundary() && (!last_boundary_ || iterations_ > last_boundary_->iterations)) {
    if (last_boundary_) {
      const double decrease = last_boundary_->objective - report.objective;
      report.converged =
          config_.tol > 0 && decrease >= 0 && decrease <= config_.tol * last_boundary_->objective;
    }
    last_boundary_ = Boundary{iterations_, report.objective};
  }
  report.finished = iterations_ >= static_cast<std::uint64_t>(config_.iterations);
  if (config_.early_stop > 0) {
    const double test_rmse = report.columns[2];
    if (test_rmse < best_test_rmse_) {
      best_test_rmse_ = test_rmse;
      best_iteration_ = iterations_;
      report.keep = true;
    } else if (iterations_ - best_iteration_ >= static_cast<std::uint64_t>(config_.early_stop)) {
      report.finished = true;
    }
  }
  return report;
}

bool MatrixFactorization::Coordinator::at_iteration_boundary() const {
  return rounds_left_ == 0 && component_updates_ % component_decrease_.size() == 0;
}

MatrixFactorization::Progress MatrixFactorization::Coordinator::save() const {
  return Progress{config_.algorithm,
                  config_.rank,
                  static_cast<std::uint8_t>(config_.biases ? 1 : 0),
                  config_.lambda,
                  static_cast<std::uint8_t>(config_.implicit ? 1 : 0),
                  config_.implicit ? config_.alpha : 0.0,
                  config_.confidence,
                  config_.implicit && config_.confidence == Confidence::kLog ? config_.epsilon : 0.0,
                  config_.implicit ? config_.block_size : 0,
                  component_decrease_,
                  component_,
                  rounds_left_,
                  decrease_,
                  component_updates_,
                  sweep_order_,
                  iterations_,
                  best_test_rmse_,
                  best_iteration_};
}

void MatrixFactorization::Coordinator::restore(const Progress& progress) {
  const Progress settings = save();
  if (progress.algorithm != settings.algorithm || progress.rank != settings.rank ||
      progress.biases != settings.biases || progress.lambda != settings.lambda ||
      progress.implicit != settings.implicit || progress.alpha != settings.alpha ||
      progress.confidence != settings.confidence || progress.epsilon != settings.epsilon ||
      progress.block_size != settings.block_size) {
    const std::string algorithm = progress.algorithm == Algorithm::kSgd ? "sgd" : "ccd";
    std::string implicit;
    if (progress.implicit != 0) {
      implicit = " --implicit --alpha " + shortest(progress.alpha) + " --confidence " +
                 (progress.confidence == Confidence::kLog ? "log --epsilon " + shortest(progress.epsilon)
                                                          : "linear") +
                 " --block_size " + std::to_string(progress.block_size);
    }
    throw std::runtime_error("the checkpoint was made with --algorithm " + algorithm + " --rank " +
                             std::to_string(progress.rank) +
                             " --biases=" + (progress.biases != 0 ? "true" : "false") + " --lambda " +
                             shortest(progress.lambda) + implicit);
  }
  // A checkpoint that passed its checksum may still be forged or from another build: nothing here may
  // index past the components, and a sweep under way needs its whole order.
  const std::size_t components = component_decrease_.size();
  const auto beyond = [&](std::uint32_t component) { return component >= components; };
  const bool mid_sweep = progress.component_updates % components != 0;
  if (progress.component_decrease.size() != components || progress.sweep_order.size() > components ||
      (mid_sweep && progress.sweep_order.size() != components) || beyond(progress.component) ||
      std::any_of(progress.sweep_order.begin(), progress.sweep_order.end(), beyond) ||
      progress.rounds_left < 0)
    throw std::runtime_error("the checkpoint's components do not fit --rank");
  component_decrease_ = progress.component_decrease;
  component_ = progress.component;
  rounds_left_ = progress.rounds_left;
  decrease_ = progress.decrease;
  component_updates_ = progress.component_updates;
  sweep_order_ = progress.sweep_order;
  iterations_ = progress.iterations;
  best_test_rmse_ = progress.best_test_rmse;
  best_iteration_ = progress.best_iteration;
}

void MatrixFactorization::Coordinator::finish(const Summary& summary, const std::vector<Part>& parts) {
  const Report& last = summary.last;
  std::printf("iterations %llu  rounds %llu  objective %.10g", static_cast<unsigned long long>(iterations_),
              static_cast<unsigned long long>(summary.rounds), last.objective);
  if (config_.implicit && !config_.test.empty()) {
    std::printf("  %s  (%.0f users)",
                ranking_line(std::span(last.columns).subspan(1, 4), config_.top).c_str(), last.columns[5]);
  } else if (!config_.implicit) {
    std::printf("  train RMSE %.7g", last.columns[1]);
    if (!config_.test.empty())
      std::printf("  test RMSE %.7g  test MAE %.7g", last.columns[2], last.columns[3]);
  }
  std::printf("  (%.3f s, stopped by %s)\n", summary.seconds, summary.stopped_by.c_str());
  if (config_.early_stop > 0) {
    std::printf("best test RMSE %.7g at iteration %llu: the model kept\n", best_test_rmse_,
                static_cast<unsigned long long>(best_iteration_));
  }
  if (config_.output.empty()) return;
  // An implicit model scores 0 where it knows nothing: the target of a cell without interactions.
  const double mean = config_.implicit ? 0.0 : setup_.sum / setup_.ratings;
  Model model = assemble(parts, layout_, mean, scale_, config_.biases ? mean : 0.0);
  if (config_.implicit) model.loss = kOneClassLoss;
  write_model(config_.output, model);
  std::printf("model: %s\n", config_.output.c_str());
  std::fflush(stdout);
}

}  // namespace schmp::mf
