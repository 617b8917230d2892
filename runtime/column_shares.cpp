#include "column_shares.hpp"

#include <algorithm>
#include <stdexcept>

namespace schmp::detail {

ColumnShare column_share(const io::SparseRows& rows, ParamRange owned, std::size_t first,
                         std::size_t most_entries, std::size_t most_rows) {
  ColumnShare share;
  share.row_start.push_back(0);
  std::size_t r = first;
  for (; r < rows.rows() && share.rows() < most_rows; ++r) {
    std::size_t owned_entries = 0;
    for (std::uint64_t e = rows.row_start[r]; e < rows.row_start[r + 1]; ++e)
      owned_entries += owned.contains(rows.index[e]) ? 1 : 0;
    if (share.rows() > 0 && share.index.size() + owned_entries > most_entries) break;
    for (std::uint64_t e = rows.row_start[r]; e < rows.row_start[r + 1]; ++e) {
      if (!owned.contains(rows.index[e])) continue;
      share.index.push_back(rows.index[e]);
      share.value.push_back(rows.value[e]);
    }
    share.row_start.push_back(share.index.size());
  }
  share.last = r >= rows.rows();
  return share;
}

void append_share(io::ColumnBlock& block, const ColumnShare& share) {
  if (share.row_start.empty() || share.row_start.back() != share.index.size() ||
      share.index.size() != share.value.size()) {
    throw std::logic_error("a worker's column share is malformed");
  }
  io::SparseRows& rows = block.rows;
  block.columns = std::max(block.columns, share.columns);
  const std::uint64_t offset = rows.index.size();
  for (std::size_t r = 1; r < share.row_start.size(); ++r)
    rows.row_start.push_back(offset + share.row_start[r]);
  rows.index.insert(rows.index.end(), share.index.begin(), share.index.end());
  rows.value.insert(rows.value.end(), share.value.begin(), share.value.end());
  // The dependency tests need neither labels nor sources; rows() counts the labels.
  rows.labels.resize(rows.labels.size() + share.row_start.size() - 1, 0.0);
}

void gather_columns(MPI_Comm world, const Layout& layout, const std::vector<ParamRange>& ranges,
                    const std::vector<std::size_t>& hosted, const io::SparseRows* worker_rows, Waiter& waiter,
                    const std::function<void(std::size_t, const io::ColumnBlock&)>& take) {
  // One share in flight at a time: a worker holds at most one scheduler's part of its rows twice.
  if (worker_rows) {
    const std::uint32_t columns = worker_rows->columns();
    Outbox outbox;
    for (std::size_t s = 0; s < ranges.size(); ++s) {
      const int host = layout.hosted_schedulers ? 0 : static_cast<int>(s) + 1;
      std::size_t first = 0;
      for (bool last = false; !last;) {
        ColumnShare share = column_share(*worker_rows, ranges[s], first);
        share.columns = columns;
        first += share.rows();
        last = share.last;
        outbox.send(world, host, kTagColumns, serialize(share));
        outbox.drain(waiter);
      }
    }
  }
  for (std::size_t k = 0; k < hosted.size(); ++k) {
    io::ColumnBlock block;
    for (int w = 0; w < layout.workers(); ++w) {
      for (bool last = false; !last;) {
        const auto share = deserialize<ColumnShare>(
            receive_bytes(world, layout.first_worker_rank() + w, kTagColumns, waiter));
        append_share(block, share);
        last = share.last;
      }
    }
    take(k, block);
  }
}

}  // namespace schmp::detail
