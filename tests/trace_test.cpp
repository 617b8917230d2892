// The run's closing report of where its time went, the hint it gives when rounds wait for blocks, and
// the trace's rows.
#include "../runtime/trace.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace schmp::detail {
namespace {

TimeSplit split(double scheduler, double busy) {
  TimeSplit time;
  time.compute = 6;
  time.communication = 2.5;
  time.scheduler = scheduler;
  time.idle = 0.25;
  time.scheduler_busy = busy;
  return time;
}

TEST(TimeSplitLine, GivesEachPartAsAShareOfTheSolve) {
  EXPECT_EQ(time_split_line(split(1.25, 4), 10),
            "time: compute 60.0%  communication 25.0%  scheduler 12.5%  idle 2.5%  "
            "(busiest scheduler working 40.0%)");
  // Without schedulers that report their work (MF, LDA), nothing is said of it.
  EXPECT_EQ(time_split_line(split(0, 0), 10),
            "time: compute 60.0%  communication 25.0%  scheduler 0.0%  idle 2.5%");
  EXPECT_EQ(time_split_line(TimeSplit{}, 0),
            "time: compute 0.0%  communication 0.0%  scheduler 0.0%  idle 0.0%");
}

TEST(SchedulerHint, SaysNothingWhileTheWaitsStayBelowFivePercent) {
  EXPECT_EQ(scheduler_hint(split(0.49, 9), 10, 0), "");
  EXPECT_EQ(scheduler_hint(split(0.49, 9), 10, 2), "");
  EXPECT_EQ(scheduler_hint(split(3, 3), 0, 2), "");
}

TEST(SchedulerHint, SaysNothingOfASolveUnderASecond) {
  // Waits of 30% of a 0.9 s solve: start-up noise, not a setting to change.
  TimeSplit time;
  time.scheduler = 0.27;
  EXPECT_EQ(scheduler_hint(time, 0.9, 0), "");
  EXPECT_NE(scheduler_hint(time, 1.0, 0), "");
}

TEST(SchedulerHint, NamesTheChangeThatRemovesTheWait) {
  // Lock-step rounds wait for every block: pipelining first.
  const std::string lock_step = scheduler_hint(split(3, 3), 10, 0);
  EXPECT_NE(lock_step.find("waited 30.0%"), std::string::npos) << lock_step;
  EXPECT_NE(lock_step.find("--staleness 2"), std::string::npos) << lock_step;
  // Schedulers busy for most of the solve cannot keep up however far ahead they build.
  const std::string busy = scheduler_hint(split(1, 6), 10, 2);
  EXPECT_NE(busy.find("worked 60.0%"), std::string::npos) << busy;
  EXPECT_NE(busy.find("more scheduler ranks (--schedulers)"), std::string::npos) << busy;
  // Mostly idle schedulers whose blocks still come late: build further ahead...
  const std::string late = scheduler_hint(split(1, 2), 10, 2);
  EXPECT_NE(late.find("--staleness above 2"), std::string::npos) << late;
  // ... up to the point where that stopped helping.
  const std::string far_ahead = scheduler_hint(split(1, 2), 10, 8);
  EXPECT_NE(far_ahead.find("--schedulers"), std::string::npos) << far_ahead;
  for (const std::string& hint : {lock_step, busy, late, far_ahead}) EXPECT_EQ(hint.rfind("hint: ", 0), 0u);
}

TEST(TraceWriter, RowsOfALongRunStayWhole) {
  // Times of a run of days, and the largest round count: each row whole, one per line.
  TimeSplit time;
  time.scheduler = 123456.5;
  time.compute = 987654.25;
  time.communication = 555555.125;
  time.idle = 44444.0625;
  time.scheduler_busy = 333333.5;
  Report report;
  report.objective = -1.234567890123456e-300;
  report.columns = {1e300, -2.5};
  TraceWriter trace("", {"a", "b"});
  trace.row(18446744073709551615ull, 1987654.5, report, time);
  trace.row(1, 2, report, time);
  EXPECT_EQ(trace.rows(),
            "18446744073709551615,1987654.500000,-1.23456789012346e-300,1e+300,-2.5,123456.500000,"
            "987654.250000,555555.125000,44444.062500,333333.500000\n"
            "1,2.000000,-1.23456789012346e-300,1e+300,-2.5,123456.500000,987654.250000,555555.125000,"
            "44444.062500,333333.500000\n");
}

TEST(Report, AnObjectiveThatIsNotFiniteStopsTheRun) {
  Report report;
  report.objective = 1e308;
  EXPECT_NO_THROW(check_objective_is_finite(report, 3));
  for (const double diverged : {std::nan(""), std::numeric_limits<double>::infinity()}) {
    report.objective = diverged;
    EXPECT_THROW(check_objective_is_finite(report, 3), std::runtime_error);
  }
}

TEST(TraceWriter, RefusesARowOfAnotherWidthThanItsHeader) {
  // Too few columns would shift the time split under the program's names; too many, past them.
  TraceWriter trace("", {"a", "b"});
  Report report;
  for (const std::vector<double>& columns : {std::vector<double>{1}, {1, 2, 3}}) {
    report.columns = columns;
    EXPECT_THROW(trace.row(1, 1, report, TimeSplit{}), std::logic_error);
  }
  EXPECT_EQ(trace.rows(), "");
}

}  // namespace
}  // namespace schmp::detail
