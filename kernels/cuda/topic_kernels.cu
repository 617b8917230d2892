// The CUDA topic_kernels: to be written.
