#include "ranking.hpp"

#include <algorithm>
#include <cmath>

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
