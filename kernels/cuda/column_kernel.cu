// The CUDA ColumnKernel (--device gpu): a worker's shard of X stays on its GPU for the whole run, and
// each operation is a few launches on the kernel's own stream.
//
// What is resident (uploaded or allocated once, at construction):
//   - X by column (CSC: column starts, row indices, values; 32-bit indices), as the CPU kernel keeps
//     it: the scheduled-column work reads one column per warp. cuSPARSE reads the same arrays as the
//     CSR of X^T, so that X^T v (all_column_dots) is a plain, non-transposed product.
//   - X by row (CSR), for the product X d when a block holds most of X's nonzeros (logistic
//     regression's restart from a whole w): non-transposed again, with no atomics.
//   - v, the labels y, and for each row a 32-byte DirectionRow (u = X d, s = D u, D_ii, y_i q_i) laid out
//     as the CPU kernel's: a gather by row index touches one 32-byte sector.
//   - work arrays: one double per column (X^T v, ||x_j||^2), a dense d and X d for the product path, the
//     partial sums of the loss change, and cuSPARSE's descriptors and work buffers.
// What crosses the bus per call: the block's column indices and scales in, one double per column (two
// for logistic_derivatives) or a single double out, through pinned staging buffers grown as needed;
// set_vector, set_labels and copy_vector move one vector of rows, which is their contract.
//
// Ordering: everything runs on one stream. A method that returns results synchronises it before
// reading the pinned buffer; one that only sends inputs returns at once (the GPU overlaps the caller's
// communication), and the next method that rewrites a pinned buffer synchronises first, so that no
// copy still in flight reads it. Not for concurrent calls: one worker thread drives a kernel.
//
// Results: every operation uses the CPU kernel's formulas term for term (loss_change_along_direction
// its log1p(sigma expm1(-dz)) form too); they differ only in how sums are ordered (32 lanes stride over
// a column and meet in a tree; updates of one row from several columns land in atomic order; cuSPARSE
// picks its own order) and in last-bit rounding (nvcc fuses multiply-adds, CUDA's exp, log1p and expm1
// are within 1-2 ulp of glibc's). Either way a sum of n terms is within about 2 n eps sum |terms| of
// the CPU's: below 1e-12 relative to the sum of absolute terms for columns of up to 4,000 entries, the
// tolerance tests/gpu_column_kernel_test.cpp holds it to. The atomic order also makes GPU runs
// reproducible only to that accuracy, not bit for bit.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <vector>

#include "kernels/cuda/cuda_support.hpp"
#include "kernels/gpu_module.hpp"

namespace schmp::kernels {

namespace {

using cuda::check;
using cuda::DeviceArray;
using cuda::PinnedArray;

constexpr unsigned kWarpSize = 32;
constexpr unsigned kFullWarp = 0xffffffffu;
constexpr unsigned kThreads = 256;  // per block, a multiple of the warp size
// Blocks of the loss-change reduction: enough to fill an H100 several times over; their partial sums
// are then added by a single block, in a fixed order.
constexpr unsigned kReductionBlocks = 1024;
// A block holding this share of X's nonzeros or more is applied as one sparse product X d, which reads
// every nonzero once, coalesced and without atomics; smaller blocks gather just their own columns.
constexpr double kProductShare = 0.5;

// A row's share of the Newton step in 32 aligned bytes, one sector per gather. The CPU kernel keeps
// 16 (u and D) and recomputes s = D u, to halve its cache footprint; a GPU gather fetches a whole
// 32-byte sector anyway, so here s is stored and the loss derivative rides along.
struct alignas(32) DirectionRow {
  double u;          // (X d)_i
  double hessian_u;  // D_ii u_i
  double weight;     // D_ii = q_i (1 - q_i)
  double label_q;    // y_i q_i, q_i = 1 / (1 + exp(y_i v_i))
};

// ------------------------------------------------------------------------------------------ device code

__device__ std::size_t global_thread() { return std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; }
__device__ std::size_t global_warp() { return global_thread() / kWarpSize; }
__device__ unsigned lane() { return threadIdx.x % kWarpSize; }

// The warp's total, in lane 0.
__device__ double warp_sum(double x) {
  for (unsigned offset = kWarpSize / 2; offset > 0; offset /= 2) x += __shfl_down_sync(kFullWarp, x, offset);
  return x;
}

// The block's total, in thread 0; blockDim.x must be kThreads.
__device__ double block_sum(double x) {
  __shared__ double warp_totals[kThreads / kWarpSize];
  x = warp_sum(x);
  const unsigned warp = threadIdx.x / kWarpSize;
  if (lane() == 0) warp_totals[warp] = x;
  __syncthreads();
  if (warp != 0) return 0.0;
  return warp_sum(lane() < kThreads / kWarpSize ? warp_totals[lane()] : 0.0);
}

// X (or X^T) compressed by column, as the kernels read it.
struct ColumnsView {
  const int* start;  // column j holds entries [start[j], start[j + 1])
  const int* row;
  const double* value;
};

// The terms of the per-column sums: add(row, x, sums) adds entry x_{row,j}'s terms to sums[0 ..
// kSums - 1].
struct DotWithVector {
  static constexpr int kSums = 1;
  const double* vector;
  __device__ void add(int row, double x, double* sums) const { sums[0] += x * vector[row]; }
};
struct SquaredNorm {
  static constexpr int kSums = 1;
  __device__ void add(int, double x, double* sums) const { sums[0] += x * x; }
};
struct DotWithHessianU {
  static constexpr int kSums = 1;
  const DirectionRow* direction;
  __device__ void add(int row, double x, double* sums) const { sums[0] += x * direction[row].hessian_u; }
};
struct LogisticDerivatives {  // the gradient, then the curvature
  static constexpr int kSums = 2;
  const DirectionRow* direction;
  __device__ void add(int row, double x, double* sums) const {
    const DirectionRow& r = direction[row];
    sums[0] -= x * r.label_q;
    sums[1] += x * x * r.weight;
  }
};

// One warp per column: column k is cols[k] (k itself when cols is null); sum s of it goes to
// out[s * count + k].
template <class Terms>
__global__ void column_sums(ColumnsView x, const ParamIndex* cols, std::size_t count, Terms terms,
                            double* out) {
  const std::size_t k = global_warp();
  if (k >= count) return;  // the whole warp leaves together: the shuffles below see every lane
  const std::size_t j = cols != nullptr ? cols[k] : k;
  double sums[Terms::kSums] = {};
  for (std::int64_t e = std::int64_t{x.start[j]} + lane(); e < x.start[j + 1]; e += kWarpSize) {
    terms.add(x.row[e], x.value[e], sums);
  }
  for (int s = 0; s < Terms::kSums; ++s) {
    const double total = warp_sum(sums[s]);
    if (lane() == 0) out[s * count + k] = total;
  }
}

// The updates of the column-scatter: update(row, change) adds `change`, one entry's share, to a row.
// Rows are shared between the block's columns, hence the atomics.
struct AddToVector {
  double* vector;
  __device__ void operator()(int row, double change) const { atomicAdd(vector + row, change); }
};
struct AddToDirection {
  DirectionRow* direction;
  __device__ void operator()(int row, double change) const {
    DirectionRow& r = direction[row];
    atomicAdd(&r.u, change);
    atomicAdd(&r.hessian_u, r.weight * change);
  }
};

// One warp per column cols[k]: update(row, scale[k] * x) for each of its entries.
template <class Update>
__global__ void add_scaled_columns(ColumnsView x, const ParamIndex* cols, const double* scale,
                                   std::size_t count, Update update) {
  const std::size_t k = global_warp();
  if (k >= count || scale[k] == 0) return;
  const ParamIndex j = cols[k];
  for (std::int64_t e = std::int64_t{x.start[j]} + lane(); e < x.start[j + 1]; e += kWarpSize) {
    update(x.row[e], scale[k] * x.value[e]);
  }
}

// dense[cols[k]] += scale[k]: a block as a dense vector over the columns (a column may repeat).
__global__ void scatter_block(const ParamIndex* cols, const double* scale, std::size_t count, double* dense) {
  const std::size_t k = global_thread();
  if (k < count && scale[k] != 0) atomicAdd(dense + cols[k], scale[k]);
}

__global__ void add_to_vector(const double* change, std::size_t rows, double* vector) {
  const std::size_t i = global_thread();
  if (i < rows) vector[i] += change[i];
}

__global__ void add_to_direction_rows(const double* change, std::size_t rows, DirectionRow* direction) {
  const std::size_t i = global_thread();
  if (i >= rows) return;
  DirectionRow& r = direction[i];
  r.u += change[i];
  r.hessian_u += r.weight * change[i];
}

__device__ void refresh_derivatives(DirectionRow& r, double y, double v) {
  const double q = 1 / (1 + exp(y * v));
  r.label_q = y * q;
  r.weight = q * (1 - q);
}

__global__ void refresh_all_derivatives(const double* y, const double* v, std::size_t rows,
                                        DirectionRow* direction) {
  const std::size_t i = global_thread();
  if (i < rows) refresh_derivatives(direction[i], y[i], v[i]);
}

__global__ void step_rows(double t, const double* y, std::size_t rows, double* v, DirectionRow* direction) {
  const std::size_t i = global_thread();
  if (i >= rows) return;
  DirectionRow& r = direction[i];
  v[i] += t * r.u;
  refresh_derivatives(r, y[i], v[i]);
  r.hessian_u = r.weight * r.u;
}

__global__ void clear_direction_rows(std::size_t rows, DirectionRow* direction) {
  const std::size_t i = global_thread();
  if (i < rows) direction[i].u = direction[i].hessian_u = 0;
}

// l(z) = log(1 + exp(-z)) and l(z + dz) - l(z), exactly as cpu_column_kernel.cpp computes them.
__device__ double logistic_loss(double x) { return x > 0 ? log1p(exp(-x)) : -x + log1p(exp(x)); }
__device__ double logistic_loss_change(double z, double dz) {
  if (fabs(dz) > 30) return logistic_loss(z + dz) - logistic_loss(z);
  const double sigma = z > 0 ? exp(-z) / (1 + exp(-z)) : 1 / (1 + exp(z));
  return log1p(sigma * expm1(-dz));
}

// Each block's share of sum_i l(y_i v_i) - l(y_i (v_i - t u_i)), into partials[blockIdx.x].
__global__ void loss_change_partials(double t, const double* y, const double* v,
                                     const DirectionRow* direction, std::size_t rows, double* partials) {
  double sum = 0;
  for (std::size_t i = global_thread(); i < rows; i += std::size_t{gridDim.x} * blockDim.x) {
    const double z = y[i] * v[i], dz = y[i] * t * direction[i].u;
    sum += logistic_loss_change(z - dz, dz);
  }
  sum = block_sum(sum);
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

// One block: *total = the sum of partials[0 .. count - 1].
__global__ void sum_partials(const double* partials, unsigned count, double* total) {
  double sum = 0;
  for (unsigned b = threadIdx.x; b < count; b += blockDim.x) sum += partials[b];
  sum = block_sum(sum);
  if (threadIdx.x == 0) *total = sum;
}

// -------------------------------------------------------------------------------------------- host code

// A matrix compressed by row (CSR) with the 32-bit indices cuSPARSE and the kernels take; X's CSC is
// the CSR of X^T.
struct Compressed {
  std::vector<int> start;  // row r holds entries [start[r], start[r + 1])
  std::vector<int> index;
  std::vector<double> value;
};

Compressed compressed_rows(const io::SparseRows& rows) {
  Compressed m;
  m.start.reserve(rows.row_start.size());
  for (std::uint64_t s : rows.row_start) m.start.push_back(static_cast<int>(s));
  m.index.reserve(rows.index.size());
  for (std::uint32_t j : rows.index) m.index.push_back(static_cast<int>(j));
  m.value = rows.value;
  return m;
}

// X^T of an X with `columns` columns, by counting sort: each row of X^T (column of X) keeps X's row
// order.
Compressed transpose(const Compressed& x, std::size_t columns) {
  Compressed t;
  t.start.assign(columns + 1, 0);
  for (int j : x.index) ++t.start[static_cast<std::size_t>(j) + 1];
  for (std::size_t j = 0; j < columns; ++j) t.start[j + 1] += t.start[j];
  t.index.resize(x.index.size());
  t.value.resize(x.value.size());
  std::vector<int> next(t.start.begin(), t.start.end() - 1);
  for (std::size_t r = 0; r + 1 < x.start.size(); ++r) {
    for (auto e = static_cast<std::size_t>(x.start[r]); e < static_cast<std::size_t>(x.start[r + 1]); ++e) {
      const auto at = static_cast<std::size_t>(next[static_cast<std::size_t>(x.index[e])]++);
      t.index[at] = static_cast<int>(r);
      t.value[at] = x.value[e];
    }
  }
  return t;
}

template <class T>
DeviceArray<T> uploaded(const std::vector<T>& host, cudaStream_t stream) {
  DeviceArray<T> array(host.size());
  if (!host.empty()) array.upload(host, stream);
  return array;
}

struct CompressedOnGpu {
  CompressedOnGpu(const Compressed& m, cudaStream_t stream)
      : start(uploaded(m.start, stream)),
        index(uploaded(m.index, stream)),
        value(uploaded(m.value, stream)) {}
  ColumnsView view() const { return {start.data(), index.data(), value.data()}; }

  DeviceArray<int> start;
  DeviceArray<int> index;
  DeviceArray<double> value;
};

// Grows a staging array to hold at least `size` elements (at least doubling, so that growth is rare);
// its contents are not kept.
template <class Array>
void reserve(Array& array, std::size_t size) {
  if (array.size() < size) array = Array(std::max(size, 2 * array.size()));
}

class SparseMatrixDescriptor {
 public:
  // A CSR matrix of rows x columns, over arrays that outlive the descriptor.
  SparseMatrixDescriptor(std::size_t rows, std::size_t columns, const CompressedOnGpu& m) {
    check(cusparseCreateConstCsr(
              &descriptor_, static_cast<std::int64_t>(rows), static_cast<std::int64_t>(columns),
              static_cast<std::int64_t>(m.value.size()), m.start.data(), m.index.data(), m.value.data(),
              CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F),
          "cusparseCreateConstCsr");
  }
  ~SparseMatrixDescriptor() { cusparseDestroySpMat(descriptor_); }
  SparseMatrixDescriptor(const SparseMatrixDescriptor&) = delete;
  SparseMatrixDescriptor& operator=(const SparseMatrixDescriptor&) = delete;
  cusparseConstSpMatDescr_t get() const { return descriptor_; }

 private:
  cusparseConstSpMatDescr_t descriptor_ = nullptr;
};

class DenseVectorDescriptor {
 public:
  explicit DenseVectorDescriptor(DeviceArray<double>& vector) {
    check(cusparseCreateDnVec(&descriptor_, static_cast<std::int64_t>(vector.size()), vector.data(),
                              CUDA_R_64F),
          "cusparseCreateDnVec");
  }
  ~DenseVectorDescriptor() { cusparseDestroyDnVec(descriptor_); }
  DenseVectorDescriptor(const DenseVectorDescriptor&) = delete;
  DenseVectorDescriptor& operator=(const DenseVectorDescriptor&) = delete;
  cusparseDnVecDescr_t get() const { return descriptor_; }

 private:
  cusparseDnVecDescr_t descriptor_ = nullptr;
};

// y = A x for a fixed sparse A and fixed dense x and y on the GPU: cuSPARSE's descriptors and work
// buffer, set up once.
class SparseProduct {
 public:
  SparseProduct(cusparseHandle_t handle, std::size_t rows, std::size_t columns, const CompressedOnGpu& a,
                DeviceArray<double>& x, DeviceArray<double>& y)
      : a_(rows, columns, a), x_(x), y_(y) {
    std::size_t bytes = 0;
    check(cusparseSpMV_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &kOne, a_.get(), x_.get(), &kZero,
                                  y_.get(), CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, &bytes),
          "cusparseSpMV_bufferSize");
    // Never empty: cuSPARSE does not promise to accept a null buffer when it asks for none.
    buffer_ = DeviceArray<std::byte>(std::max<std::size_t>(bytes, 16));
  }

  // On the handle's stream.
  void run(cusparseHandle_t handle) const {
    check(cusparseSpMV(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &kOne, a_.get(), x_.get(), &kZero, y_.get(),
                       CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, buffer_.data()),
          "cusparseSpMV");
  }

 private:
  static constexpr double kOne = 1, kZero = 0;
  SparseMatrixDescriptor a_;
  DenseVectorDescriptor x_;
  DenseVectorDescriptor y_;
  // cuSPARSE's work space; it writes there although the product is const to us.
  mutable DeviceArray<std::byte> buffer_;
};

class GpuColumnKernel final : public ColumnKernel {
 public:
  // With `gpu` current: every allocation, the stream and the cuSPARSE handle belong to it.
  GpuColumnKernel(const io::SparseRows& rows, std::size_t columns, int gpu)
      : gpu_(gpu), rows_(rows.rows()), columns_(columns), nonzeros_(rows.index.size()) {
    if (rows.columns() > columns)
      throw std::invalid_argument("column kernel: fewer columns than the data has");
    constexpr std::size_t kLargestIndex = std::numeric_limits<int>::max();
    if (nonzeros_ > kLargestIndex || rows_ > kLargestIndex || columns_ > kLargestIndex) {
      throw std::length_error(
          "GPU column kernel: a worker's rows, columns and nonzeros must each stay below 2^31 (32-bit "
          "indices); use more workers");
    }
    const Compressed by_row = compressed_rows(rows);
    const Compressed by_column = transpose(by_row, columns_);
    column_start_ = by_column.start;
    const cudaStream_t stream = stream_.get();
    by_row_.emplace(by_row, stream);
    by_column_.emplace(by_column, stream);
    v_ = DeviceArray<double>(rows_);
    v_.fill_zero(stream);
    y_ = DeviceArray<double>(rows_);
    direction_ = DeviceArray<DirectionRow>(rows_);
    per_column_ = DeviceArray<double>(columns_);
    per_column_.fill_zero(stream);  // written by SpMV with beta 0, which should not read it: zeros if it does
    partials_ = DeviceArray<double>(kReductionBlocks + 1);  // and the total after them
    if (nonzeros_ > 0) {
      dense_block_ = DeviceArray<double>(columns_);
      block_product_ = DeviceArray<double>(rows_);
      block_product_.fill_zero(stream);
      sparse_.emplace(stream);
      transposed_times_v_.emplace(sparse_->get(), columns_, rows_, *by_column_, v_, per_column_);
      times_dense_block_.emplace(sparse_->get(), rows_, columns_, *by_row_, dense_block_, block_product_);
    }
    stream_.synchronize();  // the host copies of X are temporaries
  }

  // Work still queued reads the memory the members free.
  // The members are freed after the body, on its GPU (their owners ignore errors: nothing to do then).
  ~GpuColumnKernel() override {
    cuda::use_gpu_quietly(gpu_);
    cudaStreamSynchronize(stream_.get());
  }
  GpuColumnKernel(const GpuColumnKernel&) = delete;
  GpuColumnKernel& operator=(const GpuColumnKernel&) = delete;

  std::size_t rows() const override { return rows_; }
  std::size_t columns() const override { return columns_; }

  void set_vector(std::span<const double> v) override {
    cuda::use_gpu(gpu_);
    if (v.size() != rows_) throw std::invalid_argument("column kernel: vector of the wrong length");
    if (rows_ == 0) return;
    send(v, v_);
    if (has_labels_) refresh_derivatives_everywhere();
  }

  void copy_vector(std::span<double> out) const override {
    cuda::use_gpu(gpu_);
    if (out.size() != rows_) throw std::invalid_argument("column kernel: vector of the wrong length");
    if (rows_ == 0) return;
    const std::span<const double> received = receive(v_.data(), rows_);
    std::copy(received.begin(), received.end(), out.begin());
  }

  void column_dots(std::span<const ParamIndex> cols, std::span<double> out) const override {
    cuda::use_gpu(gpu_);
    require_same_length(cols, out.size());
    send_block(cols, {});
    if (cols.empty()) return;
    copy_block_sums(cols.size(), DotWithVector{v_.data()}, out, {});
  }

  void all_column_dots(std::span<double> out) const override {
    cuda::use_gpu(gpu_);
    if (out.size() != columns_) throw std::invalid_argument("column kernel: output of the wrong length");
    if (!transposed_times_v_) {  // no nonzeros
      std::fill(out.begin(), out.end(), 0.0);
      return;
    }
    transposed_times_v_->run(sparse_->get());
    const std::span<const double> received = receive(per_column_.data(), columns_);
    std::copy(received.begin(), received.end(), out.begin());
  }

  void column_norms_squared(std::span<double> out) const override {
    cuda::use_gpu(gpu_);
    if (out.size() != columns_) throw std::invalid_argument("column kernel: output of the wrong length");
    if (columns_ == 0) return;
    column_sums<<<cuda::blocks_for(columns_, kThreads, kWarpSize), kThreads, 0, stream_.get()>>>(
        by_column_->view(), nullptr, columns_, SquaredNorm{}, per_column_.data());
    cuda::check_launch("column_sums (norms)");
    const std::span<const double> received = receive(per_column_.data(), columns_);
    std::copy(received.begin(), received.end(), out.begin());
  }

  void add_columns(std::span<const ParamIndex> cols, std::span<const double> scale) override {
    cuda::use_gpu(gpu_);
    require_same_length(cols, scale.size());
    const std::size_t block_nonzeros = send_block(cols, scale);
    if (cols.empty()) return;
    if (!use_product(block_nonzeros)) {
      add_scaled_columns<<<cuda::blocks_for(cols.size(), kThreads, kWarpSize), kThreads, 0, stream_.get()>>>(
          by_column_->view(), block_cols_.data(), block_scale_.data(), cols.size(), AddToVector{v_.data()});
      cuda::check_launch("add_scaled_columns (vector)");
      return;
    }
    multiply_block(cols.size());
    add_to_vector<<<cuda::blocks_for(rows_, kThreads), kThreads, 0, stream_.get()>>>(block_product_.data(),
                                                                                     rows_, v_.data());
    cuda::check_launch("add_to_vector");
  }

  void set_labels(std::span<const double> y) override {
    cuda::use_gpu(gpu_);
    if (y.size() != rows_) throw std::invalid_argument("column kernel: labels of the wrong length");
    if (rows_ > 0) {
      send(y, y_);
      direction_.fill_zero(stream_.get());
      refresh_derivatives_everywhere();
    }
    has_labels_ = true;
  }

  void logistic_derivatives(std::span<const ParamIndex> cols, std::span<double> gradient,
                            std::span<double> curvature) const override {
    cuda::use_gpu(gpu_);
    require_labels();
    require_same_length(cols, gradient.size());
    require_same_length(cols, curvature.size());
    send_block(cols, {});
    if (cols.empty()) return;
    copy_block_sums(cols.size(), LogisticDerivatives{direction_.data()}, gradient, curvature);
  }

  void direction_dots(std::span<const ParamIndex> cols, std::span<double> out) const override {
    cuda::use_gpu(gpu_);
    require_labels();
    require_same_length(cols, out.size());
    send_block(cols, {});
    if (cols.empty()) return;
    copy_block_sums(cols.size(), DotWithHessianU{direction_.data()}, out, {});
  }

  void add_to_direction(std::span<const ParamIndex> cols, std::span<const double> scale) override {
    cuda::use_gpu(gpu_);
    require_labels();
    require_same_length(cols, scale.size());
    const std::size_t block_nonzeros = send_block(cols, scale);
    if (cols.empty()) return;
    if (!use_product(block_nonzeros)) {
      add_scaled_columns<<<cuda::blocks_for(cols.size(), kThreads, kWarpSize), kThreads, 0, stream_.get()>>>(
          by_column_->view(), block_cols_.data(), block_scale_.data(), cols.size(),
          AddToDirection{direction_.data()});
      cuda::check_launch("add_scaled_columns (direction)");
      return;
    }
    multiply_block(cols.size());
    add_to_direction_rows<<<cuda::blocks_for(rows_, kThreads), kThreads, 0, stream_.get()>>>(
        block_product_.data(), rows_, direction_.data());
    cuda::check_launch("add_to_direction_rows");
  }

  void step_along_direction(double t) override {
    cuda::use_gpu(gpu_);
    require_labels();
    if (rows_ == 0) return;
    step_rows<<<cuda::blocks_for(rows_, kThreads), kThreads, 0, stream_.get()>>>(
        t, y_.data(), rows_, v_.data(), direction_.data());
    cuda::check_launch("step_rows");
  }

  void clear_direction() override {
    cuda::use_gpu(gpu_);
    require_labels();
    if (rows_ == 0) return;
    clear_direction_rows<<<cuda::blocks_for(rows_, kThreads), kThreads, 0, stream_.get()>>>(
        rows_, direction_.data());
    cuda::check_launch("clear_direction_rows");
  }

  double loss_change_along_direction(double t) const override {
    cuda::use_gpu(gpu_);
    require_labels();
    if (t == 0 || rows_ == 0) return 0.0;
    const unsigned blocks = std::min(cuda::blocks_for(rows_, kThreads), kReductionBlocks);
    double* total = partials_.data() + kReductionBlocks;
    loss_change_partials<<<blocks, kThreads, 0, stream_.get()>>>(t, y_.data(), v_.data(), direction_.data(),
                                                                 rows_, partials_.data());
    cuda::check_launch("loss_change_partials");
    sum_partials<<<1, kThreads, 0, stream_.get()>>>(partials_.data(), blocks, total);
    cuda::check_launch("sum_partials");
    return receive(total, 1)[0];
  }

 private:
  void require_labels() const {
    if (!has_labels_) throw std::logic_error("column kernel: logistic operation before set_labels");
  }
  static void require_same_length(std::span<const ParamIndex> cols, std::size_t size) {
    if (size != cols.size()) throw std::invalid_argument("column kernel: one value per column needed");
  }

  // The pinned staging buffers are rewritten only once the stream has drained: the asynchronous
  // copies that read them last are then done.
  void send(std::span<const double> host, DeviceArray<double>& target) {
    stream_.synchronize();
    reserve(pinned_values_, host.size());
    std::copy(host.begin(), host.end(), pinned_values_.data());
    target.upload({pinned_values_.data(), host.size()}, stream_.get());
  }

  // Sends a block's columns (and its scales, unless empty) to block_cols_ and block_scale_, and returns
  // the block's nonzeros. A column beyond the matrix throws std::out_of_range, as on the CPU.
  std::size_t send_block(std::span<const ParamIndex> cols, std::span<const double> scale) const {
    std::size_t nonzeros = 0;
    for (ParamIndex j : cols) {
      if (j >= columns_) throw std::out_of_range("column kernel: column index beyond the matrix");
      nonzeros += static_cast<std::size_t>(column_start_[j + 1] - column_start_[j]);
    }
    if (cols.empty()) return 0;
    stream_.synchronize();
    reserve(pinned_cols_, cols.size());
    reserve(block_cols_, cols.size());
    std::copy(cols.begin(), cols.end(), pinned_cols_.data());
    block_cols_.upload({pinned_cols_.data(), cols.size()}, stream_.get());
    if (!scale.empty()) {
      reserve(pinned_values_, scale.size());
      reserve(block_scale_, scale.size());
      std::copy(scale.begin(), scale.end(), pinned_values_.data());
      block_scale_.upload({pinned_values_.data(), scale.size()}, stream_.get());
    }
    return nonzeros;
  }

  // Waits for the stream, then gives the `count` doubles at `on_gpu`, in pinned memory valid until the
  // next receive.
  std::span<const double> receive(const double* on_gpu, std::size_t count) const {
    reserve(pinned_results_, count);
    check(cudaMemcpyAsync(pinned_results_.data(), on_gpu, count * sizeof(double), cudaMemcpyDeviceToHost,
                          stream_.get()),
          "download");
    stream_.synchronize();
    return {pinned_results_.data(), count};
  }

  // The sums of Terms over the sent block's `count` columns, into `first` (and `second`, for two sums).
  template <class Terms>
  void copy_block_sums(std::size_t count, const Terms& terms, std::span<double> first,
                       std::span<double> second) const {
    reserve(block_sums_, Terms::kSums * count);
    column_sums<<<cuda::blocks_for(count, kThreads, kWarpSize), kThreads, 0, stream_.get()>>>(
        by_column_->view(), block_cols_.data(), count, terms, block_sums_.data());
    cuda::check_launch("column_sums");
    const std::span<const double> received = receive(block_sums_.data(), Terms::kSums * count);
    std::copy_n(received.begin(), count, first.begin());
    if constexpr (Terms::kSums == 2)
      std::copy_n(received.begin() + static_cast<std::ptrdiff_t>(count), count, second.begin());
  }

  bool use_product(std::size_t block_nonzeros) const {
    return times_dense_block_ &&
           static_cast<double>(block_nonzeros) >= kProductShare * static_cast<double>(nonzeros_);
  }

  // block_product_ = X d for the sent block's d.
  void multiply_block(std::size_t count) {
    dense_block_.fill_zero(stream_.get());
    scatter_block<<<cuda::blocks_for(count, kThreads), kThreads, 0, stream_.get()>>>(
        block_cols_.data(), block_scale_.data(), count, dense_block_.data());
    cuda::check_launch("scatter_block");
    times_dense_block_->run(sparse_->get());
  }

  void refresh_derivatives_everywhere() {
    refresh_all_derivatives<<<cuda::blocks_for(rows_, kThreads), kThreads, 0, stream_.get()>>>(
        y_.data(), v_.data(), rows_, direction_.data());
    cuda::check_launch("refresh_all_derivatives");
  }

  int gpu_;
  std::size_t rows_;
  std::size_t columns_;
  std::size_t nonzeros_;
  std::vector<int> column_start_;  // X's column starts on the host: checks and sizes blocks
  bool has_labels_ = false;

  cuda::Stream stream_;
  std::optional<CompressedOnGpu> by_row_;     // X's CSR
  std::optional<CompressedOnGpu> by_column_;  // X's CSC, the CSR of X^T
  DeviceArray<double> v_;
  DeviceArray<double> y_;
  DeviceArray<DirectionRow> direction_;

  // Work arrays: written by const operations too, never state between calls.
  mutable DeviceArray<double> per_column_;  // one double per column: X^T v or ||x_j||^2
  mutable DeviceArray<double> partials_;    // the loss change's partial sums, then its total
  DeviceArray<double> dense_block_;         // a block as a dense d over the columns
  DeviceArray<double> block_product_;       // X d
  // The products, when X has nonzeros (cuSPARSE wants some); the handle outlives them.
  std::optional<cuda::SparseHandle> sparse_;
  std::optional<SparseProduct> transposed_times_v_;  // per_column_ = X^T v
  std::optional<SparseProduct> times_dense_block_;   // block_product_ = X dense_block_

  // Staging of the per-call inputs and outputs, grown as needed.
  mutable PinnedArray<ParamIndex> pinned_cols_;
  mutable PinnedArray<double> pinned_values_;   // scales, a vector or labels on their way in
  mutable PinnedArray<double> pinned_results_;  // results on their way out
  mutable DeviceArray<ParamIndex> block_cols_;
  mutable DeviceArray<double> block_scale_;
  mutable DeviceArray<double> block_sums_;
};

}  // namespace

std::unique_ptr<ColumnKernel> cuda::make_column_kernel(const io::SparseRows& rows, std::size_t columns,
                                                       int gpu) {
  cuda::use_gpu(gpu);
  return std::make_unique<GpuColumnKernel>(rows, columns, gpu);
}

}  // namespace schmp::kernels
