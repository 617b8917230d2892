// Runs across several hosts, simulated on this machine by scripts/netns-cluster (network namespaces
// joined by a bridge, mpirun over TCP): the ranks really land on distinct hosts; Lasso, MF and LDA
// across 2 hosts give the results of the same runs on one host, bit for bit; a failing job and a signalled
// one pass their status on; and no run leaves a namespace, temporary file or process behind. Skipped,
// with the reason, where the hosts cannot be made (not root, no iproute2, namespaces refused).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "e2e.hpp"
#include "test_files.hpp"

namespace schmp {
namespace {

using testing::mpirun;
using testing::Output;
using testing::read_text;
using testing::run;

const std::string kScript = SCHMP_NETNS_CLUSTER;
const std::string kDiabetes = std::string(SCHMP_SOURCE_DIR) + "/data/diabetes.svm";
const std::string kCorpus = std::string(SCHMP_SOURCE_DIR) + "/data/sotu/docword.txt";

// Whether the simulated hosts can be made here: "" when they can, else why not. A probe that fails
// for another reason than the script's "cannot run here" (77) is a failure of the script, reported.
struct Probe {
  std::string skip;
  Output out;
};

const Probe& probe() {
  static const Probe result = [] {
    Probe p;
    if (::geteuid() != 0) {
      p.skip = "needs root to make network namespaces (running as uid " + std::to_string(::geteuid()) + ")";
    } else if (run("command -v ip").status != 0) {
      p.skip = "needs iproute2: no 'ip' on PATH";
    } else {
      p.out = run(kScript + " --hosts 2 --check --mpirun " + SCHMP_MPIEXEC);
      if (p.out.status == 77) p.skip = p.out.text.substr(0, p.out.text.find_last_not_of("\n") + 1);
    }
    return p;
  }();
  return result;
}

class Cluster : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!probe().skip.empty()) GTEST_SKIP() << probe().skip;
    ASSERT_EQ(probe().out.status, 0) << "netns-cluster --check failed:\n" << probe().out.text;
  }
};

struct ClusterRun {
  Output out;
  std::string pid;  // the script's process id, which its namespaces and files carry: schmp-PID-...
};

std::string pid_of(const Output& out) {
  std::smatch match;
  return std::regex_search(out.text, match, std::regex("netns-cluster pid ([0-9]+)")) ? match[1].str() : "";
}

// mpirun `args` across `hosts` simulated hosts, with the script's `options`. The shell prints its own
// id and then becomes the script (exec), so that id is the script's.
ClusterRun on_hosts(int hosts, const std::string& args, const std::string& options = "") {
  ClusterRun r;
  r.out = run("timeout 300 sh -c 'echo netns-cluster pid $$ && exec \"$0\" \"$@\"' " + kScript + " --hosts " +
              std::to_string(hosts) + " " + options + " --mpirun " + SCHMP_MPIEXEC + " -- --oversubscribe " +
              args);
  r.pid = pid_of(r.out);
  return r;
}

// Processes of a run still alive: every process the run starts (mpirun, daemons, ranks) has the
// run's rsh agent in its environment.
std::vector<int> processes_of(const std::string& pid) {
  const std::string mark = "OMPI_MCA_plm_rsh_agent=" + std::filesystem::temp_directory_path().string() +
                           "/netns-cluster." + pid + ".";
  std::vector<int> found;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (read_text(entry.path().string() + "/environ").find(mark) != std::string::npos)
      found.push_back(std::stoi(name));
  }
  return found;
}

// Nothing of the run is left: no namespace, no temporary directory, no process (a process killed by
// the teardown may take a moment to go).
void expect_torn_down(const ClusterRun& r) {
  ASSERT_FALSE(r.pid.empty()) << r.out.text;
  const Output namespaces = run("ip netns list");
  EXPECT_EQ(namespaces.text.find("schmp-" + r.pid + "-"), std::string::npos) << namespaces.text;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::temp_directory_path())) {
    EXPECT_FALSE(entry.path().filename().string().starts_with("netns-cluster." + r.pid + "."))
        << entry.path() << " left behind";
  }
  std::vector<int> left = processes_of(r.pid);
  for (int wait = 0; wait < 50 && !left.empty(); ++wait) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    left = processes_of(r.pid);
  }
  EXPECT_TRUE(left.empty()) << left.size() << " processes of the run left, the first " << left.front();
}

TEST_F(Cluster, RanksRunOnDistinctHosts) {
  for (int hosts : {2, 3}) {
    const ClusterRun r = on_hosts(hosts, "-np " + std::to_string(2 * hosts) + " --map-by node hostname");
    ASSERT_EQ(r.out.status, 0) << r.out.text;
    std::map<std::string, int> ranks_per_host;
    std::istringstream lines(r.out.text);
    for (std::string line; std::getline(lines, line);) {
      if (line.starts_with("schmp-")) ++ranks_per_host[line];
    }
    std::map<std::string, int> expected;
    for (int k = 1; k <= hosts; ++k) expected["schmp-" + r.pid + "-host" + std::to_string(k)] = 2;
    EXPECT_EQ(ranks_per_host, expected) << r.out.text;
    expect_torn_down(r);
  }
}

// Lasso with 3 ranks on one host and across 2 (ranks 0 and 2 on the first, 1 on the second): the same
// rounds, so the same objective and the same model file. The thread count differs (cores per rank on
// the host) and must not matter.
TEST_F(Cluster, LassoAcrossTwoHostsMatchesOneHost) {
  testing::ScratchDir dir;
  const std::string flags =
      " --layout all --data " + kDiabetes + " --lambda_ratio 0.01 --tol 1e-10 --progress_seconds 0";
  const Output one = run(mpirun(3) + SCHMP_LASSO_BIN + flags + " --output " + dir.file("one.model"));
  ASSERT_EQ(one.status, 0) << one.text;
  const ClusterRun two = on_hosts(2, "-np 3 --map-by node --display-map " + std::string(SCHMP_LASSO_BIN) +
                                         flags + " --output " + dir.file("two.model"));
  ASSERT_EQ(two.out.status, 0) << two.out.text;
  // Open MPI's map of the job: two nodes, each with ranks.
  EXPECT_NE(two.out.text.find("Data for node: schmp-" + two.pid + "-host1\tNum slots"), std::string::npos)
      << two.out.text;
  std::size_t nodes = 0;
  for (std::size_t at = two.out.text.find("Data for node:"); at != std::string::npos;
       at = two.out.text.find("Data for node:", at + 1)) {
    ++nodes;
  }
  EXPECT_EQ(nodes, 2u) << two.out.text;
  const double objective = testing::objective_of(one);
  ASSERT_FALSE(std::isnan(objective)) << one.text;
  EXPECT_NEAR(testing::objective_of(two.out), objective, 1e-9 * std::abs(objective)) << two.out.text;
  EXPECT_EQ(read_text(dir.file("two.model")), read_text(dir.file("one.model")));
  expect_torn_down(two);
}

// MF's workers each read a byte range of the ratings and hand every rating to its user's worker,
// across the hosts here: the model is the one the same run writes on one host.
TEST_F(Cluster, MfAcrossTwoHostsMatchesOneHost) {
  testing::ScratchDir dir;
  const std::string data = dir.file("ratings.txt");
  const Output generated =
      run(std::string(SCHMP_GENERATE_BIN) +
          " mf --users 300 --items 200 --rank 3 --ratings 6000 --test_ratings 0 --noise 0.1 "
          "--out " +
          data);
  ASSERT_EQ(generated.status, 0) << generated.text;
  // One thread per rank everywhere: MF's grid of cells, and so its rounding, follows the thread count.
  const std::string flags =
      " --data " + data + " --rank 3 --lambda 0.05 --iterations 5 --threads 1 --progress_seconds 0";
  const Output one = run(mpirun(3) + SCHMP_MF_BIN + flags + " --output " + dir.file("one.model"));
  ASSERT_EQ(one.status, 0) << one.text;
  const ClusterRun two = on_hosts(
      2, "-np 3 --map-by node " + std::string(SCHMP_MF_BIN) + flags + " --output " + dir.file("two.model"));
  ASSERT_EQ(two.out.status, 0) << two.out.text;
  const std::string model = read_text(dir.file("one.model"));
  EXPECT_FALSE(model.empty());
  EXPECT_EQ(read_text(dir.file("two.model")), model);
  expect_torn_down(two);
}

double log_likelihood_of(const Output& out) {
  std::smatch match;
  if (!std::regex_search(out.text, match, std::regex("log-likelihood per token ([-+0-9.eE]+)"))) return NAN;
  return std::stod(match[1]);
}

// A trace's column, the timings left out.
std::vector<double> column(const std::string& path, std::size_t index) {
  std::vector<double> values;
  for (const auto& row : testing::read_trace(path).rows) values.push_back(row.at(index));
  return values;
}

class ClusterLda : public Cluster, public ::testing::WithParamInterface<int> {};

// LDA with the same seed and rank count is the same computation wherever the ranks run: the rotation
// of word blocks, the sums of the topic totals and each worker's random stream do not depend on the
// placement. So the log-likelihood after every iteration, and the model files, are bit for bit those
// of the run on one host.
TEST_P(ClusterLda, AcrossTwoHostsMatchesOneHost) {
  const int ranks = GetParam();
  testing::ScratchDir dir;
  const std::string flags =
      " --data " + kCorpus + " --topics 10 --iterations 20 --seed 3 --progress_seconds 0";
  const Output one = run(mpirun(ranks) + SCHMP_LDA_BIN + flags + " --trace " + dir.file("one.csv") +
                         " --output " + dir.file("one"));
  ASSERT_EQ(one.status, 0) << one.text;
  const ClusterRun two =
      on_hosts(2, "-np " + std::to_string(ranks) + " --map-by node " + SCHMP_LDA_BIN + flags + " --trace " +
                      dir.file("two.csv") + " --output " + dir.file("two"));
  ASSERT_EQ(two.out.status, 0) << two.out.text;
  ASSERT_FALSE(std::isnan(log_likelihood_of(one))) << one.text;
  EXPECT_EQ(log_likelihood_of(two.out), log_likelihood_of(one)) << two.out.text;
  const std::vector<double> per_iteration = column(dir.file("one.csv"), 2);
  EXPECT_EQ(per_iteration.size(), 21u);
  EXPECT_EQ(column(dir.file("two.csv"), 2), per_iteration)
      << "log-likelihood per token, iteration by iteration";
  for (const std::string part : {".word_topic", ".doc_topic", ".topics"}) {
    const std::string model = read_text(dir.file("one" + part));
    EXPECT_FALSE(model.empty()) << part;
    EXPECT_EQ(read_text(dir.file("two" + part)), model) << part;
  }
  expect_torn_down(two);
}

INSTANTIATE_TEST_SUITE_P(Ranks, ClusterLda, ::testing::Values(2, 3),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return "np" + std::to_string(info.param);
                         });

// Lines of `text` that match `pattern`.
int count_lines(const std::string& text, const std::string& pattern) {
  int count = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    count += std::regex_search(line, std::regex(pattern)) ? 1 : 0;
  return count;
}

// --rate caps every host's link both ways: what the host sends (its eth0, as each host's rank sees it)
// and what it receives (its port on the switch). What a capped link costs a job is for benchmarks.
TEST_F(Cluster, RateCapsEveryHostsLinkBothWays) {
  const Output capped = run(kScript + " --hosts 2 --rate 100mbit --check --mpirun " + SCHMP_MPIEXEC);
  if (capped.status == 77) GTEST_SKIP() << capped.text;  // no tc, or a kernel without tbf
  ASSERT_EQ(capped.status, 0) << capped.text;
  const ClusterRun sending =
      on_hosts(2, "-np 2 --map-by node sh -c 'echo $(hostname) $(tc qdisc show dev eth0)'", "--rate 100mbit");
  ASSERT_EQ(sending.out.status, 0) << sending.out.text;
  for (int k : {1, 2}) {
    EXPECT_EQ(count_lines(sending.out.text, "^schmp-" + sending.pid + "-host" + std::to_string(k) +
                                                " qdisc tbf .* rate 100Mbit"),
              1)
        << sending.out.text;
  }
  expect_torn_down(sending);
  const ClusterRun receiving =
      on_hosts(2, "-np 1 sh -c 'h=$(hostname); tc -n ${h%-host1}-switch qdisc show'", "--rate 100mbit");
  ASSERT_EQ(receiving.out.status, 0) << receiving.out.text;
  for (int k : {1, 2}) {
    EXPECT_EQ(
        count_lines(receiving.out.text, "qdisc tbf .* dev port" + std::to_string(k) + " .* rate 100Mbit"), 1)
        << receiving.out.text;
  }
  expect_torn_down(receiving);
  // A rate without its unit, an empty one and one beyond what tc's 32-bit sizes hold are the caller's
  // mistakes (status 2), not this machine's (77).
  for (const std::string rate : {"100", "", "101gbit", "0mbit"}) {
    const Output refused = run(kScript + " --hosts 2 --rate='" + rate + "' --check");
    EXPECT_EQ(refused.status, 2) << rate << ": " << refused.text;
    EXPECT_NE(refused.text.find("--rate must be"), std::string::npos) << rate << ": " << refused.text;
  }
}

TEST_F(Cluster, FailingJobPassesItsStatusOnAndTearsDown) {
  const ClusterRun r =
      on_hosts(2, "-np 3 --map-by node " + std::string(SCHMP_LASSO_BIN) + " --data /nonexistent/data.svm");
  EXPECT_NE(r.out.status, 0) << r.out.text;
  EXPECT_NE(r.out.status, 77) << "the job's failure taken for 'cannot run here':\n" << r.out.text;
  EXPECT_NE(r.out.status, 124) << "timed out:\n" << r.out.text;
  EXPECT_NE(r.out.text.find("schmp-lasso: error: /nonexistent/data.svm: cannot open file"), std::string::npos)
      << r.out.text;
  expect_torn_down(r);
}

// SIGTERM to the script in the middle of a job: mpirun is stopped, the status is 143 (128 + SIGTERM)
// and everything is torn down.
TEST_F(Cluster, SignalledRunStopsTheJobAndTearsDown) {
  testing::ScratchDir dir;
  const std::string log = dir.file("run.log");
  const Output out =
      run("timeout 300 sh -c '\"$0\" \"$@\" >" + log + " 2>&1 & pid=$!; echo netns-cluster pid $pid; " +
          "for i in $(seq 600); do grep -q \"^round \" " + log + " && break; sleep 0.1; done; " +
          "kill -TERM $pid; wait $pid; echo status $?' " + kScript + " --hosts 2 --mpirun " + SCHMP_MPIEXEC +
          " -- --oversubscribe -np 3 --map-by node " + SCHMP_LDA_BIN + " --data " + kCorpus +
          " --topics 10 --iterations 1000000 --max_seconds 120 --progress_seconds 0.1");
  const std::string text = out.text + read_text(log);
  ASSERT_EQ(out.status, 0) << text;
  EXPECT_NE(read_text(log).find("round "), std::string::npos) << "signalled before the job ran:\n" << text;
  EXPECT_NE(out.text.find("status 143"), std::string::npos) << text;
  expect_torn_down(ClusterRun{out, pid_of(out)});
}

}  // namespace
}  // namespace schmp
