// schmp-lasso end to end under mpirun: every rank count, scheduler count and staleness reaches the
// objective and the nonzero pattern of a tight single-process reference; bad input fails cleanly on
// every rank with one message naming the file and line.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>

#include "e2e.hpp"
#include "folds.hpp"
#include "lasso_reference.hpp"
#include "schmp/io.hpp"
#include "test_files.hpp"

namespace schmp {
namespace {

using testing::Layout;
using testing::layout_flags;
using testing::mpirun;
using testing::objective_of;
using testing::Output;
using testing::rows_where;
using testing::run;
using testing::specified_folds;

// The coefficients of a model file, by 0-based index; its intercept line is read_intercept's.
std::map<std::size_t, double> read_model(const std::string& path) {
  std::map<std::size_t, double> beta;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line.rfind("intercept ", 0) == 0) continue;
    std::istringstream fields(line);
    std::size_t index = 0;
    double value = 0;
    if (fields >> index >> value) beta[index - 1] = value;  // not a path's "lambda L" line
  }
  return beta;
}

double read_intercept(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("intercept ", 0) == 0) return std::stod(line.substr(10));
  }
  ADD_FAILURE() << path << " has no intercept line";
  return NAN;
}

// Coefficients that matter: larger than a millionth of the largest.
std::set<std::size_t> support(const std::map<std::size_t, double>& beta) {
  double largest = 0;
  for (const auto& [j, b] : beta) largest = std::max(largest, std::abs(b));
  std::set<std::size_t> s;
  for (const auto& [j, b] : beta) {
    if (std::abs(b) > 1e-6 * largest) s.insert(j);
  }
  return s;
}

std::map<std::size_t, double> as_map(const std::vector<double>& beta) {
  std::map<std::size_t, double> m;
  for (std::size_t j = 0; j < beta.size(); ++j) {
    if (beta[j] != 0) m[j] = beta[j];
  }
  return m;
}

struct Dataset {
  std::string name;
  std::string path;
  double lambda_ratio;
};
void PrintTo(const Dataset& d, std::ostream* os) { *os << d.name; }

class LassoEndToEnd : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = std::filesystem::temp_directory_path() / ("schmp-lasso-e2e-" + std::to_string(::getpid()));
    std::filesystem::create_directories(scratch_);
    const std::string generated = (scratch_ / "generated.svm").string();
    const Output made = run(std::string(SCHMP_GENERATE_BIN) + " lasso --rows 300 --cols 1200 --density 0.03" +
                            " --support 40 --noise 0.5 --seed 3 --out " + generated);
    ASSERT_EQ(made.status, 0) << made.text;
    // The hard shapes: neighbouring columns with correlation 0.99, as in spectra; and 396 nonzeros at
    // the optimum out of 600 columns and 500 rows.
    for (const auto& [name, shape] :
         {std::pair{"correlated", "--rows 60 --cols 120 --correlation 0.99 --support 10 --seed 4"},
          std::pair{"active", "--rows 500 --cols 600 --density 0.05 --support 400 --seed 5"}}) {
      const Output hard = run(std::string(SCHMP_GENERATE_BIN) + " lasso " + shape + " --noise 0.1 --out " +
                              (scratch_ / (std::string(name) + ".svm")).string());
      ASSERT_EQ(hard.status, 0) << hard.text;
    }
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(scratch_); }

  static Dataset diabetes() {
    return {"diabetes", std::string(SCHMP_SOURCE_DIR) + "/data/diabetes.svm", 0.01};
  }
  static Dataset generated() { return {"generated", (scratch_ / "generated.svm").string(), 0.05}; }
  static Dataset correlated() { return {"correlated", (scratch_ / "correlated.svm").string(), 0.01}; }
  static Dataset active() { return {"active", (scratch_ / "active.svm").string(), 0.01}; }

  // Runs schmp-lasso to --tol `tol` and checks it against the reference solution of the same data, with
  // an intercept unless the flags say --fit_intercept=false.
  static void expect_matches_reference(const Dataset& data, int ranks, const std::string& flags,
                                       double tol = 1e-10, double l1_ratio = 1) {
    const bool intercept = flags.find("--fit_intercept=false") == std::string::npos;
    const testing::LassoSolution reference =
        testing::solve_lasso_reference(io::read_libsvm(data.path), data.lambda_ratio, intercept, l1_ratio);
    const std::string model = (scratch_ / (data.name + "-model.txt")).string();
    const std::string trace = (scratch_ / (data.name + "-trace.csv")).string();
    std::filesystem::remove(model);
    const Output out = run(mpirun(ranks) + SCHMP_LASSO_BIN + " --layout all --data " + data.path +
                           " --lambda_ratio " + std::to_string(data.lambda_ratio) + " --l1_ratio " +
                           testing::number(l1_ratio) + " --tol " + testing::number(tol) + " --output " +
                           model + " --trace " + trace + " --progress_seconds 0 " + flags);
    ASSERT_EQ(out.status, 0) << out.text;
    EXPECT_NE(out.text.find("schmp-lasso: converged after"), std::string::npos) << out.text;
    testing::expect_time_split(out);
    const double objective = objective_of(out);
    EXPECT_NEAR(objective, reference.objective, 1e-6 * reference.objective) << out.text;
    EXPECT_EQ(support(read_model(model)), support(as_map(reference.beta))) << out.text;
    // The intercept's error is of the coefficients' order: within the gap's reach of the reference's.
    EXPECT_NEAR(read_intercept(model), reference.intercept, 1e-4 * (1 + std::abs(reference.intercept)));
    if (!intercept) {
      EXPECT_EQ(read_intercept(model), 0.0);
    }
    const testing::Trace written = testing::read_trace(trace);
    EXPECT_EQ(written.header,
              "round,seconds,objective,duality_gap,relative_gap,nnz,active,evaluated,scheduler_s,compute_s,"
              "communication_s,idle_s,scheduler_busy_s");
    ASSERT_GE(written.rows.size(), 2u);
    // The last row is the final state: the objective printed, with the gap under the tolerance.
    const std::vector<double>& fields = written.rows.back();
    ASSERT_EQ(fields.size(), 13u);
    EXPECT_NEAR(fields[2], objective, 1e-9 * std::abs(objective));
    EXPECT_LE(fields[4], tol);
    // The gap is a bound at every evaluation, full or over a working set: the objective less the gap is
    // a dual value, which no primal point beats.
    for (const std::vector<double>& row : written.rows)
      EXPECT_LE(row[2] - row[3], reference.objective * (1 + 1e-12)) << out.text;
    // Some scheduler, hosted or a rank of its own, built every block: its work took time, within the solve.
    EXPECT_GT(fields[12], 0.0);
    EXPECT_LE(fields[12], fields[1]);
  }

  static std::filesystem::path scratch_;
};

std::filesystem::path LassoEndToEnd::scratch_;

class LassoLayouts : public LassoEndToEnd, public ::testing::WithParamInterface<Layout> {};

TEST_P(LassoLayouts, BundledRealDataMatchesReference) {
  expect_matches_reference(diabetes(), GetParam().ranks, layout_flags(GetParam()));
}

TEST_P(LassoLayouts, GeneratedSparseDataMatchesReference) {
  expect_matches_reference(generated(), GetParam().ranks, layout_flags(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(RanksSchedulersStaleness, LassoLayouts,
                         ::testing::Values(Layout{1, 1, 0}, Layout{1, 2, 2}, Layout{3, 1, 0}, Layout{3, 1, 2},
                                           Layout{3, 2, 0}, Layout{3, 2, 2}, Layout{5, 1, 0}, Layout{5, 1, 2},
                                           Layout{5, 2, 0}, Layout{5, 2, 2}),
                         testing::layout_name);

TEST_F(LassoEndToEnd, HardShapesMatchTheReference) {
  for (const Dataset& data : {correlated(), active()}) {
    for (const int ranks : {1, 3}) {
      SCOPED_TRACE(data.name + ", np " + std::to_string(ranks));
      expect_matches_reference(data, ranks, "", 1e-8);
    }
  }
}

// Between full evaluations, evaluations cover only a working set a quarter of the live coefficients or
// fewer; the solution stays the reference's, at one rank and at three.
TEST_F(LassoEndToEnd, WorkingSetsKeepTheSolution) {
  for (const int ranks : {1, 3}) {
    SCOPED_TRACE("np " + std::to_string(ranks));
    expect_matches_reference(generated(), ranks, "", 1e-9);
    const testing::Trace written = testing::read_trace((scratch_ / "generated-trace.csv").string());
    // `active` counts the live coefficients after the row's evaluation retired some; `evaluated` what
    // the evaluation covered, of those live before it.
    bool scoped = false, full_after_scoped = false;
    double live_before = written.rows.front()[7];
    for (const std::vector<double>& row : written.rows) {
      const double evaluated = row[7];
      EXPECT_LE(evaluated, live_before);
      if (evaluated < live_before) {
        EXPECT_LE(4 * evaluated, live_before);
        scoped = true;
      } else {
        full_after_scoped = full_after_scoped || scoped;
      }
      live_before = row[6];
    }
    EXPECT_TRUE(scoped);
    EXPECT_TRUE(full_after_scoped);  // the run converged at a full evaluation after scoped ones
  }
}

// Steps from the Gram matrix over the support keep the solution at one, three and five ranks, with a
// cache too small for the whole support too.
TEST_F(LassoEndToEnd, StepsFromTheGramMatrixKeepTheSolution) {
  for (const int ranks : {1, 3, 5}) {
    SCOPED_TRACE("np " + std::to_string(ranks));
    expect_matches_reference(active(), ranks, "--newton_steps hessian", 1e-8);
    expect_matches_reference(correlated(), ranks, "--newton_steps hessian", 1e-8);
  }
  expect_matches_reference(generated(), 3, "--newton_steps hessian --max_hessian 16", 1e-8);
  expect_matches_reference(active(), 1, "--newton_steps auto --max_hessian 100", 1e-8);
}

// On strongly correlated columns, where coordinate descent creeps, steps from the Gram matrix taken at
// every evaluation reach the solution in a fraction of the rounds. So do those the default takes once
// the rounds' pace says they pay, on a set too small to form a working set (120 columns), whose pace
// starts once the support has settled.
TEST_F(LassoEndToEnd, StepsFromTheGramMatrixTakeAFractionOfTheRounds) {
  const auto rounds_of = [](const Dataset& data) {
    return testing::read_trace((scratch_ / (data.name + "-trace.csv")).string()).rows.back()[0];
  };
  for (const int ranks : {1, 3}) {
    SCOPED_TRACE("np " + std::to_string(ranks));
    expect_matches_reference(correlated(), ranks, "--newton_steps hessian", 1e-8);
    const double from_support = rounds_of(correlated());
    expect_matches_reference(correlated(), ranks, "--newton_steps auto", 1e-8);
    const double paced = rounds_of(correlated());
    expect_matches_reference(correlated(), ranks, "--newton_steps rounds", 1e-8);
    EXPECT_LT(5 * from_support, rounds_of(correlated()));
    EXPECT_LT(3 * paced, rounds_of(correlated()));
  }
}

// A --tol below the rounding of the gap's sums (but not below a double's precision, which asks for no
// stop) ends the run there, converged, with a note that says so, instead of running to --max_rounds.
TEST_F(LassoEndToEnd, AToleranceBelowTheRoundingFloorStopsThere) {
  const testing::LassoSolution reference =
      testing::solve_lasso_reference(io::read_libsvm(diabetes().path), diabetes().lambda_ratio);
  const Output out = run(std::string(SCHMP_LASSO_BIN) + " --data " + diabetes().path +
                         " --lambda_ratio 0.01 --tol 1e-15 --max_rounds 100000 --progress_seconds 0");
  ASSERT_EQ(out.status, 0) << out.text;
  EXPECT_NE(out.text.find("schmp-lasso: converged after"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("the gap is down to the rounding of its sums over 442 rows"), std::string::npos)
      << out.text;
  EXPECT_NEAR(objective_of(out), reference.objective, 1e-11 * reference.objective) << out.text;  // as printed
}

TEST_F(LassoEndToEnd, ALayoutThatCostsMoreThanItBringsIsNamedAtStartUp) {
  const auto note = [](int ranks) {
    const Output out = run(mpirun(ranks) + SCHMP_LASSO_BIN + " --layout all --data " + diabetes().path +
                           " --progress_seconds 0");
    EXPECT_EQ(out.status, 0) << out.text;
    return out.text;
  };
  EXPECT_EQ(note(1).find("note:"), std::string::npos);
  EXPECT_NE(note(2).find("schmp-lasso: note: 2 ranks make one worker; one process (mpirun -np 1)"),
            std::string::npos);
  // Five ranks make three workers; they note the cores only where there are fewer than five.
  const bool crowded = std::thread::hardware_concurrency() < 5;
  EXPECT_EQ(note(5).find("schmp-lasso: note: 5 ranks share") != std::string::npos, crowded);
}

// Where its ranks cannot pay (one worker, or more ranks than cores on one host), the job runs as one
// process on rank 0: the model of mpirun -np 1, said in one line; a bad input still stops every rank.
TEST_F(LassoEndToEnd, AJobWhoseRanksCannotPayRunsAsOneProcess) {
  const auto solve = [&](int ranks, const std::string& name) {
    const std::string model = (scratch_ / name).string();
    const Output out = run(mpirun(ranks) + SCHMP_LASSO_BIN + " --data " + generated().path +
                           " --lambda_ratio 0.05 --progress_seconds 0 --output " + model);
    EXPECT_EQ(out.status, 0) << out.text;
    return std::make_pair(out.text, testing::read_text(model));
  };
  const auto [alone_text, alone] = solve(1, "one.model");
  EXPECT_EQ(alone_text.find("note:"), std::string::npos) << alone_text;
  const auto [two_text, two] = solve(2, "two.model");
  EXPECT_NE(two_text.find("schmp-lasso: note: 2 ranks would make one worker: rank 0 runs the job alone"),
            std::string::npos)
      << two_text;
  EXPECT_EQ(two, alone);
  if (std::thread::hardware_concurrency() < 5) {
    const auto [five_text, five] = solve(5, "five.model");
    EXPECT_NE(five_text.find("schmp-lasso: note: 5 ranks would share"), std::string::npos) << five_text;
    EXPECT_EQ(five, alone);
  }
  testing::expect_clean_failure(run(mpirun(4) + SCHMP_LASSO_BIN + " --data no-such-data.svm"),
                                "schmp-lasso: error: no-such-data.svm");
}

TEST_F(LassoEndToEnd, PlainParallelCoordinateDescentStillConverges) {
  expect_matches_reference(generated(), 3, "--priority=false --rho 1");
}

TEST_F(LassoEndToEnd, MatrixMarketInputGivesTheSameModel) {
  // diabetes.svm rewritten as a MatrixMarket matrix with its labels beside it.
  const io::SparseRows rows = io::read_libsvm(diabetes().path);
  const std::string matrix = (scratch_ / "diabetes.mtx").string();
  const std::string labels = (scratch_ / "diabetes.labels").string();
  {
    std::ofstream mtx(matrix), y(labels);
    mtx << "%%MatrixMarket matrix coordinate real general\n% written by the test\n"
        << rows.rows() << ' ' << rows.columns() << ' ' << rows.index.size() << '\n';
    mtx.precision(17);
    y.precision(17);
    // Column-major order, to show that entries may come in any order.
    for (std::uint32_t j = 0; j < rows.columns(); ++j) {
      for (std::size_t i = 0; i < rows.rows(); ++i) {
        for (std::size_t e = rows.row_start[i]; e < rows.row_start[i + 1]; ++e) {
          if (rows.index[e] == j) mtx << i + 1 << ' ' << j + 1 << ' ' << rows.value[e] << '\n';
        }
      }
    }
    for (double label : rows.labels) y << label << '\n';
  }
  const testing::LassoSolution reference = testing::solve_lasso_reference(rows, 0.01);
  const std::string model = (scratch_ / "diabetes-mtx.model").string();
  // One worker, and three that each read a third of the entries and hand them to their rows' workers.
  for (const int ranks : {3, 5}) {
    const Output out =
        run(mpirun(ranks) + SCHMP_LASSO_BIN + " --layout all --data " + matrix + " --labels " + labels +
            " --lambda_ratio 0.01 --tol 1e-10 --progress_seconds 0 --output " + model);
    ASSERT_EQ(out.status, 0) << out.text;
    EXPECT_NEAR(objective_of(out), reference.objective, 1e-6 * reference.objective) << ranks << " ranks";
    EXPECT_EQ(support(read_model(model)), support(as_map(reference.beta))) << ranks << " ranks";
  }

  // Errors only the workers together can see: an entry repeated far apart, a count the size line
  // does not match.
  const std::string text = testing::read_text(matrix);
  std::istringstream in(text);
  std::string first_entry;
  for (int line = 0; line < 4; ++line) std::getline(in, first_entry);  // after the 3 header lines
  ASSERT_EQ(first_entry.substr(0, 4), "1 1 ");
  const std::string repeated = (scratch_ / "repeated.mtx").string();
  const std::string size_line = std::to_string(rows.rows()) + ' ' + std::to_string(rows.columns()) + ' ' +
                                std::to_string(rows.index.size());
  std::string counted_again = text;
  counted_again.replace(text.find(size_line), size_line.size(),
                        std::to_string(rows.rows()) + ' ' + std::to_string(rows.columns()) + ' ' +
                            std::to_string(rows.index.size() + 1));
  std::ofstream(repeated) << counted_again << first_entry << '\n';
  const auto lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  const std::string miscounted = (scratch_ / "miscounted.mtx").string();
  std::string short_text = text.substr(0, text.rfind('\n', text.size() - 2) + 1);
  std::ofstream(miscounted) << short_text;
  for (const auto& [path, message] :
       {std::pair{repeated, ":" + std::to_string(lines + 1) + ": duplicate entry (1, 1)"},
        std::pair{miscounted, ":3: size line declares " + std::to_string(rows.index.size()) +
                                  " entries but the file has " + std::to_string(rows.index.size() - 1)}}) {
    const Output out = run(mpirun(5) + SCHMP_LASSO_BIN + " --layout all --data " + path + " --labels " +
                           labels + " --lambda_ratio 0.01 --progress_seconds 0");
    testing::expect_clean_failure(out, "schmp-lasso: error: " + path + message);
  }
}

TEST_F(LassoEndToEnd, WithoutAnInterceptMatchesTheReference) {
  for (const int ranks : {1, 3, 5}) {
    SCOPED_TRACE("np " + std::to_string(ranks));
    expect_matches_reference(generated(), ranks, "--fit_intercept=false");
    expect_matches_reference(diabetes(), ranks, "--fit_intercept=false");
  }
}

// The elastic net, at L1 shares from mostly ridge to mostly Lasso, on dense and sparse data; and ridge
// regression alone, whose gap comes from the conjugate dual point only.
TEST_F(LassoEndToEnd, ElasticNetMatchesTheReference) {
  for (const int ranks : {1, 3, 5}) {
    for (const double l1_ratio : {0.5, 0.1}) {
      SCOPED_TRACE("np " + std::to_string(ranks) + ", l1_ratio " + std::to_string(l1_ratio));
      expect_matches_reference(generated(), ranks, "", 1e-10, l1_ratio);
      expect_matches_reference(diabetes(), ranks, "", 1e-10, l1_ratio);
    }
    expect_matches_reference(correlated(), ranks, "--newton_steps hessian", 1e-9, 0.7);
  }
  const io::SparseRows rows = io::read_libsvm(generated().path);
  const testing::LassoSolution ridge = testing::solve_lasso_reference(rows, 0, true, 0, 0.05);
  for (const int ranks : {1, 3}) {
    const Output out = run(mpirun(ranks) + SCHMP_LASSO_BIN + " --layout all --data " + generated().path +
                           " --l1_ratio 0 --lambda 0.05 --tol 1e-10 --progress_seconds 0");
    ASSERT_EQ(out.status, 0) << out.text;
    EXPECT_NE(out.text.find("schmp-lasso: converged after"), std::string::npos) << out.text;
    EXPECT_NEAR(objective_of(out), ridge.objective, 1e-8 * ridge.objective) << out.text;
  }
  for (const int ranks : {1, 3}) {
    testing::expect_clean_failure(
        run(mpirun(ranks) + SCHMP_LASSO_BIN + " --layout all --data " + generated().path + " --l1_ratio 0"),
        "schmp-lasso: error: --l1_ratio 0 (ridge) needs --lambda");
    testing::expect_clean_failure(
        run(mpirun(ranks) + SCHMP_LASSO_BIN + " --layout all --data " + generated().path + " --l1_ratio 1.5"),
        "schmp-lasso: error: --l1_ratio must be");
  }
}

// A path of lambdas, each solved warm from the last: every lambda's model is the reference's at that
// lambda, at every rank count; the table and the trace show the whole path; --test scores each model as
// predict does.
TEST_F(LassoEndToEnd, APathMatchesTheReferenceAtEveryLambda) {
  const std::string models = (scratch_ / "path.model").string(), table = (scratch_ / "path.csv").string();
  const std::string trace = (scratch_ / "path-trace.csv").string();
  const auto section = [](const std::string& text, std::size_t at) {
    return text.substr(at, text.find("\nlambda ", at + 1) - at);
  };
  for (const auto& [data, l1_ratio] :
       {std::pair{generated(), 1.0}, std::pair{diabetes(), 1.0}, std::pair{generated(), 0.5}}) {
    const io::SparseRows rows = io::read_libsvm(data.path);
    std::vector<testing::LassoSolution> references;  // by lambda, found at the first rank count
    for (const int ranks : {1, 3, 5}) {
      SCOPED_TRACE(data.name + ", l1_ratio " + std::to_string(l1_ratio) + ", np " + std::to_string(ranks));
      const Output out = run(mpirun(ranks) + SCHMP_LASSO_BIN + " --layout all --data " + data.path +
                             " --path 6 --lambda_min_ratio 0.05 --l1_ratio " + testing::number(l1_ratio) +
                             " --tol 1e-9 --progress_seconds 0 --output " + models + " --path_table " +
                             table + " --test " + data.path + " --trace " + trace);
      ASSERT_EQ(out.status, 0) << out.text;
      EXPECT_NE(out.text.find("6 of 6 lambdas solved"), std::string::npos) << out.text;
      const testing::Trace rows_of_table = testing::read_trace(table);
      EXPECT_EQ(rows_of_table.header, "lambda,objective,duality_gap,relative_gap,nnz,seconds,test_mse");
      ASSERT_EQ(rows_of_table.rows.size(), 6u);
      const std::string text = testing::read_text(models);
      std::size_t at = text.find("\nlambda ");
      for (std::size_t k = 0; k < rows_of_table.rows.size(); ++k) {
        const std::vector<double>& point = rows_of_table.rows[k];
        ASSERT_NE(at, std::string::npos);
        const double lambda = point[0];
        if (references.size() == k)
          references.push_back(testing::solve_lasso_reference(rows, 0, true, l1_ratio, lambda));
        const testing::LassoSolution& reference = references[k];
        EXPECT_NEAR(point[1], reference.objective, 1e-6 * reference.objective) << "lambda " << lambda;
        EXPECT_LE(point[3], 1e-9);
        // The model's section: its coefficients' support is the reference's (past lambda_max, where
        // the reference's rounding may leave one coefficient a hair above zero).
        const std::string model = (scratch_ / "one-lambda.model").string();
        std::ofstream(model) << "# features " << rows.columns() << "\n" << section(text, at + 1) << "\n";
        if (k > 0) {
          EXPECT_EQ(support(read_model(model)), support(as_map(reference.beta))) << "lambda " << lambda;
        }
        at = text.find("\nlambda ", at + 1);
        // Held out (here the training rows themselves): the MSE predict gives for that lambda.
        if (ranks > 1) continue;
        const Output scored = run(std::string(SCHMP_LASSO_BIN) + " predict --model " + models + " --data " +
                                  data.path + " --lambda " + testing::number(lambda));
        std::smatch mse;
        ASSERT_TRUE(std::regex_search(scored.text, mse, std::regex("MSE ([^ ]+)"))) << scored.text;
        EXPECT_NEAR(point[6], std::stod(mse[1]), 1e-8 * point[6]);
      }
      // Each trace row names its lambda; the last rows are the last lambda's.
      const testing::Trace written = testing::read_trace(trace);
      EXPECT_NE(written.header.find(",lambda,"), std::string::npos) << written.header;
      EXPECT_NEAR(written.rows.back()[8], rows_of_table.rows.back()[0], 1e-9 * rows_of_table.rows.back()[0]);
      // Screening retired coefficients at some lambda, and they came back at a later one: the models
      // above are the reference's through both.
      if (data.name == "generated" && l1_ratio == 1.0) {
        const auto columns = static_cast<double>(rows.columns());
        const auto retired = std::find_if(written.rows.begin(), written.rows.end(),
                                          [&](const std::vector<double>& row) { return row[6] < columns; });
        ASSERT_NE(retired, written.rows.end());
        EXPECT_TRUE(std::any_of(retired, written.rows.end(), [&](const std::vector<double>& row) {
          return row[6] == columns && row[8] < (*retired)[8];
        }));
      }
    }
  }
  for (const auto& [flags, message] : std::vector<std::pair<std::string, std::string>>{
           {"--path 1", "--path needs at least 2 lambdas"},
           {"--path 5 --lambda 0.1", "--path runs from lambda_max down"},
           {"--test " + diabetes().path, "--test and --path_table are for a path"},
           {"--path 5 --lambda_min_ratio 2", "--lambda_min_ratio must be in (0, 1)"}}) {
    for (const int ranks : {1, 3}) {
      testing::expect_clean_failure(
          run(mpirun(ranks) + SCHMP_LASSO_BIN + " --layout all --data " + diabetes().path + " " + flags),
          "schmp-lasso: error: " + message);
    }
  }
}

// --standardize penalises the coefficients of unit-variance columns: on the raw data it fits the model
// of the data with each column divided by its standard deviation (about its mean, with the intercept or
// without), written back on the raw scale, at 1, 3 and 5 ranks, with and without the ridge's share.
TEST_F(LassoEndToEnd, StandardizedColumnsGiveGlmnetsModel) {
  for (const Dataset& data : {diabetes(), generated()}) {
    const io::SparseRows rows = io::read_libsvm(data.path);
    const auto n = static_cast<double>(rows.rows());
    std::vector<double> sums(rows.columns(), 0.0), squares(rows.columns(), 0.0);
    for (std::size_t e = 0; e < rows.index.size(); ++e) {
      sums[rows.index[e]] += rows.value[e];
      squares[rows.index[e]] += rows.value[e] * rows.value[e];
    }
    std::vector<double> sd(rows.columns());
    for (std::size_t j = 0; j < sd.size(); ++j)
      sd[j] = std::sqrt(squares[j] / n - sums[j] * sums[j] / (n * n));
    const std::string scaled = (scratch_ / "scaled-columns.svm").string();
    {
      std::ofstream out(scaled);
      out.precision(17);
      for (std::size_t r = 0; r < rows.rows(); ++r) {
        out << rows.labels[r];
        for (std::size_t e = rows.row_start[r]; e < rows.row_start[r + 1]; ++e)
          out << ' ' << rows.index[e] + 1 << ':' << rows.value[e] / sd[rows.index[e]];
        out << '\n';
      }
    }
    for (const auto& [l1_ratio, intercept_flag] :
         {std::pair{1.0, ""}, std::pair{0.5, ""}, std::pair{1.0, " --fit_intercept=false"}}) {
      const std::string model = (scratch_ / "standardized.model").string();
      const std::string flags = " --lambda_ratio 0.05 --tol 1e-11 --progress_seconds 0 --l1_ratio " +
                                testing::number(l1_ratio) + intercept_flag + " --output " + model;
      ASSERT_EQ(run(std::string(SCHMP_LASSO_BIN) + " --data " + scaled + flags).status, 0);
      std::map<std::size_t, double> expected = read_model(model);
      for (auto& [j, value] : expected) value /= sd[j];
      const double intercept = read_intercept(model);
      for (const int ranks : {1, 3, 5}) {
        SCOPED_TRACE(data.name + ", l1_ratio " + std::to_string(l1_ratio) + intercept_flag + ", np " +
                     std::to_string(ranks));
        const Output out =
            run(mpirun(ranks) + SCHMP_LASSO_BIN + " --layout all --standardize --data " + data.path + flags);
        ASSERT_EQ(out.status, 0) << out.text;
        const std::map<std::size_t, double> beta = read_model(model);
        EXPECT_EQ(support(beta), support(expected));
        double largest = 0;
        for (const auto& [j, value] : expected) largest = std::max(largest, std::abs(value));
        for (const auto& [j, value] : beta)
          EXPECT_NEAR(value, expected[j], 1e-4 * largest) << "coefficient " << j;
        EXPECT_NEAR(read_intercept(model), intercept, 1e-4 * (1 + std::abs(intercept)));
      }
    }
  }
}

// Writes one weight per line, after a comment line (which the reader skips).
void write_weights(const std::vector<double>& weights, const std::string& path) {
  std::ofstream out(path);
  out.precision(17);
  out << "# one weight per row\n";
  for (const double w : weights) out << w << '\n';
}

// Row weights: every sum of the loss weighted, as the reference's, for the Lasso and the elastic net,
// some rows weighing nothing, at 1, 3 and 5 ranks.
TEST_F(LassoEndToEnd, RowWeightsMatchTheWeightedReference) {
  const io::SparseRows rows = io::read_libsvm(generated().path);
  std::mt19937 random(7);
  std::exponential_distribution<double> draw(1.0);
  std::vector<double> weights(rows.rows());
  for (std::size_t r = 0; r < weights.size(); ++r) weights[r] = r % 11 == 0 ? 0.0 : draw(random);
  const std::string path = (scratch_ / "weights.txt").string(),
                    model = (scratch_ / "weighted.model").string();
  write_weights(weights, path);
  for (const double l1_ratio : {1.0, 0.5}) {
    const testing::LassoSolution reference =
        testing::solve_lasso_reference(rows, generated().lambda_ratio, true, l1_ratio, 0, weights);
    for (const int ranks : {1, 3, 5}) {
      SCOPED_TRACE("l1_ratio " + std::to_string(l1_ratio) + ", np " + std::to_string(ranks));
      const Output out =
          run(mpirun(ranks) + SCHMP_LASSO_BIN + " --layout all --data " + generated().path + " --weights " +
              path + " --lambda_ratio " + testing::number(generated().lambda_ratio) + " --l1_ratio " +
              testing::number(l1_ratio) + " --tol 1e-10 --progress_seconds 0" + " --output " + model);
      ASSERT_EQ(out.status, 0) << out.text;
      EXPECT_NEAR(objective_of(out), reference.objective, 1e-6 * reference.objective) << out.text;
      EXPECT_EQ(support(read_model(model)), support(as_map(reference.beta)));
      EXPECT_NEAR(read_intercept(model), reference.intercept, 1e-4 * (1 + std::abs(reference.intercept)));
    }
  }
}

// A row of integer weight k counts as k copies of it: weighted, the rows give the model, the standard
// deviations (--standardize) and the path of the data with each row repeated, at 1 and 3 ranks.
TEST_F(LassoEndToEnd, IntegerWeightsAreRepeatedRows) {
  const io::SparseRows rows = io::read_libsvm(diabetes().path);
  std::vector<double> weights(rows.rows());
  for (std::size_t r = 0; r < weights.size(); ++r) weights[r] = static_cast<double>((r * 7) % 4);
  const std::string path = (scratch_ / "counts.txt").string(),
                    repeated = (scratch_ / "repeated.svm").string();
  write_weights(weights, path);
  {
    std::ofstream out(repeated);
    out.precision(17);
    for (std::size_t r = 0; r < rows.rows(); ++r) {
      for (int copy = 0; copy < static_cast<int>(weights[r]); ++copy) {
        out << rows.labels[r];
        for (std::size_t e = rows.row_start[r]; e < rows.row_start[r + 1]; ++e)
          out << ' ' << rows.index[e] + 1 << ':' << rows.value[e];
        out << '\n';
      }
    }
  }
  const std::string model = (scratch_ / "counted.model").string(),
                    table = (scratch_ / "counted.csv").string();
  const std::string one =
      " --standardize --l1_ratio 0.5 --lambda_ratio 0.02 --tol 1e-11 --progress_seconds 0";
  ASSERT_EQ(run(std::string(SCHMP_LASSO_BIN) + " --data " + repeated + one + " --output " + model).status, 0);
  std::map<std::size_t, double> expected = read_model(model);
  const double intercept = read_intercept(model);
  const std::string path_flags = " --path 5 --lambda_min_ratio 0.05 --tol 1e-10 --progress_seconds 0";
  ASSERT_EQ(run(std::string(SCHMP_LASSO_BIN) + " --data " + repeated + path_flags + " --path_table " + table)
                .status,
            0);
  const testing::Trace expected_path = testing::read_trace(table);
  for (const int ranks : {1, 3}) {
    SCOPED_TRACE("np " + std::to_string(ranks));
    const std::string weighted =
        mpirun(ranks) + SCHMP_LASSO_BIN + " --layout all --data " + diabetes().path + " --weights " + path;
    ASSERT_EQ(run(weighted + one + " --output " + model).status, 0);
    const std::map<std::size_t, double> beta = read_model(model);
    EXPECT_EQ(support(beta), support(expected));
    // Diabetes' columns are nearly collinear: a gap of 1e-11 leaves the coefficients 1e-5 apart.
    double largest = 0;
    for (const auto& [j, value] : expected) largest = std::max(largest, std::abs(value));
    for (const auto& [j, value] : beta) EXPECT_NEAR(value, expected[j], 1e-4 * largest);
    EXPECT_NEAR(read_intercept(model), intercept, 1e-5 * std::abs(intercept));
    ASSERT_EQ(run(weighted + path_flags + " --path_table " + table).status, 0);
    const testing::Trace path = testing::read_trace(table);
    ASSERT_EQ(path.rows.size(), expected_path.rows.size());
    for (std::size_t k = 0; k < path.rows.size(); ++k) {
      EXPECT_NEAR(path.rows[k][0], expected_path.rows[k][0], 1e-12 * expected_path.rows[k][0]);  // lambda
      EXPECT_NEAR(path.rows[k][1], expected_path.rows[k][1], 1e-8 * expected_path.rows[k][1]);   // objective
      EXPECT_EQ(path.rows[k][4], expected_path.rows[k][4]);                                      // nonzeros
    }
  }
}

// A weights file that does not fit the data, or holds a weight no loss can take: one line naming the
// file (and the line), on every rank.
TEST_F(LassoEndToEnd, BadWeightsAreRefusedAtTheirLine) {
  const std::size_t rows = io::read_libsvm(diabetes().path).rows();
  const std::string path = (scratch_ / "bad-weights.txt").string();
  const auto lines = [](const std::string& line, std::size_t count) {
    std::string text;
    for (std::size_t k = 0; k < count; ++k) text += line;
    return text;
  };
  const std::string count = " rows of data";
  for (const auto& [content, expected] : std::vector<std::pair<std::string, std::string>>{
           {lines("1\n", rows - 1),
            ": has " + std::to_string(rows - 1) + " weights for " + std::to_string(rows) + count},
           {lines("1\n", rows + 1),
            ": has " + std::to_string(rows + 1) + " weights for " + std::to_string(rows) + count},
           {lines("1\n", rows - 1) + "-2\n",
            ":" + std::to_string(rows) + ": negative weight -2: a weight is 0 or more"},
           {"1\nnan\n" + lines("1\n", rows - 2), ":2: "},
           {"1\n1 2\n" + lines("1\n", rows - 2), ":2: unexpected text"},
           {lines("0\n", rows), ": the weights sum to zero"}}) {
    std::ofstream(path) << content;
    // One process reads the file whole (for a file of the wrong length); three split it (the bad lines
    // lie in the first worker's range and in the last's).
    const bool too_few_or_many = expected.find(" weights for ") != std::string::npos;
    for (const int ranks : too_few_or_many ? std::vector<int>{1, 3} : std::vector<int>{3}) {
      testing::expect_clean_failure(run(mpirun(ranks) + SCHMP_LASSO_BIN + " --layout all --data " +
                                        diabetes().path + " --weights " + path + " --progress_seconds 0"),
                                    "schmp-lasso: error: " + path + expected);
    }
  }
}

// The reference's cross-validation: at each lambda, the mean of the folds' held-out MSE (weighted by
// `weights` when given), each fold weighing its held-out weight, and its standard error.
std::pair<std::vector<double>, std::vector<double>> reference_cv(const io::SparseRows& rows,
                                                                 const std::vector<double>& weights,
                                                                 const std::vector<std::uint32_t>& fold,
                                                                 std::uint32_t folds,
                                                                 const std::vector<double>& lambdas) {
  std::vector<double> mean, se;
  const auto weight = [&](std::size_t r) { return weights.empty() ? 1.0 : weights[r]; };
  for (const double lambda : lambdas) {
    std::vector<double> mse(folds, 0.0), held(folds, 0.0);
    for (std::uint32_t k = 0; k < folds; ++k) {
      std::vector<std::size_t> training;
      for (std::size_t r = 0; r < rows.rows(); ++r) {
        if (fold[r] != k) training.push_back(r);
      }
      std::vector<double> training_weights;
      if (!weights.empty()) {
        for (const std::size_t r : training) training_weights.push_back(weights[r]);
      }
      const testing::LassoSolution solution =
          testing::solve_lasso_reference(rows_where(rows, [&](std::size_t r) { return fold[r] != k; }), 0,
                                         true, 1, lambda, training_weights);
      for (std::size_t r = 0; r < rows.rows(); ++r) {
        if (fold[r] != k) continue;
        double predicted = solution.intercept;
        for (std::uint64_t e = rows.row_start[r]; e < rows.row_start[r + 1]; ++e)
          predicted += solution.beta[rows.index[e]] * rows.value[e];
        mse[k] += weight(r) * std::pow(rows.labels[r] - predicted, 2);
        held[k] += weight(r);
      }
      mse[k] /= held[k];
    }
    const auto [fold_mean, fold_se] = testing::fold_mean_se(mse, held);
    mean.push_back(fold_mean);
    se.push_back(fold_se);
  }
  return {mean, se};
}

// A path stopped part way resumes from its checkpoint, on another rank count: the lambdas solved before
// are kept as they were, and the rest are solved as an uninterrupted run solves them.
TEST_F(LassoEndToEnd, PathResumesFromItsCheckpoint) {
  const std::string checkpoint = (scratch_ / "path.checkpoint").string(),
                    whole = (scratch_ / "whole.csv").string(), resumed = (scratch_ / "resumed.csv").string();
  const std::string flags = std::string(SCHMP_LASSO_BIN) + " --layout all --data " + diabetes().path +
                            " --path 20 --tol 1e-10 --progress_seconds 0";
  ASSERT_EQ(run(mpirun(2) + flags + " --path_table " + whole).status, 0);
  const Output stopped = run(mpirun(2) + flags + " --max_rounds 300 --checkpoint " + checkpoint);
  ASSERT_EQ(stopped.status, 0) << stopped.text;
  ASSERT_NE(stopped.text.find("max_rounds"), std::string::npos) << stopped.text;
  const Output out = run(mpirun(3) + flags + " --resume " + checkpoint + " --path_table " + resumed);
  ASSERT_EQ(out.status, 0) << out.text;
  const testing::Trace expected = testing::read_trace(whole), found = testing::read_trace(resumed);
  ASSERT_EQ(found.rows.size(), expected.rows.size());
  for (std::size_t k = 0; k < found.rows.size(); ++k)
    EXPECT_NEAR(found.rows[k][1], expected.rows[k][1], 1e-9 * expected.rows[k][1]) << "lambda " << k;
  testing::expect_clean_failure(
      run(mpirun(2) + std::string(SCHMP_LASSO_BIN) + " --data " + diabetes().path + " --resume " +
          checkpoint),
      "schmp-lasso: error: " + checkpoint + ": the checkpoint is of a path: give --path");
}

// --cv K: at every lambda of the path, the folds' mean held-out MSE and its standard error are those of
// the reference solved on each fold's complement (folds fixed by the seed), and lambda_min and
// lambda_1se are glmnet's picks from them; the refit's models end at lambda_min. At 1, 2 and 5 ranks:
// the folds one after another, side by side, and side by side on groups of ranks.
TEST_F(LassoEndToEnd, CrossValidationMatchesARefitPerFold) {
  const io::SparseRows rows = io::read_libsvm(diabetes().path);
  constexpr std::uint32_t kFolds = 3;
  const std::vector<std::uint32_t> fold = specified_folds(rows.rows(), kFolds, 5);
  const std::string table = (scratch_ / "cv.csv").string(), models = (scratch_ / "cv.model").string();
  std::vector<double> mean, se;  // the reference's, by lambda
  std::size_t best = 0, one_se = 0;
  for (const int ranks : {1, 2, 5}) {
    SCOPED_TRACE("np " + std::to_string(ranks));
    const Output out =
        run(mpirun(ranks) + SCHMP_LASSO_BIN + " --layout all --data " + diabetes().path +
            " --cv 3 --seed 5 --path 8 --lambda_min_ratio 0.001 --tol 1e-11 --progress_seconds 0" +
            " --path_table " + table + " --output " + models);
    ASSERT_EQ(out.status, 0) << out.text;
    const testing::Trace written = testing::read_trace(table);
    EXPECT_EQ(written.header, "lambda,objective,duality_gap,relative_gap,nnz,seconds,cv_mse,cv_se");
    ASSERT_EQ(written.rows.size(), 8u);
    if (mean.empty()) {
      std::vector<double> lambdas;
      for (const std::vector<double>& row : written.rows) lambdas.push_back(row[0]);
      std::tie(mean, se) = reference_cv(rows, {}, fold, kFolds, lambdas);
      best = static_cast<std::size_t>(std::min_element(mean.begin(), mean.end()) - mean.begin());
      one_se = best;
      while (one_se > 0 && mean[one_se - 1] <= mean[best] + se[best]) --one_se;
    }
    for (std::size_t k = 0; k < mean.size(); ++k) {
      EXPECT_NEAR(written.rows[k][6], mean[k], 1e-7 * mean[k]) << "lambda " << k;
      EXPECT_NEAR(written.rows[k][7], se[k], 1e-5 * se[k]) << "lambda " << k;
      // The refit solved the lambdas down to lambda_min, and no further.
      EXPECT_EQ(std::isnan(written.rows[k][1]), k > best) << "lambda " << k;
    }
    std::smatch picked;
    ASSERT_TRUE(std::regex_search(out.text, picked, std::regex("lambda_min ([^ ]+) .* lambda_1se ([^ ]+) ")))
        << out.text;
    EXPECT_NEAR(std::stod(picked[1]), written.rows[best][0], 1e-7 * written.rows[best][0]);
    EXPECT_NEAR(std::stod(picked[2]), written.rows[one_se][0], 1e-7 * written.rows[one_se][0]);
    EXPECT_NE(testing::read_text(models).find("# cv 3 folds: lambda_min"), std::string::npos);
  }
  for (const auto& [flags, message] : std::vector<std::pair<std::string, std::string>>{
           {"--cv 1", "--cv needs at least 2 folds"},
           {"--cv 443", "--cv 443 needs as many rows, and " + diabetes().path + " has 442"},
           {"--cv 3 --lambda 1", "--cv picks lambda from a path: drop --lambda"},
           {"--cv 3 --test " + diabetes().path, "--cv holds out its own rows: drop --test"}}) {
    // Too many folds fails in every fold's job, on every group of ranks: said once all the same.
    for (const int ranks : flags == "--cv 443" ? std::vector<int>{1, 3} : std::vector<int>{3}) {
      testing::expect_clean_failure(
          run(mpirun(ranks) + SCHMP_LASSO_BIN + " --layout all --data " + diabetes().path + " " + flags),
          "schmp-lasso: error: " + message);
    }
  }
}

// --cv with --weights: each fold's held-out MSE is weighted, and the folds weigh their held-out weight,
// as the weighted reference's (3 folds on 2 ranks: side by side, one rank solving two).
TEST_F(LassoEndToEnd, WeightedCrossValidationWeighsTheHeldOutRows) {
  const io::SparseRows rows = io::read_libsvm(diabetes().path);
  std::vector<double> weights(rows.rows());
  for (std::size_t r = 0; r < weights.size(); ++r) weights[r] = 0.25 + static_cast<double>((r * 5) % 7);
  const std::string path = (scratch_ / "cv-weights.txt").string(),
                    table = (scratch_ / "cv-weighted.csv").string();
  write_weights(weights, path);
  const Output out =
      run(mpirun(2) + SCHMP_LASSO_BIN + " --layout all --data " + diabetes().path + " --weights " + path +
          " --cv 3 --seed 9 --path 5 --lambda_min_ratio 0.01 --tol 1e-11 --progress_seconds 0" +
          " --path_table " + table);
  ASSERT_EQ(out.status, 0) << out.text;
  const testing::Trace written = testing::read_trace(table);
  ASSERT_EQ(written.rows.size(), 5u);
  std::vector<double> lambdas;
  for (const std::vector<double>& row : written.rows) lambdas.push_back(row[0]);
  const auto [mean, se] = reference_cv(rows, weights, specified_folds(rows.rows(), 3, 9), 3, lambdas);
  for (std::size_t k = 0; k < mean.size(); ++k) {
    EXPECT_NEAR(written.rows[k][6], mean[k], 1e-7 * mean[k]) << "lambda " << k;
    EXPECT_NEAR(written.rows[k][7], se[k], 1e-5 * se[k]) << "lambda " << k;
  }
}

// glmnet's coefficients of diabetes (written dense to `x` and `y` files) with `weights`, at each of
// `lambdas`, with standardize=TRUE, alpha `alpha` and intercept `intercept` (1 or 0): one line per
// lambda, the intercept first.
const char* const kGlmnetScript = R"(suppressMessages(library(glmnet))
a <- commandArgs(TRUE)
x <- as.matrix(read.table(a[1])); y <- scan(a[2], quiet=TRUE); w <- scan(a[3], quiet=TRUE, comment.char="#")
lambda <- scan(a[4], quiet=TRUE)
fit <- glmnet(x, y, weights=w, alpha=as.numeric(a[5]), standardize=TRUE, lambda=lambda, thresh=1e-14,
              intercept=a[6] == "1")
write.table(t(as.matrix(coef(fit))), row.names=FALSE, col.names=FALSE)
)";

// Where R has glmnet: schmp-lasso's weighted, standardised path gives glmnet's coefficients at every
// lambda, at one and three ranks, with the intercept and without; and its elastic net gives glmnet's
// once the ridge weight is divided by sd(y), which glmnet scales y by inside (docs/lasso.md).
TEST_F(LassoEndToEnd, GlmnetFitsTheSameModels) {
  if (run("Rscript -e 'suppressMessages(library(glmnet))'").status != 0)
    GTEST_SKIP() << "R's glmnet is not installed";
  const io::SparseRows rows = io::read_libsvm(diabetes().path);
  const std::string x = (scratch_ / "glmnet-x.txt").string(), y = (scratch_ / "glmnet-y.txt").string();
  const std::string weights = (scratch_ / "glmnet-w.txt").string(),
                    lambdas = (scratch_ / "glmnet-l.txt").string();
  const std::string script = (scratch_ / "glmnet.R").string(), table = (scratch_ / "glmnet.csv").string();
  const std::string models = (scratch_ / "glmnet.model").string();
  std::vector<double> w(rows.rows());
  double sum = 0, weighted_y = 0;
  {
    std::ofstream x_out(x), y_out(y);
    x_out.precision(17);
    y_out.precision(17);
    for (std::size_t r = 0; r < rows.rows(); ++r) {
      std::vector<double> dense(rows.columns(), 0.0);
      for (std::size_t e = rows.row_start[r]; e < rows.row_start[r + 1]; ++e)
        dense[rows.index[e]] = rows.value[e];
      for (const double v : dense) x_out << v << ' ';
      x_out << '\n';
      y_out << rows.labels[r] << '\n';
      w[r] = 0.5 + static_cast<double>((r * 5) % 7);
      sum += w[r];
      weighted_y += w[r] * rows.labels[r];
    }
  }
  write_weights(w, weights);
  std::ofstream(script) << kGlmnetScript;
  // glmnet's coefficients at each lambda of `table`, as lines of numbers.
  const auto glmnet = [&](double alpha, bool intercept) {
    const testing::Trace path = testing::read_trace(table);
    {
      std::ofstream out(lambdas);
      out.precision(17);
      for (const std::vector<double>& row : path.rows) out << row[0] << '\n';
    }
    const Output fitted = run("Rscript " + script + " " + x + " " + y + " " + weights + " " + lambdas + " " +
                              testing::number(alpha) + (intercept ? " 1" : " 0") + " 2>&1");
    std::vector<std::vector<double>> coefficients;
    std::istringstream lines(fitted.text);
    for (std::string line; std::getline(lines, line);) {
      std::istringstream numbers(line);
      std::vector<double>& row = coefficients.emplace_back();
      for (double v; numbers >> v;) row.push_back(v);
    }
    return coefficients;
  };
  // glmnet's objective at lambda of (intercept, coefficients): the weighted mean squared error over two,
  // and the penalty on each coefficient times its column's weighted deviation about its mean.
  std::vector<double> deviation(rows.columns());
  for (std::size_t j = 0; j < deviation.size(); ++j) {
    double mean = 0, square = 0;
    for (std::size_t r = 0; r < rows.rows(); ++r) {
      double v = 0;
      for (std::size_t e = rows.row_start[r]; e < rows.row_start[r + 1]; ++e)
        v = rows.index[e] == j ? rows.value[e] : v;
      mean += w[r] * v / sum;
      square += w[r] * v * v / sum;
    }
    deviation[j] = std::sqrt(square - mean * mean);
  }
  const auto objective = [&](double lambda, const std::vector<double>& b) {
    double loss = 0, penalty = 0;
    for (std::size_t r = 0; r < rows.rows(); ++r) {
      double fit = b[0];
      for (std::size_t e = rows.row_start[r]; e < rows.row_start[r + 1]; ++e)
        fit += rows.value[e] * b[rows.index[e] + 1];
      loss += w[r] * (rows.labels[r] - fit) * (rows.labels[r] - fit) / (2 * sum);
    }
    for (std::size_t j = 0; j < deviation.size(); ++j) penalty += deviation[j] * std::abs(b[j + 1]);
    return loss + lambda * penalty;
  };
  for (const auto& [ranks, intercept] : {std::pair{1, true}, std::pair{3, true}, std::pair{3, false}}) {
    SCOPED_TRACE("np " + std::to_string(ranks) + (intercept ? "" : ", no intercept"));
    ASSERT_EQ(
        run(mpirun(ranks) + SCHMP_LASSO_BIN + " --layout all --data " + diabetes().path + " --weights " +
            weights + " --standardize --path 5 --lambda_min_ratio 0.01 --tol 1e-13 --progress_seconds 0" +
            " --output " + models + " --path_table " + table + (intercept ? "" : " --fit_intercept=false"))
            .status,
        0);
    const std::vector<std::vector<double>> expected = glmnet(1, intercept);
    ASSERT_EQ(expected.size(), 5u);
    const std::string text = testing::read_text(models);
    std::size_t at = text.find("\nlambda ");
    for (std::size_t k = 0; k < expected.size(); ++k) {
      const std::string model = (scratch_ / "glmnet-one.model").string();
      std::ofstream(model) << "# features 10\n"
                           << text.substr(at + 1, text.find("\nlambda ", at + 1) - at - 1) << "\n";
      at = text.find("\nlambda ", at + 1);
      const std::map<std::size_t, double> beta = read_model(model);
      std::vector<double> ours(11, 0.0);
      ours[0] = read_intercept(model);
      for (const auto& [j, value] : beta) ours[j + 1] = value;
      const double lambda = testing::read_trace(table).rows[k][0];
      // Without the intercept glmnet stops a little early (its objective 2e-12 above ours, its
      // coefficients 1e-5 of the largest away); at lambda_max it leaves one at 1.5e-12.
      const double theirs = objective(lambda, expected[k]);
      EXPECT_LE(objective(lambda, ours), theirs * (1 + 1e-13)) << "lambda " << k;
      EXPECT_NEAR(objective(lambda, ours), theirs, 1e-10 * theirs) << "lambda " << k;
      const double largest = *std::max_element(expected[k].begin() + 1, expected[k].end(),
                                               [](double a, double b) { return std::abs(a) < std::abs(b); });
      const double close = std::max((intercept ? 1e-6 : 1e-4) * std::abs(largest), 1e-9);
      for (std::size_t j = 0; j < 10; ++j)
        EXPECT_NEAR(ours[j + 1], expected[k][j + 1], close) << "lambda " << k << ", coefficient " << j;
      EXPECT_NEAR(read_intercept(model), expected[k][0], 1e-6 * std::abs(expected[k][0])) << "lambda " << k;
    }
  }
  // The elastic net at glmnet's (lambda, alpha): glmnet's ridge weight lambda (1 - alpha) is ours over sd(y).
  double spread = 0;
  for (std::size_t r = 0; r < rows.rows(); ++r)
    spread += w[r] * std::pow(rows.labels[r] - weighted_y / sum, 2);
  const double sd = std::sqrt(spread / sum), lambda = 1.0, alpha = 0.5;
  const double ours = lambda * alpha + lambda * (1 - alpha) / sd, share = lambda * alpha / ours;
  const std::string model = (scratch_ / "glmnet-net.model").string();
  ASSERT_EQ(run(std::string(SCHMP_LASSO_BIN) + " --data " + diabetes().path + " --weights " + weights +
                " --standardize --lambda " + testing::number(ours) + " --l1_ratio " + testing::number(share) +
                " --tol 1e-13 --output " + model)
                .status,
            0);
  std::ofstream(table) << "lambda\n" << testing::number(lambda) << "\n";
  const std::vector<std::vector<double>> expected = glmnet(alpha, true);
  ASSERT_EQ(expected.size(), 1u);
  const std::map<std::size_t, double> beta = read_model(model);
  for (std::size_t j = 0; j < 10; ++j) {
    const auto found = beta.find(j);
    EXPECT_NEAR(found == beta.end() ? 0.0 : found->second, expected[0][j + 1], 1e-6 * 100)
        << "coefficient " << j;
  }
  EXPECT_NEAR(read_intercept(model), expected[0][0], 1e-6 * std::abs(expected[0][0]));
}

// Writes `rows` as LIBSVM, labels plus `offset`; every entry of a dense file, columns less their means
// and labels less theirs, when `centred`.
void write_svm(const io::SparseRows& rows, const std::string& path, double offset, bool centred) {
  std::vector<double> means(rows.columns(), 0.0);
  double label_mean = 0;
  const auto n = static_cast<double>(rows.rows());
  if (centred) {
    for (std::size_t e = 0; e < rows.index.size(); ++e) means[rows.index[e]] += rows.value[e] / n;
    for (double y : rows.labels) label_mean += y / n;
  }
  std::ofstream out(path);
  out.precision(17);
  std::vector<double> row(rows.columns());
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    out << rows.labels[r] + offset - label_mean;
    std::fill(row.begin(), row.end(), 0.0);
    for (std::size_t e = rows.row_start[r]; e < rows.row_start[r + 1]; ++e)
      row[rows.index[e]] = rows.value[e];
    for (std::size_t j = 0; j < row.size(); ++j) {
      if (centred || row[j] != 0) out << ' ' << j + 1 << ':' << row[j] - means[j];
    }
    out << '\n';
  }
}

// A large offset in y goes into the intercept alone: the sparse problem with it fits the coefficients
// of the problem without it, and of the centred dense problem fitted without an intercept, at every
// rank count.
TEST_F(LassoEndToEnd, AnOffsetInYIsTheIntercept) {
  const io::SparseRows rows = io::read_libsvm(generated().path);
  const std::string offset = (scratch_ / "offset.svm").string(), dense = (scratch_ / "dense.svm").string();
  write_svm(rows, offset, 1e4, false);
  write_svm(rows, dense, 0, true);
  const testing::LassoSolution reference = testing::solve_lasso_reference(rows, generated().lambda_ratio);
  const std::string model = (scratch_ / "offset.model").string();
  const auto fit = [&](int ranks, const std::string& path, const std::string& flags) {
    const Output out = run(mpirun(ranks) + SCHMP_LASSO_BIN + " --layout all --data " + path +
                           " --lambda_ratio 0.05 --tol 1e-10 --progress_seconds 0 --output " + model + flags);
    EXPECT_EQ(out.status, 0) << out.text;
    return std::make_pair(read_model(model), read_intercept(model));
  };
  for (const int ranks : {1, 3, 5}) {
    SCOPED_TRACE("np " + std::to_string(ranks));
    for (const auto& [path, flags, intercept] :
         {std::tuple{offset, std::string(), reference.intercept + 1e4},
          std::tuple{dense, std::string(" --fit_intercept=false"), 0.0}}) {
      const auto [beta, b] = fit(ranks, path, flags);
      EXPECT_NEAR(b, intercept, 1e-6 * std::abs(intercept) + 1e-6) << path;
      EXPECT_EQ(support(beta), support(as_map(reference.beta))) << path;
      for (const auto& [j, value] : beta) EXPECT_NEAR(value, reference.beta[j], 1e-5) << path << " " << j;
    }
  }
}

// The intercept costs no memory per nonzero: one process's peak on 2 million nonzeros with it is that
// without, give or take the allocator's noise (tens of MB under load); a centred, dense copy of X would
// add 640 MB.
TEST_F(LassoEndToEnd, TheInterceptKeepsXSparse) {
  const std::string data = (scratch_ / "large.svm").string();
  ASSERT_EQ(run(std::string(SCHMP_GENERATE_BIN) + " lasso --rows 40000 --cols 2000 --density 0.025" +
                " --support 50 --noise 0.5 --seed 8 --out " + data)
                .status,
            0);
  const auto peak_kb = [&](const std::string& flags) {
    const Output out =
        run("python3 -c 'import resource, subprocess, sys; "
            "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
            "print(\"peak\", resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' " +
            std::string(SCHMP_LASSO_BIN) + " --data " + data + " --lambda_ratio 0.1 --progress_seconds 0 " +
            flags);
    EXPECT_EQ(out.status, 0) << out.text;
    std::smatch match;
    return std::regex_search(out.text, match, std::regex("peak ([0-9]+)")) ? std::stod(match[1]) : NAN;
  };
  const double without = peak_kb("--fit_intercept=false"), with = peak_kb("--fit_intercept=true");
  constexpr double kDenseCopyKb = 40000.0 * 2000 * 8 / 1024;
  EXPECT_LT(with, without + kDenseCopyKb / 10) << with << " kB against " << without << " kB";
}

// predict applies a model to labelled rows: b + beta . x per row, their MSE and R^2.
TEST_F(LassoEndToEnd, PredictAppliesTheModel) {
  const std::string model = (scratch_ / "predict.model").string();
  const std::string predicted = (scratch_ / "predicted.txt").string();
  ASSERT_EQ(run(std::string(SCHMP_LASSO_BIN) + " --data " + diabetes().path +
                " --lambda_ratio 0.01 --progress_seconds 0 --output " + model)
                .status,
            0);
  const Output out = run(std::string(SCHMP_LASSO_BIN) + " predict --model " + model + " --data " +
                         diabetes().path + " --output " + predicted);
  ASSERT_EQ(out.status, 0) << out.text;
  const io::SparseRows rows = io::read_libsvm(diabetes().path);
  const std::map<std::size_t, double> beta = read_model(model);
  const double intercept = read_intercept(model);
  std::ifstream in(predicted);
  double sse = 0, sst = 0, mean = 0;
  for (double y : rows.labels) mean += y / static_cast<double>(rows.rows());
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    double expected = intercept;
    for (std::size_t e = rows.row_start[r]; e < rows.row_start[r + 1]; ++e) {
      const auto found = beta.find(rows.index[e]);
      if (found != beta.end()) expected += found->second * rows.value[e];
    }
    double written = NAN;
    in >> written;
    EXPECT_NEAR(written, expected, 1e-12 * std::abs(expected)) << "row " << r;
    sse += (rows.labels[r] - expected) * (rows.labels[r] - expected);
    sst += (rows.labels[r] - mean) * (rows.labels[r] - mean);
  }
  std::smatch match;
  ASSERT_TRUE(std::regex_search(out.text, match, std::regex("rows 442  MSE ([^ ]+)  R\\^2 ([^ \n]+)")))
      << out.text;
  EXPECT_NEAR(std::stod(match[1]), sse / 442, 1e-8 * sse / 442);
  EXPECT_NEAR(std::stod(match[2]), 1 - sse / sst, 1e-8);
  // A model file that is not one: the file and line, and no predictions left behind.
  std::filesystem::remove(predicted);
  const std::string bad = (scratch_ / "bad.model").string();
  std::ofstream(bad) << "# features 10\nintercept 1\n11 0.5\n";
  testing::expect_clean_failure(run(std::string(SCHMP_LASSO_BIN) + " predict --model " + bad + " --data " +
                                    diabetes().path + " --output " + predicted),
                                "schmp-lasso: error: " + bad + ":3: index 11 outside 1..10");
  EXPECT_FALSE(std::filesystem::exists(predicted));
}

TEST_F(LassoEndToEnd, SameSeedSameModel) {
  const std::string first = (scratch_ / "first.txt").string(), second = (scratch_ / "second.txt").string();
  for (const std::string& model : {first, second}) {
    const Output out = run(mpirun(3) + SCHMP_LASSO_BIN + " --layout all --data " + generated().path +
                           " --lambda_ratio 0.05 --tol 1e-8 --seed 9 --progress_seconds 0 --output " + model);
    ASSERT_EQ(out.status, 0) << out.text;
  }
  EXPECT_EQ(testing::read_text(first), testing::read_text(second));
}

// The model must not depend on where the schedulers run (in the coordinator's process or on ranks of
// their own) nor on the thread count: with one worker both layouts give the same bytes.
TEST_F(LassoEndToEnd, SameModelWhereverTheSchedulersRunAndWhateverTheThreads) {
  std::vector<std::string> texts;
  // One process updates a block's parameters in order by default (--in_order), another algorithm:
  // here it makes the parallel updates that every other layout makes.
  const std::vector<std::pair<int, std::string>> runs = {
      {2, "--threads 1"}, {3, "--threads 1"}, {3, "--threads 2"}, {1, "--threads 2 --in_order=false"}};
  for (const auto& [ranks, flags] : runs) {
    const std::string model = (scratch_ / ("layout-" + std::to_string(texts.size()) + ".txt")).string();
    const Output out = run(mpirun(ranks) + SCHMP_LASSO_BIN + " --layout all --data " + generated().path +
                           " --lambda_ratio 0.05 --tol 1e-8 --staleness 2 --progress_seconds 0 --output " +
                           model + " " + flags);
    ASSERT_EQ(out.status, 0) << out.text;
    texts.push_back(testing::read_text(model));
  }
  for (std::size_t k = 1; k < texts.size(); ++k) EXPECT_EQ(texts[k], texts[0]) << "run " << k;
}

// oneTBB keeps a rank's threads to the CPUs that mpirun bound it to (a core each, its hardware threads,
// when it starts 2 ranks or fewer): more threads asked for than that are named, and the automatic count
// keeps to the binding.
TEST_F(LassoEndToEnd, ThreadsBeyondARanksBindingAreNamed) {
  const std::string bound =
      "timeout 300 " + std::string(SCHMP_MPIEXEC) + " --allow-run-as-root --bind-to core -np 1 ";
  const Output core = run(bound + "nproc");
  ASSERT_EQ(core.status, 0) << core.text;
  const int core_cpus = std::stoi(core.text);
  const Output all = run(mpirun(1) + "nproc");
  ASSERT_EQ(all.status, 0) << all.text;
  const int unbound_cpus = std::stoi(all.text);
  const std::string solve = std::string(SCHMP_LASSO_BIN) + " --layout all --data " + diabetes().path +
                            " --lambda_ratio 0.05 --progress_seconds 0";
  const Output more = run(bound + solve + " --threads " + std::to_string(core_cpus + 1));
  ASSERT_EQ(more.status, 0) << more.text;
  const std::string warning = "schmp-lasso: warning: --threads " + std::to_string(core_cpus + 1) +
                              ", but it is bound to " + std::to_string(core_cpus) + " CPU";
  EXPECT_NE(more.text.find(warning), std::string::npos) << more.text;
  for (const std::string& fitting :
       {bound + solve, mpirun(1) + solve + " --threads " + std::to_string(unbound_cpus)}) {
    const Output out = run(fitting);
    ASSERT_EQ(out.status, 0) << out.text;
    EXPECT_EQ(out.text.find("warning"), std::string::npos) << out.text;
  }
  // --threads may differ between hosts: the rank bound short is named with its own, and a bad one too.
  const std::string first = mpirun(2) + solve + " --threads 1 : -np 1 ";
  const Output pinned = run(first + "taskset -c 0 " + solve + " --threads 2");
  ASSERT_EQ(pinned.status, 0) << pinned.text;
  EXPECT_NE(pinned.text.find("schmp-lasso: warning: --threads 2 on rank 2 (host "), std::string::npos)
      << pinned.text;
  EXPECT_NE(pinned.text.find("), but it is bound to 1 CPU and runs no more threads"), std::string::npos)
      << pinned.text;
  testing::expect_clean_failure(run(first + solve + " --threads=-1"),
                                "schmp-lasso: error: --threads=-1 on rank 2 (host ");
}

// Writes y = 3 z and `columns` features a z + noise, with a^2 chosen so that any two features'
// cosine is about `cosine`: features that are each weakly correlated but share one factor.
void write_shared_factor(const std::string& path, int rows, int columns, double cosine, unsigned seed) {
  std::mt19937 random(seed);
  std::normal_distribution<double> normal;
  const double a = std::sqrt(cosine / (1 - cosine));
  std::ofstream out(path);
  for (int i = 0; i < rows; ++i) {
    const double z = normal(random);
    out << 3 * z;
    for (int j = 1; j <= columns; ++j) out << ' ' << j << ':' << a * z + normal(random);
    out << '\n';
  }
}

// The dependency check compares columns two by two. 64 columns whose cosines are all about 0.06, under
// --rho's 0.1, still interfere as a block of 32 (its largest Gram eigenvalue near 3, past the 2 where
// parallel coordinate steps overshoot), and four equal columns do whatever the block with --rho 1.
// The run notices the objective rise, goes back to where it was lower and moves fewer coefficients a
// round: it ends at the optimum instead of reporting an overflowed objective as converged.
TEST_F(LassoEndToEnd, BlocksThatInterfereAsAWholeAreCaughtAndUndone) {
  testing::ScratchDir scratch;
  const std::string shared = scratch.file("shared.svm");
  write_shared_factor(shared, 3000, 64, 0.06, 1);
  const std::string equal = scratch.file("equal.svm");
  {
    std::mt19937 random(2);
    std::normal_distribution<double> normal;
    std::ofstream out(equal);
    for (int i = 0; i < 60; ++i) {
      const double x = normal(random);
      out << x + 0.01 * normal(random) << " 1:" << x << " 2:" << x << " 3:" << x << " 4:" << x
          << " 5:" << normal(random) << '\n';
    }
  }
  // Evaluated every 40 rounds, the shared-factor run is far out (an objective near 1e19) when caught:
  // the workers' residuals are made again from y, since subtracting the steps back would leave them
  // rounding noise.
  struct Case {
    std::string path;
    double lambda_ratio;
    std::string flags;
  };
  // Blocks drawn by weight: cyclic sweeps end a block at the first candidate the check rejects.
  const std::vector<Case> cases = {{shared, 0.001, "--sweeps=false"},
                                   {shared, 0.001, "--sweeps=false --eval_every 40"},
                                   {equal, 0.1, "--sweeps=false --rho 1"}};
  struct Layout {
    int ranks;
    std::string flags;
  };
  for (const auto& [path, lambda_ratio, flags] : cases) {
    const double reference = testing::solve_lasso_reference(io::read_libsvm(path), lambda_ratio).objective;
    for (const auto& [ranks, layout] : {Layout{1, "--in_order=false"}, Layout{3, ""}}) {
      SCOPED_TRACE(path + " " + flags + ", np " + std::to_string(ranks) + " " + layout);
      const Output out =
          run(testing::mpirun(ranks) + SCHMP_LASSO_BIN + " --layout all --data " + path + " --lambda_ratio " +
              std::to_string(lambda_ratio) + " " + flags + " " + layout + " --tol 1e-9 --progress_seconds 0");
      ASSERT_EQ(out.status, 0) << out.text;
      EXPECT_NE(out.text.find("warning: parallel updates interfered"), std::string::npos) << out.text;
      EXPECT_NE(out.text.find("schmp-lasso: converged after"), std::string::npos) << out.text;
      EXPECT_NEAR(objective_of(out), reference, 1e-6 * reference) << out.text;
    }
  }
}

TEST_F(LassoEndToEnd, ALimitBetweenEvaluationsEndsConvergedWhenTheFinalEvaluationSaysSo) {
  // Evaluated every 10 rounds, the gap falls below --tol between rounds 33 and 35: stopped at round 35
  // by --max_rounds, the final evaluation finds it converged; at 33, not yet. Plain rounds: a step from
  // the Gram matrix would move the round at which the gap falls.
  const std::string lasso = std::string(SCHMP_LASSO_BIN) + " --layout all --data " + diabetes().path +
                            " --lambda_ratio 0.05 --tol 1e-6 --fit_intercept=false --eval_every 10 "
                            "--sweeps=false --newton_steps rounds --progress_seconds 0 --max_rounds ";
  const Output converged = run(lasso + "35");
  ASSERT_EQ(converged.status, 0) << converged.text;
  EXPECT_NE(converged.text.find("schmp-lasso: converged after 35 rounds"), std::string::npos)
      << converged.text;
  EXPECT_EQ(converged.text.find("before converging"), std::string::npos) << converged.text;
  const Output stopped = run(lasso + "33");
  ASSERT_EQ(stopped.status, 0) << stopped.text;
  EXPECT_NE(stopped.text.find("schmp-lasso: max_rounds after 33 rounds"), std::string::npos) << stopped.text;
  EXPECT_NE(stopped.text.find("stopped by max_rounds before converging"), std::string::npos) << stopped.text;
}

TEST_F(LassoEndToEnd, UnwritableOutputsFailBeforeSolving) {
  testing::ScratchDir scratch;
  const std::string directory = scratch.file("a-directory");
  std::filesystem::create_directories(directory);
  for (const std::string& path : {std::string("/nonexistent-dir/file"), directory}) {
    for (const std::string flag : {"--output", "--trace"}) {
      const Output out = run(mpirun(3) + SCHMP_LASSO_BIN + " --layout all --data " + diabetes().path + " " +
                             flag + " " + path + " --progress_seconds 0");
      testing::expect_clean_failure(out, "schmp-lasso: error: " + path + ": cannot write");
      EXPECT_EQ(out.text.find("rounds"), std::string::npos) << "it solved before failing:\n" << out.text;
    }
  }
}

// An output on the run's own data would overwrite it; two outputs on one file, one the other. Refused
// before the data is touched, under any spelling of the path.
TEST_F(LassoEndToEnd, OutputsOnTheDataOrOnEachOtherAreRefused) {
  testing::ScratchDir scratch;
  const std::string data = scratch.write("d.svm", testing::read_text(diabetes().path));
  const std::string dotted = scratch.file(".") + "/d.svm";
  const std::string model = scratch.file("model.txt");
  const std::string lasso = std::string(SCHMP_LASSO_BIN) + " --layout all --data " + data;
  testing::expect_settings_refused(
      "schmp-lasso", lasso,
      {{"--output " + dotted, dotted + ": --output names the file of --data, which the run would overwrite"},
       {"--trace " + data, data + ": --trace names the file of --data, which the run would overwrite"},
       {"--output " + model + " --trace " + model,
        model + ": --trace and --output name the same file: one would replace the other"},
       {"--checkpoint " + data,
        data + ": --checkpoint names the file of --data, which the run would overwrite"},
       {"--checkpoint " + model + " --output " + model,
        model + ": --checkpoint and --output name the same file: one would replace the other"},
       {"--resume " + model + " --output " + model,
        model + ": --output names the file of --resume, which the run would overwrite"}});
  EXPECT_EQ(testing::read_text(data), testing::read_text(diabetes().path));
  EXPECT_FALSE(std::filesystem::exists(model));
  // A directory of shards: no output may land among its part files.
  const std::string shards = scratch.file("shards");
  std::filesystem::create_directory(shards);
  const std::string part = scratch.write("shards/part-00000", testing::read_text(diabetes().path));
  testing::expect_settings_refused(
      "schmp-lasso", std::string(SCHMP_LASSO_BIN) + " --layout all --data " + shards,
      {{"--output " + part,
        part + ": --output lies in the directory of --data, whose part files the run would overwrite"}});
  EXPECT_EQ(testing::read_text(part), testing::read_text(diabetes().path));
  // The checkpoint a run resumes from is the one it goes on writing.
  const std::string checkpoint = scratch.file("run.checkpoint");
  ASSERT_EQ(
      run(mpirun(2) + lasso + " --max_rounds 20 --checkpoint " + checkpoint + " --progress_seconds 0").status,
      0);
  const Output resumed = run(mpirun(2) + lasso + " --max_rounds 40 --resume " + checkpoint +
                             " --checkpoint " + checkpoint + " --progress_seconds 0");
  EXPECT_EQ(resumed.status, 0) << resumed.text;
}

TEST_F(LassoEndToEnd, WindowsLineEndingsCommentsAndBlankLinesAreAccepted) {
  std::string messy = "# a comment line\r\n\r\n";
  std::istringstream lines(testing::read_text(diabetes().path));
  std::string line;
  while (std::getline(lines, line)) messy += line + "  # trailing comment\r\n";
  messy += "\r\n\n   \n";
  const std::string path = (scratch_ / "messy.svm").string();
  std::ofstream(path, std::ios::binary) << messy;
  const testing::LassoSolution reference =
      testing::solve_lasso_reference(io::read_libsvm(diabetes().path), 0.01);
  const Output out = run(mpirun(3) + SCHMP_LASSO_BIN + " --layout all --data " + path +
                         " --lambda_ratio 0.01 --tol 1e-10" + " --progress_seconds 0");
  ASSERT_EQ(out.status, 0) << out.text;
  EXPECT_NEAR(objective_of(out), reference.objective, 1e-6 * reference.objective);
}

// Data scaled up to the largest values the readers take (1e100), or X and y scaled apart, solve like the
// data they scale, the coefficients scaled by y's factor over X's. The dual objective multiplied
// (n lambda)^2 into ||r||^2, which overflowed from values of about 1e50 up and stopped the run as
// "diverged"; the priorities divided ||x_j||^2 by ||y||^2, which overflowed when X was 1e77 times y and
// left the sampling uniform (8 times the rounds).
TEST_F(LassoEndToEnd, ScaledDataGivesTheSameCoefficientsScaled) {
  const Dataset data = generated();  // values within 4 in magnitude, labels within 8
  const io::SparseRows rows = io::read_libsvm(data.path);
  const testing::LassoSolution reference = testing::solve_lasso_reference(rows, data.lambda_ratio);
  const auto rounds_of = [](const Output& out) {
    std::smatch match;
    return std::regex_search(out.text, match, std::regex("after ([0-9]+) rounds")) ? std::stod(match[1])
                                                                                   : NAN;
  };
  const std::string model = (scratch_ / "scaled.txt").string();
  const std::string flags = " --lambda_ratio " + std::to_string(data.lambda_ratio) +
                            " --tol 1e-10 --progress_seconds 0 --output " + model;
  std::map<int, double> unscaled_rounds;
  for (const int ranks : {1, 3}) {
    const Output out = run(mpirun(ranks) + SCHMP_LASSO_BIN + " --layout all --data " + data.path + flags);
    ASSERT_EQ(out.status, 0) << out.text;
    unscaled_rounds[ranks] = rounds_of(out);
  }
  for (const auto& [x_factor, y_factor] :
       std::vector<std::pair<double, double>>{{1e98, 1e98}, {1e80, 1e-80}}) {
    const std::string path = (scratch_ / "scaled.svm").string();
    {
      std::ofstream scaled(path);
      scaled.precision(17);
      for (std::size_t r = 0; r < rows.rows(); ++r) {
        scaled << rows.labels[r] * y_factor;
        for (std::uint64_t e = rows.row_start[r]; e < rows.row_start[r + 1]; ++e)
          scaled << ' ' << rows.index[e] + 1 << ':' << rows.value[e] * x_factor;
        scaled << '\n';
      }
    }
    for (const int ranks : {1, 3}) {
      SCOPED_TRACE("X times " + std::to_string(x_factor) + ", y times " + std::to_string(y_factor) + ", " +
                   std::to_string(ranks) + " ranks");
      const Output out = run(mpirun(ranks) + SCHMP_LASSO_BIN + " --layout all --data " + path + flags);
      ASSERT_EQ(out.status, 0) << out.text;
      EXPECT_NEAR(objective_of(out) / (y_factor * y_factor), reference.objective, 1e-6 * reference.objective);
      std::map<std::size_t, double> beta = read_model(model);
      for (auto& [j, value] : beta) value *= x_factor / y_factor;
      EXPECT_EQ(support(beta), support(as_map(reference.beta)));
      EXPECT_LT(rounds_of(out), 1.5 * unscaled_rounds[ranks]) << out.text;
    }
  }
  // A lambda so large that n lambda overflows leaves every coefficient at 0; it was taken for divergence.
  const Output huge =
      run(std::string(SCHMP_LASSO_BIN) + " --data " + data.path + " --lambda 1e306 --progress_seconds 0");
  ASSERT_EQ(huge.status, 0) << huge.text;
  EXPECT_NE(huge.text.find("nonzeros 0 of"), std::string::npos) << huge.text;
}

struct BadInput {
  std::string name;
  std::string content;  // empty name: the file is not created
  std::string message;  // expected after "schmp-lasso: error: "
};
void PrintTo(const BadInput& b, std::ostream* os) { *os << b.name; }

class LassoBadInput : public LassoEndToEnd, public ::testing::WithParamInterface<BadInput> {};

TEST_P(LassoBadInput, FailsOnEveryRankWithOneMessage) {
  const BadInput& bad = GetParam();
  const std::string path = (scratch_ / (bad.name + ".svm")).string();
  if (bad.name != "missing") std::ofstream(path, std::ios::binary) << bad.content;
  const std::string model = (scratch_ / (bad.name + ".model")).string();
  for (int ranks : {1, 3}) {
    const Output out = run(mpirun(ranks) + SCHMP_LASSO_BIN + " --layout all --data " + path + " --output " +
                           model + " --progress_seconds 0");
    testing::expect_stopped_by_itself(out);
    const std::string expected = "schmp-lasso: error: " + path + bad.message;
    EXPECT_NE(out.text.find(expected), std::string::npos) << "expected '" << expected << "' in:\n"
                                                          << out.text;
    std::size_t errors = 0;
    for (std::size_t at = out.text.find(": error:"); at != std::string::npos;
         at = out.text.find(": error:", at + 1)) {
      ++errors;
    }
    EXPECT_EQ(errors, 1u) << out.text;
    EXPECT_FALSE(std::filesystem::exists(model));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, LassoBadInput,
    ::testing::Values(
        BadInput{"malformed", "1 1:2 2:3\n2 1:1 2\n", ":2: "},
        BadInput{"non_numeric_value", "1 1:2\n2 1:x\n", ":2: "},
        BadInput{"non_numeric_label", "1 1:2\nabc 1:1\n3 2:1\n", ":2: "},
        BadInput{"index_zero", "1 1:2\n2 2:1\n3 0:1\n", ":3: "},
        BadInput{"index_too_large", "1 1:2\n2 4294967296:1\n", ":2: "},
        // 430 GB or more on the first rank (more in one process): refused at its line, not killed part way.
        BadInput{"index_beyond_memory", "1 1:2\n2 4294967294:1\n", ":2: column 4294967294, at "},
        BadInput{"not_a_number", "1 1:2\n2 1:nan\n", ":2: "},
        BadInput{"infinite_label", "1 1:2\ninf 1:1\n", ":2: "},
        BadInput{"value_too_large", "1 1:2\n2 1:1e160\n", ":2: value 1e160 too large"},
        BadInput{"empty", "", ": "}, BadInput{"missing", "", ": "}),
    [](const ::testing::TestParamInfo<BadInput>& info) { return info.param.name; });

// schmp-generate, which the tests and benchmarks draw their problems from: one error line and status 1
// where it cannot write (neither file of a pair written when one cannot be), for settings that would
// give empty files and for stray arguments; dense rows, steep item popularity and tiny Dirichlet priors
// end, and well.
// SIGTERM or SIGINT while the files are written leaves neither them nor their temporary names: the
// temporary files were left behind.
TEST(Generator, ASignalWhileWritingLeavesNoFiles) {
  for (const char* signal : {"TERM", "INT"}) {
    testing::ScratchDir dir;
    const std::string out = dir.file("x.svm");
    // Signalled once its temporary file is there, so that the signal falls while it writes.
    const Output stopped =
        run("bash -c '" + std::string(SCHMP_GENERATE_BIN) + " lasso --rows 100000000 --cols 1000 --out " +
            out + " & for i in $(seq 600); do ls " + out + ".tmp.* >/dev/null 2>&1 && break; " +
            "sleep 0.05; done; kill -" + signal + " $!; wait $!'");
    EXPECT_EQ(stopped.status, 128 + (std::string(signal) == "TERM" ? SIGTERM : SIGINT)) << stopped.text;
    EXPECT_NE(stopped.text.find("schmp-generate: error: "), std::string::npos) << stopped.text;
    EXPECT_NE(stopped.text.find(out + " left unwritten"), std::string::npos) << stopped.text;
    EXPECT_TRUE(std::filesystem::is_empty(dir.file(""))) << "files left behind";
  }
}

TEST(Generator, FailsWithOneLineAndEndsOnExtremeSettings) {
  testing::ScratchDir dir;
  const std::string generate = "timeout 120 " + std::string(SCHMP_GENERATE_BIN);
  const Output unwritable = run(generate + " lasso --rows 10 --out " + dir.file("missing/x.svm"));
  EXPECT_EQ(unwritable.status, 1) << unwritable.text;
  EXPECT_EQ(unwritable.text, "schmp-generate: error: " + dir.file("missing/x.svm") +
                                 ": cannot write: No such file or directory\n");
  const Output not_a_number = run(generate + " mf --zipf nan --out " + dir.file("m.txt"));
  EXPECT_EQ(not_a_number.status, 1) << not_a_number.text;
  const Output one_item =
      run(generate + " mf --users 1000 --items 1 --ratings 500 --test_ratings 0 --out " + dir.file("m.txt"));
  EXPECT_EQ(one_item.status, 1) << one_item.text;
  EXPECT_FALSE(std::filesystem::exists(dir.file("m.txt")));
  const Output stray = run(generate + " lasso extra --rows 10 --out " + dir.file("x.svm"));
  EXPECT_EQ(stray.status, 1) << stray.text;
  EXPECT_NE(stray.text.find("unexpected argument 'extra'"), std::string::npos) << stray.text;
  std::filesystem::create_directory(dir.file("pair.txt.test"));
  const Output half = run(generate + " mf --users 10 --items 10 --ratings 20 --out " + dir.file("pair.txt"));
  EXPECT_EQ(half.status, 1) << half.text;
  EXPECT_FALSE(std::filesystem::exists(dir.file("pair.txt"))) << "the first of the pair was written";
  // Sizes beyond what the apps read, or beyond any machine's memory, are refused by name before any
  // work (they overflowed, or ran out of memory part way); so are infinite priors (NaN truths).
  const std::vector<std::pair<std::string, std::string>> refused{
      {"mf --users 4611686018427387904 --rank 4 --items 4 --ratings 1",
       "--users must be between 1 and 4294967295"},
      {"lda --topics 100000000000 --words 10", "--topics must be between 1 and 100000"},
      {"lasso --cols 18446744073709551615", "--cols must be between 1 and 4294967294"},
      {"lda --words 4000000000 --topics 100000", "these sizes need about 9.6e+06 GB, more than the "},
      {"lda --alpha inf --documents 3 --words 4 --topics 2", "--alpha must be positive and finite, not inf"},
      {"lasso --cols 10", "--support (50) must not exceed --cols (10)"},
      {"mf --users 10 --items 4 --ratings 30", "--ratings and --test_ratings (30 and 10000) exceed the 20"},
      {"lasso --rows=ten", "--rows=ten: expected a whole number from 0 that fits 64 bits"}};
  for (const auto& [flags, message] : refused) {
    const Output out = run(generate + " " + flags + " --out " + dir.file("big.txt"));
    EXPECT_EQ(out.status, 1) << flags;
    EXPECT_EQ(out.text.rfind("schmp-generate: error: ", 0), 0u) << out.text;
    EXPECT_NE(out.text.find(message), std::string::npos) << out.text;
    EXPECT_EQ(std::count(out.text.begin(), out.text.end(), '\n'), 1) << out.text;
    EXPECT_FALSE(std::filesystem::exists(dir.file("big.txt")));
  }

  ASSERT_EQ(run(generate + " lasso --rows 3 --cols 2000 --density 1 --out " + dir.file("dense.svm")).status,
            0);
  const io::SparseRows dense = io::read_libsvm(dir.file("dense.svm"));
  ASSERT_EQ(dense.rows(), 3u);
  // About cols x density distinct columns a row (Poisson, at most cols), in increasing order.
  for (std::size_t r = 0; r < dense.rows(); ++r) {
    EXPECT_GT(dense.row_start[r + 1] - dense.row_start[r], 1800u);
    for (std::size_t e = dense.row_start[r] + 1; e < dense.row_start[r + 1]; ++e)
      EXPECT_LT(dense.index[e - 1], dense.index[e]);
  }
  ASSERT_EQ(run(generate + " mf --users 5 --items 100 --ratings 200 --test_ratings 0 --zipf 6 --out " +
                dir.file("steep.txt"))
                .status,
            0);
  std::istringstream ratings(testing::read_text(dir.file("steep.txt")));
  std::set<std::pair<int, int>> pairs;
  int count = 0;
  for (int user, item; ratings >> user >> item;) {
    double value = 0;
    ratings >> value;
    pairs.insert({user, item});
    ++count;
  }
  EXPECT_GT(count, 100);
  EXPECT_EQ(pairs.size(), static_cast<std::size_t>(count)) << "an item rated twice by one user";
  ASSERT_EQ(run(generate + " lda --documents 5 --words 20 --topics 2 --alpha 1e-6 --beta 1e-6 --out " +
                dir.file("lda.txt"))
                .status,
            0);
  EXPECT_EQ(testing::read_text(dir.file("lda.txt.truth")).find("nan"), std::string::npos);
}

TEST_F(LassoEndToEnd, BadOptionsFailCleanly) {
  const Output out =
      run(mpirun(3) + SCHMP_LASSO_BIN + " --layout all --data " + diabetes().path + " --schedulers 0");
  EXPECT_NE(out.status, 0);
  EXPECT_NE(out.text.find("schmp-lasso: error: --schedulers must be at least 1"), std::string::npos)
      << out.text;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--lambda -1", "--lambda must be positive"},
      {"--rho 0", "--rho must be in (0, 1]"},
      {"--eta 0", "--eta must be positive"},
      {"--priority_power 3", "--priority_power must be 1 or 2"},
      {"--staleness 5000", "--staleness must be between 0 and 1000"},
      {"--lambda_ratio 1e307", "--lambda_ratio times lambda_max overflows: give --lambda"},
      {"--schedulers 2147483647", "--schedulers (2147483647) must not exceed --schedule_size (32)"},
      {"--schedulers 20 --schedule_size 64",
       "--schedulers (20) exceeds the 10 parameters to share among them"}};
  for (const auto& [flags, message] : cases) {
    const Output bad =
        run(mpirun(3) + SCHMP_LASSO_BIN + " --layout all --data " + diabetes().path + " " + flags);
    testing::expect_clean_failure(bad, "schmp-lasso: error: " + message);
  }
  // A labels file beside LIBSVM rows, which carry their own labels, was ignored, even when missing.
  for (const int ranks : {1, 3}) {
    testing::expect_clean_failure(
        run(mpirun(ranks) + SCHMP_LASSO_BIN + " --layout all --data " + diabetes().path +
            " --labels no-such-labels.txt"),
        "schmp-lasso: error: no-such-labels.txt: labels in a file of their own are for a MatrixMarket "
        "matrix: " +
            diabetes().path + " is LIBSVM, whose rows carry their own");
  }
  const Output no_data = run(mpirun(1) + SCHMP_LASSO_BIN);
  EXPECT_NE(no_data.status, 0);
  EXPECT_NE(no_data.text.find("schmp-lasso: error: --data is required"), std::string::npos) << no_data.text;
  // Flag files that name each other sent gflags round until the stack overflowed, on every rank; the
  // same file named twice side by side is no loop.
  const std::string first = (scratch_ / "first.flags").string();
  const std::string second = (scratch_ / "second.flags").string();
  std::ofstream(first) << "--max_rounds=3\n--flagfile=" << second << "\n";
  std::ofstream(second) << "  --flagfile=" << first << "\n";
  for (const int ranks : {1, 3}) {
    testing::expect_clean_failure(run(mpirun(ranks) + SCHMP_LASSO_BIN + " --layout all --data " +
                                      diabetes().path + " --flagfile " + first),
                                  "schmp-lasso: error: " + second + ":1: " + first +
                                      ": --flagfile names itself, directly or through other flag files");
  }
  std::ofstream(second) << "--lambda_ratio=0.5\n";
  const Output twice =
      run(mpirun(1) + SCHMP_LASSO_BIN + " --data " + diabetes().path + " --flagfile=" + first + "," + first);
  EXPECT_EQ(twice.status, 0) << twice.text;
  EXPECT_NE(twice.text.find("(0.5 lambda_max)"), std::string::npos) << twice.text;
  // A flag file that is a pipe is read once, as a regular file is.
  const Output piped = run("bash -c '" + std::string(SCHMP_LASSO_BIN) + " --data " + diabetes().path +
                           " --flagfile <(echo --lambda_ratio=0.5)'");
  EXPECT_EQ(piped.status, 0) << piped.text;
  EXPECT_NE(piped.text.find("(0.5 lambda_max)"), std::string::npos) << piped.text;
}

// Every mistake on the command line or in a flag file is one line, naming the flag file's line, on
// every rank count. gflags printed its own "ERROR: ..." for the command line's, and ignored the flag
// files' unknown flags and their flags without a value.
TEST_F(LassoEndToEnd, CommandLineMistakesAreOneLine) {
  const auto file = [&](const std::string& name, const std::string& content) {
    const std::string path = (scratch_ / name).string();
    std::ofstream(path) << content;
    return path;
  };
  const std::string misspelt = file("misspelt.flags", "# a comment\n\n--max_round=3\n");
  const std::string spaced = file("spaced.flags", "  --lambda_ratio 0.5\n");
  const std::string valueless = file("valueless.flags", "--lambda_ratio\n");
  const std::string typed = file("typed.flags", "--sweeps=maybe\n");
  const std::string dashes = file("dashes.flags", "--max_rounds=3\n--\n");
  const std::string blanks = file("blanks.flags", "--lambda_ratio = 0.5\n");
  // Without its dashes, a flag would start a section of program names that matches none, and every
  // line after it would be skipped.
  const std::string undashed = file("undashed.flags", "lambda_ratio=0.5\n--bogus=1\n");
  const std::string old_mac = file("old_mac.flags", "--lambda_ratio=0.5\r--max_rounds=3\r");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--max_round=3", "unknown flag --max_round: did you mean --max_rounds?"},
      {"--iterations=3", "unknown flag --iterations (see --help)"},
      {"--trace_file=t.csv", "unknown flag --trace_file: did you mean --trace?"},
      {"--trace_out=t.csv", "unknown flag --trace_out: did you mean --trace?"},
      {"--model_out=m.txt", "unknown flag --model_out: did you mean --output?"},
      {"--progress=1", "unknown flag --progress: did you mean --progress_seconds?"},
      {"--sched=2", "unknown flag --sched: did you mean --schedule_size or --schedulers?"},
      {"--checkpoint_interval=60", "unknown flag --checkpoint_interval (see --help)"},
      {"--helpmatch --tryfromenv=lasso", "--helpmatch needs a value: --helpmatch=VALUE"},
      {"--flagfile=\"$(printf 'no\\nsuch')\"",
       "no\\x0asuch: cannot read the flag file: No such file or directory"},
      {"--max_rounds=abc", "--max_rounds=abc: expected a whole number from 0 that fits 64 bits"},
      {"--max_rounds abc", "--max_rounds=abc: expected a whole number from 0 that fits 64 bits"},
      {"--schedulers=99999999999", "--schedulers=99999999999: expected a whole number that fits 32 bits"},
      {"--lambda_ratio=1e400", "--lambda_ratio=1e400: expected a number"},
      {"--sweeps false",
       "unexpected argument 'false' after --sweeps: a true/false flag takes its value after '=', as in "
       "--sweeps=false"},
      {"stray.svm", "unexpected argument 'stray.svm': settings are flags, --name=VALUE (see --help)"},
      {"--output", "--output needs a value: --output=VALUE"},
      {"--output --max_rounds=3", "--output needs a value: --output=VALUE"},
      {"--nosweeps=0", "--nosweeps takes no value: write --sweeps=0 instead"},
      {"--flagfile " + misspelt, misspelt + ":3: unknown flag --max_round: did you mean --max_rounds?"},
      {"--flagfile " + spaced,
       spaced + ":1: a flag file's line is --name=value, with no blank: --lambda_ratio=0.5"},
      {"--flagfile " + valueless, valueless + ":1: --lambda_ratio needs a value: --lambda_ratio=VALUE"},
      {"--flagfile=" + typed, typed + ":1: --sweeps=maybe: expected true or false"},
      {"--flagfile " + (scratch_ / "missing.flags").string(),
       (scratch_ / "missing.flags").string() + ": cannot read the flag file: No such file or directory"},
      {"--flagfile " + scratch_.string(),
       scratch_.string() + ": cannot read the flag file: it is a directory"},
      {"--flagfile " + dashes, dashes + ":2: '--' names no flag"},
      {"--flagfile " + blanks,
       blanks + ":1: a flag file's line is --name=value, with no blank: --lambda_ratio=0.5"},
      {"--output --nopriority", "--output needs a value: --output=VALUE"},
      {"--=5", "'--=5' names no flag"},
      {"--no", "unknown flag --no (see --help)"},
      {"--lambda=\"$(printf '1\\n2')\"", "--lambda=1\\x0a2: expected a number"},
      {"--flagfile " + undashed,
       undashed + ":1: 'lambda_ratio=0.5' is neither a flag (--name=value) nor a line of program names"},
      {"--flagfile " + old_mac, old_mac + ":1: a carriage return inside the line: lines end in a newline"},
      {"--fromenv=max_rounds", "--fromenv names max_rounds, but FLAGS_max_rounds is not in the environment"},
      {"--tryfromenv=max_round", "--tryfromenv names unknown flag --max_round: did you mean --max_rounds?"},
      // The first mistake in the arguments' order is the one told, a flag file's or the environment's too.
      {"--fromenv=zzzz,max_rounds", "--fromenv names unknown flag --zzzz (see --help)"},
      {"--max_round=3 --flagfile " + (scratch_ / "missing.flags").string(),
       "unknown flag --max_round: did you mean --max_rounds?"}};
  // Every rank reads the same command line: one process tries each case, three ranks the first two kinds.
  const std::string lasso = SCHMP_LASSO_BIN + std::string(" --layout all --data ") + diabetes().path + " ";
  for (const auto& [flags, message] : cases) {
    SCOPED_TRACE(flags);
    testing::expect_clean_failure(run(lasso + flags), "schmp-lasso: error: " + message);
  }
  for (const std::string& three_ranks :
       std::vector<std::string>{"--max_round=3", "--flagfile " + misspelt, "--fromenv=max_rounds"}) {
    const auto found =
        std::find_if(cases.begin(), cases.end(), [&](const auto& c) { return c.first == three_ranks; });
    ASSERT_NE(found, cases.end()) << three_ranks;
    testing::expect_clean_failure(run(mpirun(3) + lasso + found->first),
                                  "schmp-lasso: error: " + found->second);
  }
  // Every rank must run with the same settings: a flag file or a variable for --fromenv that differs
  // between hosts had the ranks disagree (MF crashed on a --rank of 8 beside 16; Lasso went on with rank
  // 0's lambda).
  const Output differing = run("timeout 300 " + std::string(SCHMP_MPIEXEC) +
                               " --allow-run-as-root --oversubscribe --bind-to none -np 1 " + lasso +
                               "--lambda_ratio 0.5 : -np 2 " + lasso + "--lambda_ratio 0.3");
  testing::expect_clean_failure(differing, "schmp-lasso: error: --lambda_ratio=0.3 on rank 1 (host ");
  EXPECT_NE(differing.text.find("), --lambda_ratio=0.5 on rank 0 (host "), std::string::npos)
      << differing.text;
  // A flag given on one rank only, at its default, too: a program may refuse a flag given at all (MF's
  // --top in training), and a rank that refused alone left the others waiting.
  const Output given = run("timeout 300 " + std::string(SCHMP_MPIEXEC) +
                           " --allow-run-as-root --oversubscribe --bind-to none -np 2 " + lasso + ": -np 1 " +
                           lasso + "--max_rounds=1000000");
  testing::expect_clean_failure(given, "schmp-lasso: error: --max_rounds=1000000 on rank 2 (host ");
  EXPECT_NE(given.text.find("), --max_rounds not given (1000000) on rank 0 (host "), std::string::npos)
      << given.text;
  // What may differ still runs, with the result of one rank's settings: --threads, sized to each host's
  // cores, and a path spelt otherwise (flag files on two hosts, written by hand).
  const std::string alike_data = (scratch_ / "alike.svm").string();
  std::filesystem::copy_file(diabetes().path, alike_data);
  const std::string in_scratch =
      " --wdir " + scratch_.string() + " " + SCHMP_LASSO_BIN + " --layout all --progress_seconds 0 --data ";
  const std::string first = "timeout 300 " + std::string(SCHMP_MPIEXEC) +
                            " --allow-run-as-root --oversubscribe --bind-to none -np 1" + in_scratch +
                            "./alike.svm --threads 1 : -np 2" + in_scratch;
  const Output per_host = run(first + "alike.svm --threads 2");
  EXPECT_EQ(per_host.status, 0) << per_host.text;
  const Output one_way = run(first + "./alike.svm --threads 1");
  EXPECT_EQ(one_way.status, 0) << one_way.text;
  EXPECT_EQ(objective_of(per_host), objective_of(one_way));
  // The same file by an absolute path or a link, too; but not a path that names no file where the other
  // names one (the file as a directory, "alike.svm/").
  std::filesystem::create_symlink("alike.svm", scratch_ / "link.svm");
  for (const std::string& same : {alike_data, std::string("link.svm")}) {
    const Output out = run(first + same + " --threads 1");
    EXPECT_EQ(out.status, 0) << out.text;
    EXPECT_EQ(objective_of(out), objective_of(one_way)) << same;
  }
  testing::expect_clean_failure(run(first + "alike.svm/ --threads 1"),
                                "schmp-lasso: error: --data=alike.svm/ on rank 1 (host ");
  // A flag file every rank reads must be a file: stdin reaches the first rank only, and the others
  // read other flags (or none) and waited for it.
  const std::string schedulers = file("schedulers.flags", "--schedulers=2\n");
  testing::expect_clean_failure(
      run(mpirun(3) + lasso + "--flagfile /dev/stdin < " + schedulers),
      "schmp-lasso: error: /dev/stdin: a flag file read by 3 ranks must be a regular file (a pipe or stdin "
      "reaches one of them): save it to a file");
  // A mistake only some ranks see (a flag file missing on their host) is printed by one of them: the
  // first rank, which read its flags, waits for it rather than being stopped before the line is out.
  const std::filesystem::path here = scratch_ / "here";
  const std::filesystem::path elsewhere = scratch_ / "elsewhere";
  std::filesystem::create_directories(here);
  std::filesystem::create_directories(elsewhere);
  std::ofstream(here / "local.flags") << "--lambda_ratio=0.5\n";
  const std::string local =
      std::string(SCHMP_LASSO_BIN) + " --data " + diabetes().path + " --flagfile local.flags";
  testing::expect_clean_failure(
      run("timeout 300 " + std::string(SCHMP_MPIEXEC) +
          " --allow-run-as-root --oversubscribe --bind-to none -np 1 --wdir " + here.string() + " " + local +
          " : -np 2 --wdir " + elsewhere.string() + " " + local),
      "schmp-lasso: error: local.flags: cannot read the flag file: No such file or directory");

  // What is right still runs: a negative number after its flag, --undefok, a CRLF file, and sections
  // of a flag file by program name (the other program's unknown flag is not this one's concern).
  const std::string shared = file("shared.flags",
                                  "--max_rounds=200\r\n"
                                  "schmp-logreg\n--not_a_lasso_flag=1\n"
                                  "schmp-lass? other-program\n--lambda_ratio=0.5 \r\n--nopriority\n");
  for (const int ranks : {1, 3}) {
    const Output out = run(mpirun(ranks) + SCHMP_LASSO_BIN + " --layout all --data " + diabetes().path +
                           " --flagfile " + shared + " --undefok=foo --foo=1 --progress_seconds 0");
    EXPECT_EQ(out.status, 0) << out.text;
    EXPECT_NE(out.text.find("(0.5 lambda_max)"), std::string::npos) << out.text;
  }
  const Output negative = run(std::string(SCHMP_LASSO_BIN) + " --data " + diabetes().path + " --lambda -1");
  testing::expect_clean_failure(negative, "schmp-lasso: error: --lambda must be positive");
  // The environment's flags (--fromenv) are held to the same rules, and taken when right.
  testing::expect_clean_failure(
      run("FLAGS_max_rounds=abc " + lasso + "--fromenv=max_rounds"),
      "schmp-lasso: error: FLAGS_max_rounds (environment): --max_rounds=abc: expected "
      "a whole number from 0 that fits 64 bits");
  // --undefok, even after them, lets through an unknown name they give, as in gflags.
  for (const std::string environment_flags :
       {"--fromenv lambda_ratio --undefok=foo --nofoo", "--tryfromenv=foo,lambda_ratio --undefok=foo"}) {
    const Output from_environment = run("FLAGS_lambda_ratio=0.5 " + lasso + environment_flags);
    EXPECT_EQ(from_environment.status, 0) << environment_flags << "\n" << from_environment.text;
    EXPECT_NE(from_environment.text.find("(0.5 lambda_max)"), std::string::npos) << from_environment.text;
  }
  // Asked-for help is no failure (gflags exits 1, which mpirun reports as a failed job), and comes
  // before any mistake beside it, as in gflags.
  for (const std::string help_flag : {"--help", "--helpshort --max_round=3", "--helpxml"}) {
    const Output help = run(mpirun(3) + SCHMP_LASSO_BIN + " " + help_flag);
    EXPECT_EQ(help.status, 0) << help.text;
    EXPECT_NE(help.text.find("usage: mpirun -np N schmp-lasso"), std::string::npos) << help.text;
  }
  const Output xml = run(std::string(SCHMP_LASSO_BIN) + " --helpxml");
  EXPECT_NE(xml.text.find("<name>max_rounds</name>"), std::string::npos) << xml.text;
  EXPECT_NE(xml.text.find("</AllFlags>"), std::string::npos) << xml.text;
}

// Real data from the shared data folder, when it is there.
class LassoSharedData : public LassoEndToEnd, public ::testing::WithParamInterface<Dataset> {};

TEST_P(LassoSharedData, MatchesReference) {
  if (!std::filesystem::exists(GetParam().path)) GTEST_SKIP() << GetParam().path << " is not present";
  // 1e-9: on MovieLens' 100,004 rows the rounding of the gap's sums is a relative 1e-10.
  expect_matches_reference(GetParam(), 3, "", 1e-9);
}

INSTANTIATE_TEST_SUITE_P(
    Sets, LassoSharedData,
    ::testing::Values(
        Dataset{"movielens",
                std::string(SCHMP_SHARED_DATA) + "/lasso/movielens_small_linreg/movielens_small.linreg.svm",
                0.1},
        Dataset{"cox2", std::string(SCHMP_SHARED_DATA) + "/lasso/cox2_lasso/cox2_lasso.svm", 0.05}),
    [](const ::testing::TestParamInfo<Dataset>& info) { return info.param.name; });

}  // namespace
}  // namespace schmp
