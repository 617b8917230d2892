#include "predict.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "schmp/output.hpp"

namespace schmp::mf {

PredictionReport predict(const Model& model, const std::string& data_path, int index_base,
                         const std::string& output_path) {
  if (!output_path.empty()) io::check_writable(output_path);  // before the work, not after it
  std::vector<double> predictions;
  PredictionReport report;
  double squared = 0;
  double absolute = 0;
  io::read_ratings(data_path, index_base, io::IdBounds{}, [&](const io::Rating& rating) {
    const double prediction = model.predict(rating.user, rating.item);
    squared += (rating.value - prediction) * (rating.value - prediction);
    absolute += std::abs(rating.value - prediction);
    predictions.push_back(prediction);
  });
  report.ratings = predictions.size();
  if (report.ratings == 0) throw io::InputError(data_path, 0, "no ratings");
  report.rmse = std::sqrt(squared / static_cast<double>(report.ratings));
  report.mae = absolute / static_cast<double>(report.ratings);
  if (!output_path.empty()) {
    io::write_file_atomically(output_path, [&](std::ostream& out) {
      out.precision(10);
      for (const double prediction : predictions) out << prediction << '\n';
    });
  }
  return report;
}

RankingSums rank_held_out(const Model& model, const std::string& data_path, const std::string& exclude_path,
                          int index_base, std::size_t top) {
  // Each user's items, increasing, once each (a pair on several lines is one interaction, as in
  // training): those to leave out, then those held out (less the former).
  const auto by_user = [&](const std::string& path) {
    std::vector<std::vector<std::uint32_t>> items(model.users);
    io::read_ratings(path, index_base, io::IdBounds{}, [&](const io::Rating& rating) {
      if (is_interaction(path, rating) && rating.user < model.users)
        items[rating.user].push_back(rating.item);
    });
    for (std::vector<std::uint32_t>& list : items) {
      std::sort(list.begin(), list.end());
      list.erase(std::unique(list.begin(), list.end()), list.end());
    }
    return items;
  };
  const std::vector<std::vector<std::uint32_t>> seen = by_user(exclude_path);
  std::vector<std::vector<std::uint32_t>> held_out = by_user(data_path);
  // The users who count, and their factor rows side by side for score_all.
  const auto k = static_cast<std::size_t>(model.rank);
  std::vector<std::uint32_t> ranked;
  std::vector<double> factors;
  for (std::uint32_t user = 0; user < model.users; ++user) {
    std::vector<std::uint32_t>& items = held_out[user];
    std::erase_if(items, [&](std::uint32_t item) {
      return std::binary_search(seen[user].begin(), seen[user].end(), item);
    });
    if (!model.user_known[user] || items.empty()) continue;
    ranked.push_back(user);
    factors.insert(factors.end(), model.user_factors.begin() + user * k,
                   model.user_factors.begin() + (user + 1) * k);
  }
  std::vector<RankingSums> per_user(ranked.size());
  score_all(factors, model.item_factors, k, [&](std::size_t r, const double* scores) {
    const std::uint32_t user = ranked[r];
    TopItems best(top);
    offer_unseen(best, scores, model.items, 0, 1, seen[user],
                 [&](std::uint32_t item) { return model.item_known[item] != 0; });
    add_ranking(best.take(), held_out[user], top, per_user[r]);
  });
  // Added in the users' order, whatever the threads' was.
  RankingSums sums;
  for (const RankingSums& user : per_user) sums += user;
  if (sums.users == 0)
    throw io::InputError(data_path, 0,
                         "no held-out interaction of a user the model knows, beyond --exclude's");
  return sums;
}

std::vector<Recommendation> recommend(const Model& model, std::uint32_t user, std::size_t top,
                                      const std::string& exclude_path, int index_base) {
  if (user >= model.users || !model.user_known[user]) {
    throw std::runtime_error("user " + std::to_string(user + static_cast<std::uint32_t>(index_base)) +
                             " has no factors in the model (no training rating)");
  }
  std::vector<std::uint8_t> excluded(model.items, 0);
  if (!exclude_path.empty()) {
    io::read_ratings(exclude_path, index_base, io::IdBounds{}, [&](const io::Rating& rating) {
      if (rating.user == user && rating.item < model.items) excluded[rating.item] = 1;
    });
  }
  std::vector<Recommendation> candidates;
  for (std::uint32_t item = 0; item < model.items; ++item) {
    if (model.item_known[item] && !excluded[item]) candidates.push_back({item, model.predict(user, item)});
  }
  const auto better = [](const Recommendation& a, const Recommendation& b) {
    return a.score != b.score ? a.score > b.score : a.item < b.item;
  };
  const std::size_t kept = std::min(top, candidates.size());
  std::partial_sort(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(kept),
                    candidates.end(), better);
  candidates.resize(kept);
  return candidates;
}

}  // namespace schmp::mf
