#include "ranking.hpp"

#include <tbb/parallel_for.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdio>

namespace schmp::mf {

namespace {

// Whether a ranks before b: the higher score, then the lower item.
bool better(const std::pair<double, std::uint32_t>& a, const std::pair<double, std::uint32_t>& b) {
  return a.first != b.first ? a.first > b.first : a.second < b.second;
}

}  // namespace

void TopItems::offer(double score, std::uint32_t item) {
  const std::pair<double, std::uint32_t> offered{score, item};
  if (heap_.size() < k_) {
    heap_.push_back(offered);
    std::push_heap(heap_.begin(), heap_.end(), better);
  } else if (k_ > 0 && better(offered, heap_.front())) {
    std::pop_heap(heap_.begin(), heap_.end(), better);
    heap_.back() = offered;
    std::push_heap(heap_.begin(), heap_.end(), better);
  }
}

std::vector<std::uint32_t> TopItems::take() {
  std::sort(heap_.begin(), heap_.end(), better);
  std::vector<std::uint32_t> items;
  for (const auto& [score, item] : heap_) items.push_back(item);
  heap_.clear();
  return items;
}

void score_all(std::span<const double> users, std::span<const double> items, std::size_t width,
               const std::function<void(std::size_t row, const double* scores)>& take) {
  using Rows = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const auto item_count = static_cast<Eigen::Index>(items.size() / width);
  const Eigen::Map<const Rows> item_rows(items.data(), item_count, static_cast<Eigen::Index>(width));
  // 64 users at once: the product reads each item row once per 64 users, and a block's scores (64 x
  // items doubles) stay small beside the factors.
  constexpr std::size_t kUsers = 64;
  const std::size_t rows = users.size() / width, blocks = (rows + kUsers - 1) / kUsers;
  tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t block) {
    const std::size_t first = block * kUsers, count = std::min(kUsers, rows - first);
    const Eigen::Map<const Rows> user_rows(users.data() + first * width, static_cast<Eigen::Index>(count),
                                           static_cast<Eigen::Index>(width));
    const Rows scores = user_rows * item_rows.transpose();
    for (std::size_t r = 0; r < count; ++r)
      take(first + r, scores.data() + r * static_cast<std::size_t>(item_count));
  });
}

std::string ranking_line(std::span<const double> means, std::size_t k) {
  const auto at = static_cast<unsigned long long>(k);
  char line[200];
  std::snprintf(line, sizeof line, "precision@%llu %.5f  recall@%llu %.5f  nDCG@%llu %.5f  MAP@%llu %.5f", at,
                means[0], at, means[1], at, means[2], at, means[3]);
  return line;
}

void add_ranking(std::span<const std::uint32_t> ranked, std::span<const std::uint32_t> held_out,
                 std::size_t k, RankingSums& sums) {
  if (held_out.empty() || k == 0) return;
  const std::size_t best_hits = std::min(k, held_out.size());
  double hits = 0, dcg = 0, ideal = 0, precisions = 0;
  for (std::size_t i = 0; i < ranked.size() && i < k; ++i) {
    if (!std::binary_search(held_out.begin(), held_out.end(), ranked[i])) continue;
    hits += 1;
    dcg += 1 / std::log2(static_cast<double>(i) + 2);
    precisions += hits / static_cast<double>(i + 1);
  }
  for (std::size_t i = 0; i < best_hits; ++i) ideal += 1 / std::log2(static_cast<double>(i) + 2);
  sums.users += 1;
  sums.precision += hits / static_cast<double>(k);
  sums.recall += hits / static_cast<double>(held_out.size());
  sums.ndcg += dcg / ideal;
  sums.average_precision += precisions / static_cast<double>(best_hits);
}

}  // namespace schmp::mf
