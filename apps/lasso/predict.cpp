#include "predict.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

#include "schmp/output.hpp"

namespace schmp::lasso {

LinearModel read_model(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw io::InputError(path, 0, "cannot open the model");
  LinearModel model;
  bool sized = false, has_intercept = false;
  std::string line;
  for (std::uint64_t number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::istringstream fields(line);
    if (line.rfind("# features ", 0) == 0) {
      std::string word;
      std::size_t features = 0;
      fields >> word >> word >> features;
      if (!fields) throw io::InputError(path, number, "bad features line");
      model.beta.assign(features, 0.0);
      sized = true;
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("intercept ", 0) == 0) {
      std::string word;
      fields >> word >> model.intercept;
      if (!fields || !std::isfinite(model.intercept) || !(fields >> std::ws).eof())
        throw io::InputError(path, number, "bad intercept line");
      has_intercept = true;
      continue;
    }
    if (!sized) throw io::InputError(path, number, "a coefficient before the '# features N' line");
    std::uint64_t index = 0;
    double value = 0;
    fields >> index >> value;
    if (!fields || !(fields >> std::ws).eof() || !std::isfinite(value))
      throw io::InputError(path, number, "expected 'index value'");
    if (index < 1 || index > model.beta.size())
      throw io::InputError(
          path, number,
          "index " + std::to_string(index) + " outside 1.." + std::to_string(model.beta.size()));
    model.beta[index - 1] = value;
  }
  if (!sized || !has_intercept)
    throw io::InputError(path, 0, "not a schmp-lasso model (no '# features' or 'intercept' line)");
  return model;
}

std::vector<double> predictions(const LinearModel& model, const io::SparseRows& rows) {
  std::vector<double> predicted(rows.rows(), model.intercept);
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    for (std::size_t e = rows.row_start[r]; e < rows.row_start[r + 1]; ++e) {
      if (rows.index[e] < model.beta.size()) predicted[r] += model.beta[rows.index[e]] * rows.value[e];
    }
  }
  return predicted;
}

RegressionReport regression_quality(const std::vector<double>& predicted, const std::vector<double>& labels) {
  RegressionReport report;
  report.rows = labels.size();
  if (labels.empty()) return report;
  const auto n = static_cast<double>(labels.size());
  double mean = 0;
  for (double y : labels) mean += y / n;
  double sse = 0, sst = 0;
  for (std::size_t r = 0; r < labels.size(); ++r) {
    sse += (labels[r] - predicted[r]) * (labels[r] - predicted[r]);
    sst += (labels[r] - mean) * (labels[r] - mean);
  }
  report.mse = sse / n;
  report.r_squared = sst > 0 ? 1 - sse / sst : std::numeric_limits<double>::quiet_NaN();
  return report;
}

RegressionReport predict(const std::string& model_path, const std::string& data_path,
                         const std::string& output_path) {
  const LinearModel model = read_model(model_path);
  if (!output_path.empty()) io::check_writable(output_path);
  const io::SparseRows rows = io::read_libsvm(data_path);
  if (rows.rows() == 0) throw io::InputError(data_path, 0, "no data rows");
  const std::vector<double> predicted = predictions(model, rows);
  if (!output_path.empty()) {
    io::write_file_atomically(output_path, [&](std::ostream& out) {
      char buffer[32];
      for (double p : predicted) {
        std::snprintf(buffer, sizeof buffer, "%.17g\n", p);
        out << buffer;
      }
    });
  }
  return regression_quality(predicted, rows.labels);
}

}  // namespace schmp::lasso
