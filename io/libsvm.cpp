// LIBSVM / SVMlight rows: `label index:value index:value ... # comment`.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "line_reader.hpp"
#include "schmp/io.hpp"
#include "whole_file_readers.hpp"

namespace schmp::io {

namespace {

using internal::Where;

// The largest 1-based index: its 0-based form is at most 2^32 - 3, so that columns() = 1 + index
// still fits in 32 bits.
constexpr std::uint64_t kMaxFeatureIndex = 4294967294;

// Parses `index:value` and appends the entry (0-based index) to the row being built.
void append_feature(std::string_view token, const Where& where, SparseRows& rows) {
  const std::size_t colon = token.find(':');
  if (colon == std::string_view::npos) where.fail("feature " + internal::quoted(token) + " has no ':'");
  const std::string_view index_token = token.substr(0, colon);
  const std::string_view value_token = token.substr(colon + 1);
  if (index_token.empty()) where.fail("missing feature index in " + internal::quoted(token));
  if (value_token.empty()) where.fail("missing value in " + internal::quoted(token));
  const std::uint64_t index = internal::parse_count(index_token, "feature index", where);
  if (index == 0) where.fail("feature index 0 (indices are 1-based)");
  if (index > kMaxFeatureIndex) {
    where.fail("feature index " + std::to_string(index) + " out of range (largest is " +
               std::to_string(kMaxFeatureIndex) + ")");
  }
  rows.index.push_back(static_cast<std::uint32_t>(index - 1));
  rows.value.push_back(internal::parse_finite(value_token, "value", where));
}

// Sorts the entries [begin, end) of the row by index and rejects a repeated index. `scratch` is reused
// across rows to avoid an allocation per unsorted row.
void sort_row(SparseRows& rows, std::size_t begin, const Where& where,
              std::vector<std::pair<std::uint32_t, double>>& scratch) {
  scratch.clear();
  for (std::size_t k = begin; k < rows.index.size(); ++k) scratch.emplace_back(rows.index[k], rows.value[k]);
  std::sort(scratch.begin(), scratch.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t k = 0; k < scratch.size(); ++k) {
    if (k > 0 && scratch[k].first == scratch[k - 1].first) {
      where.fail("duplicate feature index " + std::to_string(std::uint64_t{scratch[k].first} + 1));
    }
    rows.index[begin + k] = scratch[k].first;
    rows.value[begin + k] = scratch[k].second;
  }
}

// The index of the word `token` in the sorted `names`.
double label_index(std::string_view token, const std::vector<std::string>& names, const Where& where) {
  const auto found = std::lower_bound(names.begin(), names.end(), token);
  if (found == names.end() || *found != token)
    where.fail("label " + internal::quoted(token) + " is not one of the classes");
  return static_cast<double>(found - names.begin());
}

}  // namespace

namespace internal {

SparseRows parse_libsvm(const RangeText& text, ByteRange lines_in, const std::vector<std::string>& names) {
  SparseRows rows;
  // Every entry holds a ':' and every row ends in a newline (but perhaps the last): counting them
  // first sizes the arrays once, where growing them would copy each several times over.
  const std::string_view whole = text.text();
  const std::uint64_t end = std::min<std::uint64_t>(lines_in.end, whole.size());
  const std::uint64_t begin = std::min<std::uint64_t>(lines_in.begin, end);
  const std::string_view all = whole.substr(begin, end - begin);
  const auto entries = static_cast<std::size_t>(std::count(all.begin(), all.end(), ':'));
  const auto lines_in_text = static_cast<std::size_t>(std::count(all.begin(), all.end(), '\n')) + 1;
  rows.index.reserve(entries);
  rows.value.reserve(entries);
  rows.labels.reserve(lines_in_text);
  rows.source.reserve(lines_in_text);
  rows.row_start.reserve(lines_in_text + 1);
  std::vector<std::pair<std::uint32_t, double>> scratch;
  internal::LineCursor lines(text, lines_in);
  while (const auto line = lines.next()) {
    internal::Tokenizer tokens(internal::before_comment(line->text, '#'));
    const auto label_token = tokens.next();
    if (!label_token) continue;  // blank, or only a comment
    const Where where = line->where();
    if (label_token->find(':') != std::string_view::npos) {
      where.fail("missing label before " + internal::quoted(*label_token));
    }
    const double label = names.empty() ? internal::parse_finite(*label_token, "label", where)
                                       : label_index(*label_token, names, where);

    const std::size_t row_begin = rows.index.size();
    bool increasing = true;
    while (const auto token = tokens.next()) {
      append_feature(*token, where, rows);
      const std::size_t last = rows.index.size() - 1;
      if (last > row_begin && rows.index[last] <= rows.index[last - 1]) increasing = false;
    }
    // Files written by tools are nearly always sorted already; only the others pay for a sort.
    if (!increasing) sort_row(rows, row_begin, where, scratch);

    rows.labels.push_back(label);
    rows.row_start.push_back(rows.index.size());
    rows.source.push_back(line->source);
  }
  return rows;
}

}  // namespace internal

SparseRows read_libsvm(const std::string& path, ByteRange range, const std::vector<std::string>& names) {
  return internal::parse_libsvm(internal::read_range(path, range), {}, names);
}

}  // namespace schmp::io
