#include "schmp/kernels/correlation_filter.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <utility>

#include "schmp/dataset.hpp"

namespace schmp::kernels {

namespace {

// Each owned column's length, as its largest magnitude and the length of the column divided by that:
// the squares of values beyond 1e154 would overflow and those below 1e-162 vanish, and a column of
// either would come out of unit length, or of none.
class ColumnLengths {
 public:
  // `constant`: the owned offset of a column that is 1 on every row, if any.
  ColumnLengths(const io::SparseRows& rows, ParamRange owned, std::optional<std::size_t> constant)
      : largest_(owned.size(), 0.0), scaled_length_(owned.size(), 0.0) {
    // In one pass, as BLAS's dnrm2 does: the sum of squares is kept relative to the largest magnitude
    // so far, and rescaled when a larger one comes.
    const auto add = [&](std::size_t k, double value) {
      const double magnitude = std::abs(value);
      if (magnitude > largest_[k]) {
        const double ratio = largest_[k] / magnitude;
        scaled_length_[k] = 1 + scaled_length_[k] * ratio * ratio;
        largest_[k] = magnitude;
      } else if (magnitude > 0) {
        const double ratio = magnitude / largest_[k];
        scaled_length_[k] += ratio * ratio;
      }
    };
    for (std::size_t e = 0; e < rows.index.size(); ++e) {
      if (owned.contains(rows.index[e])) add(rows.index[e] - owned.begin, rows.value[e]);
    }
    if (constant) {
      for (std::size_t r = 0; r < rows.rows(); ++r) add(*constant, 1.0);
    }
    for (double& length : scaled_length_) length = std::sqrt(length);
  }
  // `value` of owned column k scaled to the column's unit length (0 in a column of zeros).
  double unit(std::size_t k, double value) const {
    return largest_[k] > 0 ? value / largest_[k] / scaled_length_[k] : 0.0;
  }

 private:
  std::vector<double> largest_;
  std::vector<double> scaled_length_;
};

}  // namespace

CorrelationFilter::CorrelationFilter(const std::string& data, double rho, ParamRange owned,
                                     bool constant_column, AllPairs all_pairs)
    // With the check off, no columns are needed.
    : CorrelationFilter(rho < 1 ? io::read_column_block(data, owned.begin, owned.end) : io::ColumnBlock{},
                        rho, owned, constant_column, all_pairs) {}

CorrelationFilter::CorrelationFilter(const io::ColumnBlock& block, double rho, ParamRange owned,
                                     bool constant_column, AllPairs all_pairs)
    : CorrelationFilter(block.rows, block.columns, rho, owned, constant_column, all_pairs) {}

CorrelationFilter::CorrelationFilter(const io::SparseRows& rows, double rho, ParamRange owned,
                                     bool constant_column, AllPairs all_pairs)
    : CorrelationFilter(rows, rows.columns(), rho, owned, constant_column, all_pairs) {}

namespace {

// The rows a filter is made from: the data's, or none when the check is off.
const io::SparseRows& rows_of(const DataColumns& data, double rho) {
  static const io::SparseRows kNone;
  if (data.rows) return *data.rows;
  if (rho < 1) throw std::logic_error("the dependency check (rho < 1) was given no data to check");
  return kNone;
}

}  // namespace

CorrelationFilter::CorrelationFilter(const DataColumns& data, double rho, ParamRange owned,
                                     bool constant_column, AllPairs all_pairs)
    : CorrelationFilter(rows_of(data, rho), data.columns, rho, owned, constant_column, all_pairs) {}

CorrelationFilter::CorrelationFilter(const io::SparseRows& rows, ParamIndex constant, double rho,
                                     ParamRange owned, bool constant_column, AllPairs all_pairs)
    : rho_(rho), owned_(owned) {
  if (rho_ >= 1) return;
  const bool owns_constant = constant_column && owned.contains(constant);
  if (all_pairs == AllPairs::kWhenCheap && settle_all_pairs(rows, constant, owns_constant)) return;
  // Transpose the owned columns out of the rows.
  start_.assign(owned.size() + 1, 0);
  for (std::uint32_t j : rows.index) {
    if (owned.contains(j)) ++start_[j - owned.begin + 1];
  }
  if (owns_constant) start_[constant - owned.begin + 1] = rows.rows();
  for (std::size_t k = 0; k < owned.size(); ++k) start_[k + 1] += start_[k];
  row_.resize(start_.back());
  value_.resize(start_.back());
  // Scaled to unit length before they are narrowed to single precision, whose range ends at 3.4e38.
  const ColumnLengths lengths(
      rows, owned, owns_constant ? std::optional<std::size_t>(constant - owned.begin) : std::nullopt);
  largest_entry_.assign(owned.size(), 0.0f);
  std::vector<std::size_t> next(start_.begin(), start_.end() - 1);
  const auto put = [&](std::size_t k, std::size_t r, double value) {
    const std::size_t at = next[k]++;
    row_[at] = static_cast<std::uint32_t>(r);
    value_[at] = static_cast<float>(lengths.unit(k, value));
    largest_entry_[k] = std::max(largest_entry_[k], std::abs(value_[at]));
  };
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    for (std::size_t e = rows.row_start[r]; e < rows.row_start[r + 1]; ++e) {
      if (owned.contains(rows.index[e])) put(rows.index[e] - owned.begin, r, rows.value[e]);
    }
    if (owns_constant) put(constant - owned.begin, r, 1.0);
  }
  row_head_.assign(rows.rows(), -1);
  short_kept_on_row_.assign(rows.rows(), 0);
  // The memo's 8 MiB are fresh pages, a page fault each when first written: at the first verdict they
  // stalled one of the solve's first rounds, here they add to the loading.
  for (ParamIndex column = owned.begin; column < owned.end; ++column) {
    if (is_long(column)) {
      memo_.reset();
      break;
    }
  }
}

namespace {

// A column with at least this many entries is long: testing it against a block by a pass over its
// entries costs more than looking up its verdicts with each kept column.
constexpr std::size_t kLongColumn = 256;
// The memo's size (slots, a power of two): 8 MiB, enough for the pairs among a few thousand long
// columns. When half full it is emptied, so that memory stays bounded whatever the run's length.
constexpr int kMemoBits = 20;
constexpr std::size_t kMemoSlots = std::size_t{1} << kMemoBits;
// Every pair's verdict is settled when the filter is made only for at most this many owned columns
// (their cosines are summed in a square of doubles, 8 MiB at this size, while the filter is made)...
constexpr std::size_t kMostColumnsForAllPairs = 1024;
// ... and when summing them row by row costs at most this many multiply-adds per nonzero: the work of
// a few dozen tests, where lazily nearly every pair would be tested at the cost of passes over both.
constexpr double kMostPairWorkPerEntry = 64;

std::uint64_t pair_key(ParamIndex a, ParamIndex b) {
  if (a > b) std::swap(a, b);
  return (std::uint64_t{a} << 32) | b;  // never 0: a < b
}

}  // namespace

CorrelationFilter::PairMemo::Verdict CorrelationFilter::PairMemo::find(ParamIndex a, ParamIndex b) const {
  if (slots_.empty()) return Verdict::kUnknown;
  const std::uint64_t key = pair_key(a, b);
  for (std::size_t s = slot_of(key);; s = (s + 1) & (slots_.size() - 1)) {
    if (slots_[s] == 0) return Verdict::kUnknown;
    if (slots_[s] >> 1 == key) return (slots_[s] & 1) != 0 ? Verdict::kInterferes : Verdict::kIndependent;
  }
}

void CorrelationFilter::PairMemo::reset() {
  slots_.assign(kMemoSlots, 0);
  used_ = 0;
}

void CorrelationFilter::PairMemo::insert(ParamIndex a, ParamIndex b, bool interferes) {
  if (slots_.empty() || 2 * (used_ + 1) > slots_.size()) reset();
  const std::uint64_t key = pair_key(a, b);
  std::size_t s = slot_of(key);
  while (slots_[s] != 0 && slots_[s] >> 1 != key) s = (s + 1) & (slots_.size() - 1);
  if (slots_[s] == 0) ++used_;
  slots_[s] = (key << 1) | (interferes ? 1 : 0);
}

void CorrelationFilter::MemoUse::looked_up(bool found) {
  ++lookups_;
  if (found) ++found_;
  if (lookups_ < kWindow) return;
  if (8 * found_ < lookups_) resting_ = kRest;
  lookups_ = 0;
  found_ = 0;
}

std::size_t CorrelationFilter::PairMemo::slot_of(std::uint64_t key) const {
  return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ULL) >> (64 - kMemoBits));  // Fibonacci hashing
}

bool CorrelationFilter::is_long(ParamIndex column) const {
  // Keys pack two indices into 63 bits: columns beyond 2^31 are never memoised.
  return length(column) >= kLongColumn && column < (ParamIndex{1} << 31);
}

bool CorrelationFilter::settle_all_pairs(const io::SparseRows& rows, ParamIndex constant_column,
                                         bool owns_constant) {
  const std::size_t p = owned_.size();
  if (p == 0 || p > kMostColumnsForAllPairs) return false;
  // A row's owned entries as (owned offset, value), in increasing offset: rows are sorted by index,
  // and the constant column comes after every column of the data.
  const std::size_t constant = constant_column - owned_.begin;
  std::vector<std::pair<std::size_t, double>> row_entries;
  const auto gather = [&](std::size_t r) {
    row_entries.clear();
    for (std::size_t e = rows.row_start[r]; e < rows.row_start[r + 1]; ++e) {
      if (owned_.contains(rows.index[e]))
        row_entries.emplace_back(rows.index[e] - owned_.begin, rows.value[e]);
    }
    if (owns_constant) row_entries.emplace_back(constant, 1.0);
  };
  double work = 0;
  double entries = 0;
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    gather(r);
    const auto length = static_cast<double>(row_entries.size());
    work += length * length;
    entries += length;
  }
  if (work > kMostPairWorkPerEntry * std::max(entries, 1.0)) return false;
  const ColumnLengths lengths(rows, owned_,
                              owns_constant ? std::optional<std::size_t>(constant) : std::nullopt);
  std::vector<double> cosine(p * p, 0.0);  // cosine[a * p + b] for a < b
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    gather(r);
    for (auto& [k, value] : row_entries) value = lengths.unit(k, value);
    for (std::size_t i = 0; i < row_entries.size(); ++i) {
      const auto [a, a_value] = row_entries[i];
      for (std::size_t j = i + 1; j < row_entries.size(); ++j)
        cosine[a * p + row_entries[j].first] += a_value * row_entries[j].second;
    }
  }
  words_per_column_ = (p + 63) / 64;
  all_pairs_.assign(p * words_per_column_, 0);
  for (std::size_t a = 0; a < p; ++a) {
    for (std::size_t b = a + 1; b < p; ++b) {
      if (!(std::abs(cosine[a * p + b]) >= rho_)) continue;
      all_pairs_[a * words_per_column_ + b / 64] |= std::uint64_t{1} << (b % 64);
      all_pairs_[b * words_per_column_ + a / 64] |= std::uint64_t{1} << (a % 64);
    }
  }
  return true;
}

void CorrelationFilter::clear() {
  for (std::size_t t = 0; t < touched_row_count_; ++t) row_head_[touched_rows_[t]] = -1;
  touched_row_count_ = 0;
  threaded_entries_ = 0;
  kept_.clear();
  for (std::size_t t = 0; t < counted_row_count_; ++t) short_kept_on_row_[counted_rows_[t]] = 0;
  counted_row_count_ = 0;
  largest_short_kept_entry_ = 0;
}

void CorrelationFilter::prepare(ParamIndex candidate) const {
  if (rho_ >= 1 || !all_pairs_.empty() || (is_long(candidate) && !memo_use_.resting())) return;
  // The candidates' columns sit at random places in memory: asking for all of a block's columns
  // before testing any overlaps the waits. Long columns are mostly settled by the memo while it is
  // in use.
  constexpr std::size_t kLine = 64;
  const std::size_t first = start_[candidate - owned_.begin];
  const std::size_t last = start_[candidate - owned_.begin + 1];
  for (std::size_t e = first; e < last; e += kLine / sizeof(std::uint32_t)) __builtin_prefetch(&row_[e]);
  for (std::size_t e = first; e < last; e += kLine / sizeof(float)) __builtin_prefetch(&value_[e]);
}

void CorrelationFilter::thread(std::uint32_t slot) {
  kept_[slot].threaded = true;
  const std::size_t k = kept_[slot].column - owned_.begin;
  const std::size_t length = start_[k + 1] - start_[k];
  // Room for the column first, then plain stores: pushing entry by entry reloads the vectors' ends at
  // every step, which made threading cost 40 instructions an entry.
  if (entries_.size() < threaded_entries_ + length) entries_.resize(threaded_entries_ + length);
  if (touched_rows_.size() < touched_row_count_ + length) touched_rows_.resize(touched_row_count_ + length);
  const std::uint32_t* rows = row_.data() + start_[k];
  const float* values = value_.data() + start_[k];
  std::int32_t* heads = row_head_.data();
  Entry* entries = entries_.data();
  std::uint32_t* touched = touched_rows_.data();
  std::size_t touched_count = touched_row_count_;
  for (std::size_t e = 0; e < length; ++e) {
    const std::uint32_t r = rows[e];
    const std::int32_t head = heads[r];
    touched[touched_count] = r;
    touched_count += head < 0 ? 1 : 0;
    const auto at = static_cast<std::int32_t>(threaded_entries_ + e);
    entries[at] = {head, slot, values[e]};
    heads[r] = at;
  }
  threaded_entries_ += length;
  touched_row_count_ = touched_count;
}

bool CorrelationFilter::clear_of_short_kept(ParamIndex candidate) const {
  double shared = 0;
  for (std::size_t e = start_[candidate - owned_.begin]; e < start_[candidate - owned_.begin + 1]; ++e)
    shared += std::abs(double{value_[e]}) * short_kept_on_row_[row_[e]];
  return shared * largest_short_kept_entry_ < rho_;
}

void CorrelationFilter::count_rows(ParamIndex column) {
  const std::size_t k = column - owned_.begin;
  const std::size_t length = start_[k + 1] - start_[k];
  // Presized, as in thread().
  if (counted_rows_.size() < counted_row_count_ + length) counted_rows_.resize(counted_row_count_ + length);
  const std::uint32_t* rows = row_.data() + start_[k];
  std::uint32_t* counts = short_kept_on_row_.data();
  std::uint32_t* counted = counted_rows_.data();
  std::size_t counted_count = counted_row_count_;
  for (std::size_t e = 0; e < length; ++e) {
    const std::uint32_t r = rows[e];
    counted[counted_count] = r;
    counted_count += counts[r]++ == 0 ? 1 : 0;
  }
  counted_row_count_ = counted_count;
  largest_short_kept_entry_ = std::max(largest_short_kept_entry_, largest_entry_[k]);
}

bool CorrelationFilter::admit(ParamIndex candidate) {
  if (rho_ >= 1) return true;
  if (!all_pairs_.empty()) {
    for (const Kept& kept : kept_) {
      if (interferes(candidate, kept.column)) return false;
    }
    kept_.push_back({candidate, false, false});
    return true;
  }
  const bool candidate_long = is_long(candidate);
  const bool clear_of_short = !candidate_long && clear_of_short_kept(candidate);
  const bool use_memo = memo_use_.for_next_candidate();
  unknown_.clear();
  for (std::uint32_t slot = 0; slot < kept_.size(); ++slot) {
    if (candidate_long || kept_[slot].is_long) {
      const auto verdict = use_memo ? memo_.find(candidate, kept_[slot].column) : PairMemo::Verdict::kUnknown;
      if (use_memo) memo_use_.looked_up(verdict != PairMemo::Verdict::kUnknown);
      if (verdict == PairMemo::Verdict::kInterferes) return false;
      if (verdict == PairMemo::Verdict::kIndependent) continue;
    } else if (clear_of_short) {
      continue;
    }
    unknown_.push_back(slot);
  }
  if (!unknown_.empty()) {
    for (std::uint32_t slot : unknown_) {
      if (!kept_[slot].threaded) thread(slot);
    }
    cosines_.assign(kept_.size(), 0.0);
    const std::size_t first = start_[candidate - owned_.begin];
    const std::size_t last = start_[candidate - owned_.begin + 1];
    for (std::size_t e = first; e < last; ++e) {
      for (std::int32_t k = row_head_[row_[e]]; k >= 0; k = entries_[static_cast<std::size_t>(k)].next) {
        const Entry& kept = entries_[static_cast<std::size_t>(k)];
        cosines_[kept.slot] += double{value_[e]} * kept.value;
      }
    }
    bool independent = true;
    for (std::uint32_t slot : unknown_) {
      const bool interferes = std::abs(cosines_[slot]) >= rho_;
      if (use_memo && (candidate_long || kept_[slot].is_long))
        memo_.insert(candidate, kept_[slot].column, interferes);
      independent = independent && !interferes;
    }
    if (!independent) return false;
  }
  kept_.push_back({candidate, candidate_long, false});
  if (!candidate_long) count_rows(candidate);
  return true;
}

}  // namespace schmp::kernels
