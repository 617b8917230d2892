#include "multiclass.hpp"

#include <cstdio>
#include <iomanip>

#include "path.hpp"
#include "predict.hpp"
#include "schmp/cross_validation.hpp"
#include "schmp/dataset.hpp"

namespace schmp::logreg {

std::vector<Config> class_jobs(const Config& config, const std::vector<double>& classes) {
  std::vector<Config> jobs;
  for (const double label : classes) {
    Config job = config;
    job.multiclass = false;
    job.silent = true;
    job.positive_label = label_text(label);
    job.output.clear();
    job.test.clear();
    job.test_labels.clear();
    jobs.push_back(job);
  }
  return jobs;
}

std::vector<ClassFit> class_fits(const Config& config, const std::vector<double>& classes,
                                 const std::vector<std::vector<double>>& results) {
  std::vector<ClassFit> fits;
  for (std::size_t c = 0; c < classes.size(); ++c) {
    const std::vector<double>& result = results[c];
    fits.push_back({classes[c], class_text(config, classes[c]), result[0], result[1], result[2],
                    std::vector<double>(result.begin() + 3, result.end())});
  }
  return fits;
}

LinearModel one_vs_rest_model(const Config& config, const std::vector<ClassFit>& fits) {
  LinearModel model;
  for (const ClassFit& fit : fits) {
    model.label_texts.push_back(fit.text);
    model.labels.push_back(fit.label);
  }
  const std::size_t rows = fits.front().w.size();
  model.bias = constant_feature(config) ? 1 : -1;
  model.features = rows - (constant_feature(config) ? 1 : 0);
  for (std::size_t j = 0; j < rows; ++j) {
    for (const ClassFit& fit : fits) model.w.push_back(fit.w[j]);
  }
  return model;
}

void print_one_vs_rest(const Config& config, const std::vector<ClassFit>& fits) {
  std::printf("schmp-logreg: one-vs-rest over %zu classes\n", fits.size());
  std::printf("%-10s %-18s %-10s %s\n", "class", "objective", "rel_gap", "nonzeros");
  for (const ClassFit& fit : fits) {
    std::printf("%-10s %-18.12g %-10.3g %.0f\n", fit.text.c_str(), fit.objective, fit.relative_gap,
                fit.nonzeros);
  }
  print_held_out(config, one_vs_rest_model(config, fits));
}

void print_held_out(const Config& config, const LinearModel& model) {
  if (!config.test.empty()) {
    const PredictionReport report =
        predict_classes(model, config.test, io::read_libsvm(config.test, {}, config.label_names), "");
    std::printf("test log-loss %.6g  accuracy %.4f  (%zu rows)\n", report.log_loss, report.accuracy,
                report.rows);
  }
  if (!config.output.empty()) std::printf("model: %s\n", config.output.c_str());
  std::fflush(stdout);
}

ClassCv class_cv(const Config& config, double label, const std::vector<std::vector<double>>& folds,
                 const std::vector<double>& refit) {
  Refit found = refit_of(refit);
  const CrossValidation cv(found.path.lambdas(), folds);
  found.path.cross_validated(cv);
  const PathPoint& chosen = found.path.points().at(cv.best);
  std::vector<double> w(found.shape.features + (found.shape.bias > 0 ? 1 : 0), 0.0);
  for (const auto& [j, value] : chosen.nonzero) w.at(j) = value;
  ClassCv result;
  result.fit = {label,
                class_text(config, label),
                chosen.objective,
                chosen.relative_gap,
                static_cast<double>(chosen.nonzeros),
                std::move(w)};
  result.lambda_min = cv.lambdas[cv.best];
  result.lambda_1se = cv.lambdas[cv.one_se];
  result.deviance = cv.mean[cv.best];
  result.se = cv.se[cv.best];
  return result;
}

void write_class_cv(const Config& config, const std::vector<ClassCv>& classes) {
  std::vector<ClassFit> fits;
  for (const ClassCv& c : classes) fits.push_back(c.fit);
  if (!config.output.empty())
    write_liblinear_model(config.output, solver_type(config), one_vs_rest_model(config, fits));
  std::printf("schmp-logreg: one-vs-rest over %zu classes, %llu folds each\n", classes.size(),
              static_cast<unsigned long long>(config.cv));
  std::printf("%-10s %-14s %-14s %-14s %-10s %s\n", "class", "lambda_min", "lambda_1se", "cv_deviance",
              "cv_se", "nonzeros");
  for (const ClassCv& c : classes) {
    std::printf("%-10s %-14.8g %-14.8g %-14.8g %-10.4g %.0f\n", c.fit.text.c_str(), c.lambda_min,
                c.lambda_1se, c.deviance, c.se, c.fit.nonzeros);
  }
  if (!config.output.empty()) std::printf("model: %s\n", config.output.c_str());
  std::fflush(stdout);
}

}  // namespace schmp::logreg
