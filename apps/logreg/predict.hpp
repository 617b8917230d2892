// `schmp-logreg predict`: apply a liblinear-format logistic regression model (written by schmp-logreg
// or by liblinear-train -s 0 / -s 6), of two classes or one-vs-rest of more, to a LIBSVM file, in one
// process.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "schmp/io.hpp"

namespace schmp::logreg {

struct LinearModel {
  // liblinear's label line, as written and as numbers (which rows' labels are compared with). Of two
  // classes the first is positive: predicted when w . x > 0. Of more, each has a column of weights
  // (one-vs-rest), in this order.
  std::vector<std::string> label_texts;
  std::vector<double> labels;
  std::vector<double> w;     // row by row, columns() a row: nr_feature rows, then the bias row when bias >= 0
  std::size_t features = 0;  // nr_feature
  double bias = -1;          // the constant feature's value, or negative for none
  // Of more than two classes: the probabilities are the softmax of the scores (a multinomial fit's),
  // not the one-vs-rest's normalised logistic ones. liblinear's file does not say which.
  bool softmax = false;

  std::size_t columns() const { return labels.size() > 2 ? labels.size() : 1; }
  std::vector<double> column(std::size_t c) const;  // the weights of column c
};

// Reads liblinear's text model format; io::InputError naming the file and line when it is not a
// logistic regression model.
LinearModel read_liblinear_model(const std::string& path);

// A liblinear model file, or of a path's models file (--path_models) the model whose lambda is nearest
// `lambda` (the last when it is 0), whose lambda `chosen` gets (0 for a liblinear file).
LinearModel read_model(const std::string& path, double lambda, double& chosen);

// Writes `model` in liblinear's text format, as liblinear-train does, with solver_type `solver`
// (L1R_LR or L2R_LR).
void write_liblinear_model(const std::string& path, const std::string& solver, const LinearModel& model);

// The model's labels sorted, when they are words (classes by name), as the data's rows are read with
// them (io::read_libsvm); empty when they are numbers.
std::vector<std::string> label_names(const LinearModel& model);

// w . x_r for every row of `rows`, with weights w as a model file lists them: one per feature, then
// the bias weight when bias >= 0 (the constant feature's value, as liblinear's -B). Features beyond the
// model's are ignored, as liblinear-predict does.
std::vector<double> decision_values(std::span<const double> w, double bias, const io::SparseRows& rows);

// The area under the ROC curve of scores for rows labelled positive (true) or not; tied scores
// count one half. NaN when either class is absent.
double area_under_curve(const std::vector<double>& scores, const std::vector<bool>& positive);

struct PredictionReport {
  double accuracy =
      0;  // liblinear's decision: positive only when w . x > 0; of more classes, the largest w_c . x
  double log_loss = 0;  // mean over rows of -log p(true label)
  double auc = 0;       // NaN when the rows hold one class only, or the model more than two
  std::size_t rows = 0;
  std::size_t classes = 2;
};

// How well decision values w . x_r separate rows whose true class is positive or not; accuracy and
// log-loss weigh each row by `weights` (empty: 1 each).
PredictionReport classification_quality(const std::vector<double>& scores, const std::vector<bool>& positive,
                                        const std::vector<double>& weights = {});

// The probabilities of a model's classes at its decision values `scores` (one per class): a one-vs-rest
// model's as liblinear's (each class's logistic probability, normalised to sum to 1), a multinomial
// one's (`softmax`) the softmax.
std::vector<double> class_probabilities(const std::vector<double>& scores, bool softmax);

// A model of more than two classes applied to `rows` (read from `data_path`, which errors name): each
// row's label must be one of the model's. Writes the labels, then per row the class and the
// probabilities, to `output_path` unless it is empty. Accuracy and log-loss weigh each row by
// `weights` (empty: 1 each).
PredictionReport predict_classes(const LinearModel& model, const std::string& data_path,
                                 const io::SparseRows& rows, const std::string& output_path,
                                 const std::vector<double>& weights = {});

// Applies the model at `model_path` to `data_path`; writes one probability of the positive label per
// row to `output_path` unless it is empty. Every row's label must be one of the model's two labels
// (compared as numbers: "+1" is 1), unless `positive_label` is given: then, as in training with
// --positive_label, rows with that label are positive and every other row is negative. A model of more
// classes writes a line of its labels, then per row the predicted class and each class's probability.
// `model_path` may be a path's models file: `lambda` and `chosen` are read_model's. `softmax`: the
// model of more classes is a multinomial fit's.
PredictionReport predict(const std::string& model_path, const std::string& data_path,
                         const std::string& output_path, std::optional<double> positive_label, double lambda,
                         double& chosen, bool softmax = false);

}  // namespace schmp::logreg
