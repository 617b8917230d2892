// The CUDA factor_kernels: to be written.
