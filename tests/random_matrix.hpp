// Shared by tests: a random sparse matrix, as the readers give it and as a dense array, and rows written
// back as LIBSVM text.
#pragma once

#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "schmp/io.hpp"

namespace schmp::testing {

// A random sparse matrix as rows, and the same as a dense row-major array.
struct RandomMatrix {
  io::SparseRows rows;
  std::vector<double> dense;
  std::size_t columns;
};

// Entries present with probability `density`, values and row labels standard normal, except that the
// entries of the first `binary_rows` rows are 1 (indicator features), and the first `dense_columns`
// columns have an entry in every row.
inline RandomMatrix random_matrix(std::size_t rows, std::size_t columns, double density, std::uint64_t seed,
                                  std::size_t binary_rows = 0, std::size_t dense_columns = 0) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> uniform(0, 1);
  std::normal_distribution<double> normal(0, 1);
  RandomMatrix m{{}, std::vector<double>(rows * columns, 0.0), columns};
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t j = 0; j < columns; ++j) {
      if (j >= dense_columns && uniform(random) >= density) continue;
      const double x = i < binary_rows ? 1.0 : normal(random);
      m.rows.index.push_back(static_cast<std::uint32_t>(j));
      m.rows.value.push_back(x);
      m.dense[i * columns + j] = x;
    }
    m.rows.row_start.push_back(m.rows.index.size());
    m.rows.labels.push_back(normal(random));
    m.rows.source.push_back(i + 1);
  }
  return m;
}

// The rows as a LIBSVM file's text (values at the stream's default precision).
inline std::string libsvm_text(const io::SparseRows& rows) {
  std::ostringstream text;
  for (std::size_t i = 0; i < rows.rows(); ++i) {
    text << rows.labels[i];
    for (std::size_t e = rows.row_start[i]; e < rows.row_start[i + 1]; ++e) {
      text << ' ' << rows.index[e] + 1 << ':' << rows.value[e];
    }
    text << '\n';
  }
  return text.str();
}

}  // namespace schmp::testing
