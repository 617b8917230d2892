// `schmp-logreg predict`: apply a liblinear-format logistic regression model (written by schmp-logreg
// or by liblinear-train -s 0 / -s 6) to a LIBSVM file, in one process.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "schmp/io.hpp"

namespace schmp::logreg {

struct LinearModel {
  std::string positive_label;  // liblinear's first label: predicted when w . x > 0 (as written)
  std::string negative_label;
  double positive = 0;  // the labels as numbers, which rows' labels are compared with
  double negative = 0;
  std::vector<double> w;     // nr_feature weights, then the bias weight when bias >= 0
  std::size_t features = 0;  // nr_feature
  double bias = -1;          // the constant feature's value, or negative for none
};

// Reads liblinear's text model format; io::InputError naming the file and line when it is not a
// two-class logistic regression model.
LinearModel read_liblinear_model(const std::string& path);

// w . x_r for every row of `rows`, with weights w as a model file lists them: one per feature, then
// the bias weight when bias >= 0 (the constant feature's value, as liblinear's -B). Features beyond the
// model's are ignored, as liblinear-predict does.
std::vector<double> decision_values(std::span<const double> w, double bias, const io::SparseRows& rows);

// The area under the ROC curve of scores for rows labelled positive (true) or not; tied scores
// count one half. NaN when either class is absent.
double area_under_curve(const std::vector<double>& scores, const std::vector<bool>& positive);

struct PredictionReport {
  double accuracy = 0;  // liblinear's decision: positive only when w . x > 0
  double log_loss = 0;  // mean over rows of -log p(true label)
  double auc = 0;       // NaN when the rows hold one class only
  std::size_t rows = 0;
};

// How well decision values w . x_r separate rows whose true class is positive or not.
PredictionReport classification_quality(const std::vector<double>& scores, const std::vector<bool>& positive);

// Applies the model at `model_path` to `data_path`; writes one probability of the positive label per
// row to `output_path` unless it is empty. Every row's label must be one of the model's two labels
// (compared as numbers: "+1" is 1), unless `positive_label` is given: then, as in training with
// --positive_label, rows with that label are positive and every other row is negative.
PredictionReport predict(const std::string& model_path, const std::string& data_path,
                         const std::string& output_path, std::optional<double> positive_label = std::nullopt);

}  // namespace schmp::logreg
