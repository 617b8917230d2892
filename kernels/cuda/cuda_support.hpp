// What every CUDA kernel here shares: checked calls (a failed CUDA or cuSPARSE call throws
// std::runtime_error naming the call and the GPU's reason), and owners of device memory, pinned host
// memory, streams and cuSPARSE handles, so that nothing is freed by hand.
//
// Open MPI on our machines is not CUDA-aware: whatever crosses MPI is staged through pinned host memory
// (PinnedArray), whose copies run at full bus speed and asynchronously on a stream.
#pragma once

#include <cuda_runtime.h>
#include <cusparse.h>

#include <cstddef>
#include <span>
#include <utility>

namespace schmp::kernels::cuda {

// Throw std::runtime_error("CUDA: <what>: <reason>") unless the call succeeded.
void check(cudaError_t status, const char* what);
void check(cusparseStatus_t status, const char* what);
// After a kernel launch: a bad launch configuration shows at once, not at the next call.
inline void check_launch(const char* kernel) { check(cudaGetLastError(), kernel); }

// Makes `gpu` the calling thread's current device. Every public method of a GPU kernel starts with
// it: the worker's threads never switch to another GPU, so after the first call it is a cheap no-op,
// and nothing ever touches (and so opens a context on) a GPU the rank was not given.
void use_gpu(int gpu);
// The same in a destructor, where a failure can only be ignored; the error is cleared, so that it is
// not reported later under another call's name.
void use_gpu_quietly(int gpu) noexcept;

// n elements of device memory, uninitialised.
template <class T>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(std::size_t size) : size_(size) {
    if (size > 0) check(cudaMalloc(reinterpret_cast<void**>(&data_), size * sizeof(T)), "cudaMalloc");
  }
  DeviceArray(DeviceArray&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  DeviceArray& operator=(DeviceArray&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    return *this;
  }
  ~DeviceArray() {
    if (data_ != nullptr) cudaFree(data_);
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  std::size_t bytes() const { return size_ * sizeof(T); }

  // Copies host data in (its size must not exceed size()), or the first out.size() elements out; on
  // `stream` when given, so that the copy may overlap other work (the host memory must then be pinned
  // to be truly asynchronous, and stay alive until the stream is synchronised).
  void upload(std::span<const T> host, cudaStream_t stream = nullptr) {
    check(cudaMemcpyAsync(data_, host.data(), host.size_bytes(), cudaMemcpyHostToDevice, stream), "upload");
    if (stream == nullptr) check(cudaStreamSynchronize(nullptr), "upload");
  }
  void download(std::span<T> host, cudaStream_t stream = nullptr) const {
    check(cudaMemcpyAsync(host.data(), data_, host.size_bytes(), cudaMemcpyDeviceToHost, stream), "download");
    if (stream == nullptr) check(cudaStreamSynchronize(nullptr), "download");
  }
  void fill_zero(cudaStream_t stream = nullptr) {
    if (size_ > 0) check(cudaMemsetAsync(data_, 0, bytes(), stream), "cudaMemsetAsync");
  }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

// n elements of page-locked host memory: the staging area of copies that overlap compute.
template <class T>
class PinnedArray {
 public:
  PinnedArray() = default;
  explicit PinnedArray(std::size_t size) : size_(size) {
    if (size > 0) check(cudaMallocHost(reinterpret_cast<void**>(&data_), size * sizeof(T)), "cudaMallocHost");
  }
  PinnedArray(PinnedArray&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  PinnedArray& operator=(PinnedArray&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    return *this;
  }
  ~PinnedArray() {
    if (data_ != nullptr) cudaFreeHost(data_);
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  std::span<T> span() { return {data_, size_}; }
  std::span<const T> span() const { return {data_, size_}; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

class Stream {
 public:
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }
  void synchronize() const;

 private:
  cudaStream_t stream_ = nullptr;
};

class SparseHandle {
 public:
  explicit SparseHandle(cudaStream_t stream);
  ~SparseHandle();
  SparseHandle(const SparseHandle&) = delete;
  SparseHandle& operator=(const SparseHandle&) = delete;
  cusparseHandle_t get() const { return handle_; }

 private:
  cusparseHandle_t handle_ = nullptr;
};

// Blocks of `threads` threads enough to cover n items, one thread (or one warp, with threads_per_item)
// each.
inline unsigned blocks_for(std::size_t n, unsigned threads, unsigned threads_per_item = 1) {
  const std::size_t total = n * threads_per_item;
  return static_cast<unsigned>((total + threads - 1) / threads);
}

}  // namespace schmp::kernels::cuda
