#include "schmp/dataset.hpp"

#include <algorithm>
#include <fstream>
#include <numeric>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "fingerprint.hpp"
#include "parallel_parse.hpp"
#include "whole_file_readers.hpp"

namespace schmp::io {

namespace {

// One entry of a MatrixMarket matrix, kept apart from the others (on its way to the worker that holds
// its row, or kept by a scheduler for its columns).
struct MatrixEntry {
  std::uint64_t row = 0;
  std::uint64_t source = 0;  // of its line (schmp/io.hpp)
  double value = 0;
  std::uint32_t column = 0;
};

// Rows [first, last) in compressed form from their entries (unlabelled, sources unknown); refuses an
// entry repeated in the same row and column, at the later line.
SparseRows rows_of_entries(const std::string& data, std::vector<MatrixEntry> entries, std::uint64_t first,
                           std::uint64_t last) {
  std::sort(entries.begin(), entries.end(), [](const MatrixEntry& a, const MatrixEntry& b) {
    return std::tie(a.row, a.column, a.source) < std::tie(b.row, b.column, b.source);
  });
  SparseRows rows;
  rows.labels.assign(last - first, 0.0);
  rows.source.assign(last - first, kUnknownSource);
  rows.row_start.assign(last - first + 1, 0);
  rows.index.reserve(entries.size());
  rows.value.reserve(entries.size());
  for (std::size_t k = 0; k < entries.size(); ++k) {
    const MatrixEntry& entry = entries[k];
    if (k > 0 && entry.row == entries[k - 1].row && entry.column == entries[k - 1].column) {
      throw InputError::at(data, entry.source,
                           "duplicate entry (" + std::to_string(entry.row + 1) + ", " +
                               std::to_string(entry.column + 1) + ")");
    }
    ++rows.row_start[entry.row - first + 1];
    rows.index.push_back(entry.column);
    rows.value.push_back(entry.value);
  }
  std::partial_sum(rows.row_start.begin(), rows.row_start.end(), rows.row_start.begin());
  return rows;
}

// The rows of this worker's block of a MatrixMarket matrix, from the entries of its byte range and
// those the other workers read for it.
SparseRows rows_of_block(const std::string& data, const std::string& labels, Peers& peers, ByteRange range) {
  if (labels.empty())
    throw InputError(data, 0, "a MatrixMarket matrix needs its labels in a separate file (--labels)");
  // Every worker reads the labels whole: a stale copy on one host would give its rows other labels.
  // Checked first, as it costs less than the matrix.
  std::vector<double> all_labels;
  internal::check_read_on_every_worker(labels, peers, [&] {
    all_labels = read_dense_vector(labels);
    internal::Fingerprint fingerprint;
    fingerprint.add({reinterpret_cast<const char*>(all_labels.data()), all_labels.size() * sizeof(double)});
    return internal::Seen{fingerprint.value(), std::to_string(all_labels.size()) + " labels of checksum " +
                                                   fingerprint.checksum()};
  });
  Coordinates entries = read_matrix_market(data, range);
  if (all_labels.size() != entries.rows) {
    throw InputError(labels, 0,
                     "has " + std::to_string(all_labels.size()) + " labels for " +
                         std::to_string(entries.rows) + " matrix rows");
  }
  // Worker p holds the rows [start[p], start[p + 1]); row r goes to the last one starting at or before it.
  const auto parts = static_cast<std::size_t>(peers.count());
  std::vector<std::uint64_t> start(parts + 1);
  for (std::size_t p = 0; p <= parts; ++p) start[p] = entries.rows * p / parts;
  const auto owner = [&](std::uint64_t row) {
    return static_cast<std::size_t>(std::upper_bound(start.begin(), start.end() - 1, row) - start.begin()) -
           1;
  };
  // Sized exactly, and the parsed entries let go before the route: at most two copies of the range's
  // entries are held at once (docs/memory.md).
  std::vector<std::size_t> owned(parts, 0);
  for (const std::uint64_t row : entries.row) ++owned[owner(row)];
  std::vector<std::vector<MatrixEntry>> by_owner(parts);
  for (std::size_t p = 0; p < parts; ++p) by_owner[p].reserve(owned[p]);
  for (std::size_t e = 0; e < entries.row.size(); ++e) {
    by_owner[owner(entries.row[e])].push_back(
        MatrixEntry{entries.row[e], entries.source[e], entries.value[e], entries.column[e]});
  }
  std::vector<std::uint64_t> count{entries.row.size()};
  // Fresh vectors: assigning {} would empty them and keep their memory.
  entries.row = std::vector<std::uint64_t>();
  entries.column = std::vector<std::uint32_t>();
  entries.value = std::vector<double>();
  entries.source = std::vector<std::uint64_t>();
  peers.sum(count);
  check_entry_count(data, entries, count[0]);
  std::vector<MatrixEntry> mine = peers.route(by_owner);
  by_owner = {};

  const std::uint64_t first = start[static_cast<std::size_t>(peers.index())];
  const std::uint64_t last = start[static_cast<std::size_t>(peers.index()) + 1];
  SparseRows rows = rows_of_entries(data, std::move(mine), first, last);
  rows.labels.assign(all_labels.begin() + static_cast<std::ptrdiff_t>(first),
                     all_labels.begin() + static_cast<std::ptrdiff_t>(last));
  return rows;
}

// Appends `piece` to `rows` as further rows.
void append_rows(SparseRows& rows, const SparseRows& piece) {
  const std::uint64_t offset = rows.index.size();
  rows.labels.insert(rows.labels.end(), piece.labels.begin(), piece.labels.end());
  for (auto start = piece.row_start.begin() + 1; start != piece.row_start.end(); ++start) {
    rows.row_start.push_back(offset + *start);
  }
  rows.index.insert(rows.index.end(), piece.index.begin(), piece.index.end());
  rows.value.insert(rows.value.end(), piece.value.begin(), piece.value.end());
  rows.source.insert(rows.source.end(), piece.source.begin(), piece.source.end());
}

// read_libsvm(path, range) on several threads.
SparseRows read_libsvm_parallel(const std::string& path, std::uint64_t size, ByteRange range,
                                const std::vector<std::string>& names) {
  std::vector<SparseRows> pieces = internal::parse_in_pieces<SparseRows>(
      size, range, [&](ByteRange sub) { return read_libsvm(path, sub, names); });
  if (pieces.size() == 1) return std::move(pieces.front());
  SparseRows rows;
  std::size_t row_count = 0;
  std::size_t entry_count = 0;
  for (const SparseRows& piece : pieces) {
    row_count += piece.rows();
    entry_count += piece.index.size();
  }
  rows.labels.reserve(row_count);
  rows.row_start.reserve(row_count + 1);
  rows.source.reserve(row_count);
  rows.index.reserve(entry_count);
  rows.value.reserve(entry_count);
  for (const SparseRows& piece : pieces) append_rows(rows, piece);
  return rows;
}

}  // namespace

SparseRows read_rows_part(const std::string& data, const std::string& labels, Peers& peers,
                          const std::vector<std::string>& names) {
  const ByteRange range = worker_range(data, peers);
  const std::uint64_t size = file_size(data);
  if (size == 0) throw InputError(data, 0, "empty file");
  if (is_matrix_market(data)) return rows_of_block(data, labels, peers, range);
  // Unread, a labels file would be ignored however wrong it is.
  if (!labels.empty()) {
    throw InputError(labels, 0,
                     "labels in a file of their own are for a MatrixMarket matrix: " + data +
                         " is LIBSVM, whose rows carry their own");
  }
  return read_libsvm_parallel(data, size, range, names);
}

std::vector<double> read_row_weights(const std::string& weights, std::size_t rows, Peers& peers) {
  const ByteRange range = worker_range(weights, peers);
  if (is_matrix_market(weights))
    throw InputError(weights, 1, "weights are plain text, one number per row: not a MatrixMarket file");
  std::vector<std::uint64_t> sources;
  const std::vector<double> values =
      internal::read_text_vector(internal::read_range(weights, range), &sources);
  double sum = 0;
  for (std::size_t k = 0; k < values.size(); ++k) {
    if (values[k] < 0) {
      std::ostringstream shown;
      shown << "negative weight " << values[k] << ": a weight is 0 or more";
      throw InputError::at(weights, sources[k], shown.str());
    }
    sum += values[k];
  }
  // Where each worker's rows and weights start in the data's order: counts[w] rows, counts[parts + w]
  // weights. The sum goes along as a count of whole units: exact, and it only tells zero from positive.
  const auto parts = static_cast<std::size_t>(peers.count()), me = static_cast<std::size_t>(peers.index());
  std::vector<std::uint64_t> counts(2 * parts + 1, 0);
  counts[me] = rows;
  counts[parts + me] = values.size();
  counts[2 * parts] = sum > 0 ? 1 : 0;
  peers.sum(counts);
  std::vector<std::uint64_t> row_start(parts + 1, 0), weight_start(parts + 1, 0);
  for (std::size_t w = 0; w < parts; ++w) {
    row_start[w + 1] = row_start[w] + counts[w];
    weight_start[w + 1] = weight_start[w] + counts[parts + w];
  }
  if (weight_start[parts] != row_start[parts]) {
    throw InputError(weights, 0,
                     "has " + std::to_string(weight_start[parts]) + " weights for " +
                         std::to_string(row_start[parts]) + " rows of data: one weight per row");
  }
  if (counts[2 * parts] == 0) throw InputError(weights, 0, "the weights sum to zero: no row counts");
  std::vector<std::vector<double>> by_owner(parts);
  std::size_t owner = 0;
  for (std::size_t k = 0; k < values.size(); ++k) {
    const std::uint64_t row = weight_start[me] + k;
    while (row >= row_start[owner + 1]) ++owner;
    by_owner[owner].push_back(values[k]);
  }
  return peers.route(by_owner);
}

namespace internal {

ColumnBlock read_column_block(const std::string& data, std::uint32_t begin, std::uint32_t end,
                              std::uint64_t chunk_bytes) {
  if (file_size(data) == 0) throw InputError(data, 0, "empty file");
  const auto in_block = [&](std::uint32_t column) { return column >= begin && column < end; };
  ColumnBlock block;
  SparseRows& rows = block.rows;
  if (!is_matrix_market(data)) {
    ChunkReader chunks(data, chunk_bytes);
    RangeText chunk;
    while (chunks.next(chunk)) {
      // Each chunk is parsed on the threads of the calling arena, as a worker's range is.
      const std::uint64_t size = chunk.text().size();
      for (const SparseRows& piece : parse_in_pieces<SparseRows>(
               size, ByteRange{0, size}, [&](ByteRange lines) { return parse_libsvm(chunk, lines); })) {
        block.columns = std::max(block.columns, piece.columns());
        for (std::size_t r = 0; r < piece.rows(); ++r) {
          for (std::uint64_t e = piece.row_start[r]; e < piece.row_start[r + 1]; ++e) {
            if (!in_block(piece.index[e])) continue;
            rows.index.push_back(piece.index[e]);
            rows.value.push_back(piece.value[e]);
          }
          rows.row_start.push_back(rows.index.size());
        }
        rows.labels.insert(rows.labels.end(), piece.labels.begin(), piece.labels.end());
        rows.source.insert(rows.source.end(), piece.source.begin(), piece.source.end());
      }
    }
    return block;
  }
  std::vector<MatrixEntry> kept;
  const Coordinates sizes = read_matrix_market_in_chunks(data, chunk_bytes, [&](const Coordinates& entries) {
    for (std::size_t e = 0; e < entries.row.size(); ++e) {
      block.columns = std::max(block.columns, entries.column[e] + 1);
      if (in_block(entries.column[e]))
        kept.push_back(MatrixEntry{entries.row[e], entries.source[e], entries.value[e], entries.column[e]});
    }
  });
  block.rows = rows_of_entries(data, std::move(kept), 0, sizes.rows);
  return block;
}

}  // namespace internal

ColumnBlock read_column_block(const std::string& data, std::uint32_t begin, std::uint32_t end) {
  return internal::read_column_block(data, begin, end, internal::kChunkBytes);
}

namespace {

// Visits the label token of each row of the LIBSVM file `data`, a chunk at a time, with its line's place;
// a row without one is refused at its line.
template <class Visit>
void visit_label_tokens(const std::string& data, Visit visit) {
  internal::LineStream lines(data, internal::kChunkBytes);
  while (const auto line = lines.next()) {
    internal::Tokenizer tokens(internal::before_comment(line->text, '#'));
    const auto label = tokens.next();
    if (!label) continue;
    if (label->find(':') != std::string_view::npos)
      line->where().fail("missing label before " + internal::quoted(*label));
    visit(*label, line->where());
  }
}

}  // namespace

std::vector<double> read_label_set(const std::string& data, const std::string& labels) {
  std::vector<double> all;
  if (is_matrix_market(data)) {
    all = read_dense_vector(labels);
  } else {
    std::size_t distinct_at = 1024;  // the size at which the labels read are next made distinct
    visit_label_tokens(data, [&](std::string_view label, const internal::Where& where) {
      all.push_back(internal::parse_finite(label, "label", where));
      // Few distinct labels among many rows: made distinct as they come, so that memory stays small.
      if (all.size() >= distinct_at) {
        std::sort(all.begin(), all.end());
        all.erase(std::unique(all.begin(), all.end()), all.end());
        distinct_at = 2 * all.size() + 1024;
      }
    });
  }
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

SparseRows read_rows(const std::string& data, const std::string& labels,
                     const std::vector<std::string>& names) {
  Peers alone;
  return read_rows_part(data, labels, alone, names);
}

std::vector<std::string> read_label_names(const std::string& data) {
  if (is_matrix_market(data)) return {};
  std::set<std::string, std::less<>> words;
  bool all_numbers = true;
  visit_label_tokens(data, [&](std::string_view label, const internal::Where&) {
    if (words.find(label) == words.end()) words.emplace(label);
    all_numbers = all_numbers && internal::is_number(label);
  });
  if (all_numbers) return {};
  return {words.begin(), words.end()};
}

}  // namespace schmp::io
