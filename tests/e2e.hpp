// Shared by the end-to-end tests: run a command line (under mpirun) and read what it printed.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <ostream>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace schmp::testing {

struct Output {
  int status = -1;
  std::string text;  // stdout and stderr together
};

inline Output run(const std::string& command) {
  Output out;
  std::FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return out;
  std::array<char, 4096> buffer;
  while (std::fgets(buffer.data(), buffer.size(), pipe)) out.text += buffer.data();
  const int status = ::pclose(pipe);
  out.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return out;
}

// Open MPI makes its session directory under /tmp/ompi.<host>.<uid>, and two mpiruns that start at the
// same moment may race to create it (open-mpi/ompi#8510): ctest -j starts many. Each test process
// gives its own mpiruns a base directory of their own (orte_tmpdir_base is Open MPI 4's; 5 ignores it).
struct OwnMpiSessionBase {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("schmp-ompi-" + std::to_string(::getpid()));
  OwnMpiSessionBase() {
    std::filesystem::create_directories(dir);
    ::setenv("OMPI_MCA_orte_tmpdir_base", dir.c_str(), 0);
  }
  ~OwnMpiSessionBase() {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
};
inline const OwnMpiSessionBase own_mpi_session_base;

inline std::string mpirun(int ranks) {
  return "timeout 300 " + std::string(SCHMP_MPIEXEC) +
         " --allow-run-as-root --oversubscribe --bind-to none -np " + std::to_string(ranks) + " ";
}

// A failure that stopped by itself: not timed out (timeout's 124, or its kill), not ended by a signal,
// no abort from MPI (Open MPI prints "MPI_ABORT was invoked"), and no sanitizer report, whose exit
// status alone (1, or LeakSanitizer's 23) would pass for an ordinary error.
inline void expect_stopped_by_itself(const Output& out) {
  EXPECT_NE(out.status, 0) << out.text;
  EXPECT_NE(out.status, 124) << "timed out:\n" << out.text;
  EXPECT_LT(out.status, 128) << "ended by a signal:\n" << out.text;
  for (const char* sign : {"MPI_ABORT", "Abort", "ABORTING", "Sanitizer", "runtime error:"})
    EXPECT_EQ(out.text.find(sign), std::string::npos) << "'" << sign << "' in:\n" << out.text;
}

// A run that failed cleanly: stopped by itself, with the expected error line (`line` is found in the
// output) printed once, however many ranks met it.
inline void expect_clean_failure(const Output& out, const std::string& line) {
  expect_stopped_by_itself(out);
  const std::size_t first = out.text.find(line);
  EXPECT_NE(first, std::string::npos) << out.text;
  if (first != std::string::npos) {
    EXPECT_EQ(out.text.find(line, first + 1), std::string::npos) << "printed more than once:\n" << out.text;
  }
}

// Runs `command` (an app and its data, after mpirun) with each case's flags on one rank and on three,
// and expects each to fail cleanly with "app: error: " and the case's message.
inline void expect_settings_refused(const std::string& app, const std::string& command,
                                    const std::vector<std::pair<std::string, std::string>>& cases) {
  for (const auto& [flags, message] : cases) {
    for (int ranks : {1, 3}) {
      SCOPED_TRACE(flags + " on " + std::to_string(ranks) + " ranks");
      expect_clean_failure(run(mpirun(ranks) + command + " --progress_seconds 0 " + flags),
                           app + ": error: " + message);
    }
  }
}

// A bad input file for an app: its name (the test's), its content, extra flags, and the message
// expected after the file's path in "app: error: FILE...".
struct BadInput {
  std::string name;
  std::string content;
  std::string flags;
  std::string message;
};
inline void PrintTo(const BadInput& b, std::ostream* os) { *os << b.name; }
inline std::string bad_input_name(const ::testing::TestParamInfo<BadInput>& info) { return info.param.name; }

inline double objective_of(const Output& out) {
  std::smatch match;
  if (!std::regex_search(out.text, match, std::regex("objective ([-+0-9.eE]+)"))) return NAN;
  return std::stod(match[1]);
}

// The duality gap a Lasso or logistic regression run printed at its end ("duality gap G").
inline double gap_of(const Output& out) {
  std::smatch match;
  if (!std::regex_search(out.text, match, std::regex("duality gap ([-+0-9.eE]+)"))) return NAN;
  return std::stod(match[1]);
}

// The closing line of where the solve's time went: its four shares must be there and add up to the
// solve, less what falls between the timed parts (the coordinator's bookkeeping, as writing trace
// rows): at least `least` percent. On the tests' millisecond runs about a tenth falls between on an
// idle machine, and up to four fifths on one running other tests meanwhile (the suite's sanitizer
// stage beside its other tests).
inline void expect_time_split(const Output& out, double least = 15) {
  std::smatch match;
  const std::string percent = " ([0-9.]+)%";
  ASSERT_TRUE(std::regex_search(out.text, match,
                                std::regex("\ntime: compute" + percent + "  communication" + percent +
                                           "  scheduler" + percent + "  idle" + percent)))
      << out.text;
  double sum = 0;
  for (int part = 1; part <= 4; ++part) sum += std::stod(match[part]);
  EXPECT_GE(sum, least) << out.text;
  EXPECT_LT(sum, 100.5) << out.text;
}

// The whole content of a file ("" when it cannot be read).
inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A convergence trace: its header line and its rows as numbers.
struct Trace {
  std::string header;
  std::vector<std::vector<double>> rows;
};

inline Trace read_trace(const std::string& path) {
  Trace trace;
  std::ifstream in(path);
  std::getline(in, trace.header);
  for (std::string line; std::getline(in, line);) {
    std::vector<double>& row = trace.rows.emplace_back();
    std::istringstream cells(line);
    // An empty cell (a value not known, as a cross-validation's lambdas past the refit's end) reads as NaN.
    for (std::string cell; std::getline(cells, cell, ',');)
      row.push_back(cell.empty() ? NAN : std::stod(cell));
  }
  return trace;
}

// A placement of the roles: ranks, scheduler ranks and how far the schedulers may run ahead.
struct Layout {
  int ranks;
  int schedulers;
  int staleness;
};
inline void PrintTo(const Layout& l, std::ostream* os) {
  *os << "np " << l.ranks << ", " << l.schedulers << " schedulers, staleness " << l.staleness;
}
// A number as a flag takes it: every digit that tells it apart (std::to_string prints 1e-10 as 0.000000).
inline std::string number(double value) {
  std::ostringstream text;
  text << std::setprecision(17) << value;
  return text.str();
}

inline std::string layout_flags(const Layout& layout) {
  return "--schedulers " + std::to_string(layout.schedulers) + " --staleness " +
         std::to_string(layout.staleness);
}
// A test name for a layout: np3_s2_k0.
inline std::string layout_name(const ::testing::TestParamInfo<Layout>& info) {
  return "np" + std::to_string(info.param.ranks) + "_s" + std::to_string(info.param.schedulers) + "_k" +
         std::to_string(info.param.staleness);
}

}  // namespace schmp::testing
