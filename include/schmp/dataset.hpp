// Labelled sparse datasets as the apps read them: one row per example, a label per row.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "schmp/io.hpp"
#include "schmp/peers.hpp"

namespace schmp::io {

// The rows that this worker of `peers` holds. Every worker reads only its byte range of the data. For a
// LIBSVM file those lines are its rows; a range of several MiB is parsed on the threads of the calling
// TBB arena, with the same rows and errors as read_libsvm on that range (`labels` must be empty: given,
// it is refused). A MatrixMarket file
// (recognised by its banner) takes its labels from `labels` (see read_dense_vector, read whole by every
// worker) and is split by row blocks: its entries may come in any order, so each goes from the worker
// that read it to the one whose block holds its row (Peers::route; 32 bytes per entry on the way).
// `names`: labels written as words, as read_libsvm reads them (LIBSVM files only).
SparseRows read_rows_part(const std::string& data, const std::string& labels, Peers& peers,
                          const std::vector<std::string>& names = {});

// The weights of the rows this worker holds (read_rows_part's `rows` rows, in order), from `weights`:
// plain text, one number per row of the data in its order (`#` comments and blank lines skipped). Every
// worker reads its byte range of the file and hands each weight to the worker that holds its row, so the
// file is never read whole. Refused: a negative, non-finite or non-numeric weight (at its line), a count
// other than the data's rows, and weights that sum to zero (the whole file).
std::vector<double> read_row_weights(const std::string& weights, std::size_t rows, Peers& peers);

// InputError at the line of the largest column index in `rows` (read from `data`) when the columns up to
// it, at `bytes_per_column` each, would need more memory than this process can have (check_memory).
void check_columns_fit(const std::string& data, const SparseRows& rows, double bytes_per_column);

// Every row of the data, in one process.
SparseRows read_rows(const std::string& data, const std::string& labels,
                     const std::vector<std::string>& names = {});

// The distinct labels of the data, in increasing order: of a LIBSVM file, read a chunk at a time (each
// line's first number: a label refused at its line as read_libsvm refuses it, the rest of the line
// unread); of a MatrixMarket matrix, from `labels`.
std::vector<double> read_label_set(const std::string& data, const std::string& labels);

// The distinct labels of a LIBSVM file as words, sorted, when some label is not a number (classes by
// name); empty when every label is one (read_label_set's case) and for a MatrixMarket matrix.
std::vector<std::string> read_label_names(const std::string& data);

// Every row of a data set with only the entries of some columns: what a scheduler keeps to test the
// columns it owns.
struct ColumnBlock {
  SparseRows rows;            // every row, only the entries of the block's columns, by their indices in the
                              // whole data (read from the data: with labels and sources; gathered from the
                              // workers: labels 0, no sources)
  std::uint32_t columns = 0;  // 1 + the largest column index of the whole data, as SparseRows::columns()
};

// Reads `data` (LIBSVM, or MatrixMarket) in consecutive chunks of about 64 MiB of text, keeping the
// entries of the columns in [begin, end): the whole file is parsed once, but never held. MatrixMarket rows
// get no labels (none are read); a repeated entry in the block's columns is refused as a worker refuses
// it.
ColumnBlock read_column_block(const std::string& data, std::uint32_t begin, std::uint32_t end);

}  // namespace schmp::io
