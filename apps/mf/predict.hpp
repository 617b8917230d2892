// `schmp-mf predict` and `schmp-mf recommend`: apply a LIBMF-format model, in one process.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model.hpp"
#include "ranking.hpp"

namespace schmp::mf {

struct PredictionReport {
  std::size_t ratings = 0;
  double rmse = 0;
  double mae = 0;
};

// Predicts every rating of `data_path` (ids from `index_base`); writes one prediction per line to
// `output_path` unless it is empty.
PredictionReport predict(const Model& model, const std::string& data_path, int index_base,
                         const std::string& output_path);

// The ranking metrics at `top` (ranking.hpp) of a model on the held-out interactions of `data_path`,
// each user's items in `exclude_path` (their training ones) left out of their list and of their
// held-out items.
RankingSums rank_held_out(const Model& model, const std::string& data_path, const std::string& exclude_path,
                          int index_base, std::size_t top);

struct Recommendation {
  std::uint32_t item = 0;
  double score = 0;
};

// The `top` items with the highest predictions for `user` (0-based), best first, ties by item id,
// leaving out the items without factors and those the user rated in `exclude_path` (when not empty).
// std::runtime_error when the model has no factors for the user.
std::vector<Recommendation> recommend(const Model& model, std::uint32_t user, std::size_t top,
                                      const std::string& exclude_path, int index_base);

}  // namespace schmp::mf
