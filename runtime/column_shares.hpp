// How the schedulers' dependency tests get their columns without reading the data: each worker sends
// each scheduler the entries of its rows in that scheduler's columns, and the scheduler's process joins
// them, rows in worker order, into the block it would have read (programs whose Worker has rows(),
// program.hpp). Each byte of the data is then parsed once, by the worker whose range holds it, where
// every scheduler used to parse the whole file.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "layout.hpp"
#include "mpi.hpp"
#include "schmp/dataset.hpp"
#include "schmp/program.hpp"

namespace schmp::detail {

// Worker -> a scheduler's process, before the solve: the entries of some of the worker's rows in the
// scheduler's columns, in compressed-row form. A worker's rows may take several shares (MPI counts a
// message's bytes in an int); the last one says so.
struct ColumnShare {
  std::uint32_t columns = 0;             // 1 + the largest column index of the worker's rows
  std::vector<std::uint64_t> row_start;  // one more than the rows it holds
  std::vector<std::uint32_t> index;
  std::vector<double> value;
  bool last = true;

  std::size_t rows() const { return row_start.size() - 1; }

  template <class Visitor>
  void visit(Visitor& v) {
    v(columns, row_start, index, value, last);
  }
};

// A share's bounds: about 1.3 GB of message at most.
inline constexpr std::size_t kMostShareEntries = std::size_t{1} << 26;
inline constexpr std::size_t kMostShareRows = std::size_t{1} << 26;

// The entries in the columns `owned` of rows `first`, `first` + 1, ... of `rows`, whole rows, as many as
// keep the share within `most_entries` entries and `most_rows` rows (at least one row, when any is left).
// Its `columns` is left 0 for the caller to set: rows.columns() scans every entry, once is enough.
ColumnShare column_share(const io::SparseRows& rows, ParamRange owned, std::size_t first = 0,
                         std::size_t most_entries = kMostShareEntries,
                         std::size_t most_rows = kMostShareRows);

// Adds a worker's rows, with their entries in the block's columns, after those of `block`.
void append_share(io::ColumnBlock& block, const ColumnShare& share);

// The exchange at start-up, run by every rank once its worker (if any) has read its rows: `worker_rows`
// is null on ranks without a worker; `hosted` the indices of the scheduler ranges this rank tests
// (a scheduler rank's own, or every range on a coordinator hosting the schedulers). Each range's block
// goes to take(k, block), k its place in `hosted`, as soon as it is whole and before the next one is
// gathered: a coordinator hosting the schedulers holds one block at a time.
void gather_columns(MPI_Comm world, const Layout& layout, const std::vector<ParamRange>& ranges,
                    const std::vector<std::size_t>& hosted, const io::SparseRows* worker_rows, Waiter& waiter,
                    const std::function<void(std::size_t, const io::ColumnBlock&)>& take);

}  // namespace schmp::detail
