// The device queries of a build with CUDA kernels.
#include <cuda_runtime.h>

#include <stdexcept>

#include "kernels/device.hpp"

namespace schmp::kernels {

namespace {

// The count and, when it is 0, why; asked once per process (the answer does not change).
struct GpuCensus {
  int count = 0;
  std::string reason;
};

GpuCensus take_census() {
  GpuCensus census;
  const cudaError_t status = cudaGetDeviceCount(&census.count);
  if (status != cudaSuccess) {
    census.count = 0;
    census.reason = std::string("no usable CUDA GPU on this host (") + cudaGetErrorString(status) + ")";
  } else if (census.count == 0) {
    census.reason = "no CUDA GPU on this host";
  }
  return census;
}

const GpuCensus& census() {
  static const GpuCensus taken = take_census();
  return taken;
}

}  // namespace

int gpu_count() { return census().count; }

std::string no_gpu_reason() { return census().reason; }

int pick_gpu(const WorkerContext& context) {
  if (context.device == Device::cpu) return -1;
  if (gpu_count() == 0) throw std::runtime_error("--device gpu: " + no_gpu_reason());
  return context.index_on_host % gpu_count();
}

}  // namespace schmp::kernels
