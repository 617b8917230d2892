// Returning freed memory to the system, so that a rank's resident size is what it holds.
#pragma once

#include <cstddef>  // any C++ library header says whether the C library is glibc (__GLIBC__)

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace schmp::detail {

// glibc keeps memory that was freed in the process, where it still counts in the resident size: after
// loading (parsing buffers, the entries handed to other workers) and after a checkpoint (its serialized
// state), a rank would go on looking as large as its peak. docs/memory.md is what a rank holds.
inline void return_freed_memory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace schmp::detail
