// StopSignals, in a child process of the test: one request to stop may reach a rank more than once (a
// batch system signals every process, and the launcher passes its own copy on, as late as its
// odls_base_sigkill_timeout says); the launcher's copy is always the same request, while another's
// repeat 2 seconds or more after the first means the user does not want to wait.
#include "runtime/signals.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <ctime>
#include <functional>

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

// Starts a child that installs StopSignals and waits 5 seconds, has `send` signal it once the handlers
// are in, and returns how the child ended (waitpid's status).
int child_status(const std::function<void(pid_t)>& send) {
  int ready[2];
  if (pipe(ready) != 0) return -1;
  const pid_t child = fork();
  if (child == 0) {
    const StopSignals signals;
    const char installed = 1;
    if (write(ready[1], &installed, 1) != 1) _exit(3);
    sleep_for(5);
    _exit(StopSignals::requested() ? kStopped : kNoRequest);
  }
  char installed = 0;
  const bool started = read(ready[0], &installed, 1) == 1;
  close(ready[0]);
  close(ready[1]);
  if (started) send(child);
  int status = 0;
  waitpid(child, &status, 0);
  return status;
}

TEST(StopSignals, TheLaunchersLateCopyIsTheSameRequest) {
  // Here the test is the launcher: the child's parent.
  const int status = child_status([](pid_t child) {
    terminate_from_elsewhere(child);
    sleep_for(2.5);
    kill(child, SIGTERM);
  });
  ASSERT_TRUE(WIFEXITED(status)) << "ended by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), kStopped);
}

TEST(StopSignals, AnotherLateRepeatEndsTheProcess) {
  const int status = child_status([](pid_t child) {
    terminate_from_elsewhere(child);
    sleep_for(2.5);
    terminate_from_elsewhere(child);
  });
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
}

TEST(StopSignals, ARepeatWithinTwoSecondsIsTheSameRequest) {
  const int status = child_status([](pid_t child) {
    terminate_from_elsewhere(child);
    sleep_for(0.5);
    terminate_from_elsewhere(child);
  });
  ASSERT_TRUE(WIFEXITED(status)) << "ended by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), kStopped);
}

}  // namespace
}  // namespace schmp::detail
