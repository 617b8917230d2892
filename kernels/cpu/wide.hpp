// SCHMP_WIDE marks a CPU kernel's loop over dense doubles to be built twice, for AVX2 and for the base
// instruction set, GCC and Clang picking one when the program loads. AVX2 brings no fused multiply-add,
// so both versions round alike and results do not depend on the CPU.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__)
#define SCHMP_WIDE __attribute__((target_clones("avx2", "default")))
#else
#define SCHMP_WIDE
#endif
