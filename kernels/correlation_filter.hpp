// The schedulers' dependency filter for models over the columns of a sparse design matrix.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "schmp/program.hpp"

namespace schmp::kernels {

// The dependency test of the sparse linear models (Lasso, logistic regression): a block keeps only
// columns with |cos(x_a, x_b)| < rho for every pair, so that updating them together behaves like
// updating them one after another. Each scheduler reads its owned columns from the whole file. To test a
// candidate against the whole block at once, the kept columns' entries are threaded by row: a candidate's
// cosines with every kept column cost one pass over its own rows plus the entries it meets there. Long
// columns (dense features, popular items) would make that pass the bulk of a round, and late in a solve the
// same few coefficients are drawn round after round: so the verdicts on pairs involving a long column are
// remembered, and a kept column is threaded only when a candidate's verdict is not already known.
class CorrelationFilter {
 public:
  // Reads the owned columns of `data` (LIBSVM, or MatrixMarket with `labels`); rho >= 1 switches the
  // check off. With `constant_column`, the parameter after the data's last column is a feature that
  // is 1 on every row (a bias term).
  CorrelationFilter(const std::string& data, const std::string& labels, double rho, ParamRange owned,
                    bool constant_column = false);
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

   private:
    std::size_t slot_of(std::uint64_t key) const;
    std::vector<std::uint64_t> slots_;  // 0 when empty, else (pair key << 1) | interferes
    std::size_t used_ = 0;
  };
  struct Entry {
    std::int32_t next;   // next entry of a kept column on the same row, or -1
    std::uint32_t slot;  // which kept column
    float value;
  };
  struct Kept {
    ParamIndex column;
    bool threaded;
  };
  std::size_t length(ParamIndex column) const {
    return start_[column - owned_.begin + 1] - start_[column - owned_.begin];
  }
  bool is_long(ParamIndex column) const;
  void thread(std::uint32_t slot);

  double rho_;
  ParamRange owned_;
  // The owned columns, normalised to unit length.
  std::vector<std::size_t> start_;
  std::vector<std::uint32_t> row_;
  // Single precision: the test compares cosines with rho, and the halved memory traffic matters
  // because each round reads the columns of every candidate from memory.
  std::vector<float> value_;
  PairMemo memo_;
  // The block being built.
  std::vector<Kept> kept_;
  std::vector<std::int32_t> row_head_;  // per row: its first threaded entry, or -1
  std::vector<std::uint32_t> touched_rows_;
  std::vector<Entry> entries_;
  std::vector<double> cosines_;         // per kept column, for the candidate being tested
  std::vector<std::uint32_t> unknown_;  // kept slots whose verdict with the candidate is not known
};

}  // namespace schmp::kernels
