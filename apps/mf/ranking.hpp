// Ranking metrics of an implicit model on held-out interactions (docs/mf.md#ranking-metrics). A user
// counts when they have held-out items and training interactions. Their list is the K items of highest
// score w_u.h_j among the items with factors that they did not meet in training, ties to the lower id;
// T is their held-out items less their training ones. With rel_i = 1 when the list's i-th item is in T:
//   precision@K = sum_i rel_i / K                    recall@K = sum_i rel_i / |T|
//   nDCG@K = sum_i rel_i / log2(i + 1) over the same sum of the best list, min(K, |T|) hits
//   AP@K = sum_i rel_i precision@i / min(K, |T|)     (MAP@K: its mean)
// each averaged over the users who count.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
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
  // Precision, recall, nDCG and MAP: each sum's mean over the users.
  std::array<double, 4> means() const {
    const double over = users > 0 ? users : 1;
    return {precision / over, recall / over, ndcg / over, average_precision / over};
  }
  RankingSums& operator+=(const RankingSums& other) {
    users += other.users;
    precision += other.precision;
    recall += other.recall;
    ndcg += other.ndcg;
    average_precision += other.average_precision;
    return *this;
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

// Offers `top` the scores of `count` items, item `first + at * stride` at scores[at], but for those
// without factors (!known(item)) and those in `seen` (increasing): a user's candidates.
template <class Known>
void offer_unseen(TopItems& top, const double* scores, std::size_t count, std::uint32_t first,
                  std::uint32_t stride, std::span<const std::uint32_t> seen, Known known) {
  auto next_seen = seen.begin();  // the items rise with `at`
  for (std::size_t at = 0; at < count; ++at) {
    const auto item = static_cast<std::uint32_t>(first + at * stride);
    while (next_seen != seen.end() && *next_seen < item) ++next_seen;
    if (known(item) && (next_seen == seen.end() || *next_seen != item)) top.offer(scores[at], item);
  }
}

// Scores every user row against every item row (both `width` wide, row-major), a block of users at
// a time as one matrix product, on the threads: take(r, scores) gets user row r's scores of all the
// items, in their order. Calls for different rows may run at once.
void score_all(std::span<const double> users, std::span<const double> items, std::size_t width,
               const std::function<void(std::size_t row, const double* scores)>& take);

// Adds one user's metrics at K to `sums`: `ranked` their list, best first; `held_out` T, sorted.
void add_ranking(std::span<const std::uint32_t> ranked, std::span<const std::uint32_t> held_out,
                 std::size_t k, RankingSums& sums);

// "precision@K p  recall@K r  nDCG@K n  MAP@K m", of the four metrics' means in that order.
std::string ranking_line(std::span<const double> means, std::size_t k);

}  // namespace schmp::mf
