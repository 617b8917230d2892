// schmp-scheduler-bench: how long one scheduler of the sparse linear models (Lasso, logreg) takes to
// build its blocks, in one process and without MPI, so that changes to the scheduler or its dependency
// filter can be timed on their own and a machine's scheduler cost can be set beside its workers'.
//
//   schmp-scheduler-bench --data FILE [--schedulers S] [--schedule_size B] [--blocks N] [--rho R]
//                         [--columns P] [--seed K]
//
// It plays the scheduler that owns the first of S equal ranges of the P parameters (P: the data's
// columns, counted first unless given): its dependency filter is made from its columns of FILE, as a
// scheduler rank's is, and it builds N blocks of up to B / S parameters, drawn by priority. Every
// parameter starts with the same priority and each one kept gets a new one, |N(0, 1)|, after its
// block: the start of a solve, when every parameter still moves and the candidates are spread over all
// the columns, which is where the scheduler's work per round is largest. It prints the filter's set-up
// time, the mean time per block (all of them and the first ten), the parameters kept per block, the
// median, 99th percentile and slowest block, and a checksum of the blocks: two builds that make the
// same blocks print the same checksum.
#include <gflags/gflags.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/scheduler/block_scheduler.hpp"
#include "lasso.hpp"
#include "runtime/command_line.hpp"
#include "runtime/trace.hpp"
#include "schmp/dataset.hpp"
#include "schmp/flags.hpp"
#include "schmp/run.hpp"

SCHMP_FLAG(string, data, "", schmp::any(), "LIBSVM or MatrixMarket file, as the apps' --data");
SCHMP_FLAG(int32, schedulers, 1, schmp::any(),
           "Scheduler ranks the parameters are split among; this one owns the first range");
SCHMP_FLAG(uint32, schedule_size, 256, schmp::any(),
           "Parameters per round over all schedulers, as the apps' --schedule_size");
SCHMP_FLAG(int32, blocks, 2000, schmp::any(), "Blocks to build");
SCHMP_FLAG(double, rho, 0.1, schmp::any(), "Dependency threshold on |cos|, as the apps' --rho");
SCHMP_FLAG(uint32, columns, 0, schmp::any(),
           "The data's columns (0: count them, which reads the file once more)");
SCHMP_FLAG(uint64, seed, 1, schmp::any(), "Random seed of the scheduler's draws and of the new priorities");

namespace {

using schmp::detail::Clock;
using schmp::detail::seconds_since;

void run() {
  if (FLAGS_data.empty()) throw std::invalid_argument("no data (--data FILE)");
  if (FLAGS_schedulers < 1) throw std::invalid_argument("--schedulers must be at least 1");
  if (FLAGS_blocks < 1) throw std::invalid_argument("--blocks must be at least 1");
  const std::uint32_t columns =
      FLAGS_columns > 0 ? FLAGS_columns : schmp::io::read_column_block(FLAGS_data, 0, 0).columns;
  const schmp::ParamRange owned = schmp::detail::split_params(columns, 0, FLAGS_schedulers);
  if (owned.size() == 0) throw std::invalid_argument(FLAGS_data + ": no columns for the first scheduler");

  // Lasso's dependency test as its scheduler ranks hold it, made from the owned columns of the file.
  schmp::lasso::Config config;
  config.data = FLAGS_data;
  config.rho = FLAGS_rho;
  const auto set_up = Clock::now();
  const schmp::io::ColumnBlock block = schmp::io::read_column_block(FLAGS_data, owned.begin, owned.end);
  schmp::detail::TypedDependency<schmp::lasso::Lasso> dependency(config, owned, nullptr, &block);
  const double set_up_seconds = seconds_since(set_up);

  schmp::detail::BlockSchedulerSettings settings;
  settings.block_size = std::max<std::uint32_t>(
      1, schmp::detail::split_params(FLAGS_schedule_size, 0, FLAGS_schedulers).size());
  settings.seed = FLAGS_seed;
  schmp::detail::BlockScheduler scheduler(owned, std::vector<double>(owned.size(), 1.0), &dependency,
                                          settings);
  std::mt19937_64 random(FLAGS_seed);
  std::normal_distribution<double> normal(0, 1);

  constexpr int kFirstBlocks = 10;
  std::vector<double> block_seconds;
  block_seconds.reserve(static_cast<std::size_t>(FLAGS_blocks));
  double seconds = 0;
  double first_seconds = 0;
  std::uint64_t kept = 0;
  std::uint64_t checksum = 0;
  for (int b = 0; b < FLAGS_blocks; ++b) {
    const auto began = Clock::now();
    const std::vector<schmp::ParamIndex> block = scheduler.next_block();
    const double took = seconds_since(began);
    seconds += took;
    block_seconds.push_back(took);
    if (b < kFirstBlocks) first_seconds += took;
    kept += block.size();
    std::vector<std::pair<schmp::ParamIndex, double>> changes;
    for (const schmp::ParamIndex param : block) {
      checksum = checksum * 1000003 + param;
      changes.emplace_back(param, std::abs(normal(random)));
    }
    scheduler.report_changes(changes);
  }
  const int first = std::min(FLAGS_blocks, kFirstBlocks);
  std::printf("scheduler 1 of %d: %zu of %u columns, filter set up in %.2f s\n", FLAGS_schedulers,
              owned.size(), columns, set_up_seconds);
  std::printf("%d blocks of up to %u: %.4f ms per block (first %d: %.4f ms), %.1f kept per block\n",
              FLAGS_blocks, settings.block_size, 1e3 * seconds / FLAGS_blocks, first,
              1e3 * first_seconds / first, static_cast<double>(kept) / FLAGS_blocks);
  // A pipeline of schedulers stalls on its slowest blocks, which the mean hides.
  std::sort(block_seconds.begin(), block_seconds.end());
  const auto quantile = [&](double q) {
    return 1e3 * block_seconds[static_cast<std::size_t>(q * static_cast<double>(block_seconds.size() - 1))];
  };
  std::printf("per block: median %.4f ms, 99th percentile %.4f ms, slowest %.4f ms\n", quantile(0.5),
              quantile(0.99), 1e3 * block_seconds.back());
  std::printf("checksum %016llx\n", static_cast<unsigned long long>(checksum));
}

}  // namespace

int main(int argc, char** argv) {
  gflags::SetUsageMessage(
      "usage: schmp-scheduler-bench --data FILE [--schedulers S] [--schedule_size B] [--blocks N] [--rho R] "
      "[--columns P] [--seed K]");
  try {
    const schmp::detail::CommandLine command_line(argc, argv, 0, 1);
    run();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "schmp-scheduler-bench: error: %s\n", error.what());
    return 1;
  }
  return 0;
}
