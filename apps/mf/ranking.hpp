// Ranking metrics of an implicit model on held-out interactions (docs/mf.md#ranking-metrics). A user
// counts when they have held-out items and training interactions. Their list is the K items of highest
// score w_u.h_j among the items with factors that they did not meet in training, ties to the lower id;
// T is their held-out items less their training ones. With rel_i = 1 when the list's i-th item is in T:
//   precision@K = sum_i rel_i / K                    recall@K = sum_i rel_i / |T|
//   nDCG@K = sum_i rel_i / log2(i + 1) over the same sum of the best list, min(K, |T|) hits
//   AP@K = sum_i rel_i precision@i / min(K, |T|)     (MAP@K: its mean)
// each averaged over the users who count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace schmp::mf {

// The metrics' sums over users, to be added across workers.
struct RankingSums {
  double users = 0;
  double precision = 0;
  double recall = 0;
  double ndcg = 0;
  double average_precision = 0;
  template <class V>
  void visit(V& v) {
    v(users, precision, recall, ndcg, average_precision);
  }
};

// The K best (score, item) pairs offered: higher score first, ties to the lower item.
class TopItems {
 public:
  explicit TopItems(std::size_t k) : k_(k) {}
  void offer(double score, std::uint32_t item);
  // The items, best first; empties the list.
  std::vector<std::uint32_t> take();

 private:
  std::size_t k_;
  std::vector<std::pair<double, std::uint32_t>> heap_;  // worst on top
};

// Adds one user's metrics at K to `sums`: `ranked` their list, best first; `held_out` T, sorted.
void add_ranking(std::span<const std::uint32_t> ranked, std::span<const std::uint32_t> held_out,
                 std::size_t k, RankingSums& sums);

}  // namespace schmp::mf
