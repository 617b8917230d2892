#include "logreg.hpp"

#include <Eigen/SVD>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <limits>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "predict.hpp"
#include "schmp/dataset.hpp"
#include "schmp/extrapolation.hpp"
#include "schmp/kernels/device.hpp"
#include "schmp/output.hpp"
#include "schmp/working_set.hpp"

namespace schmp::logreg {

namespace {

// Armijo's sufficient decrease: a step t d is accepted when F falls by sigma t times the model's
// predicted decrease; a rejected step is halved.
constexpr double kSufficientDecrease = 0.01;
// Added to each Hessian diagonal entry so that no model step divides by zero: liblinear's nu, but
// relative to the column's C ||x_j||^2 / 4 (the curvature at w = 0), since the absolute 1e-12 swamped
// the curvature of features of 1e-14 and below and the steps shrank to nothing.
constexpr double kCurvatureFloor = 1e-12;
// The shortest step the line search tries. Below it, a direction from parallel updates is abandoned
// (they interfered), and one from sequential updates is taken: it is no better than rounding.
constexpr double kShortestStep = 1e-10;
// Passes of the inner solve. The violation summed over a pass is taken at each drawn coordinate before
// it moves, so it cannot tell a finished solve from an unstarted one. Measured on the benchmark
// problems, two passes per Newton step do better than liblinear's rule (tighten the inner tolerance
// fourfold whenever one pass sufficed): as good or up to 1.3x fewer updates to converge at C = 1, and
// ten times closer to optimal after the same updates at C = 10 on the generated problem. So every
// solve runs two passes, and goes on while a pass's summed violation exceeds the violation at w = 0.
constexpr std::size_t kFewestPasses = 2;
// ... and while the last pass still lowered the quadratic model by more than this fraction of what the
// passes before it did. The updates to liblinear's objective hardly depend on how they are cut into
// Newton steps (dna_splice at C = 10: 1,207 rounds in 100 steps of two passes, 1,220 in 23 steps with
// this rule), so a step that still makes progress is better continued than paid an evaluation for.
// Against two passes alone, interleaved medians to liblinear's objective: dna_splice 0.156 to 0.124 s
// at C = 10 and 0.083 to 0.073 s at C = 1; spamassassin 0.153 to 0.093 s at C = 1 and 0.064 to 0.034 s
// at C = 0.1; the generated problem about the same at C = 0.1 and 1, 41 to 38 s at C = 10. Fractions
// of 0.1 and 0.2 did as well on dna_splice and worse on spamassassin.
constexpr double kStalledPass = 0.05;
// The inner solve gives up after this many passes whatever its violation.
constexpr std::size_t kMostPasses = 50;
// Accepted Newton iterates from which an Anderson extrapolation is tried (skglm's K).
constexpr std::size_t kExtrapolationDepth = 5;
// A direction found from the Hessian (solve_direction) is solved until its model's violation is this
// fraction of the violation at w, or this many multiply-adds are spent (about 0.1 s): a tight solve
// makes each Newton step count, and costs the workers nothing.
constexpr double kModelTolerance = 1e-3;
constexpr double kModelWork = 1 << 28;
// Evaluations return the loss's Hessian over the coordinates nonzero or moving, and those whose |G_j|
// exceeds this fraction of the penalty's slope, which may start to (at most --max_hessian of them).
constexpr double kNearMoving = 0.9;
// What an evaluation costs per row (an exponential and the entropies at every dual scale), in
// multiply-adds: StepWays weighs it.
constexpr double kRowWork = 100;
// A step that leaves no violation gained all the digits a double has.
constexpr double kMostDigits = 16;
// A multinomial step whose gap has not fallen below this share of its lowest in this many evaluations
// has done what rounding allows (a tolerance too tight for it would otherwise keep it running): the
// fit's own gap decides whether more steps are needed.
constexpr double kStallShare = 0.999;
constexpr std::size_t kStalledEvaluations = 20;
// A gap within this many times the rounding of its sums falls no further (as Lasso's).
constexpr double kRoundingFloor = 3;

// The scales g (the largest 1) of the classes' rows at which the dual point sum_i c_i g_{y_i} (p_i - e_i)
// sums to 0 in every class: the null vector of the classes' sums, which is all ones at the optimum.
// None when it is not positive (far from the optimum), or not one vector (a class whose rows weigh
// nothing).
std::optional<Eigen::VectorXd> class_scales(const SoftmaxSums& sums) {
  const auto classes =
      static_cast<Eigen::Index>(std::sqrt(static_cast<double>(sums.class_sums.size())) + 0.5);
  Eigen::MatrixXd sums_by_class(classes, classes);  // (l, y): class y's rows' sum of c_i (p_il - e_il)
  for (Eigen::Index y = 0; y < classes; ++y) {
    for (Eigen::Index l = 0; l < classes; ++l)
      sums_by_class(l, y) = sums.class_sums[static_cast<std::size_t>(y * classes + l)];
  }
  const Eigen::JacobiSVD<Eigen::MatrixXd> svd(sums_by_class, Eigen::ComputeFullV);
  const Eigen::VectorXd& singular = svd.singularValues();
  if (classes > 1 && !(singular[classes - 2] > 0)) return std::nullopt;
  Eigen::VectorXd g = svd.matrixV().col(classes - 1);
  if (g.sum() < 0) g = -g;
  if (!(g.minCoeff() > 0)) return std::nullopt;
  return g / g.maxCoeff();
}

// The size of a multinomial step's offset terms in the dual, row by row (none otherwise).
double offset_size(const Logreg::Stats& summed) {
  return summed.offset_sums.empty() ? 0.0 : summed.offset_sums[2];
}

// The dual value entropy(t) less the penalty's conjugate at the dual point scaled by t, at the best
// t found, given bounds on each penalised |v_j| at t = 1 (the loss's weighted X' alpha): for L1, t
// makes every |t v_j| at most 1; the elastic net's conjugate (ridge mu) charges each |t v_j| above 1
// instead, so the best t lies between that one and 1, and any t gives a bound. `feasible` gets the
// first t.
template <class Entropy>
double scaled_dual(const Entropy& entropy, const std::vector<double>& bounds, double ridge,
                   double& feasible) {
  const double largest = bounds.empty() ? 0.0 : *std::max_element(bounds.begin(), bounds.end());
  feasible = largest > 1 ? 1 / largest : 1.0;
  if (ridge == 0) return entropy(feasible);
  const auto conjugate = [&](double t) {
    double sum = 0;
    for (const double b : bounds) {
      const double over = t * b - 1;
      if (over > 0) sum += over * over;
    }
    return sum / (2 * ridge);
  };
  double best = entropy(feasible);
  for (const double t : kDualScales) {
    if (t > feasible) best = std::max(best, entropy(t) - conjugate(t));
  }
  return best;
}

}  // namespace

void check_config(const Config& config) {
  if (config.data.empty()) throw std::runtime_error("--data is required");
  penalty_of(config);
  positive_label_of(config.positive_label);
  if (config.newton_steps != "auto" && config.newton_steps != "rounds" && config.newton_steps != "hessian")
    throw std::runtime_error("--newton_steps must be auto, rounds or hessian");
  if (config.bias && config.fit_intercept) {
    throw std::runtime_error(
        "--bias and --fit_intercept exclude each other: --bias is liblinear's penalised constant feature, "
        "--fit_intercept an unpenalised intercept");
  }
  if (!(config.l1_ratio >= 0 && config.l1_ratio <= 1))
    throw std::runtime_error("--l1_ratio must be between 0 and 1, not " + label_text(config.l1_ratio));
  if (config.penalty == "l2" && config.l1_ratio != 1) {
    throw std::runtime_error(
        "--l1_ratio mixes a ridge term into --penalty l1; --penalty l2 is --l1_ratio 0 already");
  }
  if (config.multinomial && !config.positive_label.empty())
    throw std::runtime_error("--multinomial fits every class: drop --positive_label");
  if (config.multiclass && !config.positive_label.empty())
    throw std::runtime_error("--multiclass fits each class against the rest: drop --positive_label");
  if (config.cv == 1) throw std::runtime_error("--cv needs at least 2 folds");
  if (config.cv > 0 && !config.test.empty())
    throw std::runtime_error("--cv holds out its own rows: drop --test");
  if (config.path == 1) throw std::runtime_error("--path needs at least 2 lambdas");
  if (config.path > 0 && penalty_of(config) != Penalty::kL1) {
    throw std::runtime_error(
        "--path and --cv need an L1 share (--penalty l1, --l1_ratio above 0): an L2 penalty has no "
        "lambda_max");
  }
  if (config.multiclass && !config.multinomial && config.cv > 0 &&
      !(config.path_table.empty() && config.path_models.empty()))
    throw std::runtime_error("--multiclass --cv writes each class's model at its lambda_min (--output) only");
  if (config.lambda_min_ratio != 0 && !(config.lambda_min_ratio > 0 && config.lambda_min_ratio < 1))
    throw std::runtime_error("--lambda_min_ratio must be in (0, 1)");
  if (config.path == 0 && !(config.path_table.empty() && config.path_models.empty()))
    throw std::runtime_error("--path_table and --path_models are a path's (--path N)");
}

Eigen::VectorXd unit_scales(const std::vector<double>& sums, const std::vector<double>& squares,
                            double weight) {
  Eigen::VectorXd unit(static_cast<Eigen::Index>(sums.size()));
  for (std::size_t j = 0; j < sums.size(); ++j) {
    const double mean = sums[j] / weight;
    const double variance = squares[j] / weight - mean * mean;
    // A constant column has nothing to scale: it keeps its own.
    unit[static_cast<Eigen::Index>(j)] = variance > 0 ? 1 / std::sqrt(variance) : 1.0;
  }
  return unit;
}

double lambda_max_of(const std::vector<double>& positive_sums, const std::vector<double>& negative_sums,
                     double positive_weight, double negative_weight, bool fit_intercept, double l1_ratio) {
  // The loss's gradient is -sum_i c_i y_i alpha_i x_i, alpha_i = 1 / (1 + exp(y_i b)): 1/2 at b = 0, and
  // at the intercept's optimum b = log(W+ / W-) the other class's share of the weight.
  const double weight = positive_weight + negative_weight;
  const double positive_alpha = fit_intercept ? negative_weight / weight : 0.5;
  const double negative_alpha = fit_intercept ? positive_weight / weight : 0.5;
  double largest = 0;
  for (std::size_t j = 0; j < positive_sums.size(); ++j) {
    largest =
        std::max(largest, std::abs(negative_alpha * negative_sums[j] - positive_alpha * positive_sums[j]));
  }
  return largest / (l1_ratio * weight);
}

double softmax_lambda_max(const std::vector<double>& class_column_sums,
                          const std::vector<double>& class_weights, const Eigen::VectorXd& unit,
                          std::size_t penalised, bool fit_intercept, double l1_ratio) {
  const std::size_t classes = class_weights.size(), params = static_cast<std::size_t>(unit.size());
  const double weight = std::accumulate(class_weights.begin(), class_weights.end(), 0.0);
  double largest = 0;
  for (std::size_t j = 0; j < penalised; ++j) {
    double sum = 0;  // sum_i c_i x_ij
    for (std::size_t l = 0; l < classes; ++l) sum += class_column_sums[l * params + j];
    for (std::size_t l = 0; l < classes; ++l) {
      const double p = fit_intercept ? class_weights[l] / weight : 1 / static_cast<double>(classes);
      const double gradient = p * sum - class_column_sums[l * params + j];
      largest = std::max(largest, std::abs(gradient) * unit[static_cast<Eigen::Index>(j)]);
    }
  }
  return largest / (l1_ratio * weight);
}

std::vector<double> Probe::serialised() const {
  std::vector<double> numbers{lambda_max, rows, features};
  numbers.insert(numbers.end(), class_weights.begin(), class_weights.end());
  numbers.insert(numbers.end(), class_lambda_max.begin(), class_lambda_max.end());
  return numbers;
}

Probe Probe::deserialised(const std::vector<double>& numbers) {
  // Three numbers, then two of each class.
  if (numbers.size() < 3 || (numbers.size() - 3) % 2 != 0)
    throw std::logic_error("logreg: a probe's result is malformed");
  const auto middle = numbers.begin() + 3 + static_cast<std::ptrdiff_t>((numbers.size() - 3) / 2);
  return {numbers[0], numbers[1], numbers[2], {numbers.begin() + 3, middle}, {middle, numbers.end()}};
}

std::vector<double> class_lambda_max(const std::vector<double>& class_column_sums,
                                     const std::vector<double>& class_weights, const Eigen::VectorXd& unit,
                                     bool fit_intercept, double l1_ratio) {
  const std::size_t classes = class_weights.size(), params = static_cast<std::size_t>(unit.size());
  const double weight = std::accumulate(class_weights.begin(), class_weights.end(), 0.0);
  std::vector<double> all(params, 0.0);
  for (std::size_t l = 0; l < classes; ++l) {
    for (std::size_t j = 0; j < params; ++j) all[j] += class_column_sums[l * params + j];
  }
  std::vector<double> found;
  for (std::size_t l = 0; l < classes; ++l) {
    std::vector<double> positive(params), negative(params);
    for (std::size_t j = 0; j < params; ++j) {
      const double scale = unit[static_cast<Eigen::Index>(j)];
      positive[j] = class_column_sums[l * params + j] * scale;
      negative[j] = (all[j] - class_column_sums[l * params + j]) * scale;
    }
    found.push_back(lambda_max_of(positive, negative, class_weights[l], weight - class_weights[l],
                                  fit_intercept, l1_ratio));
  }
  return found;
}

Penalty penalty_of(const Config& config) {
  // An L1 share of 0 leaves the ridge alone: liblinear's L2 objective.
  if (config.penalty == "l1") return config.l1_ratio > 0 ? Penalty::kL1 : Penalty::kL2;
  if (config.penalty == "l2") return Penalty::kL2;
  throw std::runtime_error("--penalty must be l1 or l2, not '" + config.penalty + "'");
}

std::optional<double> label_number(const std::string& text) {
  char* end = nullptr;
  const double label = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !std::isfinite(label)) return std::nullopt;
  return label;
}

std::string label_text(double label) {
  char digits[32];
  return std::string(digits, std::to_chars(digits, digits + sizeof digits, label).ptr);
}

double positive_label_of(const std::string& flag) {
  if (flag.empty()) return NAN;
  const std::optional<double> label = label_number(flag);
  if (!label) throw std::runtime_error("--positive_label must be a number, not '" + flag + "'");
  return *label;
}

std::string class_text(const Config& config, double label) {
  return config.label_names.empty() ? label_text(label) : config.label_names[static_cast<std::size_t>(label)];
}

bool is_binary(double label) { return label == 1 || label == -1 || label == 0; }

namespace {

// Visits the labels of `file` in file order with their sources until `visit` returns true: `file` holds
// labels alone (read whole: 16 bytes a row with their sources) or LIBSVM rows (read 64 MiB at a time). A
// message about a row whose line is not at hand reads the labels again this way, only then.
template <class Visit>
void visit_labels(const std::string& file, bool labels_alone, Visit visit) {
  if (labels_alone) {
    std::vector<std::uint64_t> sources;
    const std::vector<double> labels = io::read_dense_vector(file, &sources);
    for (std::size_t k = 0; k < labels.size(); ++k) {
      if (visit(labels[k], sources[k])) return;
    }
    return;
  }
  constexpr std::uint64_t kBytesAtATime = std::uint64_t{64} << 20;
  const std::uint64_t size = io::file_size(file);
  const int parts = static_cast<int>(size / kBytesAtATime + 1);
  for (int part = 0; part < parts; ++part) {
    const io::SparseRows rows = io::read_libsvm(file, io::split_range(size, part, parts));
    for (std::size_t r = 0; r < rows.rows(); ++r) {
      if (visit(rows.labels[r], rows.source[r])) return;
    }
  }
}

// Labels 0 and -1 side by side leave the negative class unnamed. Fed labels in file order, this tells the
// first by which both have been seen.
class MixedLabels {
 public:
  explicit MixedLabels(std::string file) : file_(std::move(file)) {}

  // Whether this label is the first by which both have been seen.
  bool mixed_by(double label) {
    zero_ = zero_ || label == 0;
    minus_one_ = minus_one_ || label == -1;
    return zero_ && minus_one_;
  }

  [[noreturn]] void refuse(std::uint64_t source) const {
    throw io::InputError::at(file_, source,
                             "labels 0 and -1 both found; give --positive_label to name the positive class");
  }

 private:
  std::string file_;
  bool zero_ = false;
  bool minus_one_ = false;
};

// Refuses labels 0 and -1 in `file` (labels alone, or LIBSVM rows) at the line of the first label by
// which both have been seen, reading the labels again: rows whose lines are not at hand (a MatrixMarket
// matrix's, or those the workers only counted) found them.
[[noreturn]] void refuse_mixed_labels(const std::string& file, bool labels_alone) {
  MixedLabels mixed(file);
  std::uint64_t source = io::kUnknownSource;
  visit_labels(file, labels_alone, [&](double label, std::uint64_t at) {
    if (!mixed.mixed_by(label)) return false;
    source = at;
    return true;
  });
  mixed.refuse(source);
}

}  // namespace

double binary_label(double label, double positive_label, const std::string& file, std::uint64_t source) {
  if (!std::isnan(positive_label)) return label == positive_label ? 1.0 : -1.0;
  if (label == 1) return 1.0;
  if (is_binary(label)) return -1.0;
  if (source == io::kUnknownSource) {
    // A MatrixMarket matrix's rows keep no line of their labels file: the first label that is not binary
    // is named (the same at every rank count).
    visit_labels(file, true, [&](double value, std::uint64_t at) {
      if (is_binary(value)) return false;
      label = value;
      source = at;
      return true;
    });
  }
  throw io::InputError::at(
      file, source,
      "label " + label_text(label) +
          " is not binary (+1/-1 or 1/0); give --positive_label to name the positive class");
}

std::vector<bool> positive_rows(const io::SparseRows& rows, double positive_label, const std::string& file) {
  std::vector<bool> positive(rows.rows());
  MixedLabels mixed(file);
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    positive[r] = binary_label(rows.labels[r], positive_label, file, rows.source[r]) > 0;
    if (std::isnan(positive_label) && mixed.mixed_by(rows.labels[r])) {
      // A MatrixMarket matrix's rows keep no line of their labels file.
      if (rows.source[r] == io::kUnknownSource) refuse_mixed_labels(file, true);
      mixed.refuse(rows.source[r]);
    }
  }
  return positive;
}

MarginTerms margin_terms(double z) {
  const double e = std::exp(-std::abs(z));
  const double log1p_e = std::log1p(e);
  if (z > 0) return {log1p_e, e / (1 + e), -z - log1p_e};
  return {-z + log1p_e, 1 / (1 + e), -log1p_e};
}

double binary_entropy(double a, double log_a) {
  if (!(a > 0) || !(a < 1)) return 0.0;
  return -(a * log_a + (1 - a) * std::log1p(-a));
}

std::string lagging_gap_hint(double optimality, double relative_gap, double tol,
                             const Eigen::VectorXd& column_norms, std::size_t moving,
                             std::size_t max_hessian) {
  constexpr double kWideSpread = 1e6;
  if (!(optimality <= tol) || !(relative_gap > tol)) return {};
  double smallest = std::numeric_limits<double>::infinity(), largest = 0;
  for (const double norm : column_norms) {
    if (!(norm > 0)) continue;
    smallest = std::min(smallest, norm);
    largest = std::max(largest, norm);
  }
  if (!(largest >= kWideSpread * smallest)) return {};
  char line[400];
  if (moving > max_hessian) {
    std::snprintf(line, sizeof line,
                  "hint: the weights have settled (optimality %.3g) but the duality gap lags, as it does on "
                  "features of very different scales (squared column norms from %.3g to %.3g): the %zu "
                  "coordinates moving exceed --max_hessian %zu, so the Newton steps went by rounds; a "
                  "larger --max_hessian solves them from the Hessian",
                  optimality, smallest, largest, moving, max_hessian);
  } else {
    std::snprintf(line, sizeof line,
                  "hint: the weights have settled (optimality %.3g) but the duality gap lags: features of "
                  "very different scales (squared column norms from %.3g to %.3g) keep the dual point far "
                  "from feasible; columns scaled to comparable norms converge sooner (scaling changes what "
                  "the L1 penalty weighs)",
                  optimality, smallest, largest);
  }
  return line;
}

double entropy_at(double t, const std::vector<double>& sums) {
  if (sums.size() != kDualScales.size()) throw std::logic_error("logreg: entropy sums of the wrong length");
  if (t >= kDualScales[0]) return sums[0];
  // The grid falls from 1: `above` ends as the summed point nearest t from above (the first always is).
  std::size_t above = 0;
  for (std::size_t k = 1; k < kDualScales.size(); ++k) {
    if (std::isnan(sums[k])) continue;
    if (kDualScales[k] >= t) {
      above = k;
      continue;
    }
    const double high = kDualScales[above], low = kDualScales[k];
    return sums[k] + (t - low) / (high - low) * (sums[above] - sums[k]);
  }
  return t / kDualScales[above] * sums[above];  // the chord from t = 0, where the sum is 0
}

std::vector<std::uint8_t> scales_near(std::initializer_list<double> arguments) {
  std::vector<bool> wanted(kDualScales.size(), false);
  wanted[0] = true;
  for (const double t : arguments) {
    // The last grid point at or above t, and two more on either side.
    std::size_t at = 0;
    while (at + 1 < kDualScales.size() && kDualScales[at + 1] >= t) ++at;
    for (std::size_t k = at > 1 ? at - 1 : 0; k <= std::min(at + 2, kDualScales.size() - 1); ++k)
      wanted[k] = true;
  }
  std::vector<std::uint8_t> scales;
  for (std::size_t k = 0; k < wanted.size(); ++k) {
    if (wanted[k]) scales.push_back(static_cast<std::uint8_t>(k));
  }
  return scales;
}

void SoftmaxSums::resize(std::size_t classes, std::size_t params) {
  gradient.assign(classes * params, 0.0);
  class_sums.assign(classes * classes, 0.0);
  class_squares.assign(classes * classes, 0.0);
  entropy.assign(classes * kDualScales.size(), 0.0);
  if (classes * classes * params <= kExactGradient) class_gradient.assign(classes * classes * params, 0.0);
}

void SoftmaxSums::add_row(std::span<const double> z, std::size_t y, double c,
                          std::span<const std::uint32_t> index, std::span<const double> value) {
  const std::size_t classes = z.size(), params = gradient.size() / classes;
  const double top = *std::max_element(z.begin(), z.end());
  double sum = 0;
  for (const double score : z) sum += std::exp(score - top);
  const double log_sum = top + std::log(sum);
  loss += c * (log_sum - z[y]);
  // The rest's share a = 1 - p_y and b = sum_{l != y} p_l log p_l give the entropy of
  // e + t (p - e) = (1 - t a at y, t p_l elsewhere) at every t: -(1 - t a) log(1 - t a) - t a log t - t b.
  double rest = 0, rest_log = 0;
  for (std::size_t l = 0; l < classes; ++l) {
    const double log_p = z[l] - log_sum, p = std::exp(log_p);
    const double u = c * (p - (l == y ? 1.0 : 0.0));
    class_sums[y * classes + l] += u;
    class_squares[y * classes + l] += u * u;
    double* row = gradient.data() + l * params;
    for (std::size_t e = 0; e < index.size(); ++e) row[index[e]] += u * value[e];
    if (!class_gradient.empty()) {
      double* own = class_gradient.data() + (y * classes + l) * params;
      for (std::size_t e = 0; e < index.size(); ++e) own[index[e]] += u * value[e];
    }
    if (l == y) continue;
    rest += p;
    if (p > 0) rest_log += p * log_p;
  }
  if (!(rest > 0) || c == 0) return;
  double* terms = entropy.data() + y * kDualScales.size();
  for (std::size_t k = 0; k < kDualScales.size(); ++k) {
    const double t = kDualScales[k], share = t * rest;
    const double own = share < 1 ? -(1 - share) * std::log1p(-share) : 0.0;  // 0 log 0 = 0
    terms[k] += c * (own - share * std::log(t) - t * rest_log);
  }
}

// ---------------------------------------------------------------------------------------------- worker

Logreg::Worker::Worker(const Config& config, const WorkerContext& context)
    : gpu_(kernels::pick_gpu(context)),
      constant_(constant_feature(config)),
      path_(config.path > 0),
      standardize_(config.standardize),
      block_(config.block),
      classes_(config.classes),
      class_weights_(config.class_weights),
      probe_(config.probe),
      joint_(config.joint) {
  check_config(config);
  Peers& peers = peers_of(context);
  const RowsSource source = rows_source(config);
  WeightedRows mine;
  if (config.fold >= 0) {
    const WeightedRows& all = kept_rows(source, peers);
    columns_in_data_ = all.rows.columns();
    mine = training_rows(source, peers, all, static_cast<std::uint32_t>(config.cv), config.seed,
                         static_cast<std::uint32_t>(config.fold));
  } else if (config.silent) {
    // One class of a one-vs-rest fit: the classes a process solves in turn read the data once.
    mine = kept_rows(source, peers);
    columns_in_data_ = mine.rows.columns();
  } else {
    mine = read_weighted_rows(source, peers);
    columns_in_data_ = mine.rows.columns();
  }
  rows_ = std::move(mine.rows);
  // Memory per feature on the first rank (docs/memory.md): the coordinator's (w, the direction, gradient,
  // curvature, column norms, initial changes, 16 more at each evaluation, the iterates kept for
  // extrapolation, the working sets', and the step costs'), a scheduler's (with sweeps), and with a single
  // worker (one process) the worker's too. A stray huge index is refused at its line, not met by the OOM
  // killer.
  constexpr double kCoordinator = 48 + 16 + 40 + 13 + 16 + 24, kScheduler = 17 + 20 + 12,
                   kWorker = 8 + 48 + 8;
  io::check_columns_fit(config.data, rows_, kCoordinator + kScheduler + (context.count == 1 ? kWorker : 0));
  const double positive = positive_label_of(config.positive_label);
  // A MatrixMarket matrix's labels come from --labels, whose lines its rows do not keep: a bad label is
  // that file's.
  const std::string& labels = config.labels.empty() ? config.data : config.labels;
  y_.resize(static_cast<Eigen::Index>(rows_.rows()));
  for (std::size_t r = 0; r < rows_.rows(); ++r) {
    y_[static_cast<Eigen::Index>(r)] = binary_label(rows_.labels[r], positive, labels, rows_.source[r]);
    if (std::isnan(positive) && rows_.labels[r] == 0) ++zero_labels_;
  }
  if (!mine.weights.empty()) {
    row_weights_ = Eigen::Map<const Eigen::VectorXd>(mine.weights.data(),
                                                     static_cast<Eigen::Index>(mine.weights.size()));
  }
}

void Logreg::Worker::start(std::size_t num_params) {
  if (constant_) {
    // The constant feature is the last parameter, after the largest column of every worker's rows.
    io::SparseRows with_bias;
    with_bias.labels = std::move(rows_.labels);
    with_bias.source = std::move(rows_.source);
    for (std::size_t r = 0; r + 1 < rows_.row_start.size(); ++r) {
      for (std::size_t e = rows_.row_start[r]; e < rows_.row_start[r + 1]; ++e) {
        with_bias.index.push_back(rows_.index[e]);
        with_bias.value.push_back(rows_.value[e]);
      }
      with_bias.index.push_back(static_cast<std::uint32_t>(num_params - 1));
      with_bias.value.push_back(1.0);
      with_bias.row_start.push_back(with_bias.index.size());
    }
    rows_ = std::move(with_bias);
  }
  column_counts_.assign(num_params, 0.0);
  for (const std::uint32_t j : rows_.index) ++column_counts_[j];
  if (path_) positive_sums_.assign(num_params, 0.0);
  if (standardize_) {
    column_sums_.assign(num_params, 0.0);
    column_squares_.assign(num_params, 0.0);
  }
  for (std::size_t r = 0; r + 1 < rows_.row_start.size() && (path_ || standardize_); ++r) {
    const double c = row_weights_.size() > 0 ? row_weights_[static_cast<Eigen::Index>(r)] : 1.0;
    const bool positive = y_[static_cast<Eigen::Index>(r)] > 0;
    for (std::size_t e = rows_.row_start[r]; e < rows_.row_start[r + 1]; ++e) {
      const std::uint32_t j = rows_.index[e];
      const double x = rows_.value[e];
      if (path_ && positive) positive_sums_[j] += c * x;
      if (standardize_) {
        column_sums_[j] += c * x;
        column_squares_[j] += c * x * x;
      }
    }
  }
  const Eigen::VectorXd margins = block_ >= 0 ? start_block(num_params) : Eigen::VectorXd();
  kernel_ = kernels::make_column_kernel(gpu_, rows_, num_params);
  kernel_->set_row_weights({row_weights_.data(), static_cast<std::size_t>(row_weights_.size())});
  kernel_->set_labels({y_.data(), static_cast<std::size_t>(y_.size())});  // margins start at 0
  if (block_ >= 0) {
    kernel_->set_vector({margins.data(), static_cast<std::size_t>(margins.size())});
    kernel_->clear_direction();
    kernel_->step_along_direction(0);  // the loss's derivatives follow the margins
  }
  rows_ = io::SparseRows{};
  all_.resize(num_params);
  std::iota(all_.begin(), all_.end(), ParamIndex{0});
}

Eigen::VectorXd Logreg::Worker::start_block(std::size_t num_params) {
  const std::size_t classes = classes_.size(), block = static_cast<std::size_t>(block_);
  class_weights_.resize(classes);
  for (std::vector<double>& w : class_weights_) w.resize(num_params, 0.0);
  softmax_.resize(classes, num_params);
  if (probe_) {
    class_column_sums_.assign(classes * num_params, 0.0);
    class_sizes_.assign(classes, 0.0);
  }
  std::vector<std::int32_t> position;
  if (!joint_.empty()) {
    position.assign(num_params, -1);
    for (std::size_t a = 0; a < joint_.size(); ++a) position.at(joint_[a]) = static_cast<std::int32_t>(a);
    const std::size_t m = classes * joint_.size();
    joint_hessian_.assign(m * m, 0.0);  // dense while the rows add up, packed after
  }
  const auto n = static_cast<Eigen::Index>(y_.size());
  Eigen::VectorXd margins(n);
  offsets_.resize(n);
  std::vector<double> z(classes);
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto r = static_cast<std::size_t>(i);
    const std::size_t first = rows_.row_start[r], count = rows_.row_start[r + 1] - first;
    const std::span<const std::uint32_t> index(rows_.index.data() + first, count);
    const std::span<const double> value(rows_.value.data() + first, count);
    double top = -std::numeric_limits<double>::infinity();
    for (std::size_t l = 0; l < classes; ++l) {
      z[l] = 0;
      for (std::size_t e = 0; e < count; ++e) z[l] += class_weights_[l][index[e]] * value[e];
      if (l != block) top = std::max(top, z[l]);
    }
    double rest = 0;
    for (std::size_t l = 0; l < classes; ++l) {
      if (l != block) rest += std::exp(z[l] - top);
    }
    offsets_[i] = top + std::log(rest);
    margins[i] = z[block] - offsets_[i];
    const double c = row_weights_.size() > 0 ? row_weights_[i] : 1.0;
    block_loss_ += c * logistic_loss(y_[i] * margins[i]);
    const auto y = static_cast<std::size_t>(
        std::lower_bound(classes_.begin(), classes_.end(), rows_.labels[r]) - classes_.begin());
    softmax_.add_row(z, y, c, index, value);
    if (!joint_.empty()) add_joint_row(z, c, index, value, position);
    if (probe_) {
      class_sizes_[y] += c;
      for (std::size_t e = 0; e < count; ++e) class_column_sums_[y * num_params + index[e]] += c * value[e];
    }
  }
  class_weights_ = {};
  if (!joint_.empty()) pack_joint_hessian();
  return margins;
}

void Logreg::Worker::pack_joint_hessian() {
  // Row s of the dense matrix holds the entries (s, t), t >= s, of the classes from s's on.
  const std::size_t m = classes_.size() * joint_.size();
  std::vector<double> packed(packed_size(m));
  for (std::size_t b = 0; b < m; ++b) {
    for (std::size_t a = 0; a <= b; ++a) packed[packed_index(a, b)] = joint_hessian_[a * m + b];
  }
  joint_hessian_ = std::move(packed);
}

void Logreg::Worker::add_joint_row(std::span<const double> z, double c, std::span<const std::uint32_t> index,
                                   std::span<const double> value, const std::vector<std::int32_t>& position) {
  const std::size_t classes = z.size(), features = joint_.size();
  const double top = *std::max_element(z.begin(), z.end());
  std::vector<double> p(classes);
  double sum = 0;
  for (std::size_t l = 0; l < classes; ++l) sum += p[l] = std::exp(z[l] - top);
  for (double& share : p) share /= sum;
  std::vector<std::size_t> places;  // the row's entries among joint_: their places, and x
  std::vector<double> xs;
  for (std::size_t e = 0; e < index.size(); ++e) {
    if (const std::int32_t a = position[index[e]]; a >= 0) {
      places.push_back(static_cast<std::size_t>(a));
      xs.push_back(value[e]);
    }
  }
  // Into the dense matrix's rows of class l, the columns of classes m >= l: c (p_l [l = m] - p_l p_m)
  // x_a x_b at (l, a), (m, b).
  const std::size_t side = classes * features;
  for (std::size_t l = 0; l < classes; ++l) {
    for (std::size_t m = l; m < classes; ++m) {
      const double curvature = c * ((l == m ? p[l] : 0.0) - p[l] * p[m]);
      if (curvature == 0) continue;
      for (std::size_t e = 0; e < places.size(); ++e) {
        double* row = joint_hessian_.data() + (l * features + places[e]) * side + m * features;
        const double scaled = curvature * xs[e];
        for (std::size_t f = 0; f < places.size(); ++f) row[places[f]] += scaled * xs[f];
      }
    }
  }
}

Logreg::Setup Logreg::Worker::setup() const {
  Setup setup;
  setup.gradient.resize(all_.size());
  std::vector<double> curvature(all_.size());
  kernel_->logistic_derivatives(all_, setup.gradient, curvature);
  setup.column_norms.resize(all_.size());
  kernel_->column_norms_squared(setup.column_norms);
  setup.column_counts = column_counts_;
  setup.rows = static_cast<double>(y_.size());
  setup.weight_sum = row_weights_.size() > 0 ? row_weights_.sum() : setup.rows;
  setup.positives = static_cast<double>((y_.array() > 0).count());
  setup.positive_sums = positive_sums_;
  setup.column_sums = column_sums_;
  setup.column_squares = column_squares_;
  for (Eigen::Index i = 0; i < y_.size(); ++i) {
    if (y_[i] > 0) setup.positive_weight += row_weights_.size() > 0 ? row_weights_[i] : 1.0;
  }
  setup.zero_labels = zero_labels_;
  setup.block_loss = block_loss_;
  setup.softmax = softmax_;
  setup.class_column_sums = class_column_sums_;
  setup.class_weights = class_sizes_;
  setup.joint_hessian = joint_hessian_;
  return setup;
}

Logreg::Stats Logreg::Worker::evaluate() const {
  Stats stats;
  const std::vector<ParamIndex>& covered = scope_.empty() ? all_ : scope_;
  stats.gradient.resize(covered.size());
  stats.curvature.resize(covered.size());
  kernel_->logistic_derivatives(covered, stats.gradient, stats.curvature);
  Eigen::VectorXd margins(y_.size());
  kernel_->copy_vector({margins.data(), static_cast<std::size_t>(margins.size())});
  full_alpha_.resize(static_cast<std::size_t>(y_.size()));
  static const std::array<double, kDualScales.size()> log_scales = [] {
    std::array<double, kDualScales.size()> logs{};
    for (std::size_t k = 0; k < logs.size(); ++k) logs[k] = std::log(kDualScales[k]);
    return logs;
  }();
  constexpr std::size_t kScales = kDualScales.size();
  static const std::vector<std::uint8_t> every = [] {
    std::vector<std::uint8_t> all(kScales);
    std::iota(all.begin(), all.end(), std::uint8_t{0});
    return all;
  }();
  const std::vector<std::uint8_t>& scales = scales_.empty() ? every : scales_;
  stats.entropy.assign(2 * kScales, std::numeric_limits<double>::quiet_NaN());
  for (const std::uint8_t k : scales) stats.entropy[k] = stats.entropy[kScales + k] = 0;
  stats.alpha_sums.assign(2, 0.0);
  stats.alpha_squares.assign(2, 0.0);
  if (block_ >= 0) stats.offset_sums.assign(3, 0.0);
  for (Eigen::Index i = 0; i < y_.size(); ++i) {
    const double z = y_[i] * margins[i];
    const MarginTerms row = margin_terms(z);
    // The row's weight c: the dual variable of a weighted row is c alpha, its entropy term c h(alpha).
    const double c = row_weights_.size() > 0 ? row_weights_[i] : 1.0;
    stats.loss += c * row.loss;
    if (z > 0 || (z == 0 && y_[i] < 0)) stats.correct += c;  // liblinear: positive only when w . x > 0
    if (scope_.empty()) {
      full_alpha_[static_cast<std::size_t>(i)] = row.alpha;
    } else {
      const double moved = c * (row.alpha - full_alpha_[static_cast<std::size_t>(i)]);
      stats.alpha_shift += moved * moved;
    }
    const std::size_t negative = y_[i] > 0 ? 0 : 1;
    stats.alpha_sums[negative] += c * row.alpha;
    stats.alpha_squares[negative] += c * row.alpha * c * row.alpha;
    if (block_ >= 0) {
      const double term = c * row.alpha * y_[i] * offsets_[i];
      stats.offset_sums[negative] += term;
      stats.offset_sums[2] += std::abs(term);
    }
    if (!(row.alpha > 0) || c == 0) continue;
    double* entropy = stats.entropy.data() + negative * kScales;
    for (const std::uint8_t k : scales)
      entropy[k] += c * binary_entropy(kDualScales[k] * row.alpha, log_scales[k] + row.log_alpha);
  }
  stats.loss_change = kernel_->loss_change_along_direction(moved_);
  if (!model_.empty()) {
    stats.hessian.assign(packed_size(model_.size()), 0.0);
    constexpr double kAnyCost = std::numeric_limits<double>::infinity();  // StepWays weighs it
    if (!kernel_->gram(model_, 0, true, kAnyCost, stats.hessian, stats.hessian_products))
      stats.hessian_missing = 1;
  }
  return stats;
}

void Logreg::Worker::prefetch(const Schedule& block) const { kernel_->prefetch_columns(block.params); }

Logreg::Partial Logreg::Worker::update(const Schedule& schedule) {
  Partial partial;
  partial.hessian_d.resize(schedule.params.size());
  kernel_->direction_dots(schedule.params, partial.hessian_d);
  return partial;
}

void Logreg::Worker::apply(const Commit& commit) {
  if (!commit.restart_from.empty()) {
    // Margins X w from w itself: a direction that blew up cannot be walked back along.
    kernel_->clear_direction();
    kernel_->add_to_direction(all_, commit.restart_from);
    if (block_ >= 0) {
      const Eigen::VectorXd start = -offsets_;
      kernel_->set_vector({start.data(), static_cast<std::size_t>(start.size())});
    } else {
      kernel_->set_vector(std::vector<double>(kernel_->rows(), 0.0));
    }
    kernel_->step_along_direction(1);
    kernel_->clear_direction();
    moved_ = 0;
  }
  if (commit.new_direction) {
    kernel_->clear_direction();
    moved_ = 0;
  }
  kernel_->add_to_direction(commit.params, commit.delta);
  if (commit.step != 0) {
    kernel_->step_along_direction(commit.step);
    moved_ += commit.step;
  }
  if (commit.rescope) scope_ = commit.scope;
  if (commit.remodel) model_ = commit.model;
  if (commit.rescale) scales_ = commit.scales;
}

// ----------------------------------------------------------------------------------------- coordinator

Logreg::Coordinator::Coordinator(const Config& config, std::size_t num_params, const Setup& setup)
    : config_(config),
      penalty_(penalty_of(config)),
      c_(penalty_ == Penalty::kL1 ? config.C / config.l1_ratio : config.C),
      ridge_(penalty_ == Penalty::kL1 ? (1 - config.l1_ratio) / config.l1_ratio : 0.0),
      scale_(penalty_ == Penalty::kL1 ? config.l1_ratio : 1.0),
      n_(setup.rows),
      weight_sum_(setup.weight_sum),
      zero_labels_(setup.zero_labels),
      w_(Eigen::VectorXd::Zero(static_cast<Eigen::Index>(num_params))),
      d_(Eigen::VectorXd::Zero(static_cast<Eigen::Index>(num_params))),
      gradient_(c_ * Eigen::Map<const Eigen::VectorXd>(setup.gradient.data(),
                                                       static_cast<Eigen::Index>(num_params))),
      column_norms_(Eigen::Map<const Eigen::VectorXd>(setup.column_norms.data(),
                                                      static_cast<Eigen::Index>(num_params))) {
  if (n_ < 1) throw std::runtime_error(config.data + ": no data rows");
  if (config.fit_intercept) intercept_ = static_cast<ParamIndex>(num_params - 1);
  unit_ = Eigen::VectorXd::Ones(static_cast<Eigen::Index>(num_params));
  if (config.standardize) {
    unit_ = unit_scales(setup.column_sums, setup.column_squares, weight_sum_);
    // The constant feature keeps its scale.
    if (constant_feature(config)) unit_[unit_.size() - 1] = 1;
    gradient_ = gradient_.cwiseProduct(unit_);
    column_norms_ = column_norms_.cwiseProduct(unit_.cwiseAbs2());
  }
  column_lengths_ = column_norms_.cwiseSqrt();
  margin_lengths_ = (column_norms_ / n_).cwiseSqrt();
  if (config.positive_label.empty() && zero_labels_ > 0 && zero_labels_ + setup.positives < n_) {
    // Found from the workers' counts alone: the labels are read again for the line by which both were
    // seen, the same at every rank count.
    refuse_mixed_labels(config.labels.empty() ? config.data : config.labels, !config.labels.empty());
  }
  // A positive label that no training row carries is most likely mistyped: the model would learn one
  // class and report perfect accuracy.
  if (!config.positive_label.empty() && setup.positives == 0) {
    throw std::runtime_error((config.labels.empty() ? config.data : config.labels) + ": no row is labelled " +
                             config.positive_label + " (--positive_label)");
  }
  // A class whose rows weigh nothing has no optimum: its intercept would fall without end.
  if (config.block >= 0 && !(setup.positive_weight > 0)) {
    throw std::runtime_error(config.weights + ": the rows of class " +
                             class_text(config, config.classes.at(static_cast<std::size_t>(config.block))) +
                             " weigh nothing");
  }
  if (!config.output.empty()) io::check_writable(config.output);
  if (!config.test.empty()) {
    test_ = io::read_rows(config.test, config.test_labels, config.label_names);
    if (test_.rows() == 0) throw io::InputError(config.test, 0, "no data rows");
    test_positive_ = positive_rows(test_, positive_label_of(config.positive_label),
                                   config.test_labels.empty() ? config.test : config.test_labels);
  }
  if (config.block >= 0) {
    // A multinomial step starts from its class's weights, where the workers' margins are.
    config_.class_weights.resize(config.classes.size());  // a class not yet solved is all zero
    for (std::vector<double>& w : config_.class_weights) w.resize(num_params, 0.0);
    const std::vector<double>& start = config_.class_weights.at(static_cast<std::size_t>(config.block));
    w_ = Eigen::Map<const Eigen::VectorXd>(start.data(), w_.size()).cwiseQuotient(unit_);
    block_start_ = {scale_ * objective(w_, setup.block_loss), softmax_primal(setup.softmax),
                    softmax_dual(setup.softmax)};
    config_.class_weights = {};
  }
  if (config.probe) {
    const std::size_t features = num_params - (constant_feature(config) ? 1 : 0);
    const std::size_t penalised = num_params - (config.fit_intercept ? 1 : 0);
    probe_ = Probe{softmax_lambda_max(setup.class_column_sums, setup.class_weights, unit_, penalised,
                                      config.fit_intercept, config.l1_ratio),
                   n_, static_cast<double>(features), setup.class_weights,
                   class_lambda_max(setup.class_column_sums, setup.class_weights, unit_, config.fit_intercept,
                                    config.l1_ratio)}
                 .serialised();
    evaluate_now_ = true;  // and stop there (report)
  }
  if (!config.joint.empty()) {
    joint_ = joint_result(setup);
    evaluate_now_ = true;
  }
  // At w = 0 every row has l'' = 1/4, and never more: the first block's steps are known (or bounded)
  // before any evaluation.
  curvature_ = c_ * column_norms_ / 4;
  if (config.path > 0) start_path(setup, num_params);
  initial_changes_.resize(num_params);
  for (std::size_t j = 0; j < num_params; ++j) {
    const auto k = static_cast<ParamIndex>(j);
    initial_changes_[j] = margin_change(k, model_step(k, 0));
  }
  const double largest = *std::max_element(initial_changes_.begin(), initial_changes_.end());
  if (largest > 0) {
    for (double& change : initial_changes_) change /= largest;
  }
  all_.resize(num_params);
  std::iota(all_.begin(), all_.end(), ParamIndex{0});
  in_scope_.assign(num_params, true);
  in_scope_list_ = all_;
  ways_ = StepWays(config.newton_steps == "rounds"    ? StepWays::Mode::kRounds
                   : config.newton_steps == "hessian" ? StepWays::Mode::kHessian
                                                      : StepWays::Mode::kAuto);
  step_violations_ = Eigen::VectorXd::Constant(w_.size(), NAN);
  column_counts_ = setup.column_counts.size() == num_params
                       ? Eigen::Map<const Eigen::VectorXd>(setup.column_counts.data(), w_.size()).eval()
                       : Eigen::VectorXd::Ones(w_.size());
  initial_optimality_ = optimality();
}

std::vector<std::string> Logreg::Coordinator::trace_columns() const {
  std::vector<std::string> columns = {"nnz",          "optimality",    "duality_gap",
                                      "relative_gap", "train_logloss", "train_accuracy"};
  if (!config_.test.empty()) columns.insert(columns.end(), {"test_logloss", "test_accuracy", "test_auc"});
  columns.push_back("evaluated");
  if (path_.active()) columns.push_back("lambda");
  return columns;
}

std::vector<double> Logreg::Coordinator::initial_changes() const { return initial_changes_; }

double Logreg::Coordinator::penalty_value(const Eigen::VectorXd& w) const {
  // The intercept is the last coordinate; the penalised ones come before it.
  const auto weights = w.head(w.size() - (config_.fit_intercept ? 1 : 0));
  if (penalty_ == Penalty::kL2) return 0.5 * weights.squaredNorm();
  return weights.lpNorm<1>() + 0.5 * ridge_ * weights.squaredNorm();
}

double Logreg::Coordinator::model_step(ParamIndex j, double hessian_d) const {
  return step_at(j, w_[j] + d_[j], gradient_[j] + c_ * hessian_d, curvature_[j]);
}

double Logreg::Coordinator::margin_change(ParamIndex j, double delta) const {
  return std::abs(delta) * margin_lengths_[j];
}

double Logreg::Coordinator::optimality() const {
  double sum = 0;
  for (const ParamIndex j : evaluated())
    sum = add_violation(penalty_, sum, violation_at(j, w_[j], gradient_[j]));
  return violation_norm(penalty_, sum);
}

double Logreg::Coordinator::objective(const Eigen::VectorXd& w, double loss) const {
  return penalty_value(w) + c_ * loss;
}

double Logreg::Coordinator::dual_value(const Stats& summed, bool whole,
                                       std::array<double, 2>* arguments) const {
  // gradient_ is C grad L at w, which is -C X^T (alpha y). With the intercept the dual also needs
  // sum_i y_i alpha_i = 0: the class whose alphas sum higher is scaled down to the other's sum. That
  // moves alpha by `moved` (its 2-norm), and so each G_j by at most C ||x_j|| moved.
  constexpr std::size_t kScales = kDualScales.size();
  std::array<double, 2> scale = {1.0, 1.0};
  double moved = 0;
  if (config_.fit_intercept) {
    const std::size_t high = summed.alpha_sums[0] >= summed.alpha_sums[1] ? 0 : 1;
    if (summed.alpha_sums[high] > 0) {
      scale[high] = summed.alpha_sums[1 - high] / summed.alpha_sums[high];
      moved = (1 - scale[high]) * std::sqrt(summed.alpha_squares[high]);
    }
  }
  const std::vector<double> positives(summed.entropy.begin(), summed.entropy.begin() + kScales);
  const std::vector<double> negatives(summed.entropy.begin() + kScales, summed.entropy.end());
  const auto entropy = [&](double t) {
    double value = entropy_at(t * scale[0], positives) + entropy_at(t * scale[1], negatives);
    if (!summed.offset_sums.empty())
      value += t * (scale[0] * summed.offset_sums[0] + scale[1] * summed.offset_sums[1]);
    return c_ * value;
  };
  const double shift = c_ * moved;
  if (penalty_ == Penalty::kL2) {
    // ||G'|| over the penalised coordinates, at most ||G|| plus the shift times ||X||_F.
    double norm = 0, frobenius = 0;
    for (Eigen::Index j = 0; j < w_.size(); ++j) {
      if (static_cast<ParamIndex>(j) == intercept_) continue;
      norm += gradient_[j] * gradient_[j];
      frobenius += column_norms_[j];
    }
    const double bound = std::sqrt(norm) + shift * std::sqrt(frobenius);
    if (arguments) *arguments = scale;
    return entropy(1) - 0.5 * bound * bound;
  }
  // Bounds on |v_j| = |C x_j . (alpha y)| at the dual point, over the penalised coordinates.
  std::vector<double> bounds;
  for (const ParamIndex j : evaluated()) {
    if (j != intercept_) bounds.push_back(std::abs(gradient_[j]) + column_lengths_[j] * shift);
  }
  if (whole && !scope_.empty()) {
    // |x_j . (alpha y) - x_j . (alpha' y)| <= ||x_j|| ||alpha - alpha'||, for the coordinates left out.
    const double far = c_ * std::sqrt(summed.alpha_shift) + shift;
    auto next = scope_.begin();  // scope_ is in index order
    for (const ParamIndex j : all_) {
      if (next != scope_.end() && *next == j) {
        ++next;
        continue;
      }
      bounds.push_back(std::abs(full_gradient_[j]) + column_lengths_[j] * far);
    }
  }
  double t = 1;
  const double value = scaled_dual(entropy, bounds, ridge_, t);
  if (arguments) *arguments = {t * scale[0], t * scale[1]};
  return value;
}

std::vector<double> Logreg::Coordinator::joint_result(const Setup& setup) const {
  // F and its dual bound as they are; the loss's gradient and Hessian in the penalised weights
  // v = w / unit (logreg.hpp), of F / scale_.
  std::vector<double> result{block_start_[1], block_start_[2]};
  result.insert(result.end(), unit_.begin(), unit_.end());
  const auto params = static_cast<std::size_t>(unit_.size());
  for (std::size_t k = 0; k < setup.softmax.gradient.size(); ++k)
    result.push_back(c_ * unit_[static_cast<Eigen::Index>(k % params)] * setup.softmax.gradient[k]);
  const std::size_t features = config_.joint.size();
  const std::size_t m = config_.classes.size() * features;
  if (setup.joint_hessian.size() != packed_size(m))
    throw std::logic_error("logreg: a joint Hessian of the wrong size");
  for (std::size_t b = 0; b < m; ++b) {
    const double unit_b = unit_[config_.joint[b % features]];
    for (std::size_t a = 0; a <= b; ++a) {
      result.push_back(c_ * unit_[config_.joint[a % features]] * unit_b *
                       setup.joint_hessian[packed_index(a, b)]);
    }
  }
  return result;
}

double Logreg::Coordinator::softmax_primal(const SoftmaxSums& sums) const {
  double penalty = 0;
  for (const std::vector<double>& w : config_.class_weights)
    penalty += penalty_value(Eigen::Map<const Eigen::VectorXd>(w.data(), w_.size()).cwiseQuotient(unit_));
  return scale_ * (penalty + c_ * sums.loss);
}

double Logreg::Coordinator::softmax_dual(const SoftmaxSums& sums) const {
  // The dual point is u_i = t g_{y_i} (p_i - e_i) (multinomial.hpp): the scales g of the classes' rows
  // make sum_i c_i u_il = 0 for every l, as the intercepts need; they move each G_lj by at most
  // ||x_j|| shift_l.
  const auto classes = static_cast<Eigen::Index>(config_.classes.size());
  const auto at = [classes](Eigen::Index a, Eigen::Index b) {
    return static_cast<std::size_t>(a * classes + b);
  };
  const std::optional<Eigen::VectorXd> scales =
      config_.fit_intercept ? class_scales(sums) : Eigen::VectorXd::Ones(classes).eval();
  if (!scales) return -std::numeric_limits<double>::infinity();
  const Eigen::VectorXd& g = *scales;
  const Eigen::Index params = w_.size();
  const bool exact = !sums.class_gradient.empty();
  Eigen::VectorXd shift = Eigen::VectorXd::Zero(classes);
  for (Eigen::Index l = 0; l < classes && !exact; ++l) {
    for (Eigen::Index y = 0; y < classes; ++y)
      shift[l] += (1 - g[y]) * (1 - g[y]) * sums.class_squares[at(y, l)];
  }
  shift = c_ * shift.cwiseSqrt();
  constexpr std::size_t kScales = kDualScales.size();
  std::vector<std::vector<double>> entropies;
  for (Eigen::Index y = 0; y < classes; ++y) {
    const auto first =
        sums.entropy.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(y) * kScales);
    entropies.emplace_back(first, first + kScales);
  }
  const auto entropy = [&](double t) {
    double sum = 0;
    for (Eigen::Index y = 0; y < classes; ++y)
      sum += entropy_at(t * g[y], entropies[static_cast<std::size_t>(y)]);
    return c_ * sum;
  };
  // C X_j' u_l at t = 1 (scaled): exact from the classes' terms, else at g = 1, within ||x_j|| shift_l.
  const auto gradient = [&](Eigen::Index l, Eigen::Index j) {
    if (!exact) return c_ * unit_[j] * sums.gradient[static_cast<std::size_t>(l * params + j)];
    double sum = 0;
    for (Eigen::Index y = 0; y < classes; ++y)
      sum += g[y] * sums.class_gradient[static_cast<std::size_t>(at(y, l) * static_cast<std::size_t>(params) +
                                                                 static_cast<std::size_t>(j))];
    return c_ * unit_[j] * sum;
  };
  if (penalty_ == Penalty::kL2) {
    double value = entropy(1);
    for (Eigen::Index l = 0; l < classes; ++l) {
      double norm = 0, frobenius = 0;
      for (Eigen::Index j = 0; j < params; ++j) {
        if (static_cast<ParamIndex>(j) == intercept_) continue;
        norm += gradient(l, j) * gradient(l, j);
        frobenius += column_norms_[j];
      }
      const double bound = std::sqrt(norm) + shift[l] * std::sqrt(frobenius);
      value -= 0.5 * bound * bound;
    }
    return scale_ * (value - softmax_rounding(sums));
  }
  std::vector<double> bounds;
  for (Eigen::Index l = 0; l < classes; ++l) {
    for (Eigen::Index j = 0; j < params; ++j) {
      if (static_cast<ParamIndex>(j) != intercept_)
        bounds.push_back(std::abs(gradient(l, j)) + column_lengths_[j] * shift[l]);
    }
  }
  double t = 1;
  return scale_ * (scaled_dual(entropy, bounds, ridge_, t) - softmax_rounding(sums));
}

double Logreg::Coordinator::softmax_rounding(const SoftmaxSums& sums) const {
  double terms = sums.loss;
  for (std::size_t k = 0; k < sums.entropy.size(); k += kDualScales.size()) terms += sums.entropy[k];
  return n_ * std::numeric_limits<double>::epsilon() * c_ * terms;
}

double Logreg::Coordinator::penalty_term_change(Eigen::Index j, double step) const {
  if (static_cast<ParamIndex>(j) == intercept_) return 0;
  const double w = w_[j];
  if (penalty_ == Penalty::kL2) return step * (w + 0.5 * step);
  const double moved = w + step;
  const double ridge = ridge_ * step * (w + 0.5 * step);
  // While w keeps its sign, |w + step| - |w| is exactly sign(w) step: no cancellation.
  if ((w > 0 && moved >= 0) || (w < 0 && moved <= 0)) return (w > 0 ? step : -step) + ridge;
  return std::abs(moved) - std::abs(w) + ridge;
}

double Logreg::Coordinator::penalty_change(double t) const {
  double change = 0;
  for (Eigen::Index j = 0; j < w_.size(); ++j) {
    if (d_[j] != 0) change += penalty_term_change(j, t * d_[j]);
  }
  return change;
}

double Logreg::Coordinator::model_decrease() const {
  // Term by term: near the optimum G_j d_j and the penalty's change cancel, and their sums would leave
  // only rounding.
  double decrease = 0;
  for (Eigen::Index j = 0; j < w_.size(); ++j) {
    if (d_[j] != 0) decrease += gradient_[j] * d_[j] + penalty_term_change(j, d_[j]);
  }
  return decrease;
}

void Logreg::Coordinator::start_outer_iteration(const Stats& summed, Priorities& priorities) {
  // This Newton step moves the coordinates evaluated; the others (outside a working set) stay at zero,
  // at priority 0: those that have just left the scope are set so, the rest already are. Only the
  // coordinates in scope, then, cost anything here.
  const std::vector<ParamIndex>& covered = evaluated();
  for (const ParamIndex j : in_scope_list_) in_scope_[j] = false;
  for (const ParamIndex j : covered) in_scope_[j] = true;
  for (const ParamIndex j : in_scope_list_) {
    if (!in_scope_[j]) priorities.set(j, 0);
  }
  in_scope_list_ = covered;
  for (std::size_t k = 0; k < covered.size(); ++k) {
    const ParamIndex j = covered[k];
    gradient_[j] = c_ * summed.gradient[k] * unit_[j];
    // The smallest normal double keeps an all-zero column (curvature and gradient 0) from dividing by 0.
    curvature_[j] = c_ * summed.curvature[k] * unit_[j] * unit_[j] +
                    kCurvatureFloor * c_ * column_norms_[j] / 4 + std::numeric_limits<double>::min();
  }
  d_.setZero();
  direction_moved_ = false;
  new_direction_ = true;
  // Every priority restarts from how far its coordinate is from optimal, as the step it would take
  // were it not stopped at zero (a tiny weight of the wrong sign moves little but is far from optimal),
  // relative to the largest, so that --eta stays small beside the coordinates that would move however
  // close the optimum. A pass visits as many coordinates as would move.
  std::vector<double> changes(covered.size());
  std::size_t free = 0;
  double largest = 0;
  for (std::size_t i = 0; i < covered.size(); ++i) {
    const ParamIndex k = covered[i];
    const double curvature = curvature_[k] + (penalty_at(k) == Penalty::kL2 ? 1 : ridge_at(k));
    const double distance = std::abs(violation_at(k, w_[k], gradient_[k])) / curvature;
    changes[i] = margin_change(k, distance);
    largest = std::max(largest, changes[i]);
    if (model_step(k, 0) != 0) ++free;
  }
  priority_scale_ = largest > 0 ? 1 / largest : 1;
  for (std::size_t i = 0; i < covered.size(); ++i) priorities.set(covered[i], changes[i] * priority_scale_);
  pass_length_ = std::max<std::size_t>(free, 1);
  pass_updates_ = passes_ = 0;
  pass_violation_ = pass_gain_ = direction_gain_ = 0;
  widest_round_ = 0;
  ways_.step_ended(way_, step_progress());
  phase_ = solve_direction(summed) ? Phase::kSolvedDirection : Phase::kDirection;
  way_ = phase_ == Phase::kSolvedDirection ? StepWays::kHessian : StepWays::kRounds;
}

double Logreg::Coordinator::step_progress() {
  double before = 0, after = 0;
  for (const ParamIndex j : evaluated()) {
    const double now = violation_at(j, w_[j], gradient_[j]);
    if (!std::isnan(step_violations_[j])) {
      before = add_violation(penalty_, before, step_violations_[j]);
      after = add_violation(penalty_, after, now);
    }
  }
  for (const ParamIndex j : step_covered_) step_violations_[j] = NAN;
  step_covered_ = evaluated();
  for (const ParamIndex j : step_covered_) step_violations_[j] = violation_at(j, w_[j], gradient_[j]);
  if (!(before > 0)) return NAN;  // the first evaluation, or one whose coordinates were all optimal
  return after > 0 ? std::log10(violation_norm(penalty_, before) / violation_norm(penalty_, after))
                   : kMostDigits;
}

bool Logreg::Coordinator::solve_direction(const Stats& summed) {
  const std::size_t m = model_.size();
  if (m == 0 || summed.hessian_missing > 0 || summed.hessian.size() != packed_size(m)) return false;
  // The coordinates left out stay where they are: a Newton step on the others, which still descends.
  // They join the model at the next step if they are nonzero or near moving.
  Eigen::MatrixXd h = unpack_symmetric(summed.hessian, m, c_);
  for (std::size_t a = 0; a < m; ++a) {
    for (std::size_t b = 0; b < m; ++b)
      h(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b)) *= unit_[model_[a]] * unit_[model_[b]];
  }
  Eigen::VectorXd w(static_cast<Eigen::Index>(m)), g(static_cast<Eigen::Index>(m));
  for (std::size_t k = 0; k < m; ++k) {
    const auto i = static_cast<Eigen::Index>(k);
    const ParamIndex j = model_[k];
    w[i] = w_[j];
    // The elastic net's ridge, as the coordinate steps add it; the floor keeps every step finite.
    g[i] = gradient_[j] + ridge_at(j) * w_[j];
    h(i, i) = curvature_[j] + ridge_at(j);
  }
  // The intercept (the last coordinate, when in the model) is free: for any d of the others its best
  // step is -(g_b + h_b . d) / h_bb, and with it the model over the others has g - h_b g_b / h_bb and
  // H - h_b h_b' / h_bb. So it is eliminated exactly, and found after them.
  const bool free = model_.back() == intercept_;
  const auto f = static_cast<Eigen::Index>(free ? m - 1 : m);
  Eigen::VectorXd free_column;
  if (free) {
    free_column = h.col(f).head(f);
    const double curvature = h(f, f);
    g.head(f) -= free_column * (g[f] / curvature);
    h.topLeftCorner(f, f).noalias() -= free_column * free_column.transpose() / curvature;
    // A column close to the constant one keeps little curvature once the intercept is out: the floor.
    for (Eigen::Index k = 0; k < f; ++k) {
      const ParamIndex j = model_[static_cast<std::size_t>(k)];
      h(k, k) =
          std::max(h(k, k), kCurvatureFloor * c_ * column_norms_[j] / 4 + std::numeric_limits<double>::min());
    }
  }
  ModelSolution solution;
  solution.d = Eigen::VectorXd::Zero(f);
  if (f > 0) {
    solution = minimise_model(penalty_, w.head(f), g.head(f), h.topLeftCorner(f, f),
                              kModelTolerance * optimality(), kModelWork);
  }
  for (Eigen::Index k = 0; k < f; ++k) d_[model_[static_cast<std::size_t>(k)]] = solution.d[k];
  if (free) d_[intercept_] = -(g[f] + free_column.dot(solution.d)) / h(f, f);
  ways_.spend(summed.hessian_products +
              StepWays::dense_work(static_cast<double>(m * m) + solution.work, static_cast<std::size_t>(m)));
  return true;
}

void Logreg::Coordinator::choose_model(Commit& commit) {
  std::vector<ParamIndex> model;
  for (const ParamIndex j : evaluated()) {
    if (penalty_ == Penalty::kL2 || j == intercept_ || w_[j] != 0 || d_[j] != 0 ||
        std::abs(gradient_[j]) > kNearMoving)
      model.push_back(j);
  }
  model_wanted_ = model.size();
  if (model.size() > config_.max_hessian || !ways_.hessian_next() ||
      !ways_.hessian_pays(hessian_work(model), digits_left()))
    model.clear();
  if (model == model_) return;
  commit.remodel = 1;
  commit.model = model;
  model_ = std::move(model);
}

double Logreg::Coordinator::digits_left() const {
  // In the optimality's digits, which StepWays counts: the gap falls with it. (Not from the gap itself,
  // which the extra evaluations of --eval_every may tighten.) On raw features the gap lags the
  // optimality by digits: at least one is left while the run goes on.
  constexpr double kFewestDigits = 1;
  if (!(initial_optimality_ > 0)) return kFewestDigits;
  return std::max(kFewestDigits, std::log10(optimality() / initial_optimality_ / config_.tol));
}

double Logreg::Coordinator::hessian_work(const std::vector<ParamIndex>& model) const {
  // The workers' products, sum_i k_i^2 / 2 with k_i a row's entries among the model's columns, as if
  // the rows held them evenly; and the coordinator's factorisation of the m x m model.
  const double entries = columns_work(model), m = static_cast<double>(model.size());
  return entries * entries / (2 * n_) + StepWays::dense_work(m * m * m / 3, model.size());
}

void Logreg::Coordinator::prefetch(const Schedule& block) const {
  for (const ParamIndex j : block.params) {
    for (const Eigen::VectorXd* values :
         {&gradient_, &w_, &d_, &curvature_, &column_norms_, &column_counts_, &unit_, &margin_lengths_})
      __builtin_prefetch(values->data() + j);
  }
}

double Logreg::Coordinator::columns_work(std::span<const ParamIndex> cols) const {
  double work = 0;
  for (const ParamIndex j : cols) work += column_counts_[j];
  return work;
}

Logreg::Commit Logreg::Coordinator::aggregate(const Schedule& schedule, const Partial& summed,
                                              Priorities& priorities) {
  ways_.spend_round(schedule.round);
  ways_.spend(columns_work(schedule.params));  // the workers' (X'DX d)_j
  Commit commit;
  if (std::exchange(restart_, false)) commit.restart_from = original_w();
  if (std::exchange(rescope_, false)) {
    commit.rescope = 1;
    commit.scope = next_scope_;
    scope_ = std::move(next_scope_);
    next_scope_.clear();
  }
  if (next_scales_ != scales_) {
    commit.rescale = 1;
    commit.scales = next_scales_;
    scales_ = next_scales_;
  }
  if (phase_ == Phase::kLineSearch) {
    // The last step was rejected after this round was scheduled: its results belong to the rejected
    // point. Shorten the step (or go back to w) and evaluate there.
    if (commit.restart_from.empty()) commit.step = -retreat_;
    evaluate_now_ = true;
    return commit;
  }
  if (phase_ == Phase::kExtrapolation || phase_ == Phase::kSolvedDirection) {
    // A direction found whole (the extrapolated point, or the model's minimiser), shipped at once; this
    // round's results are the last direction's.
    commit.new_direction = true;
    for (Eigen::Index j = 0; j < d_.size(); ++j) {
      if (d_[j] == 0) continue;
      commit.params.push_back(static_cast<ParamIndex>(j));
      commit.delta.push_back(d_[j] * unit_[j]);
    }
    commit.step = 1;
    ways_.spend(columns_work(commit.params) + n_);
    evaluate_now_ = true;
    choose_model(commit);
    if (phase_ == Phase::kSolvedDirection) {
      model_decrease_ = model_decrease();
      step_ = 1;
      widest_round_ = 1;  // found in order: a line search that fails is rounding
      phase_ = Phase::kLineSearch;
    }
    return commit;
  }
  commit.new_direction = new_direction_;
  // The workers computed this round's (X^T D X d) with the last Newton step's direction, which they let
  // go only when this commit reaches them: the new direction is still zero, and so is its image.
  const bool direction_is_zero = std::exchange(new_direction_, false);
  block_seen_ = std::max<std::size_t>(schedule.params.size(), 1);
  const std::vector<std::size_t> moving = spread_positions(schedule, parallel_);
  widest_round_ = std::max(widest_round_, moving.size());
  // A block's coordinates sit at scattered places of five arrays: asking for all of them first
  // overlaps the cache misses.
  for (const std::size_t k : moving) {
    const ParamIndex j = schedule.params[k];
    for (const Eigen::VectorXd* values : {&gradient_, &w_, &d_, &curvature_, &column_norms_})
      __builtin_prefetch(values->data() + j);
  }
  for (const std::size_t k : moving) {
    const ParamIndex j = schedule.params[k];
    if (!in_scope_[j]) {
      priorities.set(j, 0.0);
      continue;
    }
    const double g = gradient_[j] + (direction_is_zero ? 0.0 : c_ * summed.hessian_d[k] * unit_[j]);
    const Penalty penalty = penalty_at(j);
    const double x = w_[j] + d_[j];
    pass_violation_ = add_violation(penalty_, pass_violation_, violation_at(j, x, g));
    const double delta = step_at(j, x, g, curvature_[j]);
    priorities.set(j, margin_change(j, delta) * priority_scale_);
    if (delta == 0) continue;
    const double penalty_change =
        penalty == Penalty::kNone ? 0.0
        : penalty == Penalty::kL2 ? delta * (x + 0.5 * delta)
                                  : std::abs(x + delta) - std::abs(x) + ridge_ * delta * (x + 0.5 * delta);
    pass_gain_ -= g * delta + 0.5 * curvature_[j] * delta * delta + penalty_change;
    d_[j] += delta;
    direction_moved_ = true;
    commit.params.push_back(j);
    commit.delta.push_back(delta * unit_[j]);
  }
  pass_updates_ += moving.size();
  ways_.spend(columns_work(commit.params));
  if (pass_updates_ < pass_length_) return commit;
  ++passes_;
  const bool solved = violation_norm(penalty_, pass_violation_) <= initial_optimality_;
  const bool stalled = pass_gain_ <= kStalledPass * direction_gain_;
  direction_gain_ += pass_gain_;
  pass_updates_ = 0;
  pass_violation_ = pass_gain_ = 0;
  // A solve whose draws all missed the coordinates free to move has nothing to offer an evaluation.
  const bool done = solved && passes_ >= kFewestPasses && direction_moved_ && stalled;
  if (!done && passes_ < kMostPasses) return commit;
  model_decrease_ = model_decrease();
  step_ = 1;
  commit.step = 1;
  ways_.spend(n_);
  choose_model(commit);
  phase_ = Phase::kLineSearch;
  evaluate_now_ = true;
  return commit;
}

Report Logreg::Coordinator::report(const Stats& summed, Priorities& priorities) {
  if (summed.gradient.size() != evaluated().size())
    throw std::logic_error("logreg: evaluation of the wrong length");
  // Kept at every full evaluation, as the workers keep their alpha: the two go together.
  if (scope_.empty())
    full_gradient_ =
        c_ * Eigen::Map<const Eigen::VectorXd>(summed.gradient.data(), w_.size()).cwiseProduct(unit_);
  evaluate_now_ = false;
  ways_.spend(columns_work(evaluated()) + kRowWork * n_);
  switch (phase_) {
    case Phase::kStart:
      objective_ = objective(w_, summed.loss);
      start_outer_iteration(summed, priorities);
      iterates_.assign(1, w_);
      break;
    case Phase::kLineSearch: {
      const double change = c_ * summed.loss_change + penalty_change(step_);
      // A direction the model says cannot descend (rounding) may still be taken, but never uphill.
      const double bound = kSufficientDecrease * step_ * std::min(model_decrease_, 0.0);
      const bool finite = std::isfinite(change) && std::isfinite(model_decrease_);
      if (!(change <= bound)) {
        if (finite && step_ > kShortestStep) {
          retreat_ = step_ / 2;
          step_ -= retreat_;
          return last_report_;
        }
        if (widest_round_ > 1) {
          abandon_direction();
          return last_report_;
        }
        if (!finite)
          throw std::runtime_error("logreg: the objective is not finite along the Newton direction");
      }
      w_ += step_ * d_;
      objective_ = objective(w_, summed.loss);
      start_outer_iteration(summed, priorities);
      // Steps from the Hessian converge fast on their own: an extrapolation would cost an evaluation.
      if (phase_ != Phase::kSolvedDirection) try_extrapolation();
      break;
    }
    case Phase::kExtrapolation: {
      const double change = c_ * summed.loss_change + penalty_change(1);
      if (!(change < 0)) {
        // No better than w: the workers go back there, and the Newton step started at w goes on.
        d_.setZero();
        restart_ = true;
        phase_ = Phase::kDirection;
        return last_report_;
      }
      w_ += d_;
      objective_ = objective(w_, summed.loss);
      start_outer_iteration(summed, priorities);
      iterates_.push_back(w_);
      break;
    }
    case Phase::kDirection:
    case Phase::kSolvedDirection:
      break;  // an evaluation asked for by --eval_every: the workers' margins are still at w
  }
  const double relative = initial_optimality_ > 0 ? optimality() / initial_optimality_ : 0.0;
  // In the direction phase (an --eval_every evaluation) the margins are still at w, whose gradient is
  // gradient_.
  // Sums over n rows carry a rounding error of up to n ulps of their terms' total, in the loss and in the
  // entropies: a gap within it proves nothing, and the reported gap never falls below it.
  const double rounding =
      n_ * std::numeric_limits<double>::epsilon() * c_ *
      (summed.loss + summed.entropy[0] + summed.entropy[kDualScales.size()] + offset_size(summed));
  const bool full = scope_.empty();
  std::array<double, 2> arguments{};
  best_dual_ = std::max(best_dual_, dual_value(summed, true, &arguments) - rounding);
  // The elastic net's dual seeks its best scale over the whole grid; L1's and L2's is near this one's.
  next_scales_ = ridge_ > 0 ? std::vector<std::uint8_t>{} : scales_near({arguments[0], arguments[1]});
  const double gap = std::max(rounding, objective_ - best_dual_ + rounding);
  const double relative_gap = objective_ > 0 ? gap / objective_ : 0.0;
  const std::size_t covered = evaluated().size();
  if (full) {
    full_gap_ = relative_gap;
    scoped_evaluations_ = 0;
    next_scope_ = working_set();
    rescope_ = !next_scope_.empty();
  } else {
    ++scoped_evaluations_;
    const double inner = std::max(rounding, objective_ - dual_value(summed, false) + rounding) / objective_;
    rescope_ = relative_gap <= config_.tol || working_set_solved(inner, full_gap_, scoped_evaluations_);
    if (rescope_) next_scope_.clear();
  }
  Report report;
  // On the elastic net's own scale (F, not F / a).
  report.objective = scale_ * objective_;
  // The weights' nonzeros, the intercept's left out.
  const auto intercept_nonzero = config_.fit_intercept && w_[intercept_] != 0 ? 1 : 0;
  report.columns = {static_cast<double>((w_.array() != 0).count() - intercept_nonzero),
                    relative,
                    scale_ * gap,
                    relative_gap,
                    summed.loss / weight_sum_,
                    summed.correct / weight_sum_};
  // A --tol below a double's precision asks for no stop but --max_rounds or --max_seconds.
  at_floor_ = relative_gap > config_.tol && config_.tol >= std::numeric_limits<double>::epsilon() &&
              gap <= kRoundingFloor * rounding;
  report.converged = relative_gap <= config_.tol || at_floor_ ||
                     (config_.block >= 0 && block_stalled(relative_gap)) || config_.probe ||
                     !config_.joint.empty();
  score_test(report.columns);
  report.columns.push_back(static_cast<double>(covered));
  if (path_.active()) {
    report.columns.push_back(path_.lambda());
    if (report.converged) {
      next_lambda(report, summed, priorities);
      report.converged = path_.done();
    }
  }
  last_report_ = report;
  return report;
}

bool Logreg::Coordinator::block_stalled(double relative_gap) {
  if (relative_gap < kStallShare * lowest_gap_) {
    lowest_gap_ = relative_gap;
    stalled_evaluations_ = 0;
    return false;
  }
  return ++stalled_evaluations_ >= kStalledEvaluations;
}

std::vector<ParamIndex> Logreg::Coordinator::working_set() const {
  // As Lasso's (and celer's): the coordinates nonzero or free to move, then as many again (at least
  // kSmallest in all) of the others, nearest first to moving: |G_j| nearest 1, in units of ||x_j||.
  // For L2 every coordinate moves.
  if (penalty_ != Penalty::kL1) return {};
  std::vector<ParamIndex> scope;
  std::vector<std::pair<double, ParamIndex>>& others = working_others_;
  others.clear();
  std::size_t live = 0;
  for (const ParamIndex j : all_) {
    if (!(column_norms_[j] > 0)) continue;
    ++live;
    if (j == intercept_ || w_[j] != 0 || std::abs(gradient_[j]) > 1) {
      scope.push_back(j);
    } else {
      others.emplace_back((1 - std::abs(gradient_[j])) / column_lengths_[j], j);
    }
  }
  return choose_working_set(std::move(scope), others, live);
}

std::optional<Eigen::VectorXd> anderson_point(const std::vector<Eigen::VectorXd>& iterates) {
  Extrapolation extrapolation(iterates.size());
  for (std::size_t k = 0; k < iterates.size(); ++k) {
    std::vector<double> row;
    for (std::size_t i = 0; i <= k; ++i) row.push_back(iterates[k].dot(iterates[i]));
    extrapolation.push(row);
  }
  const std::vector<double> weights = extrapolation.weights();
  if (weights.empty()) return std::nullopt;
  Eigen::VectorXd point = Eigen::VectorXd::Zero(iterates.back().size());
  for (std::size_t k = 0; k < weights.size(); ++k) point += weights[k] * iterates[k];
  if (!point.allFinite() || point == iterates.back()) return std::nullopt;
  return point;
}

void Logreg::Coordinator::try_extrapolation() {
  iterates_.push_back(w_);
  if (iterates_.size() < kExtrapolationDepth) return;
  const std::optional<Eigen::VectorXd> extrapolated = anderson_point(iterates_);
  iterates_.clear();
  if (!extrapolated) return;
  d_ = *extrapolated - w_;
  phase_ = Phase::kExtrapolation;
}

void Logreg::Coordinator::abandon_direction() {
  parallel_ = std::max<std::size_t>(1, std::min(parallel_, block_seen_) / 2);
  std::fprintf(stderr,
               "schmp-logreg: warning: parallel updates interfered (no descent along the direction); "
               "moving at most %zu coordinates per round from now on (a smaller --rho keeps them apart)\n",
               parallel_);
  // The evaluation back at w then passes the line search with step 0 and starts the next iteration.
  d_.setZero();
  step_ = 0;
  model_decrease_ = 0;
  restart_ = true;
}

void Logreg::Coordinator::score_test(std::vector<double>& columns) const {
  if (config_.test.empty()) return;
  const auto scores = decision_values(original_w(), constant_feature(config_) ? 1.0 : -1.0, test_);
  const PredictionReport quality = classification_quality(scores, test_positive_);
  columns.insert(columns.end(), {quality.log_loss, quality.accuracy, quality.auc});
}

void Logreg::Coordinator::start_path(const Setup& setup, std::size_t num_params) {
  // S+ and S- (the class sums of c_i x_ij) from the setup's gradient at margins 0, (S- - S+) / 2.
  std::vector<double> positive = setup.positive_sums, negative(num_params);
  for (std::size_t j = 0; j < num_params; ++j) negative[j] = 2 * setup.gradient[j] + positive[j];
  double positive_weight = setup.positive_weight, negative_weight = setup.weight_sum - setup.positive_weight;
  double full_rows = n_;
  HeldOut held_out;
  Eigen::VectorXd unit = unit_;  // the columns' scales: a fold's lambdas take the whole data's
  if (config_.fold >= 0) {
    // A fold's path takes the whole data's lambdas, and scores its held-out rows.
    Peers alone;
    const WeightedRows& all = kept_rows(rows_source(config_), alone);
    const std::string& labels = config_.labels.empty() ? config_.data : config_.labels;
    const std::vector<bool> is_positive =
        positive_rows(all.rows, positive_label_of(config_.positive_label), labels);
    positive.assign(num_params, 0.0);
    negative.assign(num_params, 0.0);
    std::vector<double> squares(num_params, 0.0);
    positive_weight = negative_weight = 0;
    for (std::size_t r = 0; r < all.rows.rows(); ++r) {
      const double c = all.weights.empty() ? 1.0 : all.weights[r];
      std::vector<double>& sums = is_positive[r] ? positive : negative;
      for (std::size_t e = all.rows.row_start[r]; e < all.rows.row_start[r + 1]; ++e) {
        sums[all.rows.index[e]] += c * all.rows.value[e];
        squares[all.rows.index[e]] += c * all.rows.value[e] * all.rows.value[e];
      }
      if (constant_feature(config_)) sums[num_params - 1] += c;
      (is_positive[r] ? positive_weight : negative_weight) += c;
    }
    full_rows = static_cast<double>(all.rows.rows());
    if (config_.standardize) {
      std::vector<double> sums(num_params);
      for (std::size_t j = 0; j < num_params; ++j) sums[j] = positive[j] + negative[j];
      unit = unit_scales(sums, squares, positive_weight + negative_weight);
      if (constant_feature(config_)) unit[unit.size() - 1] = 1;
    }
    WeightedRows rows = held_out_rows(all, static_cast<std::uint32_t>(config_.cv), config_.seed,
                                      static_cast<std::uint32_t>(config_.fold));
    held_out.positive = positive_rows(rows.rows, positive_label_of(config_.positive_label), labels);
    held_out.rows = std::move(rows.rows);
    held_out.weights = std::move(rows.weights);
  }
  if (!(positive_weight > 0 && negative_weight > 0))
    throw std::runtime_error(config_.data + ": a path needs rows of both classes, with weight");
  for (std::size_t j = 0; j < num_params; ++j) {
    positive[j] *= unit[static_cast<Eigen::Index>(j)];
    negative[j] *= unit[static_cast<Eigen::Index>(j)];
  }
  lambda_max_ = config_.lambda_max > 0 ? config_.lambda_max
                                       : lambda_max_of(positive, negative, positive_weight, negative_weight,
                                                       config_.fit_intercept, config_.l1_ratio);
  if (!(lambda_max_ > 0))
    throw std::runtime_error(config_.data + ": lambda_max is 0 (no feature tells the classes apart)");
  const double features = static_cast<double>(num_params - (constant_feature(config_) ? 1 : 0));
  const double ratio = min_ratio_of(config_.lambda_min_ratio, full_rows, features);
  path_ = Path(config_.path, lambda_max_, ratio, weight_sum_);
  if (config_.fold >= 0) path_.hold_out(std::move(held_out));
  if (!config_.test.empty()) path_.hold_out({test_, test_positive_, {}});
  if (!config_.fold_results.empty())
    path_.cross_validated(CrossValidation(path_.lambdas(), config_.fold_results));
  set_C(path_.C());
}

void Logreg::Coordinator::set_C(double C) {
  const double old = c_;
  config_.C = C;
  c_ = C / config_.l1_ratio;  // a path's penalty is L1 or the elastic net
  gradient_ *= c_ / old;
  curvature_ *= c_ / old;
  full_gradient_ *= c_ / old;
}

void Logreg::Coordinator::next_lambda(const Report& converged, const Stats& summed, Priorities& priorities) {
  PathPoint point;
  point.lambda = path_.lambda();
  point.C = config_.C;
  point.objective = converged.objective;
  point.gap = converged.columns[2];
  point.relative_gap = converged.columns[3];
  point.nonzeros = static_cast<std::size_t>(converged.columns[0]);
  point.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  path_.record(std::move(point), original_w(), constant_feature(config_));
  if (path_.done()) return;
  set_C(path_.C());
  // What the evaluations at the last lambda taught holds no more: its dual values, gaps and iterates.
  best_dual_ = -std::numeric_limits<double>::infinity();
  full_gap_ = std::numeric_limits<double>::infinity();
  scoped_evaluations_ = 0;
  iterates_.clear();
  // The step that just ended was scored at the last lambda; at this one its violations would read as
  // lost digits, and StepWays would give up the way that took it.
  for (const ParamIndex j : step_covered_) step_violations_[j] = NAN;
  step_covered_.clear();
  objective_ = objective(w_, summed.loss);
  start_outer_iteration(summed, priorities);
  initial_optimality_ = optimality();
  // The working set is chosen again at the new lambda: from this evaluation when it was full, else at
  // the next, which is.
  next_scope_ = scope_.empty() ? working_set() : std::vector<ParamIndex>{};
  rescope_ = !(scope_.empty() && next_scope_.empty());
}

Logreg::Saved Logreg::Coordinator::save() const {
  Saved saved;
  saved.C = config_.C;
  saved.penalty = static_cast<std::uint8_t>(penalty_);
  saved.l1_ratio = config_.l1_ratio;
  saved.bias = config_.bias ? 1 : 0;
  saved.fit_intercept = config_.fit_intercept ? 1 : 0;
  saved.standardize = config_.standardize ? 1 : 0;
  saved.positive_label = config_.positive_label;
  saved.w.assign(w_.data(), w_.data() + w_.size());
  saved.initial_optimality = initial_optimality_;
  saved.parallel = parallel_;
  if (path_.active()) saved.path = path_.serialised();
  return saved;
}

Logreg::Commit Logreg::Coordinator::restore(const Saved& saved, Priorities&) {
  if (path_.active() != !saved.path.empty()) {
    throw std::runtime_error(saved.path.empty() ? "the checkpoint is of one C: drop --path"
                                                : "the checkpoint is of a path: give --path");
  }
  if (path_.active()) {
    // The solved lambdas are kept, and the solve goes on at the one it was at; the seconds go on too.
    path_.resume(Path::deserialised(saved.path));
    set_C(path_.C());
    if (!path_.points().empty()) {
      start_ -= std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(path_.points().back().seconds));
    }
  }
  // Without the flag the rows labelled 1 are the positive ones (other labels are refused while loading),
  // so "not given" and "1" label the rows alike.
  const auto same_label = [](const std::string& a, const std::string& b) {
    const auto positive = [](const std::string& flag) {
      return flag.empty() ? 1.0 : positive_label_of(flag);
    };
    return positive(a) == positive(b);
  };
  // A path's C is its lambda's, which the path's check has matched (to rounding: lambda_max is a sum).
  const bool same_C =
      path_.active() ? std::abs(saved.C - config_.C) <= 1e-9 * config_.C : saved.C == config_.C;
  if (!same_C || saved.penalty != static_cast<std::uint8_t>(penalty_) || saved.l1_ratio != config_.l1_ratio ||
      saved.bias != (config_.bias ? 1 : 0) || saved.fit_intercept != (config_.fit_intercept ? 1 : 0) ||
      saved.standardize != (config_.standardize ? 1 : 0) ||
      !same_label(saved.positive_label, config_.positive_label)) {
    throw std::runtime_error("the checkpoint was made with --C " + label_text(saved.C) + " --penalty " +
                             (saved.penalty == static_cast<std::uint8_t>(Penalty::kL1) ? "l1" : "l2") +
                             " --l1_ratio " + label_text(saved.l1_ratio) +
                             " --bias=" + (saved.bias != 0 ? "true" : "false") +
                             " --fit_intercept=" + (saved.fit_intercept != 0 ? "true" : "false") +
                             (saved.standardize != 0 ? " --standardize" : "") + " --positive_label " +
                             (saved.positive_label.empty() ? "not given" : "'" + saved.positive_label + "'"));
  }
  if (saved.w.size() != static_cast<std::size_t>(w_.size()) || saved.parallel == 0)
    throw std::runtime_error("the checkpoint does not fit this data");
  w_ = Eigen::Map<const Eigen::VectorXd>(saved.w.data(), w_.size());
  initial_optimality_ = saved.initial_optimality;
  parallel_ = static_cast<std::size_t>(saved.parallel);
  // The evaluation that opens the resumed run starts a Newton iteration at w, over every coordinate.
  phase_ = Phase::kStart;
  Commit commit;
  commit.restart_from = original_w();
  commit.rescope = 1;
  scope_.clear();
  commit.remodel = 1;
  model_.clear();
  return commit;
}

std::vector<double> Logreg::Coordinator::original_w() const {
  const Eigen::VectorXd w = w_.cwiseProduct(unit_);
  return {w.data(), w.data() + w.size()};
}

// A refit's result: lambda_max, nr_feature, bias, the two labels, then its path.
constexpr std::size_t kRefitShape = 5;

Refit refit_of(const std::vector<double>& result) {
  Refit refit;
  refit.lambda_max = result.at(0);
  refit.shape.features = static_cast<std::size_t>(result.at(1));
  refit.shape.bias = result.at(2);
  refit.shape.labels = {result.at(3), result.at(4)};
  refit.shape.label_texts = {label_text(result[3]), label_text(result[4])};
  refit.path = Path::deserialised({result.data() + kRefitShape, result.size() - kRefitShape});
  return refit;
}

std::vector<double> Logreg::Coordinator::result() const {
  if (config_.refit_beside) {
    const LinearModel shape = model_of({});
    std::vector<double> result{lambda_max_, static_cast<double>(shape.features), shape.bias, shape.labels[0],
                               shape.labels[1]};
    const std::vector<double> path = path_.serialised();
    result.insert(result.end(), path.begin(), path.end());
    return result;
  }
  if (config_.fold >= 0 && config_.block < 0) {
    std::vector<double> result{path_.test_weight()};
    const std::vector<PathPoint>& points = path_.points();
    // glmnet's binomial deviance: twice the mean log-loss.
    for (std::size_t k = 0; k < path_.lambdas().size(); ++k)
      result.push_back(k < points.size() ? 2 * points[k].test_log_loss
                                         : std::numeric_limits<double>::quiet_NaN());
    return result;
  }
  if (config_.probe) return probe_;
  if (!config_.joint.empty()) return joint_;
  if (!config_.silent) return {};
  std::vector<double> result{final_report_.objective, final_report_.columns[3], final_report_.columns[0]};
  if (config_.block >= 0) {
    result.insert(result.end(), block_start_.begin(), block_start_.end());
    result.insert(result.end(), unit_.begin(), unit_.end());  // before w, of the same length
  }
  const std::vector<double> w = original_w();
  result.insert(result.end(), w.begin(), w.end());
  return result;
}

LinearModel Logreg::Coordinator::model_of(const std::vector<double>& w) const {
  // Labels as the data wrote them; liblinear's decision is "first label when w . x > 0".
  std::string positive = "1", negative = zero_labels_ > 0 ? "0" : "-1";
  if (!config_.positive_label.empty()) {
    const double label = positive_label_of(config_.positive_label);
    positive = label_text(label);
    negative = label == -1 ? "1" : "-1";
  }
  // liblinear's format has no intercept of its own: it is the bias feature's weight, the same in
  // predictions whether or not it was penalised.
  LinearModel model;
  model.label_texts = {positive, negative};
  model.labels = {*label_number(positive), *label_number(negative)};
  if (config_.label_names.size() == 2) {
    // Two classes by name (--multiclass): the positive is the second, as predict numbers them.
    model.label_texts = {config_.label_names[1], config_.label_names[0]};
    model.labels = {1, 0};
  }
  model.w = w;
  model.features = static_cast<std::size_t>(w_.size()) - (constant_feature(config_) ? 1 : 0);
  model.bias = constant_feature(config_) ? 1 : -1;
  return model;
}

void Logreg::Coordinator::write_model(const std::vector<double>& w) const {
  write_liblinear_model(config_.output, solver_type(config_), model_of(w));
}

void write_path(const Config& config, const Path& path, double lambda_max, const LinearModel& shape) {
  const std::vector<PathPoint>& points = path.points();
  path.print();
  if (!config.path_table.empty()) {
    path.write_table(config.path_table);
    std::printf("path table: %s\n", config.path_table.c_str());
  }
  if (!config.path_models.empty()) {
    std::ostringstream header;
    header << std::setprecision(17) << "# schmp-logreg path: minimises a ||w||_1 + (1 - a)/2 ||w||^2 + C L(w)"
           << (shape.softmax             ? " over every class's w, L the softmax loss"
               : shape.labels.size() > 2 ? " for each class's w, L its class's loss against the rest"
                                         : "")
           << (config.fit_intercept ? ", the intercept unpenalised" : "") << ", a = " << config.l1_ratio
           << ", C = 1 / (lambda sum_i c_i)\n# data " << config.data << "\n# lambda_max " << lambda_max
           << " lambdas " << path.lambdas().size() << " solved " << points.size() << "\n";
    if (const auto& cv = path.cross_validation()) {
      header << "# cv " << config.cv << " folds: lambda_min " << cv->lambdas[cv->best] << " lambda_1se "
             << cv->lambdas[cv->one_se] << " (the last model is lambda_min's)\n";
    }
    header << "# each model: lambda L C c, then index value (1-based, nonzero weights only; the bias "
              "feature's index is nr_feature + 1)"
           << (shape.softmax ? ", a value per class" : "") << "\nlabels";
    for (const std::string& label : shape.label_texts) header << ' ' << label;
    header << "\nnr_feature " << shape.features << "\nbias " << shape.bias << "\n"
           << (shape.softmax ? "softmax\n" : "");
    path.write_models(config.path_models, header.str());
    std::printf("path models: %s\n", config.path_models.c_str());
  }
  if (!config.output.empty() && !points.empty()) {
    LinearModel model = shape;
    model.w = path.weights(points.size() - 1);
    write_liblinear_model(config.output, solver_type(config), model);
    std::printf("model (lambda %.8g): %s\n", points.back().lambda, config.output.c_str());
  }
  std::fflush(stdout);
}

void Logreg::Coordinator::finish_path(const Summary& summary) {
  std::printf("schmp-logreg: %s after %llu rounds, %.3f s: %zu of %zu lambdas solved\n",
              summary.stopped_by.c_str(), static_cast<unsigned long long>(summary.rounds), summary.seconds,
              path_.points().size(),
              path_.cross_validation() ? path_.cross_validation()->best + 1 : path_.lambdas().size());
  write_path(config_, path_, lambda_max_, model_of({}));
  if (!config_.trace.empty()) std::printf("trace: %s\n", config_.trace.c_str());
  std::fflush(stdout);
}

void Logreg::Coordinator::finish(const Summary& summary) {
  final_report_ = summary.last;
  // A class's job, a fold's, or a refit beside the folds, says nothing: its result() goes to main().
  if (config_.silent || config_.fold >= 0 || config_.refit_beside) return;
  if (path_.active()) {
    finish_path(summary);
    return;
  }
  const auto nonzeros = static_cast<long long>(summary.last.columns[0]);
  if (!config_.output.empty()) write_model(original_w());
  std::printf("schmp-logreg: %s after %llu rounds, %.3f s\n", summary.stopped_by.c_str(),
              static_cast<unsigned long long>(summary.rounds), summary.seconds);
  const std::vector<double>& columns = summary.last.columns;
  std::printf("objective %.12g  duality gap %.3g (relative %.3g)  optimality %.3g  nonzeros %lld of %lld\n",
              summary.last.objective, columns[2], columns[3], columns[1], nonzeros,
              static_cast<long long>(w_.size() - (config_.fit_intercept ? 1 : 0)));
  if (config_.fit_intercept) std::printf("intercept %.12g\n", w_[intercept_]);
  std::printf("train log-loss %.6g  accuracy %.4f\n", columns[4], columns[5]);
  if (at_floor_) {
    std::printf(
        "the gap is down to the rounding of its sums over %.0f rows: --tol %g is below what doubles "
        "resolve here\n",
        n_, config_.tol);
  }
  if (summary.stopped_by != "converged" && penalty_ == Penalty::kL1) {
    const std::string hint = lagging_gap_hint(columns[1], columns[3], config_.tol, column_norms_,
                                              model_wanted_, config_.max_hessian);
    if (!hint.empty()) std::printf("%s\n", hint.c_str());
  }
  if (!config_.test.empty()) {
    std::printf("test log-loss %.6g  accuracy %.4f  AUC %.6f  (%zu rows)\n", columns[6], columns[7],
                columns[8], test_.rows());
  }
  if (!config_.output.empty()) std::printf("model: %s\n", config_.output.c_str());
  if (!config_.trace.empty()) std::printf("trace: %s\n", config_.trace.c_str());
  std::fflush(stdout);
}

}  // namespace schmp::logreg
