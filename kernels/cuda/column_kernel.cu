// The CUDA column_kernel: to be written.
