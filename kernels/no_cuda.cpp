// A build without CUDA kernels (nvcc was not found, or SCHMP_CUDA was off): the device queries say so,
// and the GPU kernels' factories refuse with the same line (pick_gpu has refused before them).
#include <stdexcept>

#include "column_kernel.hpp"
#include "device.hpp"
#include "factor_kernels.hpp"
#include "topic_kernels.hpp"

namespace schmp::kernels {

int gpu_count() { return 0; }

std::string no_gpu_reason() {
  return "this build of schmp has no CUDA kernels (nvcc was not found when it was built)";
}

int pick_gpu(const WorkerContext& context) {
  if (context.device == Device::cpu) return -1;
  throw std::runtime_error("--device gpu: " + no_gpu_reason());
}

std::unique_ptr<ColumnKernel> make_gpu_column_kernel(const io::SparseRows&, std::size_t, int) {
  throw std::runtime_error("--device gpu: " + no_gpu_reason());
}

std::unique_ptr<FactorDevice> make_factor_device(int, RowLayout, std::span<const std::vector<CellRating>>,
                                                 std::span<const std::vector<CellRating>>,
                                                 std::span<const double>) {
  throw std::runtime_error("--device gpu: " + no_gpu_reason());
}

std::unique_ptr<GpuTopicSampler> make_gpu_topic_sampler(int, const GpuTopicModel&) {
  throw std::runtime_error("--device gpu: " + no_gpu_reason());
}

}  // namespace schmp::kernels
