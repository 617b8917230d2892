#include "multiclass.hpp"

#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <numeric>

#include "multinomial.hpp"
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

namespace {

// The classes' paths (refit_of each class job's result) at their k-th lambda.
std::vector<ClassFit> fits_at(const Config& config, const std::vector<double>& classes,
                              const std::vector<Refit>& refits, std::size_t k) {
  std::vector<ClassFit> fits;
  for (std::size_t c = 0; c < classes.size(); ++c) {
    const PathPoint& point = refits[c].path.points()[k];
    fits.push_back({classes[c], class_text(config, classes[c]), point.objective, point.relative_gap,
                    static_cast<double>(point.nonzeros), refits[c].path.weights(k)});
  }
  return fits;
}

// The one-vs-rest path of the classes' paths: at each lambda every class has solved, the multiclass
// model of their columns, scored on --test.
Path joined_path(const Config& config, const std::vector<double>& classes, const std::vector<Refit>& refits,
                 const Probe& probe, double lambda_max) {
  const double ratio = min_ratio_of(config.lambda_min_ratio, probe.rows, probe.features);  // as each class's
  Path path(config.path, lambda_max, ratio,
            std::accumulate(probe.class_weights.begin(), probe.class_weights.end(), 0.0));
  io::SparseRows test;
  if (!config.test.empty()) test = io::read_libsvm(config.test, {}, config.label_names);
  path.set_columns(classes.size(), !config.test.empty());
  std::size_t solved = refits.front().path.points().size();
  for (const Refit& refit : refits) solved = std::min(solved, refit.path.points().size());
  for (std::size_t k = 0; k < solved; ++k) {
    const std::vector<ClassFit> fits = fits_at(config, classes, refits, k);
    PathPoint point;
    point.lambda = refits.front().path.points()[k].lambda;
    point.C = refits.front().path.points()[k].C;
    for (const Refit& refit : refits) {
      const PathPoint& own = refit.path.points()[k];
      point.objective += own.objective;
      point.gap += own.gap;
      point.relative_gap = std::max(point.relative_gap, own.relative_gap);
      point.nonzeros += own.nonzeros;
      point.seconds += own.seconds;
    }
    const LinearModel model = one_vs_rest_model(config, fits);
    if (!config.test.empty()) {
      const PredictionReport tested = predict_classes(model, config.test, test, "");
      point.test_log_loss = tested.log_loss;
      point.test_accuracy = tested.accuracy;
    }
    path.record(std::move(point), model.w, constant_feature(config));
  }
  return path;
}

}  // namespace

int one_vs_rest_path(Job& job, const Config& config, const std::vector<double>& classes) {
  std::vector<Probe> found;
  if (const int status = probe_classes(job, config, classes, found); status != 0) {
    forget_kept_rows();
    return status;
  }
  const std::vector<double>& own = found.front().class_lambda_max;
  const double lambda_max = *std::max_element(own.begin(), own.end());
  if (!(lambda_max > 0)) {
    forget_kept_rows();
    return job.refuse(config.data + ": lambda_max is 0 (no feature tells any class from the rest)");
  }
  std::vector<Config> jobs = class_jobs(config, classes);
  for (Config& one : jobs) {
    one.refit_beside = true;  // whose result() is the whole path
    one.lambda_max = lambda_max;
    one.path_table.clear();
    one.path_models.clear();
  }
  const EachRun each = job.run_each<Logreg>(jobs);
  forget_kept_rows();
  if (each.status != 0) return each.status;
  if (!job.first_rank()) return 0;
  std::vector<Refit> refits;
  for (const std::vector<double>& result : each.results) refits.push_back(refit_of(result));
  const Path path = joined_path(config, classes, refits, found.front(), lambda_max);
  LinearModel shape;  // labels, nr_feature and bias (a class's path may have solved no lambda)
  for (const double label : classes) {
    shape.label_texts.push_back(class_text(config, label));
    shape.labels.push_back(label);
  }
  shape.features = refits.front().shape.features;
  shape.bias = refits.front().shape.bias;
  std::printf("schmp-logreg: one-vs-rest path over %zu classes, %zu of %zu lambdas solved\n", classes.size(),
              path.points().size(), path.lambdas().size());
  write_path(config, path, lambda_max, shape);
  return 0;
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
