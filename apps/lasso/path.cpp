#include "path.hpp"

#include <cmath>
#include <cstdio>
#include <iomanip>
#include <limits>

#include "predict.hpp"
#include "schmp/output.hpp"

namespace schmp::lasso {

Path::Path(std::size_t count, double lambda_max, double min_ratio, io::SparseRows test)
    : test_(std::move(test)) {
  lambdas_.resize(count);
  for (std::size_t k = 0; k < count; ++k) {
    const double share = static_cast<double>(k) / static_cast<double>(count - 1);
    lambdas_[k] = lambda_max * std::pow(min_ratio, share);
  }
}

double Path::mse(const Eigen::VectorXd& beta, double intercept) const {
  if (!has_test()) return std::numeric_limits<double>::quiet_NaN();
  const LinearModel model{0, intercept, std::vector<double>(beta.data(), beta.data() + beta.size())};
  return regression_quality(predictions(model, test_), test_.labels).mse;
}

void Path::record(PathPoint point, const Eigen::VectorXd& beta) {
  point.test_mse = mse(beta, point.intercept);
  for (Eigen::Index j = 0; j < beta.size(); ++j) {
    if (beta[j] != 0) point.beta.emplace_back(static_cast<ParamIndex>(j), beta[j]);
  }
  point.nonzeros = point.beta.size();
  points_.push_back(std::move(point));
}

void Path::print() const {
  std::printf("%-14s %-16s %-10s %-9s %-10s%s\n", "lambda", "objective", "rel_gap", "nonzeros", "seconds",
              has_test() ? " test_mse" : "");
  for (const PathPoint& p : points_) {
    std::printf("%-14.8g %-16.10g %-10.3g %-9zu %-10.4g", p.lambda, p.objective, p.relative_gap, p.nonzeros,
                p.seconds);
    if (has_test()) std::printf(" %.8g", p.test_mse);
    std::printf("\n");
  }
}

void Path::write_table(const std::string& path) const {
  io::write_file_atomically(path, [&](std::ostream& out) {
    out << "lambda,objective,duality_gap,relative_gap,nnz,seconds" << (has_test() ? ",test_mse" : "") << "\n"
        << std::setprecision(17);
    for (const PathPoint& p : points_) {
      out << p.lambda << ',' << p.objective << ',' << p.gap << ',' << p.relative_gap << ',' << p.nonzeros
          << ',' << p.seconds;
      if (has_test()) out << ',' << p.test_mse;
      out << '\n';
    }
  });
}

void Path::write_models(const std::string& path, const std::string& header) const {
  io::write_file_atomically(path, [&](std::ostream& out) {
    out << header << std::setprecision(17);
    for (const PathPoint& p : points_) {
      out << "lambda " << p.lambda << "\nintercept " << p.intercept << '\n';
      for (const auto& [j, value] : p.beta) out << j + 1 << ' ' << value << '\n';
    }
  });
}

}  // namespace schmp::lasso
