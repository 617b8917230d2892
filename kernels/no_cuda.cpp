// The device queries of a build without CUDA kernels (nvcc was not found, or SCHMP_CUDA was off).
#include <stdexcept>

#include "device.hpp"

namespace schmp::kernels {

int gpu_count() { return 0; }

std::string no_gpu_reason() {
  return "this build of schmp has no CUDA kernels (nvcc was not found when it was built)";
}

int pick_gpu(const WorkerContext& context) {
  if (context.device == Device::cpu) return -1;
  throw std::runtime_error("--device gpu: " + no_gpu_reason());
}

}  // namespace schmp::kernels
