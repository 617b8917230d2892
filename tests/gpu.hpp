// GPU tests run where a CUDA GPU is usable and skip, saying why, everywhere else (CI has no GPU).
#pragma once

#include <gtest/gtest.h>

#include "kernels/device.hpp"
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

}  // namespace schmp::testing
