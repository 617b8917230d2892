// A factorization model as LIBMF writes it (text):
//
//   f 0              loss: squared error (12: one-class squared error, an --implicit model)
//   m 671            users (rows of R)
//   n 9066           items (columns)
//   k 10             rank
//   b 3.54           the mean training rating: the prediction for users or items without factors
//   p0 T 0.12 ...    user 0's factors; "F" (values written 0) when user 0 had no training rating
//   ...
//   q0 T 0.31 ...    item 0's factors, likewise
//
// Ids are 0-based in the file, whatever base the ratings files use.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "mf.hpp"

namespace schmp::mf {

// The largest rank (--rank, and a model file's k) and user or item count (what the ids' 32 bits hold, as
// the ratings reader's raised --users and --items bounds allow).
inline constexpr int kLargestRank = 10000;
inline constexpr std::int64_t kLargestCount = std::numeric_limits<std::uint32_t>::max();

// LIBMF's numbers of the two losses (its -f).
inline constexpr int kSquaredLoss = 0, kOneClassLoss = 12;

struct Model {
  int loss = kSquaredLoss;
  std::uint32_t users = 0;
  std::uint32_t items = 0;
  int rank = 0;
  double mean = 0;
  std::vector<double> user_factors;  // row-major, rank per user
  std::vector<double> item_factors;
  std::vector<std::uint8_t> user_known;  // has factors (rated something in training)
  std::vector<std::uint8_t> item_known;

  // w_u . h_j, or the mean when either has no factors (an id beyond the model's too): never NaN.
  double predict(std::uint64_t user, std::uint64_t item) const;
};

// The model from every worker's part (parts[w] from worker w): user u is row u / P of part u mod P,
// item j row j / P of part j mod P. Parts are in internal units, where a rating r is
// (r - offset) / scale: rows are multiplied by sqrt(scale), and a user's bias column takes
// offset / scale more first, so that the written rows' dot product predicts r itself. With biases the
// written rank is the latent rank + 2.
Model assemble(const std::vector<MatrixFactorization::Part>& parts, const kernels::RowLayout& layout,
               double mean, double scale, double offset);

void write_model(const std::string& path, const Model& model);

// io::InputError naming the file and line when the file is not such a model.
Model read_model(const std::string& path);

}  // namespace schmp::mf
