// The schedulers' dependency filter for models over the columns of a sparse design matrix.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "schmp/dataset.hpp"
#include "schmp/io.hpp"
#include "schmp/program.hpp"

namespace schmp::kernels {

// The dependency test of the sparse linear models (Lasso, logistic regression): a block keeps only
// columns with |cos(x_a, x_b)| < rho for every pair, so that updating them together behaves like
// updating them one after another. Each scheduler holds its owned columns of the whole data set. To test a
// candidate against the whole block at once, the kept columns' entries are threaded by row: a candidate's
// cosines with every kept column cost one pass over its own rows plus the entries it meets there. Long
// columns (dense features, popular items) would make that pass the bulk of a round, and late in a solve the
// same few coefficients are drawn round after round: so the verdicts on pairs involving a long column are
// remembered (while remembering pays: MemoUse), and a kept column is threaded only when a candidate's
// verdict is not already known.
// Most candidates on sparse data share few rows with the block, and a bound settles them without any
// cosine: |cos(a, b)| <= sum over shared rows |a_r| |b_r|, so when the sum over the candidate's rows of
// |a_r| times the number of short kept columns on row r, times the largest entry of any of them, stays
// below rho, no short kept column interferes. Keeping those counts costs one pass over a kept column.
// On small problems (few owned columns, short rows, as dna_splice's 180 binary features) nearly every
// pair is tested sooner or later, and each test costs passes over both columns; working out every pair's
// cosine at once, row by row, costs the sum of squared row lengths, a few passes over the data, so
// there the verdicts are all settled when the filter is made and a test is a bit lookup per kept column.
class CorrelationFilter {
 public:
  // kOnDemand never settles every pair up front (so that tests reach the other paths on small data).
  enum class AllPairs { kWhenCheap, kOnDemand };
  // Reads the owned columns of `data` (LIBSVM or MatrixMarket; io::read_column_block: the file is parsed
  // a range at a time and only those columns are kept); rho >= 1 switches the check off. With
  // `constant_column`, the parameter after the data's last column is a feature that is 1 on every row
  // (a bias term).
  CorrelationFilter(const std::string& data, double rho, ParamRange owned, bool constant_column = false,
                    AllPairs all_pairs = AllPairs::kWhenCheap);
  // The same from the whole data set's rows, already read.
  CorrelationFilter(const io::SparseRows& rows, double rho, ParamRange owned, bool constant_column = false,
                    AllPairs all_pairs = AllPairs::kWhenCheap);
  // The same from every row's entries in the owned columns (io::read_column_block's, or gathered from
  // the workers).
  CorrelationFilter(const io::ColumnBlock& block, double rho, ParamRange owned, bool constant_column = false,
                    AllPairs all_pairs = AllPairs::kWhenCheap);
  // The same from what the engine hands a program's dependency test (program.hpp), which holds no rows
  // only when the check is off.
  CorrelationFilter(const DataColumns& data, double rho, ParamRange owned, bool constant_column = false,
                    AllPairs all_pairs = AllPairs::kWhenCheap);
  // Whether every pair's verdict was settled when the filter was made.
  bool settled_all_pairs() const { return !all_pairs_.empty(); }
  void clear();
  void prepare(ParamIndex candidate) const;
  bool admit(ParamIndex candidate);

 private:
  // Verdicts on pairs of columns, in an open-addressed table emptied when it fills up.
  class PairMemo {
   public:
    enum class Verdict : std::uint8_t { kUnknown, kIndependent, kInterferes };
    Verdict find(ParamIndex a, ParamIndex b) const;
    void insert(ParamIndex a, ParamIndex b, bool interferes);
    void reset();  // forgets every verdict; makes the table if there is none yet

   private:
    std::size_t slot_of(std::uint64_t key) const;
    std::vector<std::uint64_t> slots_;  // 0 when empty, else (pair key << 1) | interferes
    std::size_t used_ = 0;
  };
  // Whether looking a long pair's verdict up pays. While the long columns drawn are mostly new to each
  // other (early in a solve, or when candidates spread over many columns) nearly every lookup misses,
  // each a cache miss in the memo's 8 MiB, and the verdict is worked out anyway. So the lookups'
  // hit rate is watched over windows of kWindow lookups, and after a window with fewer than one hit in
  // eight the memo rests (no lookups, no inserts) for kRest candidates before it is tried again.
  // Verdicts are the same either way: the memo only saves working them out.
  class MemoUse {
   public:
    bool for_next_candidate() {
      if (resting_ == 0) return true;
      --resting_;
      return false;
    }
    void looked_up(bool found);
    bool resting() const { return resting_ > 0; }

   private:
    static constexpr std::uint32_t kWindow = 4096;
    static constexpr std::uint32_t kRest = 4096;
    std::uint32_t lookups_ = 0;
    std::uint32_t found_ = 0;
    std::uint32_t resting_ = 0;
  };
  struct Entry {
    std::int32_t next;   // next entry of a kept column on the same row, or -1
    std::uint32_t slot;  // which kept column
    float value;
  };
  struct Kept {
    ParamIndex column;
    bool is_long;
    bool threaded;
  };
  std::size_t length(ParamIndex column) const {
    return start_[column - owned_.begin + 1] - start_[column - owned_.begin];
  }
  bool is_long(ParamIndex column) const;
  // `constant`: the constant column's index, the data's column count.
  CorrelationFilter(const io::SparseRows& rows, ParamIndex constant, double rho, ParamRange owned,
                    bool constant_column, AllPairs all_pairs);
  // Settles every pair's verdict from the rows, when that is cheap (see above); false when it is not.
  bool settle_all_pairs(const io::SparseRows& rows, ParamIndex constant, bool owns_constant);
  bool interferes(ParamIndex a, ParamIndex b) const {
    const std::size_t row = (a - owned_.begin) * words_per_column_;
    const std::size_t b_offset = b - owned_.begin;
    return (all_pairs_[row + b_offset / 64] >> (b_offset % 64) & 1) != 0;
  }
  void thread(std::uint32_t slot);
  // Whether the bound above shows that `candidate` (a short column) interferes with no short kept one.
  bool clear_of_short_kept(ParamIndex candidate) const;
  void count_rows(ParamIndex column);

  double rho_;
  ParamRange owned_;
  // The owned columns, normalised to unit length.
  std::vector<std::size_t> start_;
  std::vector<std::uint32_t> row_;
  // Single precision: the test compares cosines with rho, and the halved memory traffic matters
  // because each round reads the columns of every candidate from memory.
  std::vector<float> value_;
  std::vector<float> largest_entry_;  // per owned column, of the normalised values
  PairMemo memo_;
  MemoUse memo_use_;
  // With every verdict settled: a bit per ordered pair of owned columns, set when they interfere.
  std::vector<std::uint64_t> all_pairs_;
  std::size_t words_per_column_ = 0;
  // The block being built.
  std::vector<Kept> kept_;
  std::vector<std::int32_t> row_head_;  // per row: its first threaded entry, or -1
  // The rows that the block's threaded entries touched, and those entries: the first touched_row_count_
  // and threaded_entries_ of each vector, which keep their size between blocks.
  std::vector<std::uint32_t> touched_rows_;
  std::vector<Entry> entries_;
  std::size_t threaded_entries_ = 0;
  std::size_t touched_row_count_ = 0;
  std::vector<double> cosines_;                   // per kept column, for the candidate being tested
  std::vector<std::uint32_t> unknown_;            // kept slots whose verdict with the candidate is not known
  std::vector<std::uint32_t> short_kept_on_row_;  // per row: how many short kept columns have an entry there
  // The rows where that count is not zero: the first counted_row_count_, as above.
  std::vector<std::uint32_t> counted_rows_;
  std::size_t counted_row_count_ = 0;
  float largest_short_kept_entry_ = 0;
};

}  // namespace schmp::kernels
