// The layout in which workers sum a symmetric matrix (a Gram matrix or a Hessian over a few
// coordinates): its upper triangle, column by column, so that the message is half the matrix and a
// matrix grown by more columns keeps every entry where it was.
#pragma once

#include <cstddef>

namespace schmp {

// Where entry (a, b), a <= b, of a symmetric matrix sits.
inline std::size_t packed_index(std::size_t a, std::size_t b) { return b * (b + 1) / 2 + a; }

// How many entries an m x m symmetric matrix takes.
inline std::size_t packed_size(std::size_t m) { return m * (m + 1) / 2; }

}  // namespace schmp
