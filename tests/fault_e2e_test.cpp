// Checkpoint, resume, signals and dead ranks, end to end for every app under mpirun:
//   - a rank killed (SIGKILL) midway ends the job within 10 s with a message naming it, and the last
//     checkpoint resumes, on the same, fewer and more ranks, to the final objective of an uninterrupted
//     run;
//   - SIGTERM to mpirun ends the run cleanly with a usable model and a checkpoint, and so does SIGTERM
//     delivered twice to every rank (as a batch system and mpirun both deliver it), each rank then
//     exiting with 128 + SIGTERM, and SIGTERM to one worker or scheduler rank alone;
//   - a checkpoint made with other settings is refused on every rank.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "e2e.hpp"
#include "test_files.hpp"

namespace schmp::testing {
namespace {

using Clock = std::chrono::steady_clock;

// How an app runs in these tests. `{K}` in `finish` stands for an iteration count past the checkpoint.
struct App {
  std::string name;
  std::string binary;
  std::string data;       // data flags, `{dir}` standing for the suite's data directory
  std::string long_run;   // flags of a run that goes on until it is stopped
  std::string finish;     // flags of the runs that finish: uninterrupted and resumed
  std::string use_model;  // a command that reads the model written at `{model}`, or "" for none
  double tolerance;       // on the final objective: relative, or absolute when `absolute`
  bool absolute;
};
void PrintTo(const App& app, std::ostream* os) { *os << app.name; }

std::string replaced(std::string text, const std::string& key, const std::string& value) {
  for (std::size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size()))
    text.replace(at, key.size(), value);
  return text;
}

// The command line of a process, its arguments separated by spaces, and its environment; "" for a
// process that exits while it is read (the read then fails with ESRCH, which the stream throws).
std::string proc_file(int pid, const char* name) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/" + name, std::ios::binary);
  std::string text;
  try {
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } catch (const std::exception&) {
    return "";
  }
  for (char& c : text) {
    if (c == '\0') c = '\n';
  }
  return text;
}

// The processes whose command line mentions `marker` (a test's own scratch directory, so that tests
// running beside this one are never touched), filtered by `wanted(command_line, environment)`.
template <class Wanted>
std::vector<int> processes(const std::string& marker, Wanted wanted) {
  std::vector<int> pids;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const int pid = std::stoi(name);
    const std::string command = proc_file(pid, "cmdline");
    if (command.find(marker) == std::string::npos) continue;
    if (wanted(command, proc_file(pid, "environ"))) pids.push_back(pid);
  }
  return pids;
}

int rank_process(const std::string& marker, int rank) {
  const std::string variable = "\nOMPI_COMM_WORLD_RANK=" + std::to_string(rank) + "\n";
  const auto pids = processes(marker, [&](const std::string&, const std::string& environment) {
    return ("\n" + environment).find(variable) != std::string::npos;
  });
  return pids.size() == 1 ? pids.front() : -1;
}

int mpirun_process(const std::string& marker) {
  const std::string launcher = std::filesystem::path(SCHMP_MPIEXEC).filename().string();
  const auto pids = processes(marker, [&](const std::string& command, const std::string&) {
    return std::filesystem::path(command.substr(0, command.find('\n'))).filename().string() == launcher;
  });
  return pids.size() == 1 ? pids.front() : -1;
}

// The rows of a trace that is being written: only whole lines count.
std::size_t trace_rows(const std::string& path) {
  const std::string text = read_text(path);
  const auto lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  return lines > 0 ? lines - 1 : 0;
}

double final_objective(const std::string& trace_path) {
  const Trace trace = read_trace(trace_path);
  return trace.rows.empty() ? NAN : trace.rows.back()[2];
}

// The last value of a named trace column.
double last_in_column(const std::string& trace_path, const std::string& column) {
  const Trace trace = read_trace(trace_path);
  std::istringstream names(trace.header);
  std::size_t index = 0;
  for (std::string name; std::getline(names, name, ','); ++index) {
    if (name == column) return trace.rows.empty() ? NAN : trace.rows.back()[index];
  }
  return NAN;
}

// A command running in the background, its output collected when it ends.
class Background {
 public:
  explicit Background(std::string command)
      : thread_([this, command = std::move(command)] { output_ = run(command); }) {}
  ~Background() {
    if (thread_.joinable()) thread_.join();
  }
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;
  Output finish() {
    thread_.join();
    return output_;
  }

 private:
  Output output_;
  std::thread thread_;
};

// Waits (up to a minute) until `ready()` holds.
template <class Ready>
bool wait_for(Ready ready) {
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (!ready()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

class FaultTest : public ::testing::TestWithParam<App> {
 protected:
  static void SetUpTestSuite() {
    data_ = std::filesystem::temp_directory_path() / ("schmp-fault-e2e-" + std::to_string(::getpid()));
    std::filesystem::create_directories(data_);
    const std::string generate = SCHMP_GENERATE_BIN;
    for (const std::string& made :
         {generate + " lasso --rows 300 --cols 1200 --density 0.03 --support 40 --noise 0.5 --seed 3 --out " +
              (data_ / "lasso.svm").string(),
          generate + " logreg --rows 400 --cols 1000 --density 0.03 --support 30 --seed 2 --out " +
              (data_ / "logreg.svm").string(),
          generate + " mf --users 600 --items 300 --rank 4 --ratings 30000 --test_ratings 3000 --noise 0.3" +
              " --seed 3 --out " + (data_ / "mf.txt").string()}) {
      const Output out = run(made);
      ASSERT_EQ(out.status, 0) << out.text;
    }
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(data_); }

  // The app's command line on `ranks` ranks with `flags`.
  std::string command(int ranks, const std::string& flags, int iterations = 0) const {
    const App& app = GetParam();
    return mpirun(ranks) + app.binary + " " + replaced(app.data, "{dir}", data_.string()) + " " +
           replaced(flags, "{K}", std::to_string(iterations)) + " --progress_seconds 0";
  }
  std::string with_data(const std::string& text) const { return replaced(text, "{dir}", data_.string()); }

  void expect_same_objective(double expected, double actual, const std::string& what) const {
    const App& app = GetParam();
    const double bound = app.absolute ? app.tolerance : app.tolerance * std::abs(expected);
    EXPECT_NEAR(actual, expected, bound) << what;
  }

  static std::filesystem::path data_;
  ScratchDir scratch_;
};
std::filesystem::path FaultTest::data_;

TEST_P(FaultTest, KilledRankEndsTheJobAndTheCheckpointResumes) {
  const App& app = GetParam();
  const std::string checkpoint = scratch_.file("run.checkpoint");
  const std::string killed_trace = scratch_.file("killed.csv");
  Background job(command(
      3, app.long_run + " --checkpoint " + checkpoint + " --checkpoint_every 0 --trace " + killed_trace));
  // With a checkpoint at every evaluation, the one of row k is on disk before row k + 1 is written.
  ASSERT_TRUE(wait_for([&] { return trace_rows(killed_trace) >= 4; }));
  const int victim = rank_process(checkpoint, 2);
  ASSERT_GT(victim, 0);
  ASSERT_EQ(::kill(victim, SIGKILL), 0);
  const auto killed = Clock::now();
  const Output out = job.finish();
  EXPECT_LT(seconds_since(killed), 10.0) << out.text;
  EXPECT_NE(out.status, 0) << out.text;
  EXPECT_NE(out.text.find("rank 2"), std::string::npos) << out.text;

  // Iterative apps finish a few iterations past what the killed run traced (hence the checkpoint).
  const double traced = last_in_column(killed_trace, "iteration");
  const int iterations = std::isnan(traced) ? 0 : static_cast<int>(traced) + 3;
  const std::string reference_trace = scratch_.file("reference.csv");
  const Output reference = run(command(3, app.finish + " --trace " + reference_trace, iterations));
  ASSERT_EQ(reference.status, 0) << reference.text;
  const double expected = final_objective(reference_trace);
  const Trace before = read_trace(killed_trace);
  for (const int ranks : {3, 1, 4}) {
    const std::string resumed_trace = scratch_.file("resumed" + std::to_string(ranks) + ".csv");
    const Output resumed =
        run(command(ranks, app.finish + " --resume " + checkpoint + " --trace " + resumed_trace, iterations));
    ASSERT_EQ(resumed.status, 0) << resumed.text;
    expect_same_objective(expected, final_objective(resumed_trace), "resumed on " + std::to_string(ranks));
    // The trace goes on from the killed run's: it starts with that run's rows up to the checkpoint (three
    // at least), and its first row after them is near the last of them, not back at the start.
    const Trace after = read_trace(resumed_trace);
    EXPECT_EQ(after.header, before.header);
    std::size_t kept = 0;
    // Cells read as NaN (values an evaluation did not compute) match each other.
    const auto same = [](const std::vector<double>& a, const std::vector<double>& b) {
      return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                        [](double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); });
    };
    while (kept < after.rows.size() && kept < before.rows.size() && same(after.rows[kept], before.rows[kept]))
      ++kept;
    ASSERT_GE(kept, 3u);
    ASSERT_LT(kept, after.rows.size());
    const double start = after.rows[0][2];
    const double checkpointed = after.rows[kept - 1][2];
    EXPECT_LT(std::abs(after.rows[kept][2] - checkpointed), 0.5 * std::abs(checkpointed - start))
        << "resumed on " << ranks << ": the first objective after the checkpoint is " << after.rows[kept][2];
  }
}

TEST_P(FaultTest, SigtermWritesTheModelAndACheckpoint) {
  const App& app = GetParam();
  const std::string checkpoint = scratch_.file("run.checkpoint");
  const std::string trace = scratch_.file("run.csv");
  const std::string model = scratch_.file("model");
  // No checkpoint is due within the run (--checkpoint_every 600): the one on disk is the signal's. Open
  // MPI sends SIGKILL one second after it passes SIGTERM on (and mpirun waits that long in any case);
  // three seconds here leave room for a loaded machine or a sanitizer build.
  Background job(
      "OMPI_MCA_odls_base_sigkill_timeout=3 " +
      command(3, app.long_run + " --checkpoint " + checkpoint + " --output " + model + " --trace " + trace));
  ASSERT_TRUE(wait_for([&] { return trace_rows(trace) >= 3; }));
  EXPECT_FALSE(std::filesystem::exists(checkpoint));
  const int launcher = mpirun_process(checkpoint);
  ASSERT_GT(launcher, 0);
  ASSERT_EQ(::kill(launcher, SIGTERM), 0);
  const auto signalled = Clock::now();
  const Output out = job.finish();
  EXPECT_LT(seconds_since(signalled), 10.0) << out.text;
  EXPECT_NE(out.status, 0) << out.text;
  EXPECT_NE(out.text.find("stopped by signal"), std::string::npos) << out.text;
  EXPECT_EQ(out.text.find("error"), std::string::npos) << out.text;
  ASSERT_TRUE(std::filesystem::exists(checkpoint)) << out.text;
  if (!app.use_model.empty()) {
    const Output used = run(with_data(replaced(app.use_model, "{model}", model)));
    EXPECT_EQ(used.status, 0) << used.text;
  }
  // The checkpoint is the state the model was written from: resuming evaluates to the last trace row.
  const double traced = last_in_column(trace, "iteration");
  const int iterations = std::isnan(traced) ? 0 : static_cast<int>(traced) + 2;
  const Output resumed = run(command(2, app.finish + " --resume " + checkpoint, iterations));
  EXPECT_EQ(resumed.status, 0) << resumed.text;
}

// Whether `signal` is pending for process `pid`: sent, and not yet taken by its handler (two signals of
// one kind sent while the first is pending merge into one).
bool signal_pending(int pid, int signal) {
  std::istringstream status(proc_file(pid, "status"));
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("SigPnd:", 0) != 0 && line.rfind("ShdPnd:", 0) != 0) continue;
    if ((std::stoull(line.substr(7), nullptr, 16) >> (signal - 1) & 1) != 0) return true;
  }
  return false;
}

// A batch system that stops a job signals every process in it, and mpirun passes its own copy on: each
// rank gets SIGTERM twice, the second once it has taken the first. That is still one request to stop,
// ended as cleanly as the one above.
TEST_P(FaultTest, SigtermTwiceToEveryRankIsOneRequest) {
  const App& app = GetParam();
  const std::string trace = scratch_.file("run.csv");
  const std::string model = scratch_.file("model");
  constexpr int kRanks = 3;
  Background job(command(kRanks, app.long_run + " --output " + model + " --trace " + trace));
  ASSERT_TRUE(wait_for([&] { return trace_rows(trace) >= 3; }));
  std::vector<int> ranks;
  for (int rank = 0; rank < kRanks; ++rank) ranks.push_back(rank_process(trace, rank));
  for (const int pid : ranks) {
    ASSERT_GT(pid, 0);
    ASSERT_EQ(::kill(pid, SIGTERM), 0);
  }
  for (const int pid : ranks) {
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    while (signal_pending(pid, SIGTERM) && Clock::now() < deadline) std::this_thread::yield();
    ::kill(pid, SIGTERM);  // the rank may be gone already, its run ended
  }
  const Output out = job.finish();
  // Each rank exits as the signal would have ended it, so that a script can tell the stop from a
  // finished run; mpirun passes that status on.
  EXPECT_EQ(out.status, 128 + SIGTERM) << out.text;
  EXPECT_NE(out.text.find("stopped by signal"), std::string::npos) << out.text;
  // LDA writes its model as files named after `model`.
  EXPECT_TRUE(std::filesystem::exists(model) || std::filesystem::exists(model + ".word_topic")) << out.text;
}

// A signal that reaches one rank other than the coordinator (a batch system or an operator signalling
// one host's processes) stops the whole job, as one to mpirun does: it went unheard, and the run that
// then finished exited 143 as if stopped. Rank 1 is a scheduler of Lasso and logreg, rank 2 a worker.
TEST_P(FaultTest, SigtermToOneRankStopsTheJob) {
  const App& app = GetParam();
  for (const int victim : {1, 2}) {
    SCOPED_TRACE("rank " + std::to_string(victim));
    const std::string checkpoint = scratch_.file("rank" + std::to_string(victim) + ".checkpoint");
    const std::string trace = scratch_.file("rank" + std::to_string(victim) + ".csv");
    Background job(command(3, app.long_run + " --checkpoint " + checkpoint + " --trace " + trace));
    ASSERT_TRUE(wait_for([&] { return trace_rows(trace) >= 3; }));
    const int pid = rank_process(trace, victim);
    ASSERT_GT(pid, 0);
    ASSERT_EQ(::kill(pid, SIGTERM), 0);
    const auto signalled = Clock::now();
    const Output out = job.finish();
    EXPECT_LT(seconds_since(signalled), 10.0) << out.text;
    EXPECT_EQ(out.status, 128 + SIGTERM) << out.text;
    EXPECT_NE(out.text.find("stopped by signal"), std::string::npos) << out.text;
    EXPECT_TRUE(std::filesystem::exists(checkpoint)) << out.text;
  }
}

// A checkpoint at every evaluation: the workers wait while the coordinator saves, and that time counts
// in the split (idle), which then still accounts for the whole solve but for the coordinator's
// bookkeeping. (Checkpoints of rotation apps gather every worker's share to rank 0.)
TEST_P(FaultTest, CheckpointsCountInTheTimeSplit) {
  const Output out = run(command(
      3, GetParam().finish + " --checkpoint " + scratch_.file("run.checkpoint") + " --checkpoint_every 0",
      6));
  ASSERT_EQ(out.status, 0) << out.text;
  testing::expect_time_split(out, 90);
}

const App kApps[] = {
    {"lasso", SCHMP_LASSO_BIN, "--layout all --data {dir}/lasso.svm --lambda_ratio 0.05",
     "--tol 1e-300 --max_rounds 1000000000", "--tol 1e-9", "grep -q '^# objective' {model}", 1e-6, false},
    {"logreg", SCHMP_LOGREG_BIN, "--layout all --data {dir}/logreg.svm --C 1",
     "--tol 1e-300 --max_rounds 1000000000", "--tol 1e-8",
     SCHMP_LOGREG_BIN " predict --model {model} --data {dir}/logreg.svm", 1e-6, false},
    {"mf", SCHMP_MF_BIN, "--data {dir}/mf.txt --test {dir}/mf.txt.test --rank 4", "--iterations 1000000",
     "--iterations {K}", SCHMP_MF_BIN " predict --model {model} --data {dir}/mf.txt.test", 1e-6, false},
    {"lda", SCHMP_LDA_BIN, "--data " SCHMP_SOURCE_DIR "/data/sotu/docword.txt --topics 10",
     "--iterations 1000000", "--iterations {K}",
     SCHMP_LDA_BIN " infer --model {model} --data " SCHMP_SOURCE_DIR "/data/sotu/docword.txt --iterations 4",
     // Another rank count draws other random numbers: another chain, whose log-likelihood per token on
     // sotu differs by up to about 0.03 after the few iterations a slow (sanitizer) run gets to.
     0.05, true},
};
INSTANTIATE_TEST_SUITE_P(Apps, FaultTest, ::testing::ValuesIn(kApps),
                         [](const ::testing::TestParamInfo<App>& info) { return info.param.name; });

// Resuming with other model settings, or another app's checkpoint, is refused on every rank with one
// line naming the checkpoint.
TEST(CheckpointRefusal, OtherSettingsAndOtherApps) {
  ScratchDir scratch;
  const std::string sotu = std::string(SCHMP_SOURCE_DIR) + "/data/sotu/docword.txt";
  const std::string lda_checkpoint = scratch.file("lda.checkpoint");
  const Output made =
      run(mpirun(2) + SCHMP_LDA_BIN + " --data " + sotu + " --topics 5 --iterations 2 --checkpoint " +
          lda_checkpoint + " --progress_seconds 0");
  ASSERT_EQ(made.status, 0) << made.text;
  // A checkpoint belongs to the program, not to the binary's file name.
  const std::string renamed = scratch.file("lda-renamed");
  std::filesystem::copy_file(SCHMP_LDA_BIN, renamed);
  const Output resumed =
      run(mpirun(2) + renamed + " --data " + sotu + " --topics 5 --iterations 3 --resume " + lda_checkpoint +
          " --progress_seconds 0");
  EXPECT_EQ(resumed.status, 0) << resumed.text;
  for (const int ranks : {1, 3}) {
    expect_clean_failure(run(mpirun(ranks) + SCHMP_LDA_BIN + " --data " + sotu + " --topics 6 --resume " +
                             lda_checkpoint + " --progress_seconds 0"),
                         "schmp-lda: error: " + lda_checkpoint + ": the checkpoint was made with --topics 5");
    expect_clean_failure(
        run(mpirun(ranks) + SCHMP_LASSO_BIN + " --layout all --data " + std::string(SCHMP_SOURCE_DIR) +
            "/data/diabetes.svm --resume " + lda_checkpoint + " --progress_seconds 0"),
        "schmp-lasso: error: " + lda_checkpoint +
            ": is a checkpoint of schmp::lda::Lda, not of schmp::lasso::Lasso");
    expect_clean_failure(
        run(mpirun(ranks) + SCHMP_LDA_BIN + " --data " + sotu + " --topics 5 --checkpoint " +
            scratch.file("no/such/directory/run.checkpoint") + " --progress_seconds 0"),
        "schmp-lda: error: " + scratch.file("no/such/directory/run.checkpoint") + ": cannot write");
    const std::string text = scratch.write("other.txt", "d1 x a b c\nd2 x c d e\n");
    expect_clean_failure(run(mpirun(ranks) + SCHMP_LDA_BIN + " --text " + text + " --topics 5 --resume " +
                             lda_checkpoint + " --progress_seconds 0"),
                         "schmp-lda: error: " + lda_checkpoint + ": was made from other data");
  }
  // The refusal names the checkpoint's settings. Logistic regression's --positive_label counts: another
  // labels the rows otherwise, and the trace went on from the old run's rows with another problem.
  const std::string heart = std::string(SCHMP_SOURCE_DIR) + "/data/heart_scale.svm";
  const std::string logreg_checkpoint = scratch.file("logreg.checkpoint");
  const std::string logreg =
      std::string(SCHMP_LOGREG_BIN) + " --layout all --data " + heart + " --progress_seconds 0 ";
  ASSERT_EQ(run(mpirun(3) + logreg + "--max_rounds 20 --checkpoint " + logreg_checkpoint).status, 0);
  expect_clean_failure(run(mpirun(3) + logreg + "--positive_label=-1 --resume " + logreg_checkpoint),
                       "schmp-logreg: error: " + logreg_checkpoint +
                           ": the checkpoint was made with --C 1 --penalty l1 --l1_ratio 1 --bias=false "
                           "--fit_intercept=true --positive_label "
                           "not given");
  EXPECT_EQ(run(mpirun(3) + logreg + "--resume " + logreg_checkpoint).status, 0);
  // Without the flag the rows labelled 1 are the positive ones: naming 1 labels them alike.
  const Output same_labels = run(mpirun(3) + logreg + "--positive_label 1.0 --resume " + logreg_checkpoint);
  EXPECT_EQ(same_labels.status, 0) << same_labels.text;
  const std::string mf_checkpoint = scratch.file("mf.checkpoint");
  const std::string ratings = scratch.write("ratings.txt", "0 0 1\n0 1 2\n1 0 3\n1 1 4\n2 1 5\n");
  const std::string mf = std::string(SCHMP_MF_BIN) + " --data " + ratings + " --progress_seconds 0 ";
  ASSERT_EQ(run(mpirun(2) + mf + "--rank 2 --iterations 2 --checkpoint " + mf_checkpoint).status, 0);
  expect_clean_failure(
      run(mpirun(2) + mf + "--rank 3 --resume " + mf_checkpoint),
      "schmp-mf: error: " + mf_checkpoint +
          ": the checkpoint was made with --algorithm ccd --rank 2 --biases=true --lambda 0.1");
}

}  // namespace
}  // namespace schmp::testing
