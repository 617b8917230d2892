#include "predict.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <limits>
#include <numeric>
#include <sstream>
#include <string>

#include "logreg.hpp"
#include "schmp/output.hpp"

namespace schmp::logreg {

namespace {

// The labels of a model's label line (`fields`, after its key) into `model`: numbers, or all words
// (classes by name), each then numbered by its place among them sorted, as the data's rows are read
// (io::read_libsvm).
void read_labels(std::istringstream& fields, LinearModel& model, const std::string& path,
                 std::uint64_t number) {
  for (std::string text; fields >> text;) model.label_texts.push_back(text);
  const std::vector<std::string> names = label_names(model);
  for (const std::string& text : model.label_texts) {
    const std::optional<double> label = label_number(text);
    const double value =
        names.empty()
            ? *label
            : static_cast<double>(std::lower_bound(names.begin(), names.end(), text) - names.begin());
    if (std::find(model.labels.begin(), model.labels.end(), value) != model.labels.end())
      throw io::InputError(path, number, "label " + text + " is there twice");
    model.labels.push_back(value);
  }
}

// The model of a path's models file (Path::write_models) whose lambda is nearest `lambda` (the last
// when it is 0); `chosen` gets its lambda.
LinearModel read_path_model(const std::string& path, double lambda, double& chosen) {
  std::ifstream in(path);
  if (!in) throw io::InputError(path, 0, "cannot open");
  LinearModel model;
  std::vector<double> w;
  double best = std::numeric_limits<double>::infinity();
  bool choosing = false;  // the model being read is the nearest so far
  std::string line;
  for (std::uint64_t number = 1; io::read_whole_line(in, line, path, number); ++number) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string key;
    fields >> key;
    if (key == "labels") {
      read_labels(fields, model, path, number);
      if (model.labels.size() < 2) throw io::InputError(path, number, "expected two labels or more");
    } else if (key == "softmax") {
      model.softmax = true;
    } else if (key == "nr_feature") {
      if (!(fields >> model.features)) throw io::InputError(path, number, "expected a feature count");
    } else if (key == "bias") {
      if (!(fields >> model.bias) || model.labels.empty())
        throw io::InputError(path, number, "expected the bias value, after the labels");
      w.assign((model.features + (model.bias >= 0 ? 1 : 0)) * model.columns(), 0.0);
    } else if (key == "lambda") {
      double value = 0;
      if (!(fields >> value) || !(value > 0) || w.empty())
        throw io::InputError(path, number, "expected 'lambda L C c' after the bias line");
      const double distance = lambda > 0 ? std::abs(std::log(value / lambda)) : 0.0;
      choosing = distance <= best;
      if (choosing) {
        best = distance;
        chosen = value;
        std::fill(w.begin(), w.end(), 0.0);
      }
    } else {
      // 'index value', or of more classes 'index v_1 ... v_K': a row of the model's weights.
      const std::size_t columns = model.columns(), rows = w.size() / std::max<std::size_t>(columns, 1);
      std::size_t index = 0;
      std::vector<double> values(columns);
      std::istringstream entry(line);
      bool read = static_cast<bool>(entry >> index) && index >= 1 && index <= rows && chosen != 0;
      for (double& value : values) read = read && entry >> value && std::isfinite(value);
      std::string extra;
      if (!read || entry >> extra) {
        throw io::InputError(path, number,
                             std::string("expected 'index ") + (columns == 1 ? "value" : "v_1 ... v_K") +
                                 "' of a model, index 1 to " + std::to_string(rows));
      }
      if (choosing)
        std::copy(values.begin(), values.end(),
                  w.begin() + static_cast<std::ptrdiff_t>((index - 1) * columns));
    }
  }
  if (chosen == 0) throw io::InputError(path, 0, "no model (no 'lambda' line)");
  model.w = std::move(w);
  return model;
}

}  // namespace

LinearModel read_model(const std::string& path, double lambda, double& chosen) {
  std::ifstream in(path);
  std::string first;
  std::getline(in, first);
  chosen = 0;
  if (first.rfind("# schmp-logreg path", 0) == 0) return read_path_model(path, lambda, chosen);
  if (lambda > 0) throw io::InputError(path, 0, "--lambda picks a model of a path; this is one model");
  return read_liblinear_model(path);
}

LinearModel read_liblinear_model(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw io::InputError(path, 0, "cannot open");
  LinearModel model;
  std::string line;
  std::uint64_t number = 0;
  bool weights = false;
  bool solver = false;
  int classes = 0;
  std::size_t expected = 0;
  // A header line holds its key and its values, nothing after them.
  const auto nothing_after = [&](std::istringstream& fields) {
    std::string extra;
    if (fields >> extra) throw io::InputError(path, number, "unexpected '" + extra + "' after the values");
  };
  while (io::read_whole_line(in, line, path, number + 1)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::istringstream fields(line);
    if (weights) {
      double value = 0;
      std::string extra;
      if (line.find_first_not_of(" \t") == std::string::npos) continue;
      for (std::size_t c = 0; c < model.columns(); ++c) {
        if (!(fields >> value) || !std::isfinite(value)) {
          throw io::InputError(
              path, number, "expected " + std::to_string(model.columns()) + " weights, got '" + line + "'");
        }
        model.w.push_back(value);
      }
      if (fields >> extra) throw io::InputError(path, number, "unexpected '" + extra + "' after the weights");
      continue;
    }
    std::string key;
    fields >> key;
    if (key == "solver_type") {
      std::string name;
      fields >> name;
      if (name != "L1R_LR" && name != "L2R_LR")
        throw io::InputError(path, number, "solver_type " + name + " is not logistic regression");
      solver = true;
    } else if (key == "nr_class") {
      if (!(fields >> classes) || classes < 2)
        throw io::InputError(path, number, "expected 2 classes or more");
    } else if (key == "label") {
      if (classes < 2) throw io::InputError(path, number, "the label line comes after nr_class");
      read_labels(fields, model, path, number);
      if (model.labels.size() != static_cast<std::size_t>(classes)) {
        throw io::InputError(path, number,
                             "expected " + std::to_string(classes) + " labels (nr_class), found " +
                                 std::to_string(model.labels.size()));
      }
    } else if (key == "nr_feature") {
      std::int64_t features = -1;
      if (!(fields >> features) || features < 0)
        throw io::InputError(path, number, "expected a feature count (0 or more)");
      model.features = static_cast<std::size_t>(features);
    } else if (key == "bias") {
      if (!(fields >> model.bias) || !std::isfinite(model.bias))
        throw io::InputError(path, number, "expected the bias value");
    } else if (key == "w") {
      weights = true;
      expected = (model.features + (model.bias >= 0 ? 1 : 0)) * model.columns();
    } else if (!key.empty()) {
      throw io::InputError(path, number, "unknown model line '" + line + "'");
    }
    nothing_after(fields);
  }
  if (!weights || !solver || model.labels.empty())
    throw io::InputError(path, 0, "not a liblinear model (no solver_type, label or w section)");
  if (model.w.size() != expected) {
    throw io::InputError(
        path, number,
        "expected " + std::to_string(expected) + " weights, found " + std::to_string(model.w.size()));
  }
  return model;
}

void write_liblinear_model(const std::string& path, const std::string& solver, const LinearModel& model) {
  io::write_file_atomically(path, [&](std::ostream& out) {
    out << "solver_type " << solver << "\nnr_class " << model.labels.size() << "\nlabel";
    for (const std::string& label : model.label_texts) out << ' ' << label;
    out << "\nnr_feature " << model.features << "\nbias " << model.bias << "\nw\n" << std::setprecision(17);
    for (std::size_t k = 0; k < model.w.size(); ++k)
      out << model.w[k] << ((k + 1) % model.columns() == 0 ? " \n" : " ");
  });
}

std::vector<double> LinearModel::column(std::size_t c) const {
  std::vector<double> weights;
  for (std::size_t k = c; k < w.size(); k += columns()) weights.push_back(w[k]);
  return weights;
}

std::vector<std::string> label_names(const LinearModel& model) {
  const bool words = std::any_of(model.label_texts.begin(), model.label_texts.end(),
                                 [](const std::string& text) { return !label_number(text); });
  if (!words) return {};
  std::vector<std::string> names = model.label_texts;
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<double> decision_values(std::span<const double> w, double bias, const io::SparseRows& rows) {
  const std::size_t features = w.size() - (bias >= 0 ? 1 : 0);
  std::vector<double> scores(rows.rows(), 0.0);
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    double z = bias >= 0 ? bias * w[features] : 0.0;
    for (std::size_t e = rows.row_start[r]; e < rows.row_start[r + 1]; ++e) {
      if (rows.index[e] < features) z += w[rows.index[e]] * rows.value[e];
    }
    scores[r] = z;
  }
  return scores;
}

double area_under_curve(const std::vector<double>& scores, const std::vector<bool>& positive) {
  // Mann-Whitney: the rank sum of the positives, with tied scores sharing their mean rank.
  std::vector<std::size_t> order(scores.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return scores[a] < scores[b]; });
  double positive_ranks = 0, positives = 0;
  for (std::size_t first = 0; first < order.size();) {
    std::size_t last = first;
    while (last < order.size() && scores[order[last]] == scores[order[first]]) ++last;
    const double mean_rank = 0.5 * static_cast<double>(first + 1 + last);
    for (std::size_t k = first; k < last; ++k) {
      if (positive[order[k]]) positive_ranks += mean_rank, ++positives;
    }
    first = last;
  }
  const double negatives = static_cast<double>(scores.size()) - positives;
  if (positives == 0 || negatives == 0) return NAN;
  return (positive_ranks - positives * (positives + 1) / 2) / (positives * negatives);
}

PredictionReport classification_quality(const std::vector<double>& scores, const std::vector<bool>& positive,
                                        const std::vector<double>& weights) {
  PredictionReport report;
  report.rows = scores.size();
  double correct = 0, loss = 0, total = 0;
  for (std::size_t r = 0; r < scores.size(); ++r) {
    const double c = weights.empty() ? 1.0 : weights[r];
    const double z = positive[r] ? scores[r] : -scores[r];  // the true class's margin
    if (z > 0 || (z == 0 && !positive[r])) correct += c;    // liblinear: label[0] only when w . x > 0
    loss += c * logistic_loss(z);
    total += c;
  }
  if (!(total > 0)) total = 1;  // no rows (or no weight): 0, not NaN
  report.accuracy = correct / total;
  report.log_loss = loss / total;
  report.auc = area_under_curve(scores, positive);
  return report;
}

std::vector<double> class_probabilities(const std::vector<double>& scores, bool softmax) {
  std::vector<double> p(scores.size());
  const double top = *std::max_element(scores.begin(), scores.end());
  double sum = 0;
  for (std::size_t c = 0; c < scores.size(); ++c)
    sum += p[c] = softmax ? std::exp(scores[c] - top) : 1 / (1 + std::exp(-scores[c]));
  for (double& value : p) value /= sum;
  return p;
}

PredictionReport predict_classes(const LinearModel& model, const std::string& data_path,
                                 const io::SparseRows& rows, const std::string& output_path,
                                 const std::vector<double>& weights) {
  std::vector<std::vector<double>> scores;  // by class, then row
  for (std::size_t c = 0; c < model.columns(); ++c)
    scores.push_back(decision_values(model.column(c), model.bias, rows));
  PredictionReport report;
  report.rows = rows.rows();
  report.classes = model.labels.size();
  report.auc = NAN;
  std::vector<std::size_t> predicted(rows.rows());
  std::vector<std::vector<double>> probabilities(rows.rows());
  double correct = 0, loss = 0, weight = 0;
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    const double c = weights.empty() ? 1.0 : weights[r];
    weight += c;
    const auto truth = std::find(model.labels.begin(), model.labels.end(), rows.labels[r]);
    if (truth == model.labels.end()) {
      throw io::InputError::at(data_path, rows.source[r],
                               "label " + label_text(rows.labels[r]) + " is none of the model's classes");
    }
    std::vector<double> row_scores(model.columns());
    for (std::size_t c = 0; c < row_scores.size(); ++c) row_scores[c] = scores[c][r];
    // liblinear's decision: the largest w_c . x, the first class among ties.
    predicted[r] =
        static_cast<std::size_t>(std::max_element(row_scores.begin(), row_scores.end()) - row_scores.begin());
    probabilities[r] = class_probabilities(row_scores, model.softmax);
    if (model.labels[predicted[r]] == *truth) correct += c;
    loss -= c * std::log(std::max(probabilities[r][static_cast<std::size_t>(truth - model.labels.begin())],
                                  std::numeric_limits<double>::min()));
  }
  report.accuracy = correct / weight;
  report.log_loss = loss / weight;
  if (!output_path.empty()) {
    io::write_file_atomically(output_path, [&](std::ostream& out) {
      out << "labels";
      for (const std::string& label : model.label_texts) out << ' ' << label;
      out << '\n' << std::setprecision(9);
      for (std::size_t r = 0; r < rows.rows(); ++r) {
        out << model.label_texts[predicted[r]];
        for (const double p : probabilities[r]) out << ' ' << p;
        out << '\n';
      }
    });
  }
  return report;
}

PredictionReport predict(const std::string& model_path, const std::string& data_path,
                         const std::string& output_path, std::optional<double> positive_label, double lambda,
                         double& chosen, bool softmax) {
  LinearModel model = read_model(model_path, lambda, chosen);
  model.softmax = model.softmax || softmax;  // a multinomial path's models file says so itself
  if (positive_label && model.labels.size() > 2) {
    throw io::InputError(model_path, 0,
                         "--positive_label is for a model of two classes; this one has " +
                             std::to_string(model.labels.size()));
  }
  // The model scores its first label positive: another one taken as positive would be scored backwards.
  if (positive_label && *positive_label != model.labels[0]) {
    throw io::InputError(model_path, 0,
                         "--positive_label " + label_text(*positive_label) +
                             " is not the model's positive label " + model.label_texts[0] +
                             " (the first of its label line)");
  }
  if (!output_path.empty()) io::check_writable(output_path);
  const io::SparseRows rows = io::read_libsvm(data_path, {}, label_names(model));
  if (rows.rows() == 0) throw io::InputError(data_path, 0, "no data rows");
  if (model.labels.size() > 2) return predict_classes(model, data_path, rows, output_path);
  std::vector<bool> positive(rows.rows());
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    const double label = rows.labels[r];
    if (positive_label) {
      positive[r] = label == *positive_label;
      continue;
    }
    if (label != model.labels[0] && label != model.labels[1]) {
      throw io::InputError::at(
          data_path, rows.source[r],
          "label " + label_text(label) + " is neither of the model's labels " + model.label_texts[0] +
              " and " + model.label_texts[1] +
              " (--positive_label L takes L as positive and every other label as negative)");
    }
    positive[r] = label == model.labels[0];
  }
  const std::vector<double> scores = decision_values(model.w, model.bias, rows);
  const PredictionReport report = classification_quality(scores, positive);
  if (!output_path.empty()) {
    io::write_file_atomically(output_path, [&](std::ostream& out) {
      char buffer[32];
      for (double z : scores) {
        std::snprintf(buffer, sizeof buffer, "%.9g\n", 1 / (1 + std::exp(-z)));
        out << buffer;
      }
    });
  }
  return report;
}

}  // namespace schmp::logreg
