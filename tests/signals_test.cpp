// StopSignals, in a child process of the test: one request to stop may reach a rank more than once (a
// batch system signals every process, and the launcher passes its own copy on, as late as its
// odls_base_sigkill_timeout says); the launcher's copy is always the same request, while another's
// repeat 2 seconds or more after the first means the user does not want to wait.
#include "runtime/signals.hpp"

#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <ctime>
#include <functional>
#include <string>

namespace schmp::detail {
namespace {

using Clock = std::chrono::steady_clock;

// The child's exit status when no signal ends it: 0 if it took a request to stop, 2 if none came.
constexpr int kStopped = 0;
constexpr int kNoRequest = 2;

void sleep_for(double seconds) {
  const auto until = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < until) {
    timespec pause{0, 10'000'000};
    nanosleep(&pause, nullptr);  // a signal cuts it short
  }
}

// Sends SIGTERM to `pid` from a process that is not its parent.
void terminate_from_elsewhere(pid_t pid) {
  const pid_t sender = fork();
  if (sender == 0) {
    kill(pid, SIGTERM);
    _exit(0);
  }
  waitpid(sender, nullptr, 0);
}

// This process's name (what /proc/PID/stat shows) while it lives: the test plays the launcher.
class Named {
 public:
  explicit Named(const char* name) {
    prctl(PR_GET_NAME, saved_);
    prctl(PR_SET_NAME, name);
  }
  ~Named() { prctl(PR_SET_NAME, saved_); }
  Named(const Named&) = delete;
  Named& operator=(const Named&) = delete;

 private:
  char saved_[17] = {};
};

// Starts a child that installs StopSignals and waits 5 seconds, started by a shell of the given name
// between it and this process when `wrapper` is not null (as `mpirun bash -c 'prog'` starts a rank), has
// `send` signal it once the handlers are in, and returns how the child ended (waitpid's status).
int child_status(const std::function<void(pid_t)>& send, const char* wrapper = nullptr) {
  int ready[2];
  if (pipe(ready) != 0) return -1;
  const auto run_child = [&] {
    const StopSignals signals;
    const pid_t self = getpid();
    if (write(ready[1], &self, sizeof self) != sizeof self) _exit(3);
    sleep_for(5);
    _exit(StopSignals::requested() ? kStopped : kNoRequest);
  };
  const pid_t child = fork();
  if (child == 0) {
    if (wrapper == nullptr) run_child();
    prctl(PR_SET_NAME, wrapper);
    const pid_t grandchild = fork();
    if (grandchild == 0) run_child();
    int status = 0;
    waitpid(grandchild, &status, 0);
    // The wrapper ends as its child did, as a shell reports it.
    if (WIFSIGNALED(status)) {
      signal(WTERMSIG(status), SIG_DFL);
      raise(WTERMSIG(status));
    }
    _exit(WEXITSTATUS(status));
  }
  pid_t signalled = 0;
  const bool started = read(ready[0], &signalled, sizeof signalled) == sizeof signalled;
  close(ready[0]);
  close(ready[1]);
  if (started) send(signalled);
  int status = 0;
  waitpid(child, &status, 0);
  return status;
}

// A `send` for child_status: a SIGTERM from `first`, another from `second` `seconds` later. The parent's
// is a plain kill; another process's comes through terminate_from_elsewhere.
enum class From { kParent, kElsewhere };
std::function<void(pid_t)> two_requests(From first, double seconds, From second) {
  const auto request = [](From from, pid_t child) {
    if (from == From::kParent) {
      kill(child, SIGTERM);
    } else {
      terminate_from_elsewhere(child);
    }
  };
  return [=](pid_t child) {
    request(first, child);
    sleep_for(seconds);
    request(second, child);
  };
}

void expect_stopped_on_request(int status) {
  ASSERT_TRUE(WIFEXITED(status)) << "ended by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), kStopped);
}

void expect_ended_by_sigterm(int status) {
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
}

// The launcher's copy, 2.5 seconds after another's: always the same request, from the rank's parent or
// through a wrapper.
TEST(StopSignals, TheLaunchersLateCopyIsTheSameRequest) {
  const Named launcher("mpirun");
  for (const char* wrapper : {static_cast<const char*>(nullptr), "bash"}) {
    SCOPED_TRACE(wrapper == nullptr ? "started by the launcher" : "started through a wrapper");
    expect_stopped_on_request(child_status(two_requests(From::kElsewhere, 2.5, From::kParent), wrapper));
  }
}

// A parent that is no launcher (a shell the user started the program from, which may send a second
// `kill` of its own) is anyone.
TEST(StopSignals, AParentThatIsNoLauncherIsAnyone) {
  const Named shell("bash");
  expect_ended_by_sigterm(child_status(two_requests(From::kParent, 2.5, From::kParent)));
}

TEST(StopSignals, AnotherLateRepeatEndsTheProcess) {
  expect_ended_by_sigterm(child_status(two_requests(From::kElsewhere, 2.5, From::kElsewhere)));
}

TEST(StopSignals, ARepeatWithinTwoSecondsIsTheSameRequest) {
  expect_stopped_on_request(child_status(two_requests(From::kElsewhere, 0.5, From::kElsewhere)));
}

}  // namespace
}  // namespace schmp::detail
