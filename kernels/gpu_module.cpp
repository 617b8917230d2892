// The host's side of the GPU kernels: loads the CUDA module (gpu_module.hpp) the first time a GPU is
// asked for and forwards to it. A build without CUDA kernels, or a module that does not load, answers
// that there is no GPU, and why.
#include "kernels/gpu_module.hpp"

#include <dlfcn.h>

#include <stdexcept>

#include "schmp/kernels/device.hpp"

namespace schmp::kernels {

namespace {

// The module's table, or why there is none.
struct Loaded {
  const GpuModule* module = nullptr;
  std::string failure;
};

Loaded load() {
#ifdef SCHMP_CUDA_MODULE
  // Found through the programs' run path (the build tree, or ../lib beside an installed program). Never
  // closed: kernels it made may live until the process ends.
  ::dlerror();
  void* library = ::dlopen(SCHMP_CUDA_MODULE, RTLD_NOW | RTLD_LOCAL);
  if (!library) return {nullptr, std::string("the CUDA kernels did not load (") + ::dlerror() + ")"};
  const auto entry = reinterpret_cast<GpuModuleEntry>(::dlsym(library, kGpuModuleEntry));
  if (!entry) return {nullptr, std::string("the CUDA kernels' module is not schmp's (") + ::dlerror() + ")"};
  return {entry(), ""};
#else
  return {nullptr, "this build of schmp has no CUDA kernels (nvcc was not found when it was built)"};
#endif
}

const Loaded& loaded() {
  static const Loaded once = load();
  return once;
}

const GpuModule& module() {
  const Loaded& found = loaded();
  if (!found.module) throw std::runtime_error("--device gpu: " + found.failure);
  return *found.module;
}

}  // namespace

int gpu_count() { return loaded().module ? loaded().module->gpu_count() : 0; }

std::string no_gpu_reason() { return loaded().module ? loaded().module->no_gpu_reason() : loaded().failure; }

int pick_gpu(const WorkerContext& context) {
  if (context.device == Device::cpu) return -1;
  if (gpu_count() == 0) throw std::runtime_error("--device gpu: " + no_gpu_reason());
  return context.index_on_host % gpu_count();
}

std::unique_ptr<ColumnKernel> make_gpu_column_kernel(const io::SparseRows& rows, std::size_t columns,
                                                     int gpu) {
  return module().new_column_kernel(rows, columns, gpu);
}

std::unique_ptr<FactorDevice> make_factor_device(int gpu, RowLayout layout,
                                                 std::span<const std::vector<CellRating>> train,
                                                 std::span<const std::vector<CellRating>> test,
                                                 std::span<const double> user_counts) {
  return module().new_factor_device(gpu, layout, train, test, user_counts);
}

std::unique_ptr<GpuTopicSampler> make_gpu_topic_sampler(int gpu, const GpuTopicModel& model) {
  return module().new_topic_sampler(gpu, model);
}

}  // namespace schmp::kernels
