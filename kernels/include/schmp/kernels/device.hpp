// The GPU a worker rank's kernels run on (--device gpu). A build without CUDA kernels, or a host
// without a usable GPU, is told apart here, up front, so that a run fails with one clear line instead
// of deep inside a kernel.
#pragma once

#include <string>

#include "schmp/program.hpp"

namespace schmp::kernels {

// The CUDA GPUs this process can use: 0 when this build has no CUDA kernels, or the host no usable GPU
// (no driver, no device, or none visible through CUDA_VISIBLE_DEVICES).
int gpu_count();

// Why gpu_count() is 0, as a phrase ("" when it is not).
std::string no_gpu_reason();

// The GPU a worker uses: its index among its host's worker ranks, modulo the host's GPU count, so that
// the workers started on one host share its GPUs evenly. Throws std::runtime_error (one line, naming
// --device) when the context asks for a GPU and there is none; returns -1 for --device cpu.
int pick_gpu(const WorkerContext& context);

}  // namespace schmp::kernels
