// The Gram matrix X_C' X_C over a set C of columns that grows as the solve asks for more. X does not
// change, so the workers send only the new columns' part (the column kernel's gram with `known`), and
// the coordinator keeps the rest.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <span>
#include <vector>

#include "schmp/program.hpp"

namespace schmp::lasso {

class GramCache {
 public:
  // What the workers compute: the Gram matrix over `cols`, of which the first `known` are held.
  struct Request {
    std::vector<ParamIndex> cols;
    std::size_t known = 0;
  };

  // At most `most` columns are held.
  GramCache(std::size_t num_params, std::size_t most);

  // The request that brings in the columns of `wanted` not held, empty when all are; when the held
  // ones and those would exceed the most, the cache starts again from `wanted` alone.
  Request request(const std::vector<ParamIndex>& wanted) const;
  // Takes in the part the workers sent for `request` (packed from column `known` on).
  void receive(const Request& request, std::span<const double> block);
  bool holds(ParamIndex j) const { return slot_[j] != kAbsent; }
  // The Gram matrix over `cols` (all held), times `scale`.
  Eigen::MatrixXd matrix(const std::vector<ParamIndex>& cols, double scale) const;

 private:
  static constexpr std::int32_t kAbsent = -1;
  std::size_t most_;
  std::vector<ParamIndex> cols_;    // held, in the order of matrix_
  std::vector<std::int32_t> slot_;  // each column's place in cols_, or kAbsent
  Eigen::MatrixXd matrix_;
};

}  // namespace schmp::lasso
