// Labelled sparse datasets as the apps read them: one row per example, a label per row.
#pragma once

#include <string>

#include "schmp/io.hpp"

namespace schmp::io {

// The rows that worker `part` of `parts` holds. LIBSVM files are split by byte range, so each worker
// parses only its own lines; a range of several MiB is parsed on the threads of the calling TBB arena,
// with the same rows and errors as read_libsvm on that range. A MatrixMarket file (recognised by its
// banner) takes its labels from `labels` (see read_dense_vector) and is split by row blocks; its
// entries may come in any order, so every worker scans the file and keeps its rows.
SparseRows read_rows_part(const std::string& data, const std::string& labels, int part, int parts);

}  // namespace schmp::io
