#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <vector>

#include "schmp/kernels/column_kernel.hpp"
#include "wide.hpp"

namespace schmp::kernels {

namespace {

// l(z + dz) - l(z) for l(z) = log(1 + exp(-z)), accurate when dz is small: it is
// log1p(sigma(-z) expm1(-dz)), sigma(-z) = 1 / (1 + exp(z)).
double logistic_loss_change(double z, double dz) {
  auto loss = [](double x) { return x > 0 ? std::log1p(std::exp(-x)) : -x + std::log1p(std::exp(x)); };
  if (std::abs(dz) > 30) return loss(z + dz) - loss(z);  // no cancellation to fear
  const double sigma = z > 0 ? std::exp(-z) / (1 + std::exp(-z)) : 1 / (1 + std::exp(z));
  return std::log1p(sigma * std::expm1(-dz));
}

// Rows per chunk: chunks let column updates run in parallel without races, but each chunk splits
// every column into another piece of memory to fetch; so a chunk is large and only big workers have
// several.
constexpr std::size_t kChunkRows = 131072;
// Parallel loops split work into pieces of about this many nonzeros: smaller ones cost more to hand
// to a thread than to compute.
constexpr double kNonzerosPerTask = 32768;

// A chunk's rows of X, by column. A chunk whose values are all 1 (indicator and one-hot features, with
// or without the appended bias) keeps none: 4 bytes a nonzero instead of 12, and its loops multiply by
// nothing. On dna_splice (binary) logistic regression reached liblinear's objective a sixth sooner
// this way.
struct Chunk {
  std::size_t first_row = 0;
  std::size_t rows = 0;
  std::vector<std::size_t> start;  // column j's entries are [start[j], start[j + 1])
  std::vector<std::uint32_t> row;  // row within the chunk
  std::vector<double> value;       // empty when every value is 1
};

// Whether column j has an entry in every row of the chunk: its entries then lie in row order, and
// loops over them need no row index.
bool dense(const Chunk& chunk, ParamIndex j) { return chunk.start[j + 1] - chunk.start[j] == chunk.rows; }

// x_j . a over a chunk where column j is dense, at(row within the chunk) giving a's entry. Four sums
// taken in turn, then added in a fixed order: the multiplications overlap instead of waiting on one
// another, and the result does not depend on the thread count.
template <class At>
double dense_dot(const Chunk& chunk, ParamIndex j, const At& at) {
  const double* x = chunk.value.empty() ? nullptr : chunk.value.data() + chunk.start[j];
  auto value = [&](std::size_t i) { return x ? x[i] : 1.0; };
  double sums[4] = {0, 0, 0, 0};
  std::size_t i = 0;
  for (; i + 4 <= chunk.rows; i += 4) {
    for (std::size_t lane = 0; lane < 4; ++lane) sums[lane] += value(i + lane) * at(i + lane);
  }
  for (; i < chunk.rows; ++i) sums[0] += value(i) * at(i);
  return (sums[0] + sums[1]) + (sums[2] + sums[3]);
}

// Where the CPU has AVX2, the loops over dense columns of values run four doubles wide (wide.hpp).

// x . a over n rows, in four sums as dense_dot takes them.
SCHMP_WIDE double wide_dot(const double* x, const double* a, std::size_t n) {
  double sums[4] = {0, 0, 0, 0};
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    for (std::size_t lane = 0; lane < 4; ++lane) sums[lane] += x[i + lane] * a[i + lane];
  }
  for (; i < n; ++i) sums[0] += x[i] * a[i];
  return (sums[0] + sums[1]) + (sums[2] + sums[3]);
}

// a += scale * x over n rows.
SCHMP_WIDE void wide_add(const double* x, double scale, double* a, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) a[i] += scale * x[i];
}

// a[i] += scale * x_ij over a chunk where column j is dense.
inline void dense_add(const Chunk& chunk, ParamIndex j, double scale, double* a) {
  if (chunk.value.empty()) {
    for (std::size_t i = 0; i < chunk.rows; ++i) a[i] += scale;
    return;
  }
  wide_add(chunk.value.data() + chunk.start[j], scale, a, chunk.rows);
}

// Calls f(row within the chunk, value) for each entry of column j of the chunk. In a chunk that keeps
// no values the value is the constant 1, so that f's multiplications by it fold away.
template <class F>
void for_entries(const Chunk& chunk, ParamIndex j, const F& f) {
  const std::size_t begin = chunk.start[j], end = chunk.start[j + 1];
  const std::uint32_t* rows = chunk.row.data();
  if (chunk.value.empty()) {
    for (std::size_t e = begin; e < end; ++e) f(rows[e], 1.0);
  } else {
    const double* values = chunk.value.data();
    for (std::size_t e = begin; e < end; ++e) f(rows[e], values[e]);
  }
}

// x_j . a over a chunk's sparse column j, at(row within the chunk) giving a's entry: in four sums
// taken in turn and added in a fixed order, as dense_dot does. One running sum waits on each addition
// before the next: with four, Lasso on MovieLens reached 1e-6 below the optimum a tenth sooner.
template <class At>
double sparse_dot(const Chunk& chunk, ParamIndex j, const At& at) {
  const std::size_t begin = chunk.start[j], end = chunk.start[j + 1];
  const std::uint32_t* rows = chunk.row.data();
  const double* values = chunk.value.empty() ? nullptr : chunk.value.data();
  auto term = [&](std::size_t e) { return values ? values[e] * at(rows[e]) : at(rows[e]); };
  double sums[4] = {0, 0, 0, 0};
  std::size_t e = begin;
  for (; e + 4 <= end; e += 4) {
    for (std::size_t lane = 0; lane < 4; ++lane) sums[lane] += term(e + lane);
  }
  for (; e < end; ++e) sums[0] += term(e);
  return (sums[0] + sums[1]) + (sums[2] + sums[3]);
}

// Adds x_j . a over the chunk to `sum`, at(row within the chunk) giving a's entry.
template <class At>
void add_chunk_dot(const Chunk& chunk, ParamIndex j, const At& at, double& sum) {
  sum += dense(chunk, j) ? dense_dot(chunk, j, at) : sparse_dot(chunk, j, at);
}

// Dense columns' products go in panels of this many new columns, in parallel above this many
// multiply-adds.
constexpr Eigen::Index kGramPanel = 32, kParallelGram = 1 << 20;

// How a chunk's part of a Gram matrix (ColumnKernel::gram) is computed. Pairs with a column that is
// dense in the chunk go as dot products along it; pairs of two dense columns by Eigen's matrix product
// over blocks of rows (on dense data the row-by-row sums took ten times as long). The other pairs go
// row by row, as sums of outer products over the sparse columns' entries: k (k + 1) / 2 products for
// a row of k such entries, where column by column would take m / 2 times their nonzeros.
struct GramPlan {
  std::vector<std::size_t> dense, sparse;  // positions in cols, ascending
  std::size_t new_dense = 0;               // dense positions from `known` on
  std::vector<std::size_t> start;          // row i's sparse entries are [start[i], start[i + 1])
  std::vector<std::size_t> old;            // of those, among the first `known` columns
  double products = 0;                     // multiply-adds
};

GramPlan plan_gram(const Chunk& chunk, std::span<const ParamIndex> cols, std::size_t known) {
  GramPlan plan;
  for (std::size_t a = 0; a < cols.size(); ++a)
    (dense(chunk, cols[a]) ? plan.dense : plan.sparse).push_back(a);
  plan.new_dense = static_cast<std::size_t>(
      std::count_if(plan.dense.begin(), plan.dense.end(), [&](std::size_t a) { return a >= known; }));
  plan.start.assign(chunk.rows + 1, 0);
  for (const std::size_t a : plan.sparse) {
    if (a >= known && plan.old.empty()) plan.old.assign(plan.start.begin() + 1, plan.start.end());
    for_entries(chunk, cols[a], [&](std::uint32_t i, double) { ++plan.start[i + 1]; });
  }
  if (plan.old.empty()) plan.old.assign(plan.start.begin() + 1, plan.start.end());
  for (std::size_t i = 0; i < chunk.rows; ++i) {
    const auto k = static_cast<double>(plan.start[i + 1]), o = static_cast<double>(plan.old[i]);
    plan.products += (k * (k + 1) - o * (o + 1)) / 2;
    plan.start[i + 1] += plan.start[i];
  }
  plan.products += static_cast<double>(chunk.rows * plan.dense.size() * plan.new_dense);
  for (const std::size_t a : plan.sparse) {
    const std::size_t partners = a >= known ? plan.dense.size() : plan.new_dense;
    plan.products += static_cast<double>((chunk.start[cols[a] + 1] - chunk.start[cols[a]]) * partners);
  }
  return plan;
}

// Adds the chunk's part to `part` (entries (a, b), b >= known, packed from packed_index(0, known) on),
// weight(i) giving row i's weight.
template <class Weight>
void chunk_gram(const Chunk& chunk, const GramPlan& plan, std::span<const ParamIndex> cols, std::size_t known,
                const Weight& weight, std::span<double> part) {
  const std::size_t skipped = packed_size(known);
  auto entry = [&](std::size_t a, std::size_t b) -> double& {
    return part[packed_index(std::min(a, b), std::max(a, b)) - skipped];
  };
  auto dense_value = [&](std::size_t a, std::size_t i) {
    return chunk.value.empty() ? 1.0 : chunk.value[chunk.start[cols[a]] + i];
  };
  // Sparse with sparse, row by row: each row's entries in the order of cols, the first `known` first.
  std::vector<std::uint32_t> position(plan.start.back());
  std::vector<double> value(plan.start.back());
  std::vector<std::size_t> next(plan.start.begin(), plan.start.end() - 1);
  for (const std::size_t a : plan.sparse) {
    for_entries(chunk, cols[a], [&](std::uint32_t i, double x) {
      position[next[i]] = static_cast<std::uint32_t>(a);
      value[next[i]++] = x;
    });
  }
  for (std::size_t i = 0; i < chunk.rows; ++i) {
    for (std::size_t f = plan.start[i] + plan.old[i]; f < plan.start[i + 1]; ++f) {
      const std::size_t b = position[f];
      const double scaled = weight(i) * value[f];
      double* column = part.data() + packed_index(0, b) - skipped;  // column[a] is entry (a, b)
      for (std::size_t e = plan.start[i]; e <= f; ++e) column[position[e]] += scaled * value[e];
    }
  }
  // Sparse with dense, along the sparse column.
  for (const std::size_t s : plan.sparse) {
    for (const std::size_t d : plan.dense) {
      if (std::max(s, d) < known) continue;
      entry(s, d) += sparse_dot(chunk, cols[s], [&](std::size_t i) { return weight(i) * dense_value(d, i); });
    }
  }
  // Dense with dense, a block of rows at a time: the upper triangle of D' W D_new, in panels of new
  // columns that threads share (fixed panels, so that the sums do not depend on the thread count).
  if (plan.new_dense == 0) return;
  const auto nd = static_cast<Eigen::Index>(plan.dense.size());
  const auto nn = static_cast<Eigen::Index>(plan.new_dense);
  const Eigen::Index panels = (nn + kGramPanel - 1) / kGramPanel;
  const std::size_t block = std::max<std::size_t>(64, (std::size_t{1} << 18) / plan.dense.size());
  Eigen::MatrixXd sums = Eigen::MatrixXd::Zero(nd, nn);
  for (std::size_t first = 0; first < chunk.rows; first += block) {
    const auto rows = static_cast<Eigen::Index>(std::min(block, chunk.rows - first));
    Eigen::MatrixXd d(rows, nd), w_new(rows, nn);
    for (Eigen::Index p = 0; p < nd; ++p) {
      const std::size_t a = plan.dense[static_cast<std::size_t>(p)];
      for (Eigen::Index r = 0; r < rows; ++r) d(r, p) = dense_value(a, first + static_cast<std::size_t>(r));
    }
    for (Eigen::Index q = 0; q < nn; ++q) {
      const Eigen::Index p = nd - nn + q;  // the new dense positions come last
      for (Eigen::Index r = 0; r < rows; ++r)
        w_new(r, q) = weight(first + static_cast<std::size_t>(r)) * d(r, p);
    }
    auto panel = [&](Eigen::Index k) {
      const Eigen::Index q0 = k * kGramPanel, width = std::min(kGramPanel, nn - q0),
                         upto = nd - nn + q0 + width;
      sums.block(0, q0, upto, width).noalias() += d.leftCols(upto).transpose() * w_new.middleCols(q0, width);
    };
    if (panels == 1 || rows * nd * nn < kParallelGram) {
      for (Eigen::Index k = 0; k < panels; ++k) panel(k);
    } else {
      tbb::parallel_for(Eigen::Index{0}, panels, panel);
    }
  }
  for (Eigen::Index q = 0; q < nn; ++q) {
    const Eigen::Index last = nd - nn + q;
    for (Eigen::Index p = 0; p <= last; ++p)
      entry(plan.dense[static_cast<std::size_t>(p)], plan.dense[static_cast<std::size_t>(last)]) +=
          sums(p, q);
  }
}

class CpuColumnKernel final : public ColumnKernel {
 public:
  CpuColumnKernel(const io::SparseRows& rows, std::size_t columns) : rows_(rows.rows()), columns_(columns) {
    if (rows.columns() > columns)
      throw std::invalid_argument("column kernel: fewer columns than the data has");
    for (std::size_t first = 0; first < rows_; first += kChunkRows)
      chunks_.push_back(make_chunk(rows, first, std::min(rows_, first + kChunkRows), columns_));
    column_length_.assign(columns_, 0);
    for (std::uint32_t j : rows.index) ++column_length_[j];
    const double nonzeros = static_cast<double>(rows.index.size());
    mean_column_nonzeros_ = columns_ > 0 ? std::max(1.0, nonzeros / static_cast<double>(columns_)) : 1.0;
    v_.setZero(static_cast<Eigen::Index>(rows_));
  }

  std::size_t rows() const override { return rows_; }
  std::size_t columns() const override { return columns_; }

  void set_vector(std::span<const double> v) override {
    if (v.size() != rows_) throw std::invalid_argument("column kernel: vector of the wrong length");
    v_ = Eigen::Map<const Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size()));
    if (has_labels_) update_q(0, rows_);
  }
  void set_labels(std::span<const double> y) override {
    if (y.size() != rows_) throw std::invalid_argument("column kernel: labels of the wrong length");
    y_ = Eigen::Map<const Eigen::VectorXd>(y.data(), static_cast<Eigen::Index>(y.size()));
    has_labels_ = true;
    direction_.assign(rows_, DirectionRow{});
    label_q_.assign(rows_, 0.0);
    update_q(0, rows_);
  }
  void set_row_weights(std::span<const double> c) override {
    if (!c.empty() && c.size() != rows_)
      throw std::invalid_argument("column kernel: weights of the wrong length");
    row_weight_.assign(c.begin(), c.end());
    if (has_labels_) update_q(0, rows_);
  }
  void copy_vector(std::span<double> out) const override {
    Eigen::Map<Eigen::VectorXd>(out.data(), static_cast<Eigen::Index>(out.size())) = v_;
  }

  void column_dots(std::span<const ParamIndex> cols, std::span<double> out) const override {
    for_columns(cols.size(), mean_length(cols), [&](std::size_t k) { out[k] = dot(cols[k]); });
  }
  void all_column_dots(std::span<double> out) const override {
    for_columns(columns_, mean_column_nonzeros_,
                [&](std::size_t j) { out[j] = dot(static_cast<ParamIndex>(j)); });
  }
  void column_norms_squared(std::span<double> out) const override {
    for_columns(columns_, mean_column_nonzeros_, [&](std::size_t j) {
      double sum = 0;
      for (const Chunk& chunk : chunks_)
        for_entries(chunk, static_cast<ParamIndex>(j), [&](std::uint32_t, double x) { sum += x * x; });
      out[j] = sum;
    });
  }

  void logistic_derivatives(std::span<const ParamIndex> cols, std::span<double> gradient,
                            std::span<double> curvature) const override {
    require_labels();
    for_columns(cols.size(), mean_length(cols), [&](std::size_t k) {
      double g = 0, h = 0;
      for (const Chunk& chunk : chunks_) {
        const DirectionRow* rows = direction_.data() + chunk.first_row;
        const double* label_q = label_q_.data() + chunk.first_row;
        if (dense(chunk, cols[k])) {
          const double* x = chunk.value.empty() ? nullptr : chunk.value.data() + chunk.start[cols[k]];
          g -= x ? wide_dot(x, label_q, chunk.rows)
                 : dense_dot(chunk, cols[k], [&](std::size_t i) { return label_q[i]; });
          h += dense_dot(chunk, cols[k], [&](std::size_t i) { return (x ? x[i] : 1.0) * rows[i].weight; });
          continue;
        }
        for_entries(chunk, cols[k], [&](std::uint32_t i, double x) {
          g -= x * label_q[i];
          h += x * x * rows[i].weight;
        });
      }
      gradient[k] = g;
      curvature[k] = h;
    });
  }

  void add_columns(std::span<const ParamIndex> cols, std::span<const double> scale) override {
    for_chunks(cols, [&](const Chunk& chunk) {
      double* v = v_.data() + chunk.first_row;
      for (std::size_t k = 0; k < cols.size(); ++k) {
        if (scale[k] == 0) continue;
        if (dense(chunk, cols[k])) {
          dense_add(chunk, cols[k], scale[k], v);
        } else {
          for_entries(chunk, cols[k], [&](std::uint32_t i, double x) { v[i] += scale[k] * x; });
        }
      }
    });
  }

  void direction_dots(std::span<const ParamIndex> cols, std::span<double> out) const override {
    require_labels();
    prefetch_columns(cols);
    for_columns(cols.size(), mean_length(cols), [&](std::size_t k) {
      out[k] = dot(cols[k], [&](std::size_t i) {
        const DirectionRow& row = direction_[i];
        return row.weight * row.u;
      });
    });
  }

  void add_to_direction(std::span<const ParamIndex> cols, std::span<const double> scale) override {
    require_labels();
    for_chunks(cols, [&](const Chunk& chunk) {
      DirectionRow* rows = direction_.data() + chunk.first_row;
      for (std::size_t k = 0; k < cols.size(); ++k) {
        if (scale[k] == 0) continue;
        for_entries(chunk, cols[k], [&](std::uint32_t i, double x) { rows[i].u += scale[k] * x; });
      }
    });
  }

  void step_along_direction(double t) override {
    require_labels();
    for_rows([&](std::size_t first, std::size_t last) {
      for (std::size_t i = first; i < last; ++i) {
        v_[static_cast<Eigen::Index>(i)] += t * direction_[i].u;
        update_q(i);
      }
    });
  }

  double loss_change_along_direction(double t) const override {
    require_labels();
    if (t == 0) return 0.0;
    return tbb::parallel_deterministic_reduce(
        tbb::blocked_range<std::size_t>(0, rows_, kChunkRows), 0.0,
        [&](const tbb::blocked_range<std::size_t>& range, double sum) {
          for (std::size_t i = range.begin(); i < range.end(); ++i) {
            const auto r = static_cast<Eigen::Index>(i);
            const double z = y_[r] * v_[r], dz = y_[r] * t * direction_[i].u;
            sum += row_weight(i) * logistic_loss_change(z - dz, dz);
          }
          return sum;
        },
        std::plus<>());
  }

  void clear_direction() override {
    require_labels();
    for (DirectionRow& row : direction_) row.u = 0;
  }

  bool gram(std::span<const ParamIndex> cols, std::size_t known, bool weighted, double budget,
            std::span<double> out, double& products) const override {
    if (weighted) require_labels();
    if (known > cols.size() || out.size() != packed_size(cols.size()) - packed_size(known))
      throw std::invalid_argument("column kernel: Gram matrix of the wrong size");
    std::vector<GramPlan> plans;
    double total = 0;
    for (const Chunk& chunk : chunks_) {
      plans.push_back(plan_gram(chunk, cols, known));
      total += plans.back().products;
    }
    products = total;
    if (total > budget) return false;
    // Each chunk adds into a part of its own; the parts are added in chunk order, so the result does
    // not depend on the thread count.
    std::vector<std::vector<double>> parts(chunks_.size());
    auto compute = [&](std::size_t c) {
      parts[c].assign(out.size(), 0.0);
      if (weighted) {
        const DirectionRow* rows = direction_.data() + chunks_[c].first_row;
        chunk_gram(
            chunks_[c], plans[c], cols, known, [rows](std::size_t i) { return rows[i].weight; }, parts[c]);
      } else {
        chunk_gram(
            chunks_[c], plans[c], cols, known, [](std::size_t) { return 1.0; }, parts[c]);
      }
    };
    if (chunks_.size() == 1) {
      compute(0);
    } else {
      tbb::parallel_for(std::size_t{0}, chunks_.size(), compute);
    }
    std::fill(out.begin(), out.end(), 0.0);
    for (const std::vector<double>& part : parts) {
      for (std::size_t k = 0; k < out.size(); ++k) out[k] += part[k];
    }
    return true;
  }

  // A block's columns sit at random places in memory: asking for the start of each before reading any
  // overlaps the waits (the hardware prefetcher follows each column once it is being read).
  void prefetch_columns(std::span<const ParamIndex> cols) const override {
    for (const Chunk& chunk : chunks_) {
      for (ParamIndex j : cols) {
        if (j >= columns_) continue;
        __builtin_prefetch(chunk.row.data() + chunk.start[j]);
        if (!chunk.value.empty()) __builtin_prefetch(chunk.value.data() + chunk.start[j]);
      }
    }
  }

 private:
  // Rows [first, last) by column: count per column, then place (a CSR-to-CSC transpose).
  static Chunk make_chunk(const io::SparseRows& rows, std::size_t first, std::size_t last,
                          std::size_t columns) {
    Chunk chunk;
    chunk.first_row = first;
    chunk.rows = last - first;
    const std::size_t begin = rows.row_start[first], end = rows.row_start[last];
    chunk.start.assign(columns + 1, 0);
    for (std::size_t e = begin; e < end; ++e) ++chunk.start[rows.index[e] + 1];
    for (std::size_t j = 0; j < columns; ++j) chunk.start[j + 1] += chunk.start[j];
    const bool ones =
        std::all_of(rows.value.begin() + static_cast<std::ptrdiff_t>(begin),
                    rows.value.begin() + static_cast<std::ptrdiff_t>(end), [](double x) { return x == 1.0; });
    chunk.row.resize(end - begin);
    if (!ones) chunk.value.resize(end - begin);
    std::vector<std::size_t> next(chunk.start.begin(), chunk.start.end() - 1);
    for (std::size_t r = first; r < last; ++r) {
      for (std::size_t e = rows.row_start[r]; e < rows.row_start[r + 1]; ++e) {
        const std::size_t at = next[rows.index[e]]++;
        chunk.row[at] = static_cast<std::uint32_t>(r - first);
        if (!ones) chunk.value[at] = rows.value[e];
      }
    }
    return chunk;
  }

  double dot(ParamIndex j) const {
    if (j >= columns_) throw std::out_of_range("column kernel: column index beyond the matrix");
    double sum = 0;
    for (const Chunk& chunk : chunks_) {
      const double* v = v_.data() + chunk.first_row;
      if (dense(chunk, j) && !chunk.value.empty()) {
        sum += wide_dot(chunk.value.data() + chunk.start[j], v, chunk.rows);
      } else {
        add_chunk_dot(
            chunk, j, [&](std::size_t i) { return v[i]; }, sum);
      }
    }
    return sum;
  }
  // x_j . a, where at(row) gives a's entry for a row.
  template <class At>
  double dot(ParamIndex j, const At& at) const {
    if (j >= columns_) throw std::out_of_range("column kernel: column index beyond the matrix");
    double sum = 0;
    for (const Chunk& chunk : chunks_)
      add_chunk_dot(
          chunk, j, [&](std::size_t i) { return at(chunk.first_row + i); }, sum);
    return sum;
  }

  void require_labels() const {
    if (!has_labels_) throw std::logic_error("column kernel: logistic operation before set_labels");
  }

  void update_q(std::size_t row) {
    const auto r = static_cast<Eigen::Index>(row);
    const double q = 1 / (1 + std::exp(y_[r] * v_[r]));
    label_q_[row] = row_weight(row) * y_[r] * q;
    direction_[row].weight = row_weight(row) * q * (1 - q);
  }
  double row_weight(std::size_t row) const { return row_weight_.empty() ? 1.0 : row_weight_[row]; }
  void update_q(std::size_t first, std::size_t last) {
    for (std::size_t row = first; row < last; ++row) update_q(row);
  }

  std::size_t length(ParamIndex j) const {
    if (j >= columns_) throw std::out_of_range("column kernel: column index beyond the matrix");
    return column_length_[j];
  }

  // A block's columns may be far longer than the mean (dense features): its own mean sizes its work.
  double mean_length(std::span<const ParamIndex> cols) const {
    double nonzeros = 0;
    for (ParamIndex j : cols) nonzeros += static_cast<double>(length(j));
    return cols.empty() ? 1.0 : std::max(1.0, nonzeros / static_cast<double>(cols.size()));
  }

  // Runs update(chunk) for every chunk of rows, over the columns `cols`: each chunk owns its rows of
  // the row vectors, so chunks run in parallel (columns in order within a chunk) when the block holds
  // enough nonzeros to share.
  template <class Update>
  void for_chunks(std::span<const ParamIndex> cols, const Update& update) {
    const double nonzeros = mean_length(cols) * static_cast<double>(cols.size());
    if (chunks_.size() == 1 || nonzeros < 2 * kNonzerosPerTask) {
      for (const Chunk& chunk : chunks_) update(chunk);
      return;
    }
    tbb::parallel_for(std::size_t{0}, chunks_.size(), [&](std::size_t c) { update(chunks_[c]); });
  }

  // Runs body(first, last) over all rows, in parallel pieces of kChunkRows.
  template <class Body>
  void for_rows(const Body& body) {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, rows_, kChunkRows),
                      [&](const tbb::blocked_range<std::size_t>& r) { body(r.begin(), r.end()); });
  }

  // Runs body(k) for k in [0, count), over columns of `mean_nonzeros` entries on average: in
  // parallel when they hold enough work to share.
  template <class Body>
  void for_columns(std::size_t count, double mean_nonzeros, const Body& body) const {
    const auto grain = static_cast<std::size_t>(std::max(1.0, kNonzerosPerTask / mean_nonzeros));
    if (count <= grain) {
      for (std::size_t k = 0; k < count; ++k) body(k);
      return;
    }
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, count, grain),
                      [&](const tbb::blocked_range<std::size_t>& r) {
                        for (std::size_t k = r.begin(); k < r.end(); ++k) body(k);
                      });
  }

  std::size_t rows_;
  std::size_t columns_;
  std::vector<Chunk> chunks_;
  double mean_column_nonzeros_ = 1;
  Eigen::VectorXd v_;
  Eigen::VectorXd y_;        // labels, when the logistic loss is used
  bool has_labels_ = false;  // set_labels was called (a worker without rows has labels, none of them)
  // What the inner solve reads and writes of a row, in 16 aligned bytes: a block's dots and updates
  // touch one cache line per row, and twice as many rows stay in cache as with 32. Storing s = D u as
  // well (32 bytes a row, as the GPU kernel does) made the inner solve's calls 16% slower on 100,000
  // rows, whose state then outgrows a 1 MiB L2 cache twice over; so s is recomputed as weight * u
  // where it is read. q_i = 1 / (1 + exp(y_i v_i)) at the last step_along_direction (or set_labels).
  struct alignas(16) DirectionRow {
    double u = 0;       // (X d)_i
    double weight = 0;  // D_ii = c_i q_i (1 - q_i)
  };
  std::vector<DirectionRow> direction_;
  std::vector<double> label_q_;             // c_i y_i q_i = -c_i l'(z_i) y_i, read only at evaluations
  std::vector<double> row_weight_;          // c_i (set_row_weights); empty: every row weighs 1
  std::vector<std::size_t> column_length_;  // nonzeros per column, over all chunks
};

}  // namespace

std::unique_ptr<ColumnKernel> make_cpu_column_kernel(const io::SparseRows& rows, std::size_t columns) {
  return std::make_unique<CpuColumnKernel>(rows, columns);
}

}  // namespace schmp::kernels
