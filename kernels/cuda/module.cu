// The module's device queries and its table of entry points, the one symbol it exports
// (kernels/gpu_module.hpp).
#include <cuda_runtime.h>

#include "kernels/gpu_module.hpp"

namespace schmp::kernels::cuda {

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

}  // namespace schmp::kernels::cuda

extern "C" __attribute__((visibility("default"))) const schmp::kernels::GpuModule* schmp_gpu_module() {
  namespace cuda = schmp::kernels::cuda;
  static const schmp::kernels::GpuModule table{&cuda::gpu_count, &cuda::no_gpu_reason,
                                               &cuda::make_column_kernel, &cuda::make_factor_device,
                                               &cuda::make_topic_sampler};
  return &table;
}
