// GPU tests run where a CUDA GPU is usable and skip, saying why, everywhere else (CI has no GPU).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>

#include "schmp/kernels/device.hpp"
#include "schmp/program.hpp"

// In a test body: skip the test unless this process can use a GPU.
#define SCHMP_REQUIRE_GPU()                                                      \
  do {                                                                           \
    if (::schmp::kernels::gpu_count() == 0)                                      \
      GTEST_SKIP() << "needs a CUDA GPU: " << ::schmp::kernels::no_gpu_reason(); \
  } while (false)

namespace schmp::testing {

// A single worker's context with its kernels on the first GPU.
inline WorkerContext gpu_worker_context(std::uint64_t seed = 1) {
  WorkerContext context;
  context.seed = seed;
  context.device = Device::gpu;
  return context;
}

// The GPU the tests run on: the one a single worker's context picks (the first).
inline int test_gpu() { return kernels::pick_gpu(gpu_worker_context()); }

// A seed drawn afresh for every run, so that runs cover other inputs, or SCHMP_TEST_SEED's, to replay
// a failure; seed_note(seed) is what the failing test prints about it.
inline std::uint64_t fresh_seed() {
  if (const char* replay = std::getenv("SCHMP_TEST_SEED")) return std::stoull(replay);
  std::random_device device;
  return (std::uint64_t{device()} << 32) | device();
}
inline std::string seed_note(std::uint64_t seed) {
  return "seed " + std::to_string(seed) + " (SCHMP_TEST_SEED replays it)";
}

}  // namespace schmp::testing
