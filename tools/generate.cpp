// schmp-generate: seeded synthetic datasets for tests and benchmarks.
//
//   schmp-generate lasso --rows 10000 --cols 50000 --density 0.01 --support 500 --noise 0.1 --seed 1 --out F
//   schmp-generate logreg --rows 100000 --cols 50000 --density 0.0008 --support 500 --seed 1 --out F
//
// Both draw a sparse X with about cols * density nonzeros per row at uniformly random columns and a
// true coefficient vector with `support` nonzeros N(0, 1) at random columns.
// lasso: values N(0, 1); labels y = X beta + noise * N(0, 1).
// logreg: binary features (value 1); labels +1 with probability 1 / (1 + exp(-x . beta)), else -1.
// Written as LIBSVM (1-based), with the true coefficients beside it in OUT.truth ('index value' per
// line). The same seed gives the same bytes.
#include <gflags/gflags.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "schmp/output.hpp"

DEFINE_uint64(rows, 1000, "Number of rows (examples)");
DEFINE_uint64(cols, 5000, "Number of columns (features)");
DEFINE_double(density, 0.01, "Fraction of nonzero entries in X");
DEFINE_uint64(support, 50, "Nonzero true coefficients");
DEFINE_double(noise, 0.1, "Standard deviation of the label noise");
DEFINE_uint64(seed, 1, "Random seed");
DEFINE_string(out, "", "Output file (LIBSVM)");

namespace {

enum class Kind { kLasso, kLogreg };

// One row's columns: about cols * density distinct uniformly random columns (at least one), sorted.
std::vector<std::uint64_t> draw_columns(std::mt19937_64& random) {
  std::poisson_distribution<std::uint64_t> row_nonzeros(static_cast<double>(FLAGS_cols) * FLAGS_density);
  std::uniform_int_distribution<std::uint64_t> column(0, FLAGS_cols - 1);
  const std::uint64_t count =
      std::min<std::uint64_t>(FLAGS_cols, std::max<std::uint64_t>(1, row_nonzeros(random)));
  std::vector<std::uint64_t> cols;
  while (cols.size() < count) {
    cols.push_back(column(random));
    if (cols.size() == count) {
      std::sort(cols.begin(), cols.end());
      cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    }
  }
  return cols;
}

int generate(Kind kind) {
  if (FLAGS_rows == 0 || FLAGS_cols == 0 || !(FLAGS_density > 0 && FLAGS_density <= 1) ||
      FLAGS_support > FLAGS_cols || FLAGS_out.empty()) {
    std::fprintf(stderr,
                 "schmp-generate: error: need --out, rows and cols > 0, 0 < density <= 1, support <= cols\n");
    return 1;
  }
  std::mt19937_64 random(FLAGS_seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);

  std::vector<double> beta(FLAGS_cols, 0.0);
  std::vector<std::uint64_t> order(FLAGS_cols);
  for (std::uint64_t j = 0; j < FLAGS_cols; ++j) order[j] = j;
  std::shuffle(order.begin(), order.end(), random);
  for (std::uint64_t k = 0; k < FLAGS_support; ++k) beta[order[k]] = normal(random);

  schmp::io::write_file_atomically(FLAGS_out, [&](std::ostream& out) {
    std::vector<double> values;
    char buffer[64];
    for (std::uint64_t i = 0; i < FLAGS_rows; ++i) {
      const std::vector<std::uint64_t> cols = draw_columns(random);
      values.assign(cols.size(), 1.0);
      double fitted = 0;
      for (std::size_t k = 0; k < cols.size(); ++k) {
        if (kind == Kind::kLasso) {
          // Round to the precision written, so that the file's y is exactly X beta + noise.
          std::snprintf(buffer, sizeof buffer, "%.6g", normal(random));
          values[k] = std::stod(buffer);
        }
        fitted += values[k] * beta[cols[k]];
      }
      if (kind == Kind::kLasso) {
        std::snprintf(buffer, sizeof buffer, "%.10g", fitted + FLAGS_noise * normal(random));
      } else {
        std::snprintf(buffer, sizeof buffer, "%+d", uniform(random) < 1 / (1 + std::exp(-fitted)) ? 1 : -1);
      }
      out << buffer;
      for (std::size_t k = 0; k < cols.size(); ++k) {
        std::snprintf(buffer, sizeof buffer, " %llu:%.6g", static_cast<unsigned long long>(cols[k] + 1),
                      values[k]);
        out << buffer;
      }
      out << '\n';
    }
  });
  schmp::io::write_file_atomically(FLAGS_out + ".truth", [&](std::ostream& out) {
    char buffer[64];
    for (std::uint64_t j = 0; j < FLAGS_cols; ++j) {
      if (beta[j] == 0) continue;
      std::snprintf(buffer, sizeof buffer, "%llu %.17g\n", static_cast<unsigned long long>(j + 1), beta[j]);
      out << buffer;
    }
  });
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  gflags::SetUsageMessage(
      "usage: schmp-generate lasso|logreg --rows N --cols P --density D --support K --out FILE");
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  const std::string kind = argc > 1 ? argv[1] : "";
  if (kind == "lasso") return generate(Kind::kLasso);
  if (kind == "logreg") return generate(Kind::kLogreg);
  std::fprintf(stderr, "schmp-generate: error: unknown dataset kind '%s' (known: lasso, logreg)\n",
               kind.c_str());
  return 1;
}
