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
