// schmp-logreg end to end under mpirun: L1 and L2, every rank count, scheduler count and staleness
// reaches the objective of a tight single-process reference; the model file is liblinear's format and
// liblinear-predict (when installed) agrees with it; labels and bad input are handled.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "e2e.hpp"
#include "folds.hpp"
#include "logreg_reference.hpp"
#include "random_matrix.hpp"
#include "schmp/io.hpp"

namespace schmp {
namespace {

using testing::gap_of;
using testing::Layout;
using testing::layout_flags;
using testing::mpirun;
using testing::objective_of;
using testing::Output;
using testing::run;

struct Case {
  std::string name;
  std::string data;  // under the scratch directory when relative
  double C;
  bool l1;
};

class LogregEndToEnd : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = std::filesystem::temp_directory_path() / ("schmp-logreg-e2e-" + std::to_string(::getpid()));
    std::filesystem::create_directories(scratch_);
    const Output made = run(std::string(SCHMP_GENERATE_BIN) + " logreg --rows 600 --cols 800 --density 0.02" +
                            " --support 60 --seed 5 --out " + generated());
    ASSERT_EQ(made.status, 0) << made.text;
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(scratch_); }

 public:
  static std::string heart() { return std::string(SCHMP_SOURCE_DIR) + "/data/heart_scale.svm"; }
  static std::string generated() { return (scratch_ / "generated.svm").string(); }
  static std::string scratch(const std::string& name) { return (scratch_ / name).string(); }

 protected:
  // The reference objective of a LIBSVM file with +1/-1 labels, with an intercept as schmp-logreg fits by
  // default.
  static double reference_objective(const std::string& path, double C, bool l1, bool intercept = true) {
    const io::SparseRows rows = io::read_libsvm(path);
    return testing::solve_logreg_reference(rows, rows.columns(), C, l1, intercept).objective;
  }

  static Output train(int ranks, const std::string& data, double C, bool l1, const std::string& flags) {
    std::ostringstream command;
    command << mpirun(ranks) << SCHMP_LOGREG_BIN << " --layout all --data " << data << " --C " << C
            << " --penalty " << (l1 ? "l1" : "l2") << " --tol 1e-10 --progress_seconds 0 " << flags;
    return run(command.str());
  }

  // Raw features of very different scales, correlated as descriptors are.
  static std::string raw_features() {
    const std::string data = scratch("raw.svm");
    if (std::filesystem::exists(data)) return data;
    std::mt19937 random(8);
    std::normal_distribution<double> normal;
    std::uniform_real_distribution<double> uniform;
    const std::vector<double> scale = {1, 1000, 0.001, 50, 1, 0.02, 300, 1, 5, 0.1};
    std::ofstream out(data);
    out.precision(10);
    for (int i = 0; i < 400; ++i) {
      std::vector<double> x(scale.size());
      double previous = normal(random), margin = 0;
      for (std::size_t j = 0; j < x.size(); ++j) {
        previous = 0.9 * previous + std::sqrt(1 - 0.81) * normal(random);
        x[j] = scale[j] * previous;
        margin += (j % 3 == 0 ? 1.0 : -0.5) * previous;
      }
      out << (uniform(random) < 1 / (1 + std::exp(-margin)) ? "+1" : "-1");
      for (std::size_t j = 0; j < x.size(); ++j) out << ' ' << j + 1 << ':' << x[j];
      out << '\n';
    }
    return data;
  }

  static std::filesystem::path scratch_;
};

std::filesystem::path LogregEndToEnd::scratch_;

class LogregLayouts : public LogregEndToEnd, public ::testing::WithParamInterface<Layout> {
 protected:
  void expect_matches_reference(const std::string& data, double C, bool l1, const std::string& flags = "") {
    const double reference = reference_objective(data, C, l1);
    const Output out = train(GetParam().ranks, data, C, l1, layout_flags(GetParam()) + " " + flags);
    ASSERT_EQ(out.status, 0) << out.text;
    EXPECT_NE(out.text.find("schmp-logreg: converged after"), std::string::npos) << out.text;
    EXPECT_NEAR(objective_of(out), reference, 1e-6 * reference) << out.text;
    // The gap is a bound: the objective less the gap, the dual value, is at most the optimum (both as
    // printed, to 12 and 3 digits).
    EXPECT_LE(objective_of(out) - gap_of(out), reference * (1 + 1e-11)) << out.text;
  }
};

TEST_P(LogregLayouts, BundledRealDataL1) { expect_matches_reference(heart(), 1, true); }
TEST_P(LogregLayouts, BundledRealDataL2) { expect_matches_reference(heart(), 1, false); }
TEST_P(LogregLayouts, GeneratedSparseDataL1) { expect_matches_reference(generated(), 0.5, true); }
TEST_P(LogregLayouts, GeneratedSparseDataL2) { expect_matches_reference(generated(), 0.5, false); }
// Newton steps by rounds of coordinate descent, as every step is when its model is too large.
TEST_P(LogregLayouts, GeneratedSparseDataL1ByRounds) {
  expect_matches_reference(generated(), 0.5, true, "--newton_steps rounds");
}

INSTANTIATE_TEST_SUITE_P(RanksSchedulersStaleness, LogregLayouts,
                         ::testing::Values(Layout{1, 1, 0}, Layout{3, 1, 2}, Layout{3, 2, 0},
                                           Layout{5, 2, 2}),
                         testing::layout_name);

TEST_P(LogregLayouts, WithoutAnInterceptL1) {
  const double reference = reference_objective(generated(), 0.5, true, false);
  const Output out =
      train(GetParam().ranks, generated(), 0.5, true, layout_flags(GetParam()) + " --fit_intercept=false");
  ASSERT_EQ(out.status, 0) << out.text;
  EXPECT_NEAR(objective_of(out), reference, 1e-6 * reference) << out.text;
  EXPECT_LE(objective_of(out) - gap_of(out), reference * (1 + 1e-11)) << out.text;
}

// With one worker the model must not depend on where the schedulers run: hosted by the coordinator
// (building blocks ahead on their own thread) or on a rank of their own.
// One process updates a block's parameters in order by default (--in_order), another algorithm: here
// it makes the parallel updates that the other layouts make.
TEST_F(LogregEndToEnd, SameModelWhereverTheSchedulersRun) {
  std::vector<std::string> texts;
  for (const auto& [ranks, flags] : std::vector<std::pair<int, std::string>>{
           {1, "--staleness 2 --in_order=false"}, {3, "--staleness 2"}, {2, "--staleness 2 --threads 1"}}) {
    const std::string model = scratch("where-" + std::to_string(texts.size()) + ".model");
    const Output out = train(ranks, generated(), 0.5, true, flags + " --output " + model);
    ASSERT_EQ(out.status, 0) << out.text;
    texts.push_back(testing::read_text(model));
  }
  for (std::size_t k = 1; k < texts.size(); ++k) EXPECT_EQ(texts[k], texts[0]) << "run " << k;
}

// Started without mpirun, a program is a job of one process that does without MPI (runtime/job.cpp):
// it must solve the same problem, and give the model that mpirun -np 1 gives.
TEST_F(LogregEndToEnd, RunsAsOneProcessWithoutMpirun) {
  const std::string alone = scratch("alone.model"), under_mpirun = scratch("under-mpirun.model");
  const Output out = run(std::string(SCHMP_LOGREG_BIN) + " --data " + heart() +
                         " --C 1 --tol 1e-10 --progress_seconds 0 --output " + alone);
  ASSERT_EQ(out.status, 0) << out.text;
  EXPECT_NEAR(objective_of(out), reference_objective(heart(), 1, true), 1e-6 * objective_of(out)) << out.text;
  ASSERT_EQ(train(1, heart(), 1, true, "--output " + under_mpirun).status, 0);
  EXPECT_EQ(testing::read_text(alone), testing::read_text(under_mpirun));
}

// The program paces its own evaluations (one per Newton step); --eval_every adds evaluations in the
// middle of inner solves, which must only add trace rows.
TEST_F(LogregEndToEnd, ExtraEvaluationsChangeNothingButTheTrace) {
  const std::string paced = scratch("paced.model"), extra = scratch("extra.model");
  const std::string paced_trace = scratch("paced.csv"), extra_trace = scratch("extra.csv");
  ASSERT_EQ(train(3, generated(), 0.5, true, "--output " + paced + " --trace " + paced_trace).status, 0);
  const Output out =
      train(3, generated(), 0.5, true, "--eval_every 3 --output " + extra + " --trace " + extra_trace);
  ASSERT_EQ(out.status, 0) << out.text;
  EXPECT_EQ(testing::read_text(paced), testing::read_text(extra));
  EXPECT_GT(testing::read_trace(extra_trace).rows.size(), testing::read_trace(paced_trace).rows.size());
}

// With L1 on many columns, most evaluations cover a working set a quarter of the coordinates or fewer;
// the solution stays the reference's at one rank and at three, and every row's gap is a bound.
TEST_F(LogregEndToEnd, WorkingSetsKeepTheSolution) {
  const std::string data = scratch("wide.svm");
  const Output made =
      run(std::string(SCHMP_GENERATE_BIN) +
          " logreg --rows 500 --cols 2000 --density 0.02 --support 30 --seed 7 --out " + data);
  ASSERT_EQ(made.status, 0) << made.text;
  const double reference = reference_objective(data, 0.5, true);
  for (const int ranks : {1, 3}) {
    SCOPED_TRACE("np " + std::to_string(ranks));
    const std::string trace = scratch("wide.csv");
    const Output out = train(ranks, data, 0.5, true, "--trace " + trace);
    ASSERT_EQ(out.status, 0) << out.text;
    EXPECT_NEAR(objective_of(out), reference, 1e-6 * reference) << out.text;
    const testing::Trace written = testing::read_trace(trace);
    bool scoped = false, full_after_scoped = false;
    const double all = written.rows.front()[9];  // the first evaluation covers every coordinate
    for (const std::vector<double>& row : written.rows) {
      EXPECT_LE(row[2] - row[5], reference * (1 + 1e-11)) << out.text;  // objective less the gap
      const double evaluated = row[9];
      if (evaluated < all) {
        EXPECT_LE(4 * evaluated, all);
        scoped = true;
      } else {
        full_after_scoped = full_after_scoped || scoped;
      }
    }
    EXPECT_GT(all, 1900);
    EXPECT_TRUE(scoped);
    EXPECT_TRUE(full_after_scoped);
  }
}

// With one feature and L2, the inner solve's first update is the Newton step itself: every Newton step
// takes one round of its own and one to evaluate (an extrapolation tried takes one round). The first
// update of each step must see the new direction as zero, not the last step's, which the workers drop
// only when that update reaches them: else the step would need another round. (Steps by rounds: with
// the Hessian the coordinator would find each step itself.)
TEST_F(LogregEndToEnd, EachNewtonStepStartsFromAZeroDirection) {
  const std::string data = scratch("one-feature.svm");
  {
    std::mt19937 random(1);
    std::normal_distribution<double> normal;
    std::uniform_real_distribution<double> uniform;
    std::ofstream out(data);
    for (int i = 0; i < 300; ++i) {
      const double x = normal(random);
      out << (uniform(random) < 1 / (1 + std::exp(-2 * x)) ? "+1" : "-1") << " 1:" << x << '\n';
    }
  }
  const std::string trace = scratch("one-feature.csv");
  const Output out =
      run(std::string(SCHMP_LOGREG_BIN) + " --data " + data +
          " --penalty l2 --fit_intercept=false --schedule_size 1 --newton_steps rounds --tol 1e-12 "
          "--progress_seconds 0 --trace " +
          trace);
  ASSERT_EQ(out.status, 0) << out.text;
  const auto rows = testing::read_trace(trace).rows;
  ASSERT_GE(rows.size(), 4u) << out.text;
  EXPECT_EQ(rows[0][0], 0.0);
  int newton_steps = 0;
  for (std::size_t r = 1; r < rows.size(); ++r) {
    const double rounds = rows[r][0] - rows[r - 1][0];
    EXPECT_TRUE(rounds == 1 || rounds == 2) << "row " << r << "\n" << out.text;
    newton_steps += rounds == 2 ? 1 : 0;
  }
  EXPECT_GE(newton_steps, 3) << out.text;
}

// On raw features of very different scales, correlated as descriptors are, the relative subgradient
// can be tiny while the objective is well above the optimum. --tol bounds the relative gap, which bounds
// the distance: a run stopped at --tol 1e-6 is within a millionth of the reference optimum.
TEST_F(LogregEndToEnd, TheToleranceBoundsTheDistanceToTheOptimumOnRawFeatures) {
  const std::string data = raw_features();
  for (const bool l1 : {true, false}) {
    const double reference = reference_objective(data, 1, l1);
    for (const int ranks : {1, 3}) {
      for (const double tol : {1e-3, 1e-6}) {
        SCOPED_TRACE(std::string(l1 ? "l1" : "l2") + ", np " + std::to_string(ranks) + ", tol " +
                     testing::number(tol));
        std::ostringstream command;
        command << mpirun(ranks) << SCHMP_LOGREG_BIN << " --layout all --data " << data << " --penalty "
                << (l1 ? "l1" : "l2") << " --tol " << tol << " --progress_seconds 0";
        const Output out = run(command.str());
        ASSERT_EQ(out.status, 0) << out.text;
        EXPECT_NE(out.text.find("schmp-logreg: converged after"), std::string::npos) << out.text;
        EXPECT_LE(objective_of(out), reference * (1 + tol)) << out.text;
        EXPECT_LE(objective_of(out) - gap_of(out), reference * (1 + 1e-11)) << out.text;
      }
    }
  }
}

// A --tol below what the sums' rounding resolves stops where the gap can fall no further, and says so,
// instead of running to --max_rounds.
TEST_F(LogregEndToEnd, AToleranceBelowRoundingStopsAtTheFloor) {
  for (const int ranks : {1, 3}) {
    SCOPED_TRACE("np " + std::to_string(ranks));
    const Output out = run(mpirun(ranks) + SCHMP_LOGREG_BIN + " --layout all --data " + heart() +
                           " --tol 1e-15 --progress_seconds 0");
    ASSERT_EQ(out.status, 0) << out.text;
    EXPECT_NE(out.text.find("schmp-logreg: converged after"), std::string::npos) << out.text;
    EXPECT_NE(out.text.find("the gap is down to the rounding of its sums over 270 rows: --tol 1e-15"),
              std::string::npos)
        << out.text;
    EXPECT_LE(gap_of(out), 1e-11 * objective_of(out)) << out.text;
  }
}

// On those raw features coordinate descent creeps, and the Newton steps the coordinator finds from the
// Hessian the workers sum reach the optimum in a fraction of the rounds, at every rank count: all of
// them after the first (--newton_steps hessian), or those after the rounds start to creep (auto). A
// step from the Hessian takes one round (its direction shipped whole) and one evaluation.
TEST_F(LogregEndToEnd, NewtonStepsFromTheHessianTakeFewRounds) {
  const std::string data = raw_features();
  const auto rounds_of = [](const Output& out) {
    std::smatch match;
    const bool found = std::regex_search(out.text, match, std::regex("converged after (\\d+) rounds"));
    return found ? std::stod(match[1]) : -1.0;
  };
  for (const bool l1 : {true, false}) {
    const double reference = reference_objective(data, 1, l1);
    for (const int ranks : {1, 3, 5}) {
      SCOPED_TRACE(std::string(l1 ? "l1" : "l2") + ", np " + std::to_string(ranks));
      const std::string trace = scratch("hessian.csv");
      const Output out = train(ranks, data, 1, l1, "--trace " + trace);
      const Output from_hessian = train(ranks, data, 1, l1, "--newton_steps hessian");
      const Output by_rounds = train(ranks, data, 1, l1, "--newton_steps rounds");
      ASSERT_EQ(out.status, 0) << out.text;
      ASSERT_EQ(by_rounds.status, 0) << by_rounds.text;
      EXPECT_NEAR(objective_of(out), reference, 1e-9 * reference) << out.text;
      EXPECT_NEAR(objective_of(by_rounds), reference, 1e-9 * reference) << by_rounds.text;
      ASSERT_EQ(from_hessian.status, 0) << from_hessian.text;
      EXPECT_NEAR(objective_of(from_hessian), reference, 1e-9 * reference) << from_hessian.text;
      EXPECT_LT(5 * rounds_of(from_hessian), rounds_of(by_rounds)) << from_hessian.text << by_rounds.text;
      EXPECT_GT(rounds_of(out), 0) << out.text;
      EXPECT_LT(rounds_of(out), rounds_of(by_rounds)) << out.text << by_rounds.text;
      const auto rows = testing::read_trace(trace).rows;
      int single = 0;
      for (std::size_t r = 1; r < rows.size(); ++r) single += rows[r][0] - rows[r - 1][0] == 1 ? 1 : 0;
      EXPECT_GE(single, 3) << out.text;
    }
  }
}

// With the dependency filter off (--rho 1), copies of the same feature move together and overshoot:
// the inner solve by rounds diverges, the line search finds no descent, and the coordinator must go back
// to w and move fewer coordinates per round until it converges to the reference.
TEST_F(LogregEndToEnd, InterferingParallelUpdatesAreTamed) {
  constexpr std::uint32_t kCopies = 4;
  const io::SparseRows rows = io::read_libsvm(heart());
  io::SparseRows copied;
  copied.labels = rows.labels;
  copied.source = rows.source;
  for (std::size_t i = 0; i < rows.rows(); ++i) {
    for (std::size_t e = rows.row_start[i]; e < rows.row_start[i + 1]; ++e) {
      for (std::uint32_t c = 0; c < kCopies; ++c) {
        copied.index.push_back(rows.index[e] * kCopies + c);
        copied.value.push_back(rows.value[e]);
      }
    }
    copied.row_start.push_back(copied.index.size());
  }
  const std::string copies = scratch("copies.svm");
  std::ofstream(copies) << testing::libsvm_text(copied);
  const double reference = reference_objective(copies, 1, true);
  for (const auto& [ranks, flags] : std::vector<std::pair<int, std::string>>{
           {1, "--rho 1 --in_order=false --newton_steps rounds"}, {3, "--rho 1 --newton_steps rounds"}}) {
    const Output out = train(ranks, copies, 1, true, flags);
    ASSERT_EQ(out.status, 0) << out.text;
    EXPECT_NE(out.text.find("parallel updates interfered"), std::string::npos) << out.text;
    EXPECT_NE(out.text.find("schmp-logreg: converged after"), std::string::npos) << out.text;
    EXPECT_NEAR(objective_of(out), reference, 1e-6 * reference) << out.text;
  }
  // One process updating each block's parameters in order (the default) needs no dependency check: the
  // copies never move together, and the same seed gives the same model.
  std::vector<std::string> models;
  for (int run = 0; run < 2; ++run) {
    const std::string model = scratch("in-order-" + std::to_string(run) + ".model");
    const Output out = train(1, copies, 1, true, "--rho 1 --output " + model);
    ASSERT_EQ(out.status, 0) << out.text;
    EXPECT_EQ(out.text.find("parallel updates interfered"), std::string::npos) << out.text;
    EXPECT_NEAR(objective_of(out), reference, 1e-6 * reference) << out.text;
    models.push_back(testing::read_text(model));
  }
  EXPECT_EQ(models[0], models[1]);
}

TEST_F(LogregEndToEnd, StrongAndWeakRegularisationMatchReference) {
  for (double C : {0.05, 20.0}) {
    const double reference = reference_objective(heart(), C, true);
    const Output out = train(3, heart(), C, true, "");
    ASSERT_EQ(out.status, 0) << out.text;
    EXPECT_NEAR(objective_of(out), reference, 1e-6 * reference) << "C " << C << "\n" << out.text;
  }
}

// The model file is liblinear's text format: header, then one weight per line.
TEST_F(LogregEndToEnd, ModelIsInLiblinearFormat) {
  const std::string model = scratch("heart.model");
  const Output out = train(3, heart(), 1, true, "--bias --output " + model);
  ASSERT_EQ(out.status, 0) << out.text;
  std::ifstream in(model);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 6u + 14u);
  EXPECT_EQ(lines[0], "solver_type L1R_LR");
  EXPECT_EQ(lines[1], "nr_class 2");
  EXPECT_EQ(lines[2], "label 1 -1");
  EXPECT_EQ(lines[3], "nr_feature 13");
  EXPECT_EQ(lines[4], "bias 1");
  EXPECT_EQ(lines[5], "w");
  for (std::size_t k = 6; k < lines.size(); ++k) EXPECT_TRUE(std::isfinite(std::stod(lines[k]))) << lines[k];
}

// Where liblinear-tools is installed: its predictions from our model equal those from its own model
// trained on the same objective, and liblinear-train reaches the same objective.
TEST_F(LogregEndToEnd, LiblinearPredictReadsOurModel) {
  if (run("command -v liblinear-predict").status != 0) GTEST_SKIP() << "liblinear-tools is not installed";
  const std::string ours = scratch("ours.model"), theirs = scratch("theirs.model");
  const Output trained = train(3, heart(), 1, true, "--fit_intercept=false --output " + ours);
  ASSERT_EQ(trained.status, 0) << trained.text;
  const Output reference = run("liblinear-train -s 6 -c 1 -e 1e-8 -B -1 " + heart() + " " + theirs);
  ASSERT_EQ(reference.status, 0) << reference.text;
  const Output a = run("liblinear-predict " + heart() + " " + ours + " " + scratch("ours.predictions"));
  const Output b = run("liblinear-predict " + heart() + " " + theirs + " " + scratch("theirs.predictions"));
  ASSERT_EQ(a.status, 0) << a.text;
  ASSERT_EQ(b.status, 0) << b.text;
  EXPECT_EQ(a.text, b.text);
  EXPECT_EQ(testing::read_text(scratch("ours.predictions")),
            testing::read_text(scratch("theirs.predictions")));
}

// --weights: a row of integer weight k counts as k copies of it (weight 0: left out), L1 and L2, at one
// and three ranks; weights scaled by a factor fit the model of C scaled by it. A weights file of the
// wrong length is refused.
TEST_F(LogregEndToEnd, RowWeightsAreRepeatedRows) {
  const io::SparseRows rows = io::read_libsvm(heart());
  const std::string counts = scratch("counts.txt"), scaled = scratch("scaled.txt"),
                    repeated = scratch("repeated.svm");
  {
    std::ofstream count_out(counts), scaled_out(scaled), repeated_out(repeated);
    for (std::size_t r = 0; r < rows.rows(); ++r) {
      const int k = static_cast<int>((r * 7) % 4);
      count_out << k << '\n';
      scaled_out << 0.25 * k << '\n';
      for (int copy = 0; copy < k; ++copy) {
        repeated_out << rows.labels[r];
        for (std::size_t e = rows.row_start[r]; e < rows.row_start[r + 1]; ++e)
          repeated_out << ' ' << rows.index[e] + 1 << ':' << rows.value[e];
        repeated_out << '\n';
      }
    }
  }
  for (const bool l1 : {true, false}) {
    SCOPED_TRACE(l1 ? "l1" : "l2");
    const Output expected = train(1, repeated, 0.5, l1, "");
    ASSERT_EQ(expected.status, 0) << expected.text;
    for (const int ranks : l1 ? std::vector<int>{1, 3} : std::vector<int>{3}) {
      const Output weighted = train(ranks, heart(), 0.5, l1, "--weights " + counts);
      ASSERT_EQ(weighted.status, 0) << weighted.text;
      EXPECT_NEAR(objective_of(weighted), objective_of(expected), 1e-8 * objective_of(expected)) << ranks;
    }
    if (!l1) continue;
    const Output quarter = train(3, heart(), 2, l1, "--weights " + scaled);
    ASSERT_EQ(quarter.status, 0) << quarter.text;
    EXPECT_NEAR(objective_of(quarter), objective_of(expected), 1e-8 * objective_of(expected));
  }
  testing::expect_clean_failure(train(3, heart(), 1, true, "--weights " + repeated),
                                "schmp-logreg: error: " + repeated + ":1: ");
}

// The weights of a binary model file (liblinear's format: one per line after "w").
std::vector<double> model_weights(const std::string& model) {
  std::istringstream text(testing::read_text(model));
  std::string line;
  while (std::getline(text, line) && line != "w") {
  }
  std::vector<double> w;
  for (double value; text >> value;) w.push_back(value);
  return w;
}

// --l1_ratio: the elastic net a ||w||_1 + (1 - a)/2 ||w||^2 gives the reference's objective and weights
// (its zeros among them) at one, three and five ranks, on dense columns and on sparse ones with a small L1
// share; every gap is a bound. An L1 share of 0 is --penalty l2.
TEST_F(LogregEndToEnd, ElasticNetMatchesTheReference) {
  struct Net {
    std::string data;
    double C;
    double l1_ratio;
    std::vector<int> ranks;
  };
  const std::string model = scratch("elastic.model");
  for (const Net& net : {Net{heart(), 0.5, 0.5, {1, 3, 5}}, Net{generated(), 1, 0.1, {1, 3}}}) {
    SCOPED_TRACE(net.data + " l1_ratio " + testing::number(net.l1_ratio));
    const io::SparseRows rows = io::read_libsvm(net.data);
    const testing::LogregSolution reference =
        testing::solve_logreg_reference(rows, rows.columns(), net.C, true, true, net.l1_ratio);
    for (const int ranks : net.ranks) {
      const Output out = train(ranks, net.data, net.C, true,
                               "--l1_ratio " + testing::number(net.l1_ratio) + " --output " + model);
      ASSERT_EQ(out.status, 0) << out.text;
      EXPECT_NEAR(objective_of(out), reference.objective, 1e-8 * reference.objective) << out.text;
      EXPECT_LE(objective_of(out) - gap_of(out), reference.objective * (1 + 1e-11)) << out.text;
      const std::vector<double> w = model_weights(model);
      ASSERT_EQ(w.size(), reference.w.size());
      double largest = 0;
      for (const double value : reference.w) largest = std::max(largest, std::abs(value));
      for (std::size_t j = 0; j < w.size(); ++j) {
        EXPECT_NEAR(w[j], reference.w[j], 1e-5 * largest) << "weight " << j << " at " << ranks << " ranks";
        EXPECT_EQ(w[j] == 0, std::abs(reference.w[j]) < 1e-9 * largest) << "weight " << j;
      }
    }
  }
  const Output ridge = train(3, heart(), 0.5, true, "--l1_ratio 0");
  const Output l2 = train(3, heart(), 0.5, false, "");
  ASSERT_EQ(ridge.status, 0) << ridge.text;
  EXPECT_NEAR(objective_of(ridge), objective_of(l2), 1e-10 * objective_of(l2));
  testing::expect_clean_failure(train(3, heart(), 1, false, "--l1_ratio 0.5"),
                                "schmp-logreg: error: --l1_ratio mixes a ridge term into --penalty l1");
}

// --standardize: the model of the data whose columns are scaled to unit variance (about their means),
// on the data's scale, the same objective as the reference's on the scaled data, at one, three and five
// ranks, by rounds and from the Hessian; on dense and on sparse columns.
TEST_F(LogregEndToEnd, StandardizedColumnsGiveTheScaledDatasModel) {
  const std::string scaled = scratch("scaled-columns.svm"), model = scratch("standardized.model");
  for (const std::string& data : {heart(), generated()}) {
    SCOPED_TRACE(data);
    const io::SparseRows rows = io::read_libsvm(data);
    const auto n = static_cast<double>(rows.rows());
    std::vector<double> sums(rows.columns(), 0.0), squares(rows.columns(), 0.0);
    for (std::size_t e = 0; e < rows.index.size(); ++e) {
      sums[rows.index[e]] += rows.value[e];
      squares[rows.index[e]] += rows.value[e] * rows.value[e];
    }
    std::vector<double> sd(rows.columns());
    for (std::size_t j = 0; j < sd.size(); ++j) {
      const double variance = squares[j] / n - sums[j] * sums[j] / (n * n);
      sd[j] = variance > 0 ? std::sqrt(variance) : 1.0;
    }
    io::SparseRows scaled_rows = rows;
    for (std::size_t e = 0; e < rows.index.size(); ++e) scaled_rows.value[e] /= sd[rows.index[e]];
    {
      std::ofstream out(scaled);
      out.precision(17);
      for (std::size_t r = 0; r < rows.rows(); ++r) {
        out << rows.labels[r];
        for (std::size_t e = rows.row_start[r]; e < rows.row_start[r + 1]; ++e)
          out << ' ' << rows.index[e] + 1 << ':' << scaled_rows.value[e];
        out << '\n';
      }
    }
    const double C = data == heart() ? 0.05 : 0.3;
    const testing::LogregSolution reference =
        testing::solve_logreg_reference(scaled_rows, rows.columns(), C, true, true, 0.9);
    double largest = 0;
    for (const double w : reference.w) largest = std::max(largest, std::abs(w));
    for (const auto& [ranks, steps] :
         std::vector<std::pair<int, std::string>>{{1, "auto"}, {3, "rounds"}, {5, "hessian"}}) {
      const Output out = train(ranks, data, C, true,
                               "--standardize --l1_ratio 0.9 --newton_steps " + steps + " --output " + model);
      ASSERT_EQ(out.status, 0) << out.text;
      EXPECT_NEAR(objective_of(out), reference.objective, 1e-8 * reference.objective) << ranks << " ranks";
      const std::vector<double> w = model_weights(model);
      ASSERT_EQ(w.size(), reference.w.size());
      for (std::size_t j = 0; j + 1 < w.size(); ++j)
        EXPECT_NEAR(w[j] * sd[j], reference.w[j], 1e-5 * largest) << "weight " << j << " at " << ranks;
      EXPECT_NEAR(w.back(), reference.w.back(), 1e-5 * largest) << "intercept at " << ranks;
    }
  }
}

// The models of a --path_models file, in order: each lambda's weights by 0-based index.
std::vector<std::map<std::size_t, double>> path_models(const std::string& path) {
  std::istringstream text(testing::read_text(path));
  std::vector<std::map<std::size_t, double>> models;
  for (std::string line; std::getline(text, line);) {
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("lambda ", 0) == 0) {
      models.emplace_back();
      continue;
    }
    if (models.empty()) continue;  // the header's labels, nr_feature and bias lines
    std::istringstream entry(line);
    std::size_t index = 0;
    double value = 0;
    entry >> index >> value;
    models.back()[index - 1] = value;
  }
  return models;
}

// A multinomial path's models file: each model's weights, class by class (the intercept last), from its
// rows 'index v_1 ... v_K'.
std::vector<std::vector<std::vector<double>>> softmax_path_models(const std::string& path,
                                                                  std::size_t classes, std::size_t params) {
  std::istringstream text(testing::read_text(path));
  std::vector<std::vector<std::vector<double>>> models;
  for (std::string line; std::getline(text, line);) {
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("lambda ", 0) == 0) {
      models.emplace_back(classes, std::vector<double>(params, 0.0));
      continue;
    }
    if (models.empty()) continue;  // the header's labels, nr_feature, bias and softmax lines
    std::istringstream entry(line);
    std::size_t index = 0;
    entry >> index;
    for (std::size_t l = 0; l < classes; ++l) entry >> models.back()[l][index - 1];
  }
  return models;
}

// The softmax's mean log-loss on `rows` at weights w (class by class, the intercept last): its
// definition, each row's log sum_l exp(z_l) - z_y.
double softmax_log_loss(const io::SparseRows& rows, std::size_t columns,
                        const std::vector<std::vector<double>>& w) {
  double loss = 0;
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    std::vector<double> z(w.size());
    for (std::size_t l = 0; l < w.size(); ++l) {
      z[l] = w[l][columns];
      for (std::size_t e = rows.row_start[r]; e < rows.row_start[r + 1]; ++e)
        z[l] += w[l][rows.index[e]] * rows.value[e];
    }
    double sum = 0;
    for (const double v : z) sum += std::exp(v);
    loss += std::log(sum) - z[static_cast<std::size_t>(rows.labels[r]) - 1];  // labels 1 .. K
  }
  return loss / static_cast<double>(rows.rows());
}

// --path: glmnet's lambdas from lambda_max, each solved to the reference's objective and weights at C =
// 1 / (lambda n), at one, three and five ranks; lambda_max is the smallest lambda that keeps every weight
// at zero. The table scores --test as predict scores the last model, which --output holds.
TEST_F(LogregEndToEnd, PathSolvesEveryLambdaAsTheReference) {
  const io::SparseRows rows = io::read_libsvm(heart());
  const double n = static_cast<double>(rows.rows());
  const std::string table = scratch("path.csv"), models = scratch("path.models"),
                    model = scratch("path.model");
  std::vector<testing::LogregSolution> reference;
  for (const int ranks : {1, 3, 5}) {
    SCOPED_TRACE("np " + std::to_string(ranks));
    const Output out =
        run(mpirun(ranks) + SCHMP_LOGREG_BIN + " --layout all --data " + heart() +
            " --path 6 --lambda_min_ratio 0.01 --l1_ratio 0.8 --tol 1e-10 --progress_seconds 0" + " --test " +
            heart() + " --path_table " + table + " --path_models " + models + " --output " + model);
    ASSERT_EQ(out.status, 0) << out.text;
    const testing::Trace written = testing::read_trace(table);
    EXPECT_EQ(written.header,
              "lambda,C,objective,duality_gap,relative_gap,nnz,seconds,test_logloss,test_accuracy");
    ASSERT_EQ(written.rows.size(), 6u);
    const auto found = path_models(models);
    ASSERT_EQ(found.size(), 6u);
    if (reference.empty()) {
      for (const std::vector<double>& row : written.rows)
        reference.push_back(testing::solve_logreg_reference(rows, rows.columns(), row[1], true, true, 0.8));
      // Just above lambda_max a weight moves.
      const auto moved =
          testing::solve_logreg_reference(rows, rows.columns(), 1.02 * written.rows[0][1], true, true, 0.8);
      EXPECT_TRUE(std::any_of(moved.w.begin(), moved.w.end() - 1, [](double w) { return w != 0; }));
    }
    for (std::size_t k = 0; k < reference.size(); ++k) {
      EXPECT_NEAR(written.rows[k][1], 1 / (written.rows[k][0] * n), 1e-12 * written.rows[k][1]);
      EXPECT_NEAR(written.rows[k][2], reference[k].objective, 1e-8 * reference[k].objective)
          << "lambda " << k;
      double largest = 0;
      for (const double w : reference[k].w) largest = std::max(largest, std::abs(w));
      for (std::size_t j = 0; j < reference[k].w.size(); ++j) {
        const double ours = found[k].count(j) ? found[k].at(j) : 0.0;
        EXPECT_NEAR(ours, reference[k].w[j], 3e-5 * largest) << "lambda " << k << " weight " << j;
        if (k == 0 && j + 1 < reference[k].w.size()) {
          EXPECT_LT(std::abs(ours), 1e-12) << "weight " << j;
        }
      }
    }
    const Output predicted =
        run(std::string(SCHMP_LOGREG_BIN) + " predict --model " + model + " --data " + heart());
    ASSERT_EQ(predicted.status, 0) << predicted.text;
    std::smatch scores;
    ASSERT_TRUE(std::regex_search(predicted.text, scores, std::regex("accuracy ([^ ]+)  log-loss ([^ ]+)")));
    EXPECT_NEAR(written.rows[5][7], std::stod(scores[2]), 1e-5 * written.rows[5][7]);
    EXPECT_NEAR(written.rows[5][8], std::stod(scores[1]), 1e-6);
    // predict picks a model of the path by its lambda, and scores it as the table did.
    const Output picked = run(std::string(SCHMP_LOGREG_BIN) + " predict --model " + models + " --data " +
                              heart() + " --lambda " + testing::number(written.rows[2][0] * 1.01));
    ASSERT_EQ(picked.status, 0) << picked.text;
    ASSERT_TRUE(std::regex_search(picked.text, scores,
                                  std::regex("lambda ([^ ]+) .*\n.*accuracy ([^ ]+)  log-loss ([^ ]+)")))
        << picked.text;
    EXPECT_NEAR(std::stod(scores[1]), written.rows[2][0], 1e-8 * written.rows[2][0]);
    EXPECT_NEAR(std::stod(scores[3]), written.rows[2][7], 1e-5 * written.rows[2][7]);
    EXPECT_NEAR(std::stod(scores[2]), written.rows[2][8], 1e-6);
  }
}

// A path stopped part way resumes from its checkpoint, on another rank count: the lambdas solved before
// are kept as they were, and the rest are solved as an uninterrupted run solves them.
TEST_F(LogregEndToEnd, PathResumesFromItsCheckpoint) {
  const std::string checkpoint = scratch("path.checkpoint"), whole = scratch("whole.csv"),
                    resumed = scratch("resumed.csv");
  const std::string flags = std::string(SCHMP_LOGREG_BIN) + " --layout all --data " + generated() +
                            " --path 10 --tol 1e-10 --progress_seconds 0";
  ASSERT_EQ(run(mpirun(2) + flags + " --path_table " + whole).status, 0);
  const Output stopped = run(mpirun(2) + flags + " --max_rounds 400 --checkpoint " + checkpoint);
  ASSERT_EQ(stopped.status, 0) << stopped.text;
  ASSERT_NE(stopped.text.find("max_rounds"), std::string::npos) << stopped.text;
  const Output out = run(mpirun(3) + flags + " --resume " + checkpoint + " --path_table " + resumed);
  ASSERT_EQ(out.status, 0) << out.text;
  const testing::Trace expected = testing::read_trace(whole), found = testing::read_trace(resumed);
  ASSERT_EQ(found.rows.size(), expected.rows.size());
  for (std::size_t k = 0; k < found.rows.size(); ++k)
    EXPECT_NEAR(found.rows[k][2], expected.rows[k][2], 1e-8 * expected.rows[k][2]) << "lambda " << k;
  testing::expect_clean_failure(
      run(mpirun(2) + std::string(SCHMP_LOGREG_BIN) + " --data " + generated() + " --resume " + checkpoint),
      "schmp-logreg: error: " + checkpoint + ": the checkpoint is of a path: give --path");
}

// The reference's cross-validation of a path: at each lambda, the folds' mean held-out binomial deviance
// (twice the log-loss), each fold weighing its rows, and its standard error; each fold solved at C =
// 1 / (lambda times its training rows).
std::pair<std::vector<double>, std::vector<double>> reference_cv(const io::SparseRows& rows,
                                                                 const std::vector<std::uint32_t>& fold,
                                                                 std::uint32_t folds,
                                                                 const std::vector<double>& lambdas) {
  std::vector<double> mean, se;
  for (const double lambda : lambdas) {
    std::vector<double> deviance(folds, 0.0), held(folds, 0.0);
    for (std::uint32_t k = 0; k < folds; ++k) {
      const io::SparseRows training = testing::rows_where(rows, [&](std::size_t r) { return fold[r] != k; });
      const testing::LogregSolution solution = testing::solve_logreg_reference(
          training, rows.columns(), 1 / (lambda * static_cast<double>(training.rows())), true, true);
      for (std::size_t r = 0; r < rows.rows(); ++r) {
        if (fold[r] != k) continue;
        double margin = solution.w.back();
        for (std::uint64_t e = rows.row_start[r]; e < rows.row_start[r + 1]; ++e)
          margin += solution.w[rows.index[e]] * rows.value[e];
        deviance[k] += 2 * std::log1p(std::exp(-rows.labels[r] * margin));
        held[k] += 1;
      }
      deviance[k] /= held[k];
    }
    const auto [fold_mean, fold_se] = testing::fold_mean_se(deviance, held);
    mean.push_back(fold_mean);
    se.push_back(fold_se);
  }
  return {mean, se};
}

// --cv K: at every lambda, the folds' mean held-out deviance and its standard error are the reference's
// on the folds the seed fixes, lambda_min and lambda_1se are glmnet's picks from them, and the refit ends
// at lambda_min. At 1, 2 and 5 ranks: the folds one after another, side by side, and on groups of ranks.
TEST_F(LogregEndToEnd, CrossValidationMatchesARefitPerFold) {
  const io::SparseRows rows = io::read_libsvm(heart());
  constexpr std::uint32_t kFolds = 3;
  const std::string table = scratch("cv.csv"), model = scratch("cv.model");
  std::vector<double> mean, se, first_model;
  std::size_t best = 0, one_se = 0;
  for (const int ranks : {1, 2, 5}) {
    SCOPED_TRACE("np " + std::to_string(ranks));
    const Output out =
        run(mpirun(ranks) + SCHMP_LOGREG_BIN + " --layout all --data " + heart() +
            " --cv 3 --seed 5 --path 8 --lambda_min_ratio 0.001 --tol 1e-10 --progress_seconds 0" +
            " --path_table " + table + " --output " + model);
    ASSERT_EQ(out.status, 0) << out.text;
    const testing::Trace written = testing::read_trace(table);
    EXPECT_EQ(written.header, "lambda,C,objective,duality_gap,relative_gap,nnz,seconds,cv_deviance,cv_se");
    // lambda_min's model, whether the refit followed the folds (one rank) or ran beside them.
    const std::vector<double> w = model_weights(model);
    if (first_model.empty()) first_model = w;
    ASSERT_EQ(w.size(), first_model.size());
    for (std::size_t j = 0; j < w.size(); ++j) EXPECT_NEAR(w[j], first_model[j], 1e-6) << "weight " << j;
    ASSERT_EQ(written.rows.size(), 8u);
    if (mean.empty()) {
      std::vector<double> lambdas;
      for (const std::vector<double>& row : written.rows) lambdas.push_back(row[0]);
      std::tie(mean, se) =
          reference_cv(rows, testing::specified_folds(rows.rows(), kFolds, 5), kFolds, lambdas);
      best = static_cast<std::size_t>(std::min_element(mean.begin(), mean.end()) - mean.begin());
      one_se = best;
      while (one_se > 0 && mean[one_se - 1] <= mean[best] + se[best]) --one_se;
      EXPECT_GT(best, 0u);  // the data tells the classes apart: lambda_max is not the best
    }
    for (std::size_t k = 0; k < mean.size(); ++k) {
      EXPECT_NEAR(written.rows[k][7], mean[k], 1e-7 * mean[k]) << "lambda " << k;
      EXPECT_NEAR(written.rows[k][8], se[k], 1e-5 * se[k]) << "lambda " << k;
      EXPECT_EQ(std::isnan(written.rows[k][2]), k > best) << "lambda " << k;
    }
    std::smatch picked;
    ASSERT_TRUE(std::regex_search(out.text, picked, std::regex("lambda_min ([^ ]+) .* lambda_1se ([^ ]+) ")))
        << out.text;
    EXPECT_NEAR(std::stod(picked[1]), written.rows[best][0], 1e-7 * written.rows[best][0]);
    EXPECT_NEAR(std::stod(picked[2]), written.rows[one_se][0], 1e-7 * written.rows[one_se][0]);
  }
  for (const auto& [flags, message] : std::vector<std::pair<std::string, std::string>>{
           {"--cv 1", "--cv needs at least 2 folds"},
           {"--cv 271", "--cv 271 needs as many rows, and " + heart() + " has 270"},
           {"--cv 3 --C 2", "--path and --cv set C from each lambda: drop --C"},
           {"--path 5 --penalty l2", "--path and --cv need an L1 share"},
           {"--cv 3 --test " + heart(), "--cv holds out its own rows: drop --test"}}) {
    for (const int ranks : flags == "--cv 271" ? std::vector<int>{1, 3} : std::vector<int>{3}) {
      testing::expect_clean_failure(
          run(mpirun(ranks) + SCHMP_LOGREG_BIN + " --layout all --data " + heart() + " " + flags),
          "schmp-logreg: error: " + message);
    }
  }
}

// What run_glmnet leaves: R's output (cv.glmnet's lambda_min and lambda_1se), and its coefficients' file.
struct GlmnetRun {
  Output out;
  std::string coefficients;
};

// schmp-logreg's path with `flags` at 3 ranks (whose --weights file, scratch "glmnet-w.txt", this
// writes: row r weighs 0.5 + (5 r mod 7)), its table of lambdas handed to `script` (R) with `rows` as a
// dense matrix, labels, the weights and the folds of --cv 3 --seed 5; schmp's models go to `models`.
GlmnetRun run_glmnet(const io::SparseRows& rows, const char* script, const std::string& flags,
                     const std::string& models) {
  const std::string x = LogregEndToEnd::scratch("glmnet-x.txt"), y = LogregEndToEnd::scratch("glmnet-y.txt"),
                    weights = LogregEndToEnd::scratch("glmnet-w.txt"),
                    lambdas = LogregEndToEnd::scratch("glmnet-l.txt"),
                    folds = LogregEndToEnd::scratch("glmnet-f.txt"),
                    program = LogregEndToEnd::scratch("glmnet.R"),
                    table = LogregEndToEnd::scratch("glmnet-path.csv");
  GlmnetRun result{{}, LogregEndToEnd::scratch("glmnet.csv")};
  {
    std::ofstream x_out(x), y_out(y), w_out(weights), f_out(folds);
    x_out.precision(17);
    const std::vector<std::uint32_t> fold = testing::specified_folds(rows.rows(), 3, 5);
    for (std::size_t r = 0; r < rows.rows(); ++r) {
      std::vector<double> dense(rows.columns(), 0.0);
      for (std::size_t e = rows.row_start[r]; e < rows.row_start[r + 1]; ++e)
        dense[rows.index[e]] = rows.value[e];
      for (const double v : dense) x_out << v << ' ';
      x_out << '\n';
      y_out << rows.labels[r] << '\n';
      w_out << 0.5 + static_cast<double>((r * 5) % 7) << '\n';
      f_out << fold[r] + 1 << '\n';
    }
  }
  std::ofstream(program) << script;
  result.out =
      run(mpirun(3) + SCHMP_LOGREG_BIN + flags + " --path_table " + table + " --path_models " + models);
  if (result.out.status != 0) return result;
  {
    std::ofstream out(lambdas);
    out.precision(17);
    for (const std::vector<double>& row : testing::read_trace(table).rows) out << row[0] << '\n';
  }
  result.out = run("Rscript " + program + " " + x + " " + y + " " + weights + " " + lambdas + " " + folds +
                   " 0.6 " + result.coefficients);
  return result;
}

// schmp-logreg's --cv 3 --seed 5 with `flags` picks the lambda_min and lambda_1se that R printed.
void expect_glmnet_cv_choice(const std::string& flags, const std::string& r_text) {
  const Output cv = run(mpirun(3) + SCHMP_LOGREG_BIN + flags + " --cv 3 --seed 5");
  ASSERT_EQ(cv.status, 0) << cv.text;
  std::smatch ours, theirs;
  ASSERT_TRUE(std::regex_search(cv.text, ours, std::regex("lambda_min ([^ ]+) .* lambda_1se ([^ ]+) ")));
  ASSERT_TRUE(std::regex_search(r_text, theirs, std::regex("([^ \n]+) ([^ \n]+) \n")));
  EXPECT_NEAR(std::stod(ours[1]), std::stod(theirs[1]), 1e-6 * std::stod(theirs[1])) << r_text;
  EXPECT_NEAR(std::stod(ours[2]), std::stod(theirs[2]), 1e-6 * std::stod(theirs[2])) << r_text;
}

const char* const kGlmnetScript = R"(suppressMessages(library(glmnet))
a <- commandArgs(TRUE)
x <- as.matrix(read.table(a[1])); y <- factor(scan(a[2], quiet=TRUE)); w <- scan(a[3], quiet=TRUE)
lambda <- scan(a[4], quiet=TRUE); foldid <- scan(a[5], quiet=TRUE); alpha <- as.numeric(a[6])
fit <- glmnet(x, y, family="binomial", weights=w, alpha=alpha, standardize=TRUE, lambda=lambda,
              thresh=1e-14, maxit=1e7)
write.table(t(as.matrix(coef(fit))), a[7], row.names=FALSE, col.names=FALSE)
cv <- cv.glmnet(x, y, family="binomial", weights=w, alpha=alpha, standardize=TRUE, lambda=lambda,
                foldid=foldid, thresh=1e-14, maxit=1e7)
cat(cv$lambda.min, cv$lambda.1se, "\n")
)";

// Where R has glmnet: schmp-logreg's weighted, standardised elastic-net path gives glmnet's coefficients
// (the intercept first) at every lambda, and its cross-validation picks cv.glmnet's lambda_min and
// lambda_1se on the same folds.
TEST_F(LogregEndToEnd, GlmnetFitsTheSameModels) {
  if (run("Rscript -e 'suppressMessages(library(glmnet))'").status != 0)
    GTEST_SKIP() << "R's glmnet is not installed";
  const io::SparseRows rows = io::read_libsvm(heart());
  const std::string models = scratch("glmnet.models");
  const std::string flags =
      std::string(" --layout all --data ") + heart() + " --weights " + scratch("glmnet-w.txt") +
      " --standardize --path 6 --lambda_min_ratio 0.01 --l1_ratio 0.6 --tol 1e-11 --progress_seconds 0";
  const GlmnetRun r = run_glmnet(rows, kGlmnetScript, flags, models);
  ASSERT_EQ(r.out.status, 0) << r.out.text;
  std::ifstream expected_in(r.coefficients);
  const auto found = path_models(models);
  ASSERT_EQ(found.size(), 6u);
  for (std::size_t k = 0; k < found.size(); ++k) {
    std::vector<double> expected(rows.columns() + 1);
    for (double& value : expected) expected_in >> value;
    double largest = 0;
    for (const double value : expected) largest = std::max(largest, std::abs(value));
    const auto weight = [&](std::size_t j) { return found[k].count(j) ? found[k].at(j) : 0.0; };
    EXPECT_NEAR(weight(rows.columns()), expected[0], 1e-5 * largest) << "lambda " << k << " intercept";
    for (std::size_t j = 0; j < rows.columns(); ++j)
      EXPECT_NEAR(weight(j), expected[j + 1], 1e-5 * largest) << "lambda " << k << " weight " << j;
  }
  expect_glmnet_cv_choice(flags, r.out.text);
}

const char* const kGlmnetMultinomialScript = R"(suppressMessages(library(glmnet))
a <- commandArgs(TRUE)
x <- as.matrix(read.table(a[1])); y <- factor(scan(a[2], quiet=TRUE)); w <- scan(a[3], quiet=TRUE)
lambda <- scan(a[4], quiet=TRUE); foldid <- scan(a[5], quiet=TRUE); alpha <- as.numeric(a[6])
fit <- glmnet(x, y, family="multinomial", weights=w, alpha=alpha, standardize=TRUE, lambda=lambda,
              thresh=1e-14, maxit=1e7)
B <- coef(fit)
out <- NULL
for (k in seq_along(lambda)) for (l in seq_along(B)) out <- rbind(out, as.numeric(B[[l]][, k]))
write.table(out, a[7], row.names=FALSE, col.names=FALSE)
cv <- cv.glmnet(x, y, family="multinomial", weights=w, alpha=alpha, standardize=TRUE, lambda=lambda,
                foldid=foldid, thresh=1e-14, maxit=1e7)
cat(cv$lambda.min, cv$lambda.1se, "\n")
)";

// Where R has glmnet: schmp-logreg's weighted, standardised elastic-net softmax path on wine gives
// glmnet's family = "multinomial" coefficients (each class's intercept first) at every lambda, and its
// cross-validation picks cv.glmnet's lambda_min and lambda_1se on the same folds.
TEST_F(LogregEndToEnd, GlmnetFitsTheSameSoftmax) {
  if (run("Rscript -e 'suppressMessages(library(glmnet))'").status != 0)
    GTEST_SKIP() << "R's glmnet is not installed";
  const std::string wine = std::string(SCHMP_SOURCE_DIR) + "/data/wine.svm";
  const io::SparseRows rows = io::read_libsvm(wine);
  constexpr std::size_t kColumns = 13, kClasses = 3;
  const std::string models = scratch("mn-glmnet.models");
  const std::string flags = " --layout all --data " + wine + " --weights " + scratch("glmnet-w.txt") +
                            " --multinomial --standardize --path 5 --lambda_min_ratio 0.01 --l1_ratio 0.6" +
                            " --tol 1e-11 --progress_seconds 0";
  const GlmnetRun r = run_glmnet(rows, kGlmnetMultinomialScript, flags, models);
  ASSERT_EQ(r.out.status, 0) << r.out.text;
  std::ifstream expected_in(r.coefficients);
  const auto found = softmax_path_models(models, kClasses, kColumns + 1);
  ASSERT_EQ(found.size(), 5u);
  for (std::size_t k = 0; k < found.size(); ++k) {
    for (std::size_t l = 0; l < kClasses; ++l) {
      std::vector<double> expected(kColumns + 1);
      for (double& value : expected) expected_in >> value;
      double largest = 0;
      for (const double value : expected) largest = std::max(largest, std::abs(value));
      EXPECT_NEAR(found[k][l][kColumns], expected[0], 1e-4 * largest) << "lambda " << k << " class " << l;
      for (std::size_t j = 0; j < kColumns; ++j) {
        EXPECT_NEAR(found[k][l][j], expected[j + 1], 1e-4 * largest)
            << "lambda " << k << " class " << l << " weight " << j;
      }
    }
  }
  expect_glmnet_cv_choice(flags, r.out.text);
}

// --multiclass: one-vs-rest over wine's three cultivars. Each class's column is the reference's binary
// fit of that class against the rest, at one, three and five ranks (the classes side by side on groups
// of ranks); the model is liblinear's multiclass format, which liblinear-predict reads, and at
// liblinear's own objective (--bias) its accuracy is liblinear-train -s 6's; predict gives each row's
// class and probabilities.
TEST_F(LogregEndToEnd, MulticlassFitsEachClassAgainstTheRest) {
  const std::string wine = std::string(SCHMP_SOURCE_DIR) + "/data/wine.svm", model = scratch("wine.model");
  const io::SparseRows rows = io::read_libsvm(wine);
  std::vector<double> references;
  for (const double label : {1.0, 2.0, 3.0}) {
    io::SparseRows binary = rows;
    for (double& y : binary.labels) y = y == label ? 1.0 : -1.0;
    references.push_back(testing::solve_logreg_reference(binary, 13, 0.5, true, true).objective);
  }
  for (const int ranks : {1, 3, 5}) {
    SCOPED_TRACE("np " + std::to_string(ranks));
    const Output out = train(ranks, wine, 0.5, true, "--multiclass --output " + model);
    ASSERT_EQ(out.status, 0) << out.text;
    for (std::size_t c = 0; c < 3; ++c) {
      // The class's line: its label, then its objective.
      const std::regex line(std::string("\n") + static_cast<char>('1' + c) + " +([^ ]+) ");
      std::smatch fit;
      ASSERT_TRUE(std::regex_search(out.text, fit, line)) << out.text;
      EXPECT_NEAR(std::stod(fit[1]), references[c], 1e-6 * references[c]) << "class " << c + 1;
    }
    const std::string text = testing::read_text(model);
    EXPECT_EQ(text.substr(0, text.find("\nw\n") + 3),
              "solver_type L1R_LR\nnr_class 3\nlabel 1 2 3\nnr_feature 13\nbias 1\nw\n");
  }
  // predict: the class of the largest decision value, and liblinear's probabilities (each class's
  // logistic probability, normalised).
  const std::string predictions = scratch("wine.predictions");
  const Output applied = run(std::string(SCHMP_LOGREG_BIN) + " predict --model " + model + " --data " + wine +
                             " --output " + predictions);
  ASSERT_EQ(applied.status, 0) << applied.text;
  std::ifstream in(predictions);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "labels 1 2 3");
  double label = 0, sum = 0;
  std::array<double, 3> p{};
  in >> label >> p[0] >> p[1] >> p[2];
  for (const double value : p) sum += value;
  EXPECT_NEAR(sum, 1, 1e-8);
  EXPECT_EQ(label, static_cast<double>(std::max_element(p.begin(), p.end()) - p.begin() + 1));
  if (run("command -v liblinear-predict").status != 0) GTEST_SKIP() << "liblinear-tools is not installed";
  const std::string theirs = scratch("wine-liblinear.model");
  ASSERT_EQ(train(3, wine, 0.5, true, "--multiclass --bias --output " + model).status, 0);
  ASSERT_EQ(run("liblinear-train -s 6 -c 0.5 -e 1e-8 -B 1 " + wine + " " + theirs).status, 0);
  const auto accuracy = [&](const std::string& file) {
    const Output out = run("liblinear-predict " + wine + " " + file + " " + scratch("ll.out"));
    std::smatch found;
    EXPECT_TRUE(std::regex_search(out.text, found, std::regex("Accuracy = ([0-9.]+)%"))) << out.text;
    return found.empty() ? NAN : std::stod(found[1]);
  };
  EXPECT_NEAR(accuracy(model), accuracy(theirs), 0.5);
}

// --multiclass --cv: each class's folds and refit side by side; each class gets the lambda_min, the
// lambda_1se and the model at its lambda_min that its own binary --cv picks (itself checked against a
// refit per fold above), at one, three and five ranks.
TEST_F(LogregEndToEnd, MulticlassCrossValidationPicksEachClasssLambda) {
  const std::string wine = std::string(SCHMP_SOURCE_DIR) + "/data/wine.svm", model = scratch("wine-cv.model");
  const std::string flags = " --layout all --data " + wine +
                            " --cv 4 --path 12 --seed 3 --tol 1e-10 --progress_seconds 0 --output ";
  const std::regex binary_line("lambda_min ([^ ]+) \\(cv_deviance ([^ ]+)\\)  lambda_1se ([^ ]+) ");
  std::vector<std::array<double, 3>> choices;  // per class: lambda_min, its deviance, lambda_1se
  std::vector<std::vector<double>> weights;    // per class, with the intercept last
  for (const std::string label : {"1", "2", "3"}) {
    const std::string binary = scratch("wine-cv-" + label + ".model");
    const Output out = run(std::string(SCHMP_LOGREG_BIN) + " --positive_label " + label + flags + binary);
    ASSERT_EQ(out.status, 0) << out.text;
    std::smatch found;
    ASSERT_TRUE(std::regex_search(out.text, found, binary_line)) << out.text;
    choices.push_back({std::stod(found[1]), std::stod(found[2]), std::stod(found[3])});
    weights.push_back(model_weights(binary));
  }
  for (const int ranks : {1, 3, 5}) {
    SCOPED_TRACE("np " + std::to_string(ranks));
    const Output out = run(mpirun(ranks) + SCHMP_LOGREG_BIN + " --multiclass" + flags + model);
    ASSERT_EQ(out.status, 0) << out.text;
    const std::vector<double> w = model_weights(model);
    ASSERT_EQ(w.size(), 3 * weights[0].size());
    for (std::size_t c = 0; c < 3; ++c) {
      const std::regex line(std::string("\n") + static_cast<char>('1' + c) + " +([^ ]+) +([^ ]+) +([^ ]+) ");
      std::smatch found;
      ASSERT_TRUE(std::regex_search(out.text, found, line)) << out.text;
      EXPECT_NEAR(std::stod(found[1]), choices[c][0], 1e-7 * choices[c][0]) << "class " << c + 1;
      EXPECT_NEAR(std::stod(found[2]), choices[c][2], 1e-7 * choices[c][2]) << "class " << c + 1;
      EXPECT_NEAR(std::stod(found[3]), choices[c][1], 1e-7 * choices[c][1]) << "class " << c + 1;
      for (std::size_t j = 0; j < weights[c].size(); ++j)
        EXPECT_NEAR(w[3 * j + c], weights[c][j], 1e-6) << "class " << c + 1 << " weight " << j;
    }
  }
}

// --multiclass --path: every class's path starts at the largest of the classes' own lambda_max (each
// binary --path's), so that each lambda's columns make one model. At one, three and five ranks each
// column is the reference's binary fit of its class against the rest at the lambda's C; the table sums
// the classes' objectives and scores --test as predict scores the path's models.
TEST_F(LogregEndToEnd, MulticlassPathSolvesEachClassAtEveryLambda) {
  const std::string wine = std::string(SCHMP_SOURCE_DIR) + "/data/wine.svm";
  const std::string table = scratch("ovr-path.csv"), models = scratch("ovr-path.models");
  const std::string flags = " --layout all --data " + wine +
                            " --path 5 --lambda_min_ratio 0.03 --l1_ratio 0.7" +
                            " --standardize --tol 1e-10 --progress_seconds 0";
  const io::SparseRows rows = io::read_libsvm(wine);
  constexpr std::size_t kColumns = 13, kClasses = 3;
  double lambda_max = 0;
  for (const std::string label : {"1", "2", "3"}) {
    const std::string own = scratch("ovr-path-" + label + ".models");
    const Output out =
        run(std::string(SCHMP_LOGREG_BIN) + flags + " --positive_label " + label + " --path_models " + own);
    ASSERT_EQ(out.status, 0) << out.text;
    std::smatch found;
    const std::string header = testing::read_text(own);
    ASSERT_TRUE(std::regex_search(header, found, std::regex("# lambda_max ([^ ]+) "))) << header;
    lambda_max = std::max(lambda_max, std::stod(found[1]));
  }
  // The reference solves the standardised columns, centred (which moves only the intercept, and lets
  // its coordinate descent converge fast): each weight comes back by its column's scale.
  const double n = static_cast<double>(rows.rows());
  std::vector<double> mean(kColumns, 0.0), sd(kColumns, 0.0);
  for (std::size_t e = 0; e < rows.value.size(); ++e) {
    mean[rows.index[e]] += rows.value[e] / n;
    sd[rows.index[e]] += rows.value[e] * rows.value[e] / n;
  }
  for (std::size_t j = 0; j < kColumns; ++j) sd[j] = std::sqrt(sd[j] - mean[j] * mean[j]);
  io::SparseRows scaled;
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    std::vector<double> x(kColumns, 0.0);
    for (std::size_t e = rows.row_start[r]; e < rows.row_start[r + 1]; ++e) x[rows.index[e]] = rows.value[e];
    for (std::uint32_t j = 0; j < kColumns; ++j) {
      scaled.index.push_back(j);
      scaled.value.push_back((x[j] - mean[j]) / sd[j]);
    }
    scaled.labels.push_back(rows.labels[r]);
    scaled.row_start.push_back(scaled.index.size());
  }
  std::vector<std::vector<testing::LogregSolution>> reference(kClasses);  // per lambda, per class
  for (const int ranks : {1, 3, 5}) {
    SCOPED_TRACE("np " + std::to_string(ranks));
    const Output out = run(mpirun(ranks) + SCHMP_LOGREG_BIN + flags + " --multiclass --test " + wine +
                           " --path_table " + table + " --path_models " + models);
    ASSERT_EQ(out.status, 0) << out.text;
    const testing::Trace written = testing::read_trace(table);
    ASSERT_EQ(written.rows.size(), 5u);
    EXPECT_NEAR(written.rows[0][0], lambda_max, 1e-12 * lambda_max);
    const auto found = softmax_path_models(models, kClasses, kColumns + 1);
    ASSERT_EQ(found.size(), 5u);
    for (std::size_t k = 0; k < found.size(); ++k) {
      const double C = written.rows[k][1];
      double objective = 0;
      for (std::size_t l = 0; l < kClasses; ++l) {
        if (reference[l].size() <= k) {
          io::SparseRows binary = scaled;
          for (double& y : binary.labels) y = y == static_cast<double>(l + 1) ? 1.0 : -1.0;
          reference[l].push_back(testing::solve_logreg_reference(binary, kColumns, C, true, true, 0.7));
        }
        const testing::LogregSolution& expected = reference[l][k];
        objective += expected.objective;
        double largest = 0;
        for (std::size_t j = 0; j < kColumns; ++j)
          largest = std::max(largest, std::abs(expected.w[j] / sd[j]));
        for (std::size_t j = 0; j < kColumns; ++j) {
          EXPECT_NEAR(found[k][l][j], expected.w[j] / sd[j], 1e-5 * largest + 1e-12)
              << "lambda " << k << " class " << l + 1 << " weight " << j;
        }
      }
      EXPECT_NEAR(written.rows[k][2], objective, 1e-8 * objective) << "lambda " << k;
      // predict scores the lambda's model as the table did.
      const Output picked = run(std::string(SCHMP_LOGREG_BIN) + " predict --model " + models + " --data " +
                                wine + " --lambda " + testing::number(written.rows[k][0]));
      std::smatch scores;
      ASSERT_TRUE(std::regex_search(picked.text, scores, std::regex("accuracy ([^ ]+)  log-loss ([^ ]+)")))
          << picked.text;
      EXPECT_NEAR(written.rows[k][7], std::stod(scores[2]), 1e-5 * written.rows[k][7]) << "lambda " << k;
      EXPECT_NEAR(written.rows[k][8], std::stod(scores[1]), 1e-6) << "lambda " << k;
    }
  }
}

// Four classes of Gaussian rows, each the argmax of a sparse linear score plus noise.
// `noise` scales the scores' noise and `signal` the true weights: a small noise over a large signal
// makes the classes nearly separable.
std::string four_classes(const std::string& path, double signal = 1, double noise = 1) {
  std::mt19937 random(11);
  std::normal_distribution<double> normal;
  constexpr int kRows = 240, kColumns = 12, kClasses = 4;
  std::array<std::array<double, kColumns>, kClasses> truth{};
  for (auto& w : truth) {
    for (int j = 0; j < kColumns; j += 3) w[static_cast<std::size_t>(j)] = signal * normal(random);
  }
  std::ofstream out(path);
  for (int i = 0; i < kRows; ++i) {
    std::array<double, kColumns> x{};
    for (double& v : x) v = normal(random);
    std::array<double, kClasses> score{};
    for (std::size_t l = 0; l < kClasses; ++l) {
      for (std::size_t j = 0; j < kColumns; ++j) score[l] += truth[l][j] * x[j];
      score[l] += noise * normal(random);
    }
    out << std::max_element(score.begin(), score.end()) - score.begin() + 1;
    for (std::size_t j = 0; j < kColumns; ++j) out << ' ' << j + 1 << ':' << x[j];
    out << '\n';
  }
  return path;
}

// The softmax of `data` fitted by schmp-logreg at `ranks` ranks matches the reference's objective and
// weights (its zeros among them), and the intercepts up to the shift common to all classes, which the
// softmax does not see.
void expect_reference_softmax(int ranks, const std::string& data, std::size_t columns, double C,
                              double l1_ratio, const std::string& model, const std::string& flags = "") {
  SCOPED_TRACE(data + " at np " + std::to_string(ranks));
  const io::SparseRows rows = io::read_libsvm(data);
  const testing::MultinomialSolution reference =
      testing::solve_multinomial_reference(rows, columns, C, true, l1_ratio);
  const std::size_t classes = reference.w.size();
  std::ostringstream command;
  command << mpirun(ranks) << SCHMP_LOGREG_BIN << " --layout all --data " << data << " --C " << C
          << " --l1_ratio " << l1_ratio << " --multinomial --tol 1e-8 --progress_seconds 0 --output " << model
          << flags;
  const Output out = run(command.str());
  ASSERT_EQ(out.status, 0) << out.text;
  std::smatch found;
  ASSERT_TRUE(std::regex_search(out.text, found, std::regex("objective ([^ ]+)  relative gap ([^ \n]+)")))
      << out.text;
  EXPECT_NEAR(std::stod(found[1]), reference.objective, 1e-6 * reference.objective);
  EXPECT_LE(std::stod(found[2]), 1e-8);
  const std::vector<double> w = model_weights(model);
  ASSERT_EQ(w.size(), classes * (columns + 1));
  double mean_intercept = 0;
  for (std::size_t l = 0; l < classes; ++l)
    mean_intercept += reference.w[l][columns] / static_cast<double>(classes);
  for (std::size_t l = 0; l < classes; ++l) {
    for (std::size_t j = 0; j < columns; ++j) {
      const double expected = reference.w[l][j];
      EXPECT_NEAR(w[j * classes + l], expected, 1e-4 * std::max(1.0, std::abs(expected)))
          << "class " << l << " weight " << j;
      EXPECT_EQ(w[j * classes + l] == 0, std::abs(expected) < 1e-9) << "class " << l << " weight " << j;
    }
    EXPECT_NEAR(w[columns * classes + l], reference.w[l][columns] - mean_intercept, 1e-3)
        << "class " << l << " intercept";
  }
}

// --multinomial: the softmax over wine's three cultivars at one and three ranks, and over four generated
// classes with the elastic net, against a reference that runs coordinate descent on the softmax itself.
// predict --multinomial gives the softmax of each row's scores.
TEST_F(LogregEndToEnd, MultinomialMatchesTheSoftmaxReference) {
  const std::string wine = std::string(SCHMP_SOURCE_DIR) + "/data/wine.svm", model = scratch("wine-mn.model");
  expect_reference_softmax(1, wine, 13, 0.5, 1, model);
  expect_reference_softmax(3, wine, 13, 0.5, 1, model);
  expect_reference_softmax(1, four_classes(scratch("four.svm")), 12, 1, 0.5, scratch("four.model"));
  const std::string predictions = scratch("wine-mn.p");
  const Output applied = run(std::string(SCHMP_LOGREG_BIN) + " predict --multinomial --model " + model +
                             " --data " + wine + " --output " + predictions);
  ASSERT_EQ(applied.status, 0) << applied.text;
  // The softmax of the scores w_l . x + b_l of wine's first row.
  const std::vector<double> w = model_weights(model);
  const io::SparseRows rows = io::read_libsvm(wine);
  std::array<double, 3> score{};
  for (std::size_t l = 0; l < 3; ++l) {
    score[l] = w[13 * 3 + l];
    for (std::size_t e = rows.row_start[0]; e < rows.row_start[1]; ++e)
      score[l] += w[rows.index[e] * 3 + l] * rows.value[e];
  }
  double sum = 0;
  for (const double s : score) sum += std::exp(s);
  std::ifstream in(predictions);
  std::string labels;
  std::getline(in, labels);
  double label = 0;
  std::array<double, 3> p{};
  in >> label >> p[0] >> p[1] >> p[2];
  for (std::size_t l = 0; l < 3; ++l) EXPECT_NEAR(p[l], std::exp(score[l]) / sum, 1e-8) << "class " << l;
}

// Nearly separable classes at a large C, where class steps creep (each class's weights pull the
// others'): joint Newton steps over every class's weights take the fit to the reference's optimum, with
// a gap of 1e-8, at one, three and five ranks, with two elastic nets (with the L1 penalty alone, four
// classes leave the optimum's weights free along a shift common to them). The trace shows the joint
// steps: a step each (class steps come K at a time).
TEST_F(LogregEndToEnd, MultinomialJointStepsFinishNearSeparableClasses) {
  const std::string data = four_classes(scratch("separable.svm"), 3, 0.05);
  const std::string trace = scratch("separable.csv");
  for (const double l1_ratio : {0.9, 0.5}) {
    for (const int ranks : {1, 3, 5}) {
      expect_reference_softmax(ranks, data, 12, 20, l1_ratio, scratch("separable.model"),
                               " --trace " + trace);
      const auto rows = testing::read_trace(trace).rows;
      std::size_t joint = 0;
      for (std::size_t r = 1; r < rows.size(); ++r) joint += rows[r][0] - rows[r - 1][0] == 1 ? 1 : 0;
      EXPECT_GE(joint, 2u) << "np " << ranks;
      EXPECT_LE(rows.back()[5], 20) << "np " << ranks;  // sweeps and joint steps
    }
  }
}

// The same at five ranks on two cores, where every class step waits on ranks that share a core; and
// a cross-validated path there, whose table is one process's.
TEST_F(LogregEndToEnd, MultinomialAtFiveRanks) {
  const std::string wine = std::string(SCHMP_SOURCE_DIR) + "/data/wine.svm";
  expect_reference_softmax(5, wine, 13, 0.5, 1, scratch("wine-mn5.model"));
  std::vector<testing::Trace> tables;
  for (const int ranks : {1, 5}) {
    const std::string table = scratch("mn-cv" + std::to_string(ranks) + ".csv");
    const Output out =
        run(mpirun(ranks) + SCHMP_LOGREG_BIN + " --layout all --data " + wine +
            " --multinomial --standardize --cv 3 --path 4 --lambda_min_ratio 0.05 --tol 1e-10" +
            " --progress_seconds 0 --path_table " + table);
    ASSERT_EQ(out.status, 0) << out.text;
    tables.push_back(testing::read_trace(table));
  }
  ASSERT_EQ(tables[0].rows.size(), 4u);
  ASSERT_EQ(tables[1].rows.size(), 4u);
  for (std::size_t k = 0; k < 4; ++k) {
    for (const std::size_t column : {0, 7, 8}) {
      EXPECT_NEAR(tables[1].rows[k][column], tables[0].rows[k][column], 1e-7 * tables[0].rows[k][column])
          << "lambda " << k << " column " << column;
    }
  }
}

// --multinomial at the edges: more ranks than rows (workers without rows), a fit whose gap meets --tol
// within the first sweep (classes not yet solved are zero), and a class whose rows weigh nothing (no
// optimum: refused in one line).
TEST_F(LogregEndToEnd, MultinomialAtTheEdges) {
  const std::string tiny = scratch("tiny.svm"), model = scratch("tiny.model");
  std::ofstream(tiny) << "1 1:1 2:0.5\n2 1:-1 3:2\n3 2:1 3:-1\n1 1:0.5 3:1\n2 2:-2\n3 1:1 2:1 3:1\n";
  const Output few = run(mpirun(5) + SCHMP_LOGREG_BIN + " --layout all --data " + tiny +
                         " --multinomial --tol 1e-6 --progress_seconds 0 --output " + model);
  ASSERT_EQ(few.status, 0) << few.text;
  EXPECT_NE(few.text.find("relative gap"), std::string::npos) << few.text;
  const Output loose = run(mpirun(1) + SCHMP_LOGREG_BIN + " --data " + tiny +
                           " --multinomial --C 1e-3 --tol 0.5 --progress_seconds 0 --output " + model);
  ASSERT_EQ(loose.status, 0) << loose.text;
  EXPECT_EQ(model_weights(model).size(), 3u * 4u);
  const std::string weights = scratch("tiny.weights");
  std::ofstream(weights) << "1\n1\n0\n1\n1\n0\n";
  for (const int ranks : {1, 3}) {
    testing::expect_clean_failure(
        run(mpirun(ranks) + SCHMP_LOGREG_BIN + " --data " + tiny + " --multinomial --weights " + weights),
        "schmp-logreg: error: " + weights + ": the rows of class 3 weigh nothing");
  }
}

// --multinomial --path: glmnet's lambdas from the softmax's lambda_max, each solved to the reference's
// objective and weights at C = 1 / (lambda n), at one and three ranks. At lambda_max every weight is zero
// and the intercepts are the log of the classes' shares; a little below it one weight is not; standardised
// without an intercept, it is glmnet's (each column's deviation about its mean). predict
// --lambda applies a model of the file as the softmax.
TEST_F(LogregEndToEnd, MultinomialPathSolvesEveryLambdaAsTheReference) {
  const std::string data = four_classes(scratch("four-path.svm")), table = scratch("mn-path.csv"),
                    models = scratch("mn-path.models"), model = scratch("mn-path.model"),
                    trace = scratch("mn-path.trace.csv");
  const io::SparseRows rows = io::read_libsvm(data);
  const double n = static_cast<double>(rows.rows());
  constexpr std::size_t kColumns = 12, kClasses = 4;
  // lambda_max by its definition.
  std::array<double, kClasses> share{};
  for (const double y : rows.labels) share[static_cast<std::size_t>(y) - 1] += 1 / n;
  double lambda_max = 0;
  for (std::size_t j = 0; j < kColumns; ++j) {
    for (std::size_t l = 0; l < kClasses; ++l) {
      double gradient = 0;
      for (std::size_t r = 0; r < rows.rows(); ++r) {
        for (std::size_t e = rows.row_start[r]; e < rows.row_start[r + 1]; ++e) {
          if (rows.index[e] == j)
            gradient += (share[l] - (rows.labels[r] == static_cast<double>(l + 1) ? 1 : 0)) * rows.value[e];
        }
      }
      lambda_max = std::max(lambda_max, std::abs(gradient) / n);
    }
  }
  // Standardised without an intercept, as glmnet's: each column over its standard deviation about its
  // mean (the columns are not centred), every class's probability 1/K at W = 0.
  {
    double standardized_max = 0;
    for (std::size_t j = 0; j < kColumns; ++j) {
      double sum = 0, squares = 0;
      std::array<double, kClasses> by_class{};
      for (std::size_t r = 0; r < rows.rows(); ++r) {
        for (std::size_t e = rows.row_start[r]; e < rows.row_start[r + 1]; ++e) {
          if (rows.index[e] != j) continue;
          sum += rows.value[e];
          squares += rows.value[e] * rows.value[e];
          by_class[static_cast<std::size_t>(rows.labels[r]) - 1] += rows.value[e];
        }
      }
      const double sd = std::sqrt(squares / n - (sum / n) * (sum / n));
      for (const double class_sum : by_class)
        standardized_max = std::max(standardized_max, std::abs(sum / kClasses - class_sum) / n / sd);
    }
    const std::string raw_table = scratch("mn-raw.csv");
    const Output raw =
        run(mpirun(1) + SCHMP_LOGREG_BIN + " --data " + data +
            " --multinomial --standardize --fit_intercept=false --path 2 --progress_seconds 0" +
            " --path_table " + raw_table);
    ASSERT_EQ(raw.status, 0) << raw.text;
    EXPECT_NEAR(testing::read_trace(raw_table).rows.at(0)[0], standardized_max, 1e-10 * standardized_max);
  }
  const testing::MultinomialSolution below =
      testing::solve_multinomial_reference(rows, kColumns, 1 / (0.98 * lambda_max * n), true);
  bool moved = false;
  for (std::size_t l = 0; l < kClasses; ++l) {
    for (std::size_t j = 0; j < kColumns; ++j) moved = moved || below.w[l][j] != 0;
  }
  EXPECT_TRUE(moved) << "lambda_max is too large";
  for (const int ranks : {1, 3}) {
    SCOPED_TRACE("np " + std::to_string(ranks));
    const Output out = run(mpirun(ranks) + SCHMP_LOGREG_BIN + " --layout all --data " + data +
                           " --multinomial --path 5 --lambda_min_ratio 0.05 --tol 1e-8 --progress_seconds 0" +
                           " --path_table " + table + " --path_models " + models + " --output " + model +
                           " --trace " + trace);
    ASSERT_EQ(out.status, 0) << out.text;
    const testing::Trace written = testing::read_trace(table);
    // The trace: a row per sweep and one where each lambda meets --tol, there at the table's objective.
    const testing::Trace traced = testing::read_trace(trace);
    EXPECT_EQ(traced.header, "round,seconds,objective,relative_gap,nnz,sweep,lambda");
    std::size_t solved = 0;
    for (std::size_t r = 0; r < traced.rows.size(); ++r) {
      const bool last = r + 1 == traced.rows.size() || traced.rows[r + 1][6] != traced.rows[r][6];
      if (r > 0) {
        EXPECT_GE(traced.rows[r][0], traced.rows[r - 1][0]) << "row " << r;
      }
      if (!last) continue;
      ASSERT_LT(solved, written.rows.size());
      EXPECT_EQ(traced.rows[r][6], written.rows[solved][0]) << "row " << r;
      EXPECT_EQ(traced.rows[r][2], written.rows[solved][2]) << "row " << r;
      ++solved;
    }
    EXPECT_EQ(solved, written.rows.size());
    const auto found = softmax_path_models(models, kClasses, kColumns + 1);
    ASSERT_EQ(written.rows.size(), 5u);
    ASSERT_EQ(found.size(), 5u);
    EXPECT_NEAR(written.rows[0][0], lambda_max, 1e-10 * lambda_max);
    double mean = 0;
    for (const double s : share) mean += std::log(s) / kClasses;
    for (std::size_t l = 0; l < kClasses; ++l) {
      for (std::size_t j = 0; j < kColumns; ++j)
        EXPECT_EQ(found[0][l][j], 0) << "class " << l << " weight " << j;
      EXPECT_NEAR(found[0][l][kColumns], std::log(share[l]) - mean, 1e-8) << "class " << l << " intercept";
    }
    for (std::size_t k = 0; k < found.size(); ++k) {
      const double lambda = written.rows[k][0], C = written.rows[k][1];
      EXPECT_NEAR(C, 1 / (lambda * n), 1e-12 * C) << "lambda " << k;
      const testing::MultinomialSolution reference =
          testing::solve_multinomial_reference(rows, kColumns, C, true);
      const double objective = testing::multinomial_objective(rows, kColumns, found[k], C, true);
      EXPECT_NEAR(objective, reference.objective, 1e-6 * reference.objective) << "lambda " << k;
      EXPECT_NEAR(written.rows[k][2], objective, 1e-8 * objective) << "lambda " << k;
      EXPECT_LE(written.rows[k][4], 1e-8) << "lambda " << k;
      // The softmax does not see a feature's weights all moved by one value, nor does the L1 penalty
      // between the middle two of an even count of classes: the reference may stop anywhere there, where
      // schmp-logreg takes the end that zeroes a weight.
      for (std::size_t j = 0; j < kColumns; ++j) {
        const double shift = found[k][0][j] - reference.w[0][j];
        std::size_t zeros = 0, reference_zeros = 0;
        for (std::size_t l = 0; l < kClasses; ++l) {
          EXPECT_NEAR(found[k][l][j] - reference.w[l][j], shift,
                      1e-4 * std::max(1.0, std::abs(reference.w[l][j])))
              << "lambda " << k << " class " << l << " weight " << j;
          zeros += found[k][l][j] == 0 ? 1 : 0;
          reference_zeros += std::abs(reference.w[l][j]) < 1e-9 ? 1 : 0;
        }
        EXPECT_GE(zeros, reference_zeros) << "lambda " << k << " weight " << j;
      }
    }
    // --output holds the last model.
    const std::vector<double> w = model_weights(model);
    ASSERT_EQ(w.size(), kClasses * (kColumns + 1));
    for (std::size_t l = 0; l < kClasses; ++l) {
      for (std::size_t j = 0; j <= kColumns; ++j) EXPECT_EQ(w[j * kClasses + l], found.back()[l][j]);
    }
    const Output applied = run(std::string(SCHMP_LOGREG_BIN) + " predict --model " + models + " --lambda " +
                               std::to_string(written.rows[2][0]) + " --data " + data);
    ASSERT_EQ(applied.status, 0) << applied.text;
    std::smatch loss;
    ASSERT_TRUE(std::regex_search(applied.text, loss, std::regex("log-loss ([^ \n]+)"))) << applied.text;
    const double expected = softmax_log_loss(rows, kColumns, found[2]);
    EXPECT_NEAR(std::stod(loss[1]), expected, 1e-5 * expected);
  }
}

// --multinomial --cv K: at every lambda the folds' mean held-out deviance (twice the softmax log-loss)
// and its standard error are those of the reference's fits on the folds the seed fixes; lambda_min is
// the lowest, and the refit ends there. At one and three ranks. A fold that holds out every row of a
// class leaves its fit without an optimum: refused in one line.
TEST_F(LogregEndToEnd, MultinomialCrossValidationMatchesARefitPerFold) {
  const std::string data = four_classes(scratch("four-cv.svm")), table = scratch("mn-cv.csv");
  const io::SparseRows rows = io::read_libsvm(data);
  constexpr std::size_t kColumns = 12;
  constexpr std::uint32_t kFolds = 3;
  std::vector<double> mean, se;
  for (const int ranks : {1, 3}) {
    SCOPED_TRACE("np " + std::to_string(ranks));
    const Output out = run(mpirun(ranks) + SCHMP_LOGREG_BIN + " --layout all --data " + data +
                           " --multinomial --cv 3 --seed 5 --path 5 --lambda_min_ratio 0.05 --tol 1e-10" +
                           " --progress_seconds 0 --path_table " + table);
    ASSERT_EQ(out.status, 0) << out.text;
    const testing::Trace written = testing::read_trace(table);
    EXPECT_EQ(written.header, "lambda,C,objective,duality_gap,relative_gap,nnz,seconds,cv_deviance,cv_se");
    ASSERT_EQ(written.rows.size(), 5u);
    if (mean.empty()) {
      const std::vector<std::uint32_t> fold = testing::specified_folds(rows.rows(), kFolds, 5);
      for (const std::vector<double>& row : written.rows) {
        std::vector<double> deviance, held;
        for (std::uint32_t k = 0; k < kFolds; ++k) {
          const io::SparseRows training =
              testing::rows_where(rows, [&](std::size_t r) { return fold[r] != k; });
          const io::SparseRows out_rows =
              testing::rows_where(rows, [&](std::size_t r) { return fold[r] == k; });
          const double C = 1 / (row[0] * static_cast<double>(training.rows()));
          const testing::MultinomialSolution fit =
              testing::solve_multinomial_reference(training, kColumns, C, true);
          deviance.push_back(2 * softmax_log_loss(out_rows, kColumns, fit.w));
          held.push_back(static_cast<double>(out_rows.rows()));
        }
        const auto [fold_mean, fold_se] = testing::fold_mean_se(deviance, held);
        mean.push_back(fold_mean);
        se.push_back(fold_se);
      }
    }
    const std::size_t best =
        static_cast<std::size_t>(std::min_element(mean.begin(), mean.end()) - mean.begin());
    EXPECT_GT(best, 0u);
    for (std::size_t k = 0; k < mean.size(); ++k) {
      EXPECT_NEAR(written.rows[k][7], mean[k], 1e-6 * mean[k]) << "lambda " << k;
      EXPECT_NEAR(written.rows[k][8], se[k], 1e-4 * se[k]) << "lambda " << k;
      EXPECT_EQ(std::isnan(written.rows[k][2]), k > best) << "lambda " << k;
    }
  }
  const std::string few = scratch("few.svm");
  std::ofstream(few) << "1 1:1\n2 1:-1\n1 1:0.5\n2 2:1\n3 1:2 2:1\n1 2:-1\n2 1:1 2:1\n1 1:-2\n";
  for (const int ranks : {1, 3}) {
    testing::expect_clean_failure(
        run(mpirun(ranks) + SCHMP_LOGREG_BIN + " --data " + few + " --multinomial --cv 3"),
        "schmp-logreg: error: --cv 3: fold ");
  }
}

// --multiclass on data of one class, with a positive class named, with a path but no --cv, or with a
// path table under --cv: one line on every rank.
TEST_F(LogregEndToEnd, MulticlassMistakesAreOneLine) {
  const std::string one = scratch("one-class.svm");
  std::ofstream(one) << "2 1:1\n2 1:3 2:1\n";
  for (const int ranks : {1, 3}) {
    testing::expect_clean_failure(train(ranks, one, 1, true, "--multiclass"),
                                  "schmp-logreg: error: " + one + ": one class only (label 2)");
    testing::expect_clean_failure(train(ranks, heart(), 1, true, "--multiclass --positive_label 1"),
                                  "schmp-logreg: error: --multiclass fits each class against the rest");
    testing::expect_clean_failure(
        train(ranks, heart(), 1, true, "--multinomial --positive_label 1"),
        "schmp-logreg: error: --multinomial fits every class: drop --positive_label");
    const std::string wine = std::string(SCHMP_SOURCE_DIR) + "/data/wine.svm";
    testing::expect_clean_failure(
        run(mpirun(ranks) + SCHMP_LOGREG_BIN + " --data " + wine + " --multiclass --trace " +
            scratch("t.csv")),
        "schmp-logreg: error: --trace is not read by --multiclass (--multinomial writes one)");
    testing::expect_clean_failure(run(mpirun(ranks) + SCHMP_LOGREG_BIN + " --data " + wine +
                                      " --multinomial --checkpoint " + scratch("c.ck")),
                                  "schmp-logreg: error: --checkpoint is not read by --multinomial");
  }
  const std::string wine = std::string(SCHMP_SOURCE_DIR) + "/data/wine.svm";
  // A one-vs-rest path's class whose rows weigh nothing has no intercept to fit.
  const std::string weights = scratch("no-third-class.txt");
  {
    std::ofstream out(weights);
    for (const double label : io::read_libsvm(wine).labels) out << (label == 3 ? 0 : 1) << '\n';
  }
  testing::expect_clean_failure(run(mpirun(3) + SCHMP_LOGREG_BIN + " --data " + wine + " --weights " +
                                    weights + " --multiclass --path 5"),
                                "schmp-logreg: error: " + weights + ": the rows of class 3 weigh nothing");
  testing::expect_clean_failure(
      run(mpirun(3) + SCHMP_LOGREG_BIN + " --data " + wine + " --multiclass --cv 3 --path_table " +
          scratch("table.csv")),
      "schmp-logreg: error: --multiclass --cv writes each class's model at its lambda_min (--output) only");
}

// Classes by name: labels that are words fit the models the numbers they replace fit, of three classes
// (the model's labels the names, sorted) and of two (the later name positive); predict reads the words,
// and refuses a word the model does not know at its line.
TEST_F(LogregEndToEnd, ClassesByNameFitAsClassesByNumber) {
  const auto rename = [&](const std::string& from, const std::string& to,
                          const std::vector<std::pair<std::string, std::string>>& names) {
    std::istringstream in(testing::read_text(from));
    std::ofstream out(to);
    for (std::string line; std::getline(in, line);) {
      for (const auto& [number, name] : names) {
        if (line.rfind(number + " ", 0) == 0) line = name + line.substr(number.size());
      }
      out << line << '\n';
    }
  };
  const std::string wine = std::string(SCHMP_SOURCE_DIR) + "/data/wine.svm",
                    words = scratch("wine-words.svm"), model = scratch("words.model"),
                    numbered = scratch("numbers.model");
  rename(wine, words, {{"1", "barolo"}, {"2", "grignolino"}, {"3", "barbera"}});
  const Output numbers = train(3, wine, 1, true, "--multiclass --output " + numbered + " --test " + wine);
  ASSERT_EQ(numbers.status, 0) << numbers.text;
  const Output named = train(3, words, 1, true, "--multiclass --output " + model + " --test " + words);
  ASSERT_EQ(named.status, 0) << named.text;
  for (const auto& [number, name] : std::vector<std::pair<std::string, std::string>>{
           {"1", "barolo"}, {"2", "grignolino"}, {"3", "barbera"}}) {
    std::smatch a, b;
    ASSERT_TRUE(std::regex_search(numbers.text, a, std::regex("\n" + number + " +([^ ]+) ")));
    ASSERT_TRUE(std::regex_search(named.text, b, std::regex("\n" + name + " +([^ ]+) ")));
    EXPECT_NEAR(std::stod(a[1]), std::stod(b[1]), 1e-6 * std::stod(a[1])) << name;
  }
  EXPECT_NE(testing::read_text(model).find("\nlabel barbera barolo grignolino\n"), std::string::npos);
  const Output predicted =
      run(std::string(SCHMP_LOGREG_BIN) + " predict --model " + model + " --data " + words);
  ASSERT_EQ(predicted.status, 0) << predicted.text;
  // The held-out scores and predict's are the numbered classes' own.
  const std::regex test_line("test log-loss [^\n]*");
  std::smatch named_test, numbers_test;
  ASSERT_TRUE(std::regex_search(named.text, named_test, test_line)) << named.text;
  ASSERT_TRUE(std::regex_search(numbers.text, numbers_test, test_line)) << numbers.text;
  EXPECT_EQ(named_test.str(), numbers_test.str());
  const Output predicted_numbers =
      run(std::string(SCHMP_LOGREG_BIN) + " predict --model " + numbered + " --data " + wine);
  EXPECT_EQ(predicted.text, predicted_numbers.text);
  const std::string stranger = scratch("stranger.svm");
  std::ofstream(stranger) << "barolo 1:14\nnebbiolo 1:13\n";
  testing::expect_clean_failure(
      run(std::string(SCHMP_LOGREG_BIN) + " predict --model " + model + " --data " + stranger),
      "schmp-logreg: error: " + stranger + ":2: label 'nebbiolo' is not one of the classes");

  const std::string sick = scratch("heart-words.svm"), binary = scratch("heart-words.model");
  rename(heart(), sick, {{"+1", "sick"}, {"-1", "healthy"}});
  const Output two = train(3, sick, 1, true, "--multiclass --output " + binary);
  ASSERT_EQ(two.status, 0) << two.text;
  EXPECT_NEAR(objective_of(two), reference_objective(heart(), 1, true), 1e-6 * objective_of(two)) << two.text;
  EXPECT_NE(testing::read_text(binary).find("\nlabel sick healthy\n"), std::string::npos);
  const Output scored = run(std::string(SCHMP_LOGREG_BIN) + " predict --model " + binary + " --data " + sick);
  ASSERT_EQ(scored.status, 0) << scored.text;
}

// predict: the probabilities are those of the model's weights, and the metrics are those of the
// probabilities; where liblinear-tools is installed, liblinear-predict -b 1 gives the same numbers.
TEST_F(LogregEndToEnd, PredictAppliesTheModel) {
  const std::string model = scratch("predict.model"), probabilities = scratch("predict.txt");
  ASSERT_EQ(train(3, heart(), 1, true, "--bias --output " + model).status, 0);
  const Output out = run(std::string(SCHMP_LOGREG_BIN) + " predict --model " + model + " --data " + heart() +
                         " --output " + probabilities);
  ASSERT_EQ(out.status, 0) << out.text;
  std::ifstream weights_in(model);
  std::vector<double> w;
  std::string line;
  for (int k = 0; k < 6; ++k) std::getline(weights_in, line);
  while (std::getline(weights_in, line)) w.push_back(std::stod(line));
  ASSERT_EQ(w.size(), 14u);
  const io::SparseRows rows = io::read_libsvm(heart());
  std::ifstream in(probabilities);
  std::vector<double> p;
  for (double v; in >> v;) p.push_back(v);
  ASSERT_EQ(p.size(), rows.rows());
  double correct = 0, loss = 0;
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    double z = w[13];
    for (std::size_t e = rows.row_start[r]; e < rows.row_start[r + 1]; ++e)
      z += w[rows.index[e]] * rows.value[e];
    EXPECT_NEAR(p[r], 1 / (1 + std::exp(-z)), 1e-8) << "row " << r;
    const bool positive = rows.labels[r] > 0;
    correct += (z > 0) == positive ? 1 : 0;
    loss -= std::log(positive ? p[r] : 1 - p[r]);
  }
  std::ostringstream expected;
  expected.precision(6);
  expected << std::fixed << "rows 270  accuracy " << correct / 270;
  EXPECT_NE(out.text.find(expected.str()), std::string::npos) << expected.str() << "\n" << out.text;
  EXPECT_NEAR(std::stod(out.text.substr(out.text.find("log-loss ") + 9)), loss / 270, 1e-5);
  if (run("command -v liblinear-predict").status != 0) GTEST_SKIP() << "liblinear-tools is not installed";
  const Output theirs = run("liblinear-predict -b 1 " + heart() + " " + model + " " + scratch("ll.txt"));
  ASSERT_EQ(theirs.status, 0) << theirs.text;
  std::ifstream ll(scratch("ll.txt"));
  std::getline(ll, line);
  EXPECT_EQ(line, "labels 1 -1");
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    double label = 0, positive = 0, negative = 0;
    ll >> label >> positive >> negative;
    EXPECT_NEAR(positive, p[r], 1e-6) << "row " << r;
  }
}

// The intercept is the constant feature's weight, unpenalised: on classes of very different sizes and a
// strong penalty it matches the reference's at one, three and five ranks where liblinear's penalised
// bias (--bias) stays small. liblinear-predict reads the model as a bias model. --bias turns the
// intercept off; asking for both is refused.
TEST_F(LogregEndToEnd, TheInterceptIsUnpenalised) {
  // heart_scale with 4 of every 5 negative rows dropped: about four positives to one negative.
  const std::string skewed = scratch("skewed.svm");
  {
    std::ifstream in(heart());
    std::ofstream out(skewed);
    int negatives = 0;
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("-1 ", 0) == 0 && negatives++ % 5 != 0) continue;
      out << line << '\n';
    }
  }
  const io::SparseRows rows = io::read_libsvm(skewed);
  const double C = 0.05;
  const testing::LogregSolution reference = testing::solve_logreg_reference(rows, 13, C, true, true);
  ASSERT_GT(reference.w.back(), 1.0);  // the classes' log-odds, about log 4
  const auto last_weight = [](const std::string& model) {
    const std::string text = testing::read_text(model);
    std::istringstream lines(text.substr(text.find("\nw\n") + 3));
    double weight = NAN;
    for (double v; lines >> v;) weight = v;
    return weight;
  };
  const std::string model = scratch("intercept.model");
  for (const int ranks : {1, 3, 5}) {
    const Output out = train(ranks, skewed, C, true, "--output " + model);
    ASSERT_EQ(out.status, 0) << out.text;
    EXPECT_NEAR(objective_of(out), reference.objective, 1e-6 * reference.objective) << out.text;
    EXPECT_NEAR(last_weight(model), reference.w.back(), 1e-4 * reference.w.back()) << ranks << " ranks";
    EXPECT_NE(testing::read_text(model).find("\nbias 1\n"), std::string::npos);
  }
  const std::string biased = scratch("bias.model");
  ASSERT_EQ(train(1, skewed, C, true, "--bias --output " + biased).status, 0);
  EXPECT_LT(std::abs(last_weight(biased)), 0.5 * reference.w.back());
  testing::expect_clean_failure(train(1, skewed, C, true, "--bias --fit_intercept"),
                                "schmp-logreg: error: --bias and --fit_intercept exclude each other");
  if (run("command -v liblinear-predict").status != 0) GTEST_SKIP() << "liblinear-tools is not installed";
  const Output ours = run(std::string(SCHMP_LOGREG_BIN) + " predict --model " + model + " --data " + skewed);
  const Output theirs =
      run("liblinear-predict " + skewed + " " + model + " " + scratch("skewed.predictions"));
  ASSERT_EQ(ours.status, 0) << ours.text;
  ASSERT_EQ(theirs.status, 0) << theirs.text;
  std::smatch accuracy;
  ASSERT_TRUE(std::regex_search(ours.text, accuracy, std::regex("accuracy ([0-9.]+)"))) << ours.text;
  std::ostringstream percent;
  percent << "Accuracy = " << std::setprecision(6) << 100 * std::stod(accuracy[1]) << "%";
  EXPECT_NE(theirs.text.find(percent.str()), std::string::npos) << percent.str() << " in " << theirs.text;
}

// Labels are numbers: a model trained with --positive_label 1.0 on 1/0 labels (written label 1) scores its
// own data when predict is given the same --positive_label (every other label negative), "+1" in a model is
// 1, and liblinear's -B 0 (a constant feature of 0, with its weight) is a bias too.
TEST_F(LogregEndToEnd, PredictReadsLabelsAsNumbersAndTakesThePositiveLabel) {
  // heart_scale with its labels +1/-1 written 1/0.
  std::string zero_one;
  std::ifstream in(heart());
  for (std::string line; std::getline(in, line);) {
    zero_one += line.rfind("-1 ", 0) == 0 ? '0' : '1';
    zero_one.append(line, line.find(' ')).append("\n");
  }
  const std::string data = scratch("zero_one.svm");
  std::ofstream(data) << zero_one;
  const std::string model = scratch("zero_one.model"), reference = scratch("plus_minus.model");
  ASSERT_EQ(train(3, data, 1, true, "--positive_label 1.0 --output " + model).status, 0);
  ASSERT_EQ(train(3, heart(), 1, true, "--output " + reference).status, 0);
  // Written as liblinear writes its integer labels, which liblinear-predict insists on.
  EXPECT_NE(testing::read_text(model).find("\nlabel 1 -1\n"), std::string::npos) << testing::read_text(model);
  const std::string predict = std::string(SCHMP_LOGREG_BIN) + " predict --model ";
  const Output refused = run(predict + model + " --data " + data);
  EXPECT_NE(refused.status, 0);
  EXPECT_NE(refused.text.find("label 0 is neither of the model's labels 1 and -1 (--positive_label L"),
            std::string::npos)
      << refused.text;
  const Output ours = run(predict + model + " --data " + data + " --positive_label 1");
  const Output theirs = run(predict + reference + " --data " + heart());
  ASSERT_EQ(ours.status, 0) << ours.text;
  ASSERT_EQ(theirs.status, 0) << theirs.text;
  EXPECT_EQ(ours.text.substr(ours.text.find("rows ")), theirs.text.substr(theirs.text.find("rows ")));
  // The model scores its first label (1) positive: taking 0 as positive would score it backwards.
  const Output backwards = run(predict + model + " --data " + data + " --positive_label 0");
  testing::expect_clean_failure(backwards,
                                model + ": --positive_label 0 is not the model's positive label 1");

  const std::string plus = scratch("plus.model");
  std::ofstream(plus) << "solver_type L2R_LR\nnr_class 2\nlabel +1 -1\nnr_feature 1\nbias 0\nw\n2\n5\n";
  const std::string rows = scratch("rows.svm");
  std::ofstream(rows) << "1 1:1\n-1 1:-1\n";
  const Output signed_label = run(predict + plus + " --data " + rows);
  ASSERT_EQ(signed_label.status, 0) << signed_label.text;
  EXPECT_NE(signed_label.text.find("rows 2  accuracy 1.000000"), std::string::npos) << signed_label.text;
}

TEST_F(LogregEndToEnd, PredictRefusesBadModelsAndLabels) {
  const std::string model = scratch("good.model");
  ASSERT_EQ(train(1, heart(), 1, true, "--output " + model).status, 0);
  const std::string svm_model = scratch("svm.model");
  std::ofstream(svm_model)
      << "solver_type L2R_L2LOSS_SVC_DUAL\nnr_class 2\nlabel 1 -1\nnr_feature 1\nbias -1\nw\n0.5\n";
  const std::string short_model = scratch("short.model");
  std::ofstream(short_model) << "solver_type L1R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 3\nbias -1\nw\n0.5\n";
  const std::string cut_model = scratch("cut.model");
  std::ofstream(cut_model) << "solver_type L1R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 1\nbias -1\nw\n0.5";
  // Predictions written over the model or the data would lose them.
  for (const auto& [flag, file] :
       std::vector<std::pair<std::string, std::string>>{{"--model", model}, {"--data", heart()}}) {
    testing::expect_clean_failure(run(std::string(SCHMP_LOGREG_BIN) + " predict --model " + model +
                                      " --data " + heart() + " --output " + file),
                                  "schmp-logreg: error: " + file + ": --output names the file of " + flag +
                                      ", which the run would overwrite");
  }
  const std::string other_labels = scratch("labels.svm");
  std::ofstream(other_labels) << "1 1:0.5\n3 2:1\n";
  // Loose headers: a value too many, the same label twice, a negative count, no solver named.
  const std::string header_end = "nr_feature 1\nbias -1\nw\n0.5\n";
  const std::string trailing = scratch("trailing.model");
  std::ofstream(trailing) << "solver_type L1R_LR\nnr_class 2\nlabel 1 -1 7\n" << header_end;
  const std::string same = scratch("same.model");
  std::ofstream(same) << "solver_type L1R_LR\nnr_class 2\nlabel 1 1\n" << header_end;
  const std::string negative = scratch("negative.model");
  std::ofstream(negative) << "solver_type L1R_LR\nnr_class 2\nlabel 1 -1\nnr_feature -1\nbias -1\nw\n";
  const std::string unnamed = scratch("unnamed.model");
  std::ofstream(unnamed) << "nr_class 2\nlabel 1 -1\n" << header_end;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {" --model " + svm_model + " --data " + heart(),
       svm_model + ":1: solver_type L2R_L2LOSS_SVC_DUAL is not logistic regression"},
      {" --model " + short_model + " --data " + heart(), short_model + ":7: expected 3 weights, found 1"},
      {" --model " + cut_model + " --data " + heart(), cut_model + ":7: the file ends mid-line"},
      {" --model " + trailing + " --data " + heart(), trailing + ":3: expected 2 labels (nr_class), found 3"},
      {" --model " + same + " --data " + heart(), same + ":3: label 1 is there twice"},
      {" --model " + negative + " --data " + heart(), negative + ":4: expected a feature count (0 or more)"},
      {" --model " + unnamed + " --data " + heart(), unnamed + ": not a liblinear model (no solver_type"},
      {" --model " + model + " --data " + other_labels,
       other_labels + ":2: label 3 is neither of the model's labels 1 and -1 (--positive_label L takes L as "
                      "positive and every other label as negative)"},
      {" --model " + model + " --data " + scratch("absent.svm"), scratch("absent.svm") + ": "},
      {" --data " + heart(), "predict needs --model and --data"}};
  for (const auto& [flags, message] : cases) {
    const Output out =
        run(std::string(SCHMP_LOGREG_BIN) + " predict" + flags + " --output " + scratch("p.txt"));
    testing::expect_clean_failure(out, "schmp-logreg: error: " + message);
    EXPECT_FALSE(std::filesystem::exists(scratch("p.txt")));
  }
}

// --test: every evaluation scores the held-out rows, and the last row's scores are those that predict
// gives for the model written (the test file labelled 1/0 while training is +1/-1: both are binary).
TEST_F(LogregEndToEnd, HeldOutRowsAreScoredLikePredict) {
  std::ifstream in(heart());
  std::ostringstream train_rows, test_rows, test_rows_01;
  int row = 0;
  for (std::string line; std::getline(in, line); ++row) {
    if (row < 200) {
      train_rows << line << '\n';
    } else {
      test_rows << line << '\n';
      test_rows_01 << (line[0] == '-' ? "0" : "1") << line.substr(2) << '\n';
    }
  }
  const std::string train_path = scratch("train.svm"), test_path = scratch("test.svm");
  const std::string test_path_01 = scratch("test01.svm");
  std::ofstream(train_path) << train_rows.str();
  std::ofstream(test_path) << test_rows.str();
  std::ofstream(test_path_01) << test_rows_01.str();
  for (int ranks : {1, 3}) {
    const std::string model = scratch("held-out.model"), trace = scratch("held-out.csv");
    const Output out = train(ranks, train_path, 1, true,
                             "--bias --test " + test_path_01 + " --output " + model + " --trace " + trace);
    ASSERT_EQ(out.status, 0) << out.text;
    const testing::Trace written = testing::read_trace(trace);
    EXPECT_EQ(written.header,
              "round,seconds,objective,nnz,optimality,duality_gap,relative_gap,train_logloss,train_accuracy,"
              "test_logloss,test_accuracy,test_auc,evaluated,scheduler_s,compute_s,communication_s,idle_s,"
              "scheduler_busy_s");
    ASSERT_GE(written.rows.size(), 2u);
    // At w = 0 every row is called negative and has loss log 2.
    const std::vector<double>& first = written.rows.front();
    EXPECT_NEAR(first[9], std::log(2.0), 1e-9);
    EXPECT_NEAR(first[11], 0.5, 1e-12);
    // The final model through predict (whose own metrics are checked in PredictAppliesTheModel).
    const Output predicted =
        run(std::string(SCHMP_LOGREG_BIN) + " predict --model " + model + " --data " + test_path);
    ASSERT_EQ(predicted.status, 0) << predicted.text;
    std::smatch metrics;
    ASSERT_TRUE(
        std::regex_search(predicted.text, metrics,
                          std::regex("rows 70  accuracy ([0-9.]+)  log-loss ([0-9.e-]+)  AUC ([0-9.]+)")))
        << predicted.text;
    const std::vector<double>& last = written.rows.back();
    EXPECT_NEAR(last[10], std::stod(metrics[1]), 1e-6);
    EXPECT_NEAR(last[9], std::stod(metrics[2]), 1e-5 * last[9]);
    EXPECT_NEAR(last[11], std::stod(metrics[3]), 1e-6);
    EXPECT_GT(last[11], 0.8);
  }
}

TEST_F(LogregEndToEnd, ZeroOneLabelsGiveTheSameModelAsPlusMinusOne) {
  std::ifstream in(heart());
  std::ostringstream zero_one;
  for (std::string line; std::getline(in, line);)
    zero_one << (line[0] == '-' ? "0" : "1") << line.substr(2) << '\n';
  const std::string path = scratch("heart01.svm");
  std::ofstream(path) << zero_one.str();
  const std::string model = scratch("heart01.model");
  const Output out = train(3, path, 1, true, "--output " + model);
  ASSERT_EQ(out.status, 0) << out.text;
  EXPECT_NEAR(objective_of(out), reference_objective(heart(), 1, true), 1e-6 * objective_of(out));
  std::ifstream written(model);
  std::string line;
  for (int k = 0; k < 3; ++k) std::getline(written, line);
  EXPECT_EQ(line, "label 1 0");
}

TEST_F(LogregEndToEnd, PositiveLabelNamesTheClass) {
  // Classes 2 and 7 in place of +1 and -1.
  std::ifstream in(heart());
  std::ostringstream relabelled;
  for (std::string line; std::getline(in, line);)
    relabelled << (line[0] == '-' ? "7" : "2") << line.substr(2) << '\n';
  const std::string path = scratch("heart27.svm");
  std::ofstream(path) << relabelled.str();
  const Output refused = train(3, path, 1, true, "");
  EXPECT_NE(refused.status, 0);
  EXPECT_NE(refused.text.find("schmp-logreg: error: " + path +
                              ":1: label 2 is not binary (+1/-1 or 1/0); give --positive_label"),
            std::string::npos)
      << refused.text;
  const Output out = train(3, path, 1, true, "--positive_label 2");
  ASSERT_EQ(out.status, 0) << out.text;
  EXPECT_NEAR(objective_of(out), reference_objective(heart(), 1, true), 1e-6 * objective_of(out));
}

// Refused at the first line by which both have been seen, the same however the rows are spread over the
// workers: here the 0s are all in the first half, the first -1 in the second, with more of both after.
TEST_F(LogregEndToEnd, MixedZeroAndMinusOneLabelsAreRefused) {
  const std::string path = scratch("mixed.svm");
  {
    std::ofstream out(path);
    for (int line = 1; line <= 40; ++line) {
      const char* label = line < 25 ? (line % 2 == 0 ? "0" : "1") : (line % 3 == 0 ? "-1" : "0");
      out << label << " 1:0.5 2:" << line << "\n";
    }
  }
  for (const int ranks : {1, 3, 5}) {
    testing::expect_clean_failure(train(ranks, path, 1, true, ""),
                                  "schmp-logreg: error: " + path +
                                      ":27: labels 0 and -1 both found; give --positive_label to name the "
                                      "positive class");
  }
}

// Features scaled by k with C scaled by 1/k give the same L1 problem, its objective scaled by 1/k. The
// curvature floor was an absolute 1e-12: at k = 1e-97 it swamped every curvature, and the run made no
// progress in a million rounds.
TEST_F(LogregEndToEnd, FeaturesOfAnyScaleGiveTheSameModel) {
  const double reference = reference_objective(heart(), 1, true);
  for (const double k : {1e-20, 1e-97, 1e97}) {
    const io::SparseRows rows = io::read_libsvm(heart());
    std::ostringstream text;
    text.precision(17);
    for (std::size_t r = 0; r < rows.rows(); ++r) {
      text << rows.labels[r];
      for (std::uint64_t e = rows.row_start[r]; e < rows.row_start[r + 1]; ++e)
        text << ' ' << rows.index[e] + 1 << ':' << rows.value[e] * k;
      text << '\n';
    }
    const std::string path = scratch("heart-scaled.svm");
    std::ofstream(path) << text.str();
    for (const int ranks : {1, 3}) {
      const Output out = train(ranks, path, 1 / k, true, "");
      ASSERT_EQ(out.status, 0) << out.text;
      EXPECT_NEAR(objective_of(out) * k, reference, 1e-6 * reference)
          << "features times " << k << ", " << ranks << " ranks: " << out.text;
    }
  }
}

// A MatrixMarket matrix takes its labels from --labels: a bad label is that file's, not the matrix's, and
// its line is the first bad label's whatever the rank count (the rows keep no line of the labels file).
TEST_F(LogregEndToEnd, BadLabelsOfAMatrixNameTheLabelsFile) {
  const std::string matrix = scratch("x.mtx");
  std::ofstream(matrix) << "%%MatrixMarket matrix coordinate real general\n4 2 4\n1 1 1\n2 2 1\n3 1 -1\n"
                           "4 2 1\n";
  const std::string good = scratch("good.txt");
  std::ofstream(good) << "1\n-1\n-1\n1\n";
  const std::string bad = scratch("bad.txt");
  std::ofstream(bad) << "1\n# a comment\n-1\n2\n3\n";
  const std::string mixed = scratch("mixed.txt");
  std::ofstream(mixed) << "1\n0\n-1\n1\n";
  const std::string not_binary = ":4: label 2 is not binary (+1/-1 or 1/0)";
  for (const auto& [flags, message] : std::vector<std::pair<std::string, std::string>>{
           {"--labels " + bad, bad + not_binary},
           {"--labels " + mixed, mixed + ":3: labels 0 and -1 both found"},
           {"--labels " + good + " --test " + matrix + " --test_labels " + bad, bad + not_binary},
           {"--labels " + good + " --test " + matrix + " --test_labels " + mixed,
            mixed + ":3: labels 0 and -1 both found"}}) {
    for (const int ranks : {1, 3}) {
      testing::expect_clean_failure(train(ranks, matrix, 1, true, flags), "schmp-logreg: error: " + message);
    }
  }
}

TEST_F(LogregEndToEnd, BadInputAndOptionsFailCleanly) {
  const std::string bad = scratch("bad.svm");
  std::ofstream(bad) << "1 1:0.5\n-1 2:x\n";
  const std::string mixed = scratch("mixed-test.svm");
  std::ofstream(mixed) << "1 1:0.5\n0 2:1\n-1 1:-1\n";
  const std::string model = scratch("bad.model");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--data " + bad + " --output " + model, bad + ":2: "},
      {"--data " + scratch("missing.svm"), scratch("missing.svm") + ": "},
      {"--data " + heart() + " --penalty l3", "--penalty must be l1 or l2, not 'l3'"},
      {"--data " + heart() + " --C 0", "--C must be positive and finite, not 0"},
      {"--data " + heart() + " --positive_label abc", "--positive_label must be a number, not 'abc'"},
      {"--data " + heart() + " --positive_label 2", heart() + ": no row is labelled 2 (--positive_label)"},
      {"--data " + heart() + " --test " + bad, bad + ":2: "},
      {"--data " + heart() + " --test " + mixed, mixed + ":3: labels 0 and -1 both found"},
      {"--data " + heart() + " --test " + scratch("absent.svm"), scratch("absent.svm") + ": "}};
  for (const auto& [flags, message] : cases) {
    for (int ranks : {1, 3}) {
      const Output out =
          run(mpirun(ranks) + SCHMP_LOGREG_BIN + " --layout all --progress_seconds 0 " + flags);
      testing::expect_clean_failure(out, "schmp-logreg: error: " + message);
    }
  }
  EXPECT_FALSE(std::filesystem::exists(model));
}

}  // namespace
}  // namespace schmp
