// Labelled sparse datasets as the apps read them: one row per example, a label per row.
#pragma once

#include <string>

#include "schmp/io.hpp"
#include "schmp/peers.hpp"

namespace schmp::io {

// The rows that this worker of `peers` holds. Every worker reads only its byte range of the data. For a
// LIBSVM file those lines are its rows; a range of several MiB is parsed on the threads of the calling
// TBB arena, with the same rows and errors as read_libsvm on that range. A MatrixMarket file
// (recognised by its banner) takes its labels from `labels` (see read_dense_vector, read whole by every
// worker) and is split by row blocks: its entries may come in any order, so each goes from the worker
// that read it to the one whose block holds its row (Peers::route; 32 bytes per entry on the way).
SparseRows read_rows_part(const std::string& data, const std::string& labels, Peers& peers);

// Every row of the data, in one process.
SparseRows read_rows(const std::string& data, const std::string& labels);

}  // namespace schmp::io
