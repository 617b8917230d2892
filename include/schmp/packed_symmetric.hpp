// The layout in which workers sum a symmetric matrix (a Gram matrix or a Hessian over a few
// coordinates): its upper triangle, by rows, so that the message is half the matrix.
#pragma once

#include <cstddef>

namespace schmp {

// Where entry (a, b), a <= b, of an m x m symmetric matrix sits; the whole takes m (m + 1) / 2.
inline std::size_t packed_index(std::size_t m, std::size_t a, std::size_t b) {
  return a * m - a * (a - 1) / 2 + (b - a);
}

}  // namespace schmp
