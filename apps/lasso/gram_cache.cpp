#include "gram_cache.hpp"

#include <stdexcept>

#include "schmp/quadratic_model.hpp"

namespace schmp::lasso {

GramCache::GramCache(std::size_t num_params, std::size_t most) : most_(most), slot_(num_params, kAbsent) {}

GramCache::Request GramCache::request(const std::vector<ParamIndex>& wanted) const {
  std::vector<ParamIndex> fresh;
  for (const ParamIndex j : wanted) {
    if (slot_[j] == kAbsent) fresh.push_back(j);
  }
  Request request;
  if (fresh.empty()) return request;
  if (cols_.size() + fresh.size() > most_) {
    request.cols = wanted;
    return request;
  }
  request.cols = cols_;
  request.cols.insert(request.cols.end(), fresh.begin(), fresh.end());
  request.known = cols_.size();
  return request;
}

void GramCache::receive(const Request& request, std::span<const double> block) {
  if (request.known != 0 && request.known != cols_.size())
    throw std::logic_error("lasso: a Gram matrix block for another set of columns");
  const auto m = static_cast<Eigen::Index>(request.cols.size());
  if (request.known == 0) {
    for (const ParamIndex j : cols_) slot_[j] = kAbsent;
    matrix_.resize(m, m);
  } else {
    matrix_.conservativeResize(m, m);
  }
  unpack_columns(block, request.known, 1.0, matrix_);
  cols_ = request.cols;
  for (std::size_t k = request.known; k < cols_.size(); ++k) slot_[cols_[k]] = static_cast<std::int32_t>(k);
}

Eigen::MatrixXd GramCache::matrix(const std::vector<ParamIndex>& cols, double scale) const {
  const auto m = static_cast<Eigen::Index>(cols.size());
  Eigen::MatrixXd out(m, m);
  for (Eigen::Index a = 0; a < m; ++a) {
    for (Eigen::Index b = 0; b < m; ++b) out(a, b) = scale * matrix_(slot_[cols[a]], slot_[cols[b]]);
  }
  return out;
}

}  // namespace schmp::lasso
