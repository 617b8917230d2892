#include "predict.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

#include "schmp/output.hpp"

namespace schmp::lasso {

namespace {

// The number after `word` on a line that is just the two; InputError otherwise.
double keyed_number(std::istringstream& fields, const std::string& path, std::uint64_t number,
                    const std::string& word) {
  std::string key;
  double value = 0;
  fields >> key >> value;
  if (!fields || !std::isfinite(value) || !(fields >> std::ws).eof())
    throw io::InputError(path, number, "bad " + word + " line");
  return value;
}

}  // namespace

std::vector<LinearModel> read_models(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw io::InputError(path, 0, "cannot open the model");
  std::vector<LinearModel> models;
  std::size_t features = 0;
  bool sized = false, path_file = false;
  std::string line;
  for (std::uint64_t number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::istringstream fields(line);
    if (line.rfind("# features ", 0) == 0) {
      std::string word;
      fields >> word >> word >> features;
      if (!fields) throw io::InputError(path, number, "bad features line");
      sized = true;
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    if (!sized) throw io::InputError(path, number, "a model before the '# features N' line");
    // A path's model starts at its lambda line; a single model at its intercept line.
    if (line.rfind("lambda ", 0) == 0) {
      path_file = true;
      models.push_back({keyed_number(fields, path, number, "lambda"), 0, std::vector<double>(features, 0.0)});
      continue;
    }
    if (line.rfind("intercept ", 0) == 0) {
      if (!path_file) models.push_back({0, 0, std::vector<double>(features, 0.0)});
      if (models.empty()) throw io::InputError(path, number, "an intercept before its lambda line");
      models.back().intercept = keyed_number(fields, path, number, "intercept");
      continue;
    }
    if (models.empty()) throw io::InputError(path, number, "a coefficient before the intercept line");
    LinearModel& model = models.back();
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
  if (models.empty()) throw io::InputError(path, 0, "not a schmp-lasso model (no 'intercept' line)");
  return models;
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
                         const std::string& output_path, double lambda, double& chosen) {
  const std::vector<LinearModel> models = read_models(model_path);
  const LinearModel* pick = &models.back();
  if (lambda > 0) {
    for (const LinearModel& model : models) {
      if (std::abs(std::log(model.lambda / lambda)) < std::abs(std::log(pick->lambda / lambda)))
        pick = &model;
    }
  }
  const LinearModel& model = *pick;
  chosen = model.lambda;
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
