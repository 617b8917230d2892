// `schmp-lasso predict`: apply a model written by schmp-lasso to a LIBSVM file, in one process.
#pragma once

#include <string>
#include <vector>

#include "schmp/io.hpp"

namespace schmp::lasso {

struct LinearModel {
  double lambda = 0;  // a path's: each of its models has its own (0 in a file of one model)
  double intercept = 0;
  std::vector<double> beta;  // by 0-based feature index, as many as the model's features
};

// Reads schmp-lasso's model format, one model or a path of them; io::InputError naming the file and
// line where it is not one.
std::vector<LinearModel> read_models(const std::string& path);

// b + beta . x_r for every row; features beyond the model's count as zero coefficients.
std::vector<double> predictions(const LinearModel& model, const io::SparseRows& rows);

struct RegressionReport {
  std::size_t rows = 0;
  double mse = 0;        // mean of (y - prediction)^2
  double r_squared = 0;  // 1 - SSE / sum (y - mean y)^2; NaN when y is constant
};

RegressionReport regression_quality(const std::vector<double>& predicted, const std::vector<double>& labels);

// Applies the model at `model_path` to `data_path`; writes one prediction per row to `output_path`
// unless it is empty. Of a path, the model whose lambda is nearest `lambda` (on a log scale), or the
// last when `lambda` is 0; `chosen` is set to its lambda.
RegressionReport predict(const std::string& model_path, const std::string& data_path,
                         const std::string& output_path, double lambda, double& chosen);

}  // namespace schmp::lasso
