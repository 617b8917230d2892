// schmp-mf end to end under mpirun: both algorithms at 1, 3 and 5 ranks recover generated low-rank
// data down to its noise; CCD++ never raises the objective and gives the single-process result at any
// rank count; --tol compares whole iterations however often the run evaluates; cold-start users and items,
// predict and recommend agree with the model file; bad input stops every rank with one line; MovieLens
// reaches the quality the issue asks for when present.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "e2e.hpp"
#include "model.hpp"
#include "test_files.hpp"

namespace schmp {
namespace {

using testing::mpirun;
using testing::objective_of;
using testing::Output;
using testing::read_text;
using testing::read_trace;
using testing::run;

constexpr double kNoise = 0.3;

double number_after(const Output& out, const std::string& label) {
  std::smatch match;
  if (!std::regex_search(out.text, match, std::regex(label + " ([-+0-9.eE]+|nan|-nan)"))) return NAN;
  return std::stod(match[1]);
}

class MfEndToEnd : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = std::filesystem::temp_directory_path() / ("schmp-mf-e2e-" + std::to_string(::getpid()));
    std::filesystem::create_directories(scratch_);
    const Output made = run(std::string(SCHMP_GENERATE_BIN) +
                            " mf --users 1000 --items 500 --rank 4 --ratings 150000 --test_ratings 15000" +
                            " --noise " + std::to_string(kNoise) + " --seed 3 --out " + generated());
    ASSERT_EQ(made.status, 0) << made.text;
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(scratch_); }

  static std::string generated() { return (scratch_ / "ratings.txt").string(); }
  static std::string generated_test() { return generated() + ".test"; }
  static std::string scratch(const std::string& name) { return (scratch_ / name).string(); }

  static Output train(int ranks, const std::string& algorithm, const std::string& flags) {
    return run(mpirun(ranks) + SCHMP_MF_BIN + " --data " + generated() + " --test " + generated_test() +
               " --rank 4 --lambda 0.01 --algorithm " + algorithm + " --progress_seconds 0 " + flags);
  }

  static std::filesystem::path scratch_;
};

std::filesystem::path MfEndToEnd::scratch_;

struct Run {
  std::string algorithm;
  int ranks;
  bool biases = false;
};
void PrintTo(const Run& r, std::ostream* os) {
  *os << r.algorithm << " np " << r.ranks << (r.biases ? " with biases" : "");
}

class MfRuns : public MfEndToEnd, public ::testing::WithParamInterface<Run> {};

TEST_P(MfRuns, RecoversLowRankDataDownToTheNoise) {
  const Output out = train(GetParam().ranks, GetParam().algorithm,
                           std::string("--iterations 20") + (GetParam().biases ? " --biases" : ""));
  ASSERT_EQ(out.status, 0) << out.text;
  const double test_rmse = number_after(out, "test RMSE");
  EXPECT_LE(test_rmse, 1.05 * kNoise) << out.text;
  EXPECT_GE(test_rmse, 0.9 * kNoise) << out.text;  // below the noise would mean the test leaked in
}

INSTANTIATE_TEST_SUITE_P(AlgorithmsAndRanks, MfRuns,
                         ::testing::Values(Run{"ccd", 1}, Run{"ccd", 3}, Run{"ccd", 5}, Run{"sgd", 1},
                                           Run{"sgd", 3}, Run{"sgd", 5}, Run{"ccd", 3, true},
                                           Run{"sgd", 3, true}),
                         [](const ::testing::TestParamInfo<Run>& info) {
                           return info.param.algorithm + "_np" + std::to_string(info.param.ranks) +
                                  (info.param.biases ? "_biases" : "");
                         });

TEST_F(MfEndToEnd, CcdNeverRaisesTheObjectiveBetweenRounds) {
  const std::string trace = scratch("monotone.csv");
  const Output out = train(3, "ccd", "--iterations 6 --eval_every 1 --trace " + trace);
  ASSERT_EQ(out.status, 0) << out.text;
  const auto rows = read_trace(trace).rows;
  ASSERT_GE(rows.size(), 6u * 4 * 2);  // a row after every round: 6 sweeps of 4 components, 2 rounds each
  for (std::size_t r = 1; r < rows.size(); ++r) {
    EXPECT_LE(rows[r][2], rows[r - 1][2] * (1 + 1e-12)) << "round " << rows[r][0];
  }
}

TEST_F(MfEndToEnd, TolWeighsWholeIterationsWhateverTheEvaluations) {
  // Evaluated after every round, CCD++ meets rounds that update one component and lower the objective
  // very little; --tol must still compare iteration with iteration, and stop where it does without.
  const std::string flags = "--iterations 60 --tol 1e-4";
  const Output per_iteration = train(1, "ccd", flags);
  const Output per_round = train(1, "ccd", flags + " --eval_every 1");
  ASSERT_EQ(per_iteration.status, 0) << per_iteration.text;
  ASSERT_EQ(per_round.status, 0) << per_round.text;
  ASSERT_NE(per_iteration.text.find("stopped by converged"), std::string::npos) << per_iteration.text;
  ASSERT_LT(number_after(per_iteration, "iterations"), 60);
  EXPECT_EQ(number_after(per_round, "iterations"), number_after(per_iteration, "iterations"));
  EXPECT_EQ(objective_of(per_round), objective_of(per_iteration));
}

TEST_F(MfEndToEnd, CcdGivesTheSingleProcessResultAtEveryRankCount) {
  for (const std::string flags : {"--iterations 8 --seed 7", "--iterations 4 --seed 7 --biases"}) {
    const Output single = train(1, "ccd", flags);
    ASSERT_EQ(single.status, 0) << single.text;
    const double reference = objective_of(single);
    for (int ranks : {2, 3, 5}) {
      const Output out = train(ranks, "ccd", flags);
      ASSERT_EQ(out.status, 0) << out.text;
      EXPECT_NEAR(objective_of(out), reference, 1e-6 * reference) << "np " << ranks << " " << flags;
    }
  }
}

TEST_F(MfEndToEnd, BiasedModelsPredictWhatTrainingMeasured) {
  testing::ScratchDir dir;
  for (const std::string algorithm : {"ccd", "sgd"}) {
    const std::string model = dir.file(algorithm + ".model");
    const Output out = train(3, algorithm, "--iterations 4 --biases --output " + model);
    ASSERT_EQ(out.status, 0) << out.text;
    // Two more factor columns: a user row ends in (b_u + mu, 1), an item row in (1, c_j), whatever the
    // scale the solver worked in.
    EXPECT_NE(read_text(model).find("\nk 6\n"), std::string::npos);
    std::istringstream lines(read_text(model));
    int rows = 0;
    for (std::string line; std::getline(lines, line);) {
      std::istringstream fields(line);
      std::string id, trained;
      fields >> id >> trained;
      if (trained != "T" || (id[0] != 'p' && id[0] != 'q')) continue;
      std::vector<double> values;
      for (double value; fields >> value;) values.push_back(value);
      ASSERT_EQ(values.size(), 6u) << line;
      EXPECT_EQ(values[id[0] == 'p' ? 5 : 4], 1.0) << line;
      ++rows;
    }
    EXPECT_GT(rows, 0);
    const Output predicted =
        run(std::string(SCHMP_MF_BIN) + " predict --model " + model + " --data " + generated_test());
    ASSERT_EQ(predicted.status, 0) << predicted.text;
    EXPECT_NEAR(number_after(predicted, "RMSE"), number_after(out, "test RMSE"), 1e-6) << algorithm;
  }
}

TEST_F(MfEndToEnd, SameSeedSameRanksSameModel) {
  for (const std::string algorithm : {"ccd", "sgd"}) {
    const Output a = train(3, algorithm, "--iterations 3 --output " + scratch("a.model"));
    const Output b = train(3, algorithm, "--iterations 3 --output " + scratch("b.model"));
    ASSERT_EQ(a.status, 0) << a.text;
    ASSERT_EQ(b.status, 0) << b.text;
    EXPECT_EQ(read_text(scratch("a.model")), read_text(scratch("b.model"))) << algorithm;
  }
}

TEST_F(MfEndToEnd, ModelFileIsLibmfTextFormat) {
  testing::ScratchDir dir;
  // User 2 and item 1 appear in no training rating: their rows are written "F".
  const std::string data = dir.write("r.txt", "0 0 4\n0 2 3\n1 0 5\n1 2 1\n3 0 2\n3 2 4\n");
  const Output out = run(mpirun(2) + SCHMP_MF_BIN + " --data " + data +
                         " --rank 2 --lambda 0.1 --iterations 3 --biases=false" +
                         " --progress_seconds 0 --output " + dir.file("m.txt"));
  ASSERT_EQ(out.status, 0) << out.text;
  std::istringstream model(read_text(dir.file("m.txt")));
  std::vector<std::string> lines;
  for (std::string line; std::getline(model, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 5u + 4 + 3);
  EXPECT_EQ(lines[0], "f 0");
  EXPECT_EQ(lines[1], "m 4");
  EXPECT_EQ(lines[2], "n 3");
  EXPECT_EQ(lines[3], "k 2");
  EXPECT_NEAR(std::stod(lines[4].substr(2)), 19.0 / 6, 1e-12);
  EXPECT_EQ(lines[5].substr(0, 5), "p0 T ");
  EXPECT_EQ(lines[7], "p2 F 0 0");
  EXPECT_EQ(lines[10], "q1 F 0 0");
  EXPECT_EQ(lines[11].substr(0, 5), "q2 T ");
}

TEST_F(MfEndToEnd, ColdStartPredictsTheMeanAndPredictAgreesWithTraining) {
  testing::ScratchDir dir;
  // Ratings of a user and of an item the training data never saw, beside known ones.
  std::string test = read_text(generated_test()).substr(0, 2000);
  test = test.substr(0, test.rfind('\n') + 1) + "5000 1 2.5\n0 900 -1\n";
  const std::string test_file = dir.write("test.txt", test);
  const std::string model = dir.file("m.txt");
  const Output out = run(mpirun(3) + SCHMP_MF_BIN + " --data " + generated() + " --test " + test_file +
                         " --rank 4 --lambda 0.01 --iterations 5 --progress_seconds 0 --output " + model);
  ASSERT_EQ(out.status, 0) << out.text;
  const double trained_rmse = number_after(out, "test RMSE");
  ASSERT_TRUE(std::isfinite(trained_rmse)) << out.text;

  const Output predicted = run(std::string(SCHMP_MF_BIN) + " predict --model " + model + " --data " +
                               test_file + " --output " + dir.file("p.txt"));
  ASSERT_EQ(predicted.status, 0) << predicted.text;
  EXPECT_NEAR(number_after(predicted, "RMSE"), trained_rmse, 1e-6) << predicted.text;

  std::istringstream header(read_text(model));
  std::string line;
  for (int i = 0; i < 5; ++i) std::getline(header, line);
  const double mean = std::stod(line.substr(2));
  std::istringstream predictions(read_text(dir.file("p.txt")));
  std::vector<double> values;
  for (double value; predictions >> value;) values.push_back(value);
  ASSERT_GE(values.size(), 2u);
  for (double value : values) EXPECT_TRUE(std::isfinite(value));
  // Predictions are written with 10 significant digits.
  EXPECT_NEAR(values[values.size() - 2], mean, 1e-9 * std::max(1.0, std::abs(mean)));
  EXPECT_NEAR(values[values.size() - 1], mean, 1e-9 * std::max(1.0, std::abs(mean)));
}

TEST_F(MfEndToEnd, RecommendRanksTheUnratedItemsByPrediction) {
  testing::ScratchDir dir;
  const std::string model = dir.file("m.txt");
  const Output out = run(std::string(SCHMP_MF_BIN) + " --data " + generated() +
                         " --rank 4 --lambda 0.01 --iterations 3 --progress_seconds 0 --output " + model);
  ASSERT_EQ(out.status, 0) << out.text;
  const Output listed = run(std::string(SCHMP_MF_BIN) + " recommend --model " + model + " --user 7 --top 20" +
                            " --exclude " + generated());
  ASSERT_EQ(listed.status, 0) << listed.text;

  // The model by hand: user 7's factors and every item's.
  std::istringstream lines(read_text(model));
  std::vector<double> user;
  std::map<int, std::vector<double>> items;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string name;
    std::string kind;
    fields >> name >> kind;
    if (kind != "T") continue;
    std::vector<double> row;
    for (double value; fields >> value;) row.push_back(value);
    if (name == "p7") user = row;
    if (name[0] == 'q') items[std::stoi(name.substr(1))] = row;
  }
  std::set<int> rated;
  std::istringstream train(read_text(generated()));
  for (int u, j; train >> u >> j;) {
    double r;
    train >> r;
    if (u == 7) rated.insert(j);
  }
  std::vector<std::pair<double, int>> expected;
  for (const auto& [item, row] : items) {
    if (rated.count(item)) continue;
    double score = 0;
    for (std::size_t d = 0; d < row.size(); ++d) score += user[d] * row[d];
    expected.emplace_back(-score, item);
  }
  std::sort(expected.begin(), expected.end());
  std::istringstream got(listed.text);
  for (int k = 0; k < 20; ++k) {
    int item = -1;
    double score = 0;
    ASSERT_TRUE(got >> item >> score) << listed.text;
    EXPECT_EQ(item, expected[static_cast<std::size_t>(k)].second) << "rank " << k;
    EXPECT_NEAR(score, -expected[static_cast<std::size_t>(k)].first, 1e-5);
  }

  const Output unknown = run(std::string(SCHMP_MF_BIN) + " recommend --model " + model + " --user 99999");
  EXPECT_NE(unknown.status, 0);
  EXPECT_NE(unknown.text.find("beyond the model's 1000 users"), std::string::npos) << unknown.text;

  // The commands that use a model take --index_base as training does, refuse an empty ratings file
  // rather than report an RMSE of 0, and refuse an unwritable output before predicting.
  const std::string mf = std::string(SCHMP_MF_BIN);
  testing::expect_clean_failure(run(mf + " recommend --model " + model + " --user -1 --index_base -1"),
                                "schmp-mf: error: --index_base must be 0 or 1");
  const std::string empty = dir.write("empty.txt", "");
  testing::expect_clean_failure(run(mf + " predict --model " + model + " --data " + empty),
                                "schmp-mf: error: " + empty + ": ");
  testing::expect_clean_failure(
      run(mf + " predict --model " + model + " --data " + generated() + " --output " + dir.file("no/such")),
      "schmp-mf: error: " + dir.file("no/such") + ": cannot write");

  // Another mode's flags were ignored, however wrong their files: refused, in training on every rank.
  for (const auto& [command, flag] : std::vector<std::pair<std::string, std::string>>{
           {" predict --model " + model + " --data " + generated_test() + " --test " + generated_test(),
            "--test is not read by predict"},
           {" recommend --model " + model + " --user 1 --output " + dir.file("r.txt"),
            "--output is not read by recommend"},
           {" recommend --model " + model + " --user 1 --trace " + dir.file("t.csv"),
            "--trace is not read by this command"},
           // --model is what predict reads: a model to write is --output's.
           {" --data " + generated() + " --model_out " + dir.file("m.txt"),
            "unknown flag --model_out: did you mean --output?"}}) {
    testing::expect_clean_failure(run(mf + command), "schmp-mf: error: " + flag);
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("r.txt")));
  // An empty value (a wrapper passing --model="$MODEL") names no file.
  EXPECT_EQ(run(mf + " --data " + generated() + " --model= --iterations 1 --progress_seconds 0").status, 0);
  // Under Slurm, the step's task count is the rank count; a batch script's shell has the allocation's.
  const std::string top = " recommend --model " + model + " --user 1";
  EXPECT_EQ(run("SLURM_PROCID=0 SLURM_NTASKS=4 " + mf + top).status, 0);
  testing::expect_clean_failure(run("SLURM_PROCID=0 SLURM_STEP_NUM_TASKS=4 " + mf + top),
                                "schmp-mf: error: this command runs in one process, not in 4 ranks");
  for (const int ranks : {1, 3}) {
    testing::expect_clean_failure(
        run(mpirun(ranks) + mf + " --data " + generated() + " --exclude no-such.txt"),
        "schmp-mf: error: --exclude is not read in training");
  }

  // A command is one process: under mpirun every rank would do the whole work and publish the same file.
  // One rank is one process; several are refused, every rank exiting 1, before anything is written.
  const std::string predictions = dir.file("ranks.txt");
  const Output one = run(mpirun(1) + mf + " predict --model " + model + " --data " + generated_test() +
                         " --output " + predictions);
  EXPECT_EQ(one.status, 0) << one.text;
  std::filesystem::remove(predictions);
  for (const std::string& command :
       {" predict --model " + model + " --data " + generated_test() + " --output " + predictions,
        " recommend --model " + model + " --user 1"}) {
    testing::expect_clean_failure(run(mpirun(3) + mf + command),
                                  "schmp-mf: error: this command runs in one process, not in 3 ranks: start "
                                  "it without mpirun");
  }
  EXPECT_FALSE(std::filesystem::exists(predictions));
}

TEST_F(MfEndToEnd, MatrixMarketInputGivesTheSameModelAsText) {
  testing::ScratchDir dir;
  const std::string text = dir.write("r.txt", "0 0 4\n0 2 3\n1 0 5\n1 1 1\n2 1 2\n2 2 4\n");
  const std::string market = dir.write(
      "r.mtx",
      "%%MatrixMarket matrix coordinate real general\n3 3 6\n1 1 4\n1 3 3\n2 1 5\n2 2 1\n3 2 2\n3 3 4\n");
  for (const std::string& data : {text, market}) {
    const Output out =
        run(std::string(SCHMP_MF_BIN) + " --data " + data +
            " --rank 2 --lambda 0.1 --iterations 4 --progress_seconds 0 --output " + data + ".model");
    ASSERT_EQ(out.status, 0) << out.text;
  }
  EXPECT_EQ(read_text(text + ".model"), read_text(market + ".model"));
}

TEST_F(MfEndToEnd, EarlyStoppingWritesTheBestModel) {
  testing::ScratchDir dir;
  for (int ranks : {1, 3}) {
    // Rank 30 with almost no penalty on rank-4 data overfits after a few epochs.
    const std::string model = dir.file("best.model");
    const std::string trace = dir.file("best.csv");
    const Output out = train(
        ranks, "sgd",
        "--rank 30 --lambda 0.001 --iterations 200 --early_stop 3 --output " + model + " --trace " + trace);
    ASSERT_EQ(out.status, 0) << out.text;
    const double best = number_after(out, "best test RMSE");
    const double iterations = number_after(out, "iterations");
    ASSERT_LT(iterations, 200) << out.text;
    const auto rows = read_trace(trace).rows;
    double least = rows.front()[5];
    for (const auto& row : rows) least = std::min(least, row[5]);
    EXPECT_NEAR(best, least, 1e-6);
    EXPECT_GT(rows.back()[5], best);  // it stopped because the test RMSE rose
    const Output predicted =
        run(std::string(SCHMP_MF_BIN) + " predict --model " + model + " --data " + generated_test());
    EXPECT_NEAR(number_after(predicted, "RMSE"), best, 1e-6) << predicted.text;
  }
}

TEST_F(MfEndToEnd, DivergingSgdStopsWithAClearError) {
  const Output out = train(3, "sgd", "--learning_rate 20 --iterations 5");
  EXPECT_NE(out.status, 0) << out.text;
  EXPECT_NE(out.text.find("sgd diverged, lower --learning_rate"), std::string::npos) << out.text;
}

// Ratings far from zero (prices, timestamps) are fitted as well as the same ratings about zero: with
// biases the model works on ratings less their mean, in units of their spread, and that spread must
// not be lost to rounding (a sum of squares about zero would give 1e16 +- 2 for a variance of 1).
// Ratings far from 0 fit as those near it, even with a spread 1e13 times smaller than their size (1e8
// +- 1e-5): their unit is their spread, not their size.
TEST_F(MfEndToEnd, RatingsFarFromZeroFitAsWell) {
  for (const double spread : {1.0, 1e-5}) {
    std::ifstream in(generated());
    std::ostringstream near_text, far_text;
    near_text.precision(17);
    far_text.precision(17);
    for (std::string user, item; in >> user >> item;) {
      double value = 0;
      in >> value;
      near_text << user << ' ' << item << ' ' << value * spread << '\n';
      far_text << user << ' ' << item << ' ' << value * spread + 1e8 << '\n';
    }
    const std::string near = scratch("near.txt");
    const std::string far = scratch("far.txt");
    std::ofstream(near) << near_text.str();
    std::ofstream(far) << far_text.str();
    for (const std::string algorithm : {"ccd", "sgd"}) {
      for (int ranks : {1, 3}) {
        std::ostringstream flags;
        flags << " --biases --rank 4 --lambda " << 0.01 * spread
              << " --iterations 3 --progress_seconds 0 --algorithm " << algorithm;
        const Output near_zero = run(mpirun(ranks) + SCHMP_MF_BIN + " --data " + near + flags.str());
        const Output offset = run(mpirun(ranks) + SCHMP_MF_BIN + " --data " + far + flags.str());
        ASSERT_EQ(near_zero.status, 0) << near_zero.text;
        ASSERT_EQ(offset.status, 0) << offset.text;
        // At 1e8, ratings hold their 1e-5 spread to about 1.5e-8: a thousandth of it.
        const double expected = number_after(near_zero, "train RMSE");
        EXPECT_NEAR(number_after(offset, "train RMSE"), expected, spread == 1 ? 1e-6 : 1e-2 * expected)
            << algorithm << " on " << ranks << " ranks, spread " << spread;
      }
    }
  }
}

// Ratings scaled by k give the objective scaled by k^2, with --lambda scaled by k: the solvers work in
// units of the ratings' deviation. Below 1e-4 it was not: LIBMF's absolute floor on the scale left
// such ratings unscaled, and CCD made no progress from its start.
TEST_F(MfEndToEnd, RatingsOfAnyScaleGiveTheObjectiveScaled) {
  const auto scaled = [&](const std::string& from, double k) {
    std::ifstream in(from);
    std::ostringstream text;
    text.precision(17);
    for (std::string user, item; in >> user >> item;) {
      double value = 0;
      in >> value;
      text << user << ' ' << item << ' ' << value * k << '\n';
    }
    const std::string path =
        scratch("scaled-" + std::to_string(k) + "-" + std::filesystem::path(from).filename().string());
    std::ofstream(path) << text.str();
    return path;
  };
  for (const std::string algorithm : {"ccd", "sgd"}) {
    for (const int ranks : {1, 3}) {
      std::optional<double> unscaled;
      for (const double k : {1.0, 1e-5, 1e-97}) {
        std::ostringstream flags;
        flags.precision(17);
        flags << " --rank 4 --iterations 3 --progress_seconds 0 --algorithm " << algorithm << " --lambda "
              << 0.01 * k << " --data " << scaled(generated(), k);
        const Output out = run(mpirun(ranks) + SCHMP_MF_BIN + flags.str());
        ASSERT_EQ(out.status, 0) << out.text;
        const double objective = number_after(out, "objective") / (k * k);
        if (!unscaled) unscaled = objective;
        EXPECT_NEAR(objective, *unscaled, 1e-6 * *unscaled) << algorithm << " at " << k << " on " << ranks;
      }
    }
  }
}

TEST_F(MfEndToEnd, RefusesBadSettingsOnEveryRank) {
  testing::expect_settings_refused(
      "schmp-mf", std::string(SCHMP_MF_BIN) + " --data " + generated(),
      {{"--algorithm als", "--algorithm must be ccd or sgd, not 'als'"},
       {"--rank 0", "--rank must be between 1 and 10000"},
       {"--learning_rate 0", "--learning_rate must be positive and finite, not 0"},
       {"--early_stop 2", "--early_stop watches the test RMSE: it needs --test"},
       {"--schedulers 2", "--schedulers is for programs with a dynamic schedule (Lasso, logreg)"}});
  // An empty held-out file scored a perfect test RMSE of 0.
  const std::string empty = scratch("empty_test.txt");
  std::ofstream{empty};
  for (const int ranks : {1, 3}) {
    testing::expect_clean_failure(
        run(mpirun(ranks) + SCHMP_MF_BIN + " --data " + generated() + " --test " + empty + " --iterations 1"),
        "schmp-mf: error: " + empty + ": no ratings");
  }
  // A trace written over the held-out ratings would lose them.
  const std::string held_out = scratch("held_out.txt");
  std::ofstream{held_out} << "0 1 5\n";
  for (const int ranks : {1, 3}) {
    testing::expect_clean_failure(
        run(mpirun(ranks) + SCHMP_MF_BIN + " --data " + generated() + " --test " + held_out + " --trace " +
            held_out + " --iterations 1"),
        "schmp-mf: error: " + held_out + ": --trace names the file of --test, which the run would overwrite");
  }
  // Nor a checkpoint (an output the framework writes) over them.
  testing::expect_clean_failure(run(mpirun(3) + SCHMP_MF_BIN + " --data " + generated() + " --test " +
                                    held_out + " --checkpoint " + held_out + " --iterations 1"),
                                "schmp-mf: error: " + held_out +
                                    ": --checkpoint names the file of --test, which the run would overwrite");
  EXPECT_EQ(read_text(held_out), "0 1 5\n");
  // A held-out rating given twice counted twice in the test RMSE; it is refused as in training.
  const std::string twice = scratch("twice_test.txt");
  std::ofstream{twice} << "3 4 2\n0 1 5\n7 2 1\n0 1 4\n";
  for (const int ranks : {1, 3}) {
    testing::expect_clean_failure(
        run(mpirun(ranks) + SCHMP_MF_BIN + " --data " + generated() + " --test " + twice + " --iterations 1"),
        "schmp-mf: error: " + twice + ":4: duplicate rating of user 0 for item 1 (first on line 2)");
  }
}

class MfBadInput : public ::testing::TestWithParam<testing::BadInput> {};

TEST_P(MfBadInput, StopsEveryRankWithOneLine) {
  testing::ScratchDir dir;
  const std::string data = dir.write("bad.txt", GetParam().content);
  for (int ranks : {1, 3}) {
    const Output out =
        run(mpirun(ranks) + SCHMP_MF_BIN + " --data " + data + " --progress_seconds 0 " + GetParam().flags);
    testing::expect_clean_failure(out, "schmp-mf: error: " + data + GetParam().message);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, MfBadInput,
    ::testing::Values(
        testing::BadInput{"duplicate", "0 1 3\n1 2 4\n0 1 5\n", "",
                          ":3: duplicate rating of user 0 for item 1 (first on line 1)"},
        // A MatrixMarket file's ids are 1-based, and named so, whatever --index_base says.
        testing::BadInput{"duplicate_matrix_market",
                          "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 2 4\n2 2 1\n1 2 5\n", "",
                          ":5: duplicate rating of user 1 for item 2 (first on line 3)"},
        testing::BadInput{"negative_id", "0 1 3\n-1 2 4\n", "", ":2: negative user id -1"},
        testing::BadInput{"non_numeric", "0 1 3\n1 2 abc\n", "", ":2: non-numeric rating 'abc'"},
        testing::BadInput{"not_finite", "0 1 3\n1 2 nan\n", "", ":2: rating is not finite"},
        testing::BadInput{"too_large", "0 1 3\n1 2 1e200\n", "", ":2: rating 1e200 too large"},
        testing::BadInput{"missing_field", "0 1 3\n1 2\n", "", ":2: expected 'user item rating'"},
        testing::BadInput{"extra_field", "0 1 3 881250949\n", "", ":1: unexpected '881250949'"},
        testing::BadInput{"zero_when_one_based", "1 1 3\n0 2 4\n", "--index_base 1",
                          ":2: user id 0 (ids are 1-based"},
        testing::BadInput{"beyond_bound", "0 1 3\n1 7 4\n", "--items 5", ":2: item id 7 beyond the bound"},
        testing::BadInput{"empty", "# nothing\n", "", ": no ratings"},
        // About 680 GB on the first rank at the default rank 10: refused at its line, not killed part way.
        testing::BadInput{"id_beyond_memory", "0 1 3\n2 2000000000 4\n", "", ":2: item id 2000000000, at "},
        // The entries short of the size line's count lie in different workers' ranges at 3 ranks.
        testing::BadInput{"matrix_market_count",
                          "%%MatrixMarket matrix coordinate real general\n3 3 4\n1 1 5\n2 2 3\n3 3 1\n", "",
                          ":2: size line declares 4 entries but the file has 3"}),
    testing::bad_input_name);

// Implicit feedback: counts of a few hundred users for a hundred items, drawn with a popularity skew,
// and a held-out share of each user's items.
class MfImplicit : public ::testing::Test {
 protected:
  // Popular items (low ids) and like-minded users (u mod 3 with j mod 3) meet more often.
  static double interaction_chance(int u, int j) {
    return 0.2 / (1 + j / 10.0) + (u % 3 == j % 3 ? 0.25 : 0.0);
  }

  static void SetUpTestSuite() {
    dir_ = std::filesystem::temp_directory_path() / ("schmp-mf-implicit-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    std::mt19937_64 random(8);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    std::geometric_distribution<int> count(0.4);
    std::string train, test;
    for (int u = 0; u < 120; ++u) {
      for (int j = 0; j < 70; ++j) {
        const double chance = interaction_chance(u, j);
        if (uniform(random) >= chance) continue;
        const std::string line =
            std::to_string(u) + " " + std::to_string(j) + " " + std::to_string(1 + count(random)) + "\n";
        (uniform(random) < 0.2 ? test : train) += line;
      }
    }
    train_ = write("train.txt", train);
    test_ = write("test.txt", test);
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }

  static std::string file(const std::string& name) { return (dir_ / name).string(); }
  static std::string write(const std::string& name, const std::string& content) {
    std::ofstream(file(name)) << content;
    return file(name);
  }

  static Output train(int ranks, const std::string& flags) {
    return run(mpirun(ranks) + SCHMP_MF_BIN + " --data " + train_ +
               " --implicit --rank 5 --lambda 0.5 --alpha 3 --progress_seconds 0 " + flags);
  }

  // The objective of a model file by brute force over every cell (mf.hpp), the counts' confidence
  // linear in alpha.
  static double dense_objective(const std::string& model_path, double alpha, double lambda) {
    const mf::Model model = mf::read_model(model_path);
    std::map<std::pair<std::uint32_t, std::uint32_t>, double> counts;
    std::ifstream in(train_);
    for (std::uint32_t u, j; in >> u >> j;) in >> counts[{u, j}];
    double sum = 0;
    const auto k = static_cast<std::size_t>(model.rank);
    for (std::uint32_t u = 0; u < model.users; ++u) {
      for (std::uint32_t j = 0; j < model.items; ++j) {
        double fit = 0;
        for (std::size_t d = 0; d < k; ++d)
          fit += model.user_factors[u * k + d] * model.item_factors[j * k + d];
        const auto found = counts.find({u, j});
        const double c = found == counts.end() ? 1.0 : 1 + alpha * found->second;
        sum += c * std::pow((found == counts.end() ? 0.0 : 1.0) - fit, 2);
      }
    }
    for (const double w : model.user_factors) sum += lambda * w * w;
    for (const double h : model.item_factors) sum += lambda * h * h;
    return sum;
  }

  static std::filesystem::path dir_;
  static std::string train_, test_;
};

std::filesystem::path MfImplicit::dir_;
std::string MfImplicit::train_, MfImplicit::test_;

// Blocks of one column (CCD++), of two (the last one narrower) and of the whole rank (ALS).
TEST_F(MfImplicit, ObjectiveIsTheDenseOneAndAgreesAtEveryRankCount) {
  for (const int block_size : {1, 2, 5}) {
    std::optional<double> single;
    for (const int ranks : {1, 3, 5}) {
      SCOPED_TRACE("--block_size " + std::to_string(block_size) + " on " + std::to_string(ranks) + " ranks");
      const std::string model = file("implicit-" + std::to_string(ranks) + ".txt");
      const std::string trace = file("implicit-" + std::to_string(ranks) + ".csv");
      const Output out =
          train(ranks, "--iterations 6 --eval_every 1 --block_size " + std::to_string(block_size) +
                           " --output " + model + " --trace " + trace);
      ASSERT_EQ(out.status, 0) << out.text;
      const double objective = objective_of(out);
      EXPECT_NEAR(dense_objective(model, 3, 0.5), objective, 1e-9 * objective);
      if (!single) single = objective;
      EXPECT_NEAR(objective, *single, 1e-9 * *single);
      EXPECT_EQ(read_text(model).substr(0, 5), "f 12\n");
      // Every round is an exact minimisation: the objective never rises.
      const auto rows = read_trace(trace).rows;
      const std::size_t blocks = (5 + block_size - 1) / block_size;
      ASSERT_GE(rows.size(), 6 * blocks * 2);
      for (std::size_t r = 1; r < rows.size(); ++r)
        EXPECT_LE(rows[r][2], rows[r - 1][2] * (1 + 1e-12)) << "round " << rows[r][0];
    }
  }
}

// The ranking metrics of the trace are predict's on the same model, and those of a ranking made here.
TEST_F(MfImplicit, RankingMetricsMatchPredictAndBruteForce) {
  const std::string model = file("ranked.txt");
  const Output out = train(3, "--iterations 8 --top 7 --test " + test_ + " --output " + model);
  ASSERT_EQ(out.status, 0) << out.text;
  const Output predicted = run(std::string(SCHMP_MF_BIN) + " predict --model " + model + " --data " + test_ +
                               " --exclude " + train_ + " --top 7");
  ASSERT_EQ(predicted.status, 0) << predicted.text;
  // A held-out pair on several lines is one interaction there too.
  const Output doubled =
      run(std::string(SCHMP_MF_BIN) + " predict --model " + model + " --data " +
          write("test_twice.txt", read_text(test_) + read_text(test_)) + " --exclude " + train_ + " --top 7");
  ASSERT_EQ(doubled.status, 0) << doubled.text;
  EXPECT_EQ(doubled.text, predicted.text);
  const mf::Model m = mf::read_model(model);
  std::map<std::uint32_t, std::set<std::uint32_t>> seen, held;
  for (const auto& [path, into] : {std::pair{train_, &seen}, std::pair{test_, &held}}) {
    std::ifstream in(path);
    for (std::uint32_t u, j; in >> u >> j;) {
      double count = 0;
      in >> count;
      (*into)[u].insert(j);
    }
  }
  double users = 0, precision = 0, recall = 0, ndcg = 0, map = 0, best_recall = 0;
  for (auto& [u, items] : held) {
    for (const std::uint32_t j : seen[u]) items.erase(j);
    if (items.empty() || seen[u].empty()) continue;
    std::vector<std::pair<double, std::uint32_t>> scored;
    for (std::uint32_t j = 0; j < m.items; ++j) {
      if (m.item_known[j] && !seen[u].count(j)) scored.push_back({-m.predict(u, j), j});
    }
    std::sort(scored.begin(), scored.end());
    // The list the data's own chances would make.
    std::vector<std::pair<double, std::uint32_t>> truth;
    for (const auto& [score, j] : scored)
      truth.push_back({-interaction_chance(static_cast<int>(u), static_cast<int>(j)), j});
    std::sort(truth.begin(), truth.end());
    for (std::size_t i = 0; i < 7 && i < truth.size(); ++i)
      best_recall += items.count(truth[i].second) / static_cast<double>(items.size());
    double hits = 0, dcg = 0, ideal = 0, precisions = 0;
    for (std::size_t i = 0; i < 7 && i < scored.size(); ++i) {
      if (!items.count(scored[i].second)) continue;
      hits += 1;
      dcg += 1 / std::log2(i + 2.0);
      precisions += hits / (i + 1.0);
    }
    const std::size_t best = std::min<std::size_t>(7, items.size());
    for (std::size_t i = 0; i < best; ++i) ideal += 1 / std::log2(i + 2.0);
    users += 1;
    precision += hits / 7;
    recall += hits / static_cast<double>(items.size());
    ndcg += dcg / ideal;
    map += precisions / static_cast<double>(best);
  }
  ASSERT_GT(users, 50);
  for (const auto& [label, expected] : {std::pair{"precision@7", precision / users},
                                        {"recall@7", recall / users},
                                        {"nDCG@7", ndcg / users},
                                        {"MAP@7", map / users}}) {
    EXPECT_NEAR(number_after(out, label), expected, 1e-5) << label;
    EXPECT_NEAR(number_after(predicted, label), expected, 1e-5) << label;
  }
  EXPECT_EQ(number_after(predicted, "users"), users);
  // A fitted model finds the users' communities: its lists recall most of what the data's chances do
  // (a random list, about 0.4 of it).
  EXPECT_GT(number_after(out, "recall@7"), 0.6 * best_recall / users) << best_recall / users;
}

// Interactions given as events, a line each, fit as their counts summed.
TEST_F(MfImplicit, RepeatedPairsAddUpTheirCounts) {
  std::ifstream in(train_);
  std::string events;
  for (std::string user, item; in >> user >> item;) {
    int count = 0;
    in >> count;
    for (int e = 0; e < count; ++e) events += user + " " + item + " 1\n";
  }
  const std::string logged = write("events.txt", events);
  for (const int ranks : {1, 3}) {
    const Output counted = train(ranks, "--iterations 3 --output " + file("counted.txt"));
    const Output summed =
        run(mpirun(ranks) + SCHMP_MF_BIN + " --data " + logged +
            " --implicit --rank 5 --lambda 0.5 --alpha 3 --progress_seconds 0 --iterations 3 --output " +
            file("summed.txt"));
    ASSERT_EQ(counted.status, 0) << counted.text;
    ASSERT_EQ(summed.status, 0) << summed.text;
    EXPECT_EQ(read_text(file("summed.txt")), read_text(file("counted.txt"))) << ranks << " ranks";
  }
}

TEST_F(MfImplicit, MistakesAreOneLineOnEveryRank) {
  testing::expect_settings_refused("schmp-mf", std::string(SCHMP_MF_BIN) + " --data " + train_,
                                   {{"--implicit --algorithm sgd", "--implicit is fitted by --algorithm ccd"},
                                    {"--implicit --biases", "--implicit fits no biases"},
                                    {"--alpha 2", "--alpha is not read in training without --implicit"}});
  const std::string negative = write("negative.txt", "0 1 3\n1 2 -1\n");
  const std::string ones = write("ones.txt", "0 1 1\n1 2 1\n2 0 1\n");
  for (const int ranks : {1, 3}) {
    testing::expect_clean_failure(run(mpirun(ranks) + SCHMP_MF_BIN + " --implicit --data " + negative),
                                  "schmp-mf: error: " + negative + ":2: negative count -1");
    // Interactions given as ratings: they used to stop sgd with "diverged" after an iteration. (Both
    // algorithms meet the check in one place.)
    const std::string algorithm = ranks == 1 ? "sgd" : "ccd";
    testing::expect_clean_failure(
        run(mpirun(ranks) + SCHMP_MF_BIN + " --algorithm " + algorithm + " --data " + ones),
        "schmp-mf: error: " + ones +
            ": every rating is 1, which leaves the factors nothing to fit; for "
            "interactions (clicks, plays, a 1 where something happened) use --implicit");
  }
  const std::string model = write("one_class.txt", "f 12\nm 1\nn 1\nk 1\nb 0\np0 T 1\nq0 T 1\n");
  testing::expect_clean_failure(
      run(std::string(SCHMP_MF_BIN) + " predict --model " + model + " --data " + test_),
      "schmp-mf: error: predict of an implicit model ranks items: --exclude names the training interactions");
}

TEST(MfMovielens, RankTenReachesTheIssuesQuality) {
  const std::string dir = std::string(SCHMP_SHARED_DATA) + "/mf/movielens_small";
  if (!std::filesystem::exists(dir + "/ratings_train.txt")) GTEST_SKIP() << "no " << dir;
  // Predicting the global mean gives 1.061; the issue asks for at most 0.92 with rank 10. With biases,
  // rank 10 does better than LIBMF's best over a grid (0.8960).
  const std::vector<std::pair<std::string, double>> cases{
      {"--algorithm ccd --lambda 0.15 --iterations 30 --biases=false", 0.92},
      {"--algorithm sgd --lambda 0.1 --iterations 30 --biases=false", 0.92},
      {"--algorithm ccd --lambda 0.15 --iterations 10 --biases", 0.895}};
  for (const auto& [settings, bound] : cases) {
    const Output out = run(std::string(SCHMP_MF_BIN) + " --data " + dir + "/ratings_train.txt --test " + dir +
                           "/ratings_test.txt --rank 10 --progress_seconds 0 " + settings);
    ASSERT_EQ(out.status, 0) << out.text;
    EXPECT_LE(number_after(out, "test RMSE"), bound) << settings << "\n" << out.text;
  }
}

// Default flags give a good model on MovieLens without tuning (docs/mf.md says how they were chosen):
// LIBMF's best over a grid is 0.896, and the model written is the last iteration's, with no early stop.
TEST(MfMovielens, DefaultsReachLibmfsBest) {
  const std::string dir = std::string(SCHMP_SHARED_DATA) + "/mf/movielens_small";
  if (!std::filesystem::exists(dir + "/ratings_train.txt")) GTEST_SKIP() << "no " << dir;
  for (const int ranks : {1, 3}) {
    const Output out = run(mpirun(ranks) + SCHMP_MF_BIN + " --data " + dir + "/ratings_train.txt --test " +
                           dir + "/ratings_test.txt --progress_seconds 0");
    ASSERT_EQ(out.status, 0) << out.text;
    EXPECT_LE(number_after(out, "test RMSE"), 0.895) << out.text;
  }
}

}  // namespace
}  // namespace schmp
