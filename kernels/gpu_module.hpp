// The CUDA kernels as the host reaches them. kernels/cuda/ is built as a module of its own
// (libschmp_cuda.so) that gpu_module.cpp loads the first time a GPU is asked for, so that a run on the
// CPU never loads the CUDA libraries: loading and initialising cuSPARSE (and the nvJitLink it pulls in)
// takes 15 ms or more, longer than a small problem's whole solve.
#pragma once

#include <string>

#include "schmp/kernels/column_kernel.hpp"
#include "schmp/kernels/factor_kernels.hpp"
#include "schmp/kernels/topic_kernels.hpp"

namespace schmp::kernels {

// The module's entry points: the device queries, and makers with the signatures of the host's
// functions they serve.
struct GpuModule {
  int (*gpu_count)();
  std::string (*no_gpu_reason)();
  decltype(&make_gpu_column_kernel) new_column_kernel;
  decltype(&make_factor_device) new_factor_device;
  decltype(&make_gpu_topic_sampler) new_topic_sampler;
};

// The name under which the module exports its table (the one symbol it exports).
inline constexpr const char* kGpuModuleEntry = "schmp_gpu_module";
using GpuModuleEntry = const GpuModule* (*)();

namespace cuda {

// Defined in the module, which hands them to the host in its table (kernels/cuda/module.cu).
int gpu_count();
std::string no_gpu_reason();
std::unique_ptr<ColumnKernel> make_column_kernel(const io::SparseRows& rows, std::size_t columns, int gpu);
std::unique_ptr<FactorDevice> make_factor_device(int gpu, RowLayout layout,
                                                 std::span<const std::vector<CellRating>> train,
                                                 std::span<const std::vector<CellRating>> test,
                                                 std::span<const double> user_counts);
std::unique_ptr<GpuTopicSampler> make_topic_sampler(int gpu, const GpuTopicModel& model);

}  // namespace cuda

}  // namespace schmp::kernels
