#include "schmp/kernels/column_kernel.hpp"

namespace schmp::kernels {

std::unique_ptr<ColumnKernel> make_column_kernel(int gpu, const io::SparseRows& rows, std::size_t columns) {
  if (gpu < 0) return make_cpu_column_kernel(rows, columns);
  return make_gpu_column_kernel(rows, columns, gpu);
}

}  // namespace schmp::kernels
