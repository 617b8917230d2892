// `schmp-lasso predict`: apply a model written by schmp-lasso to a LIBSVM file, in one process.
#pragma once

#include <string>
#include <vector>

#include "schmp/io.hpp"

namespace schmp::lasso {

struct LinearModel {
  double intercept = 0;
  std::vector<double> beta;  // by 0-based feature index, as many as the model's features
};

// Reads schmp-lasso's model format; io::InputError naming the file and line where it is not one.
LinearModel read_model(const std::string& path);

// b + beta . x_r for every row; features beyond the model's count as zero coefficients.
std::vector<double> predictions(const LinearModel& model, const io::SparseRows& rows);

struct RegressionReport {
  std::size_t rows = 0;
  double mse = 0;        // mean of (y - prediction)^2
  double r_squared = 0;  // 1 - SSE / sum (y - mean y)^2; NaN when y is constant
};

RegressionReport regression_quality(const std::vector<double>& predicted, const std::vector<double>& labels);

// Applies the model at `model_path` to `data_path`; writes one prediction per row to `output_path`
// unless it is empty.
RegressionReport predict(const std::string& model_path, const std::string& data_path,
                         const std::string& output_path);

}  // namespace schmp::lasso
