#include <stdexcept>
#include <string>

#include "cuda_support.hpp"

namespace schmp::kernels::cuda {

void check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  int gpu = -1;
  cudaGetDevice(&gpu);
  throw std::runtime_error(std::string("CUDA: ") + what + " on GPU " + std::to_string(gpu) + ": " +
                           cudaGetErrorString(status));
}

void check(cusparseStatus_t status, const char* what) {
  if (status == CUSPARSE_STATUS_SUCCESS) return;
  throw std::runtime_error(std::string("cuSPARSE: ") + what + ": " + cusparseGetErrorString(status));
}

void use_gpu(int gpu) {
  int current = -1;
  check(cudaGetDevice(&current), "cudaGetDevice");
  if (current != gpu) check(cudaSetDevice(gpu), "cudaSetDevice");
}

void use_gpu_quietly(int gpu) noexcept {
  int current = -1;
  if (cudaGetDevice(&current) != cudaSuccess || (current != gpu && cudaSetDevice(gpu) != cudaSuccess)) {
    cudaGetLastError();
  }
}

Stream::Stream() { check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate"); }

Stream::~Stream() { cudaStreamDestroy(stream_); }

void Stream::synchronize() const { check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }

SparseHandle::SparseHandle(cudaStream_t stream) {
  check(cusparseCreate(&handle_), "cusparseCreate");
  check(cusparseSetStream(handle_, stream), "cusparseSetStream");
}

SparseHandle::~SparseHandle() { cusparseDestroy(handle_); }

}  // namespace schmp::kernels::cuda
