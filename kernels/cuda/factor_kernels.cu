// The CUDA FactorDevice: matrix factorization's cell work on a GPU. What stays resident, and how the
// kernels' order of operations differs from the CPU functions', is told at FactorDevice
// (kernels/factor_kernels.hpp).
#include <algorithm>
#include <array>
#include <cstring>
#include <deque>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cuda_support.hpp"
#include "kernels/gpu_module.hpp"

namespace schmp::kernels {
namespace cuda {

namespace {

constexpr unsigned kThreads = 256;  // per block, in every kernel here
constexpr unsigned kWarp = 32;
constexpr int kLanes = 32;  // kWarp, for strides over row entries
constexpr unsigned kFullWarp = 0xffffffffu;
constexpr unsigned kBlocksPerSm = 2048 / kThreads;  // enough resident threads to fill an SM
// sgd_pass runs at most a warp per this many rows of the cell's smaller side (users or items): Hogwild
// loses an update when two warps step on one row at once, and the more warps per row, the more often.
constexpr std::size_t kRowsPerWarp = 4;
// Staged copies move this many doubles (256 KiB) at a time: large enough for full bus speed, small
// enough that the CPU's copy of one chunk into pinned memory overlaps the DMA of the one before.
constexpr std::size_t kChunk = std::size_t{1} << 15;

// The sum of `value` over the warp, in every lane; the whole warp calls it.
__device__ double warp_sum(double value) {
  for (unsigned offset = kWarp / 2; offset > 0; offset /= 2)
    value += __shfl_xor_sync(kFullWarp, value, offset);
  return value;
}

// Adds the block's sums of `first` and `second` to totals[0] and totals[1]: one atomic per block. Every
// thread of the block calls it, once per kernel.
__device__ void add_block_sums(double first, double second, double* totals) {
  __shared__ double warp_sums[2][kThreads / kWarp];
  first = warp_sum(first);
  second = warp_sum(second);
  const unsigned warp = threadIdx.x / kWarp;
  if (threadIdx.x % kWarp == 0) {
    warp_sums[0][warp] = first;
    warp_sums[1][warp] = second;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    double block_first = 0;
    double block_second = 0;
    for (unsigned w = 0; w < blockDim.x / kWarp; ++w) {
      block_first += warp_sums[0][w];
      block_second += warp_sums[1][w];
    }
    atomicAdd(&totals[0], block_first);
    atomicAdd(&totals[1], block_second);
  }
}

__device__ std::size_t thread_index() {
  return static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ std::size_t thread_count() { return static_cast<std::size_t>(gridDim.x) * blockDim.x; }

struct SgdArguments {
  const CellRating* ratings;
  std::size_t count;
  std::size_t warps;  // the runs the ratings are cut into; warps beyond them find theirs empty
  double* users;
  double* user_sums;
  double* items;
  double* item_sums;
  int rank;
  int width;
  int user_bias;  // -1 without biases
  double lambda;
  double learning_rate;
  double inverse_moving;  // 1 / the entries of a row that move
  double* squared_error;
};

// sgd_pass, a warp per rating (its lanes share the row entries), each warp over a contiguous run of
// the ratings: they are sorted by user, so a user's steps are taken in order by one warp but at the
// ends of a run; steps for one item by different warps may overlap (Hogwild). The entries a lane reads
// are those it wrote, and __syncwarp orders the sums lane 0 writes before the next rating's reads.
// Rows and sums are read past L1 (__ldcg): L1 is not coherent between SMs, and a small item matrix
// fits in it whole, so plain loads would let each SM step on its own stale copy of the items for the
// whole pass and the last writer of each entry win (on an H100, 600 x 300 ratings: a test RMSE 37%
// above the CPU's after 20 epochs).
__global__ void sgd_kernel(const SgdArguments a) {
  const unsigned lane = threadIdx.x % kWarp;
  const std::size_t warp = thread_index() / kWarp;
  const std::size_t run = (a.count + a.warps - 1) / a.warps;
  const std::size_t begin = std::min(a.count, warp * run);
  const std::size_t end = std::min(a.count, begin + run);
  double squared_error = 0;
  for (std::size_t e = begin; e < end; ++e) {
    const CellRating rating = a.ratings[e];
    double* w = a.users + static_cast<std::size_t>(rating.user) * a.width;
    double* h = a.items + static_cast<std::size_t>(rating.item) * a.width;
    double dot = 0;
    for (int d = static_cast<int>(lane); d < a.width; d += kLanes) dot += __ldcg(w + d) * __ldcg(h + d);
    const double error = rating.value - warp_sum(dot);
    const double w_step = a.learning_rate / sqrt(__ldcg(a.user_sums + rating.user));
    const double h_step = a.learning_rate / sqrt(__ldcg(a.item_sums + rating.item));
    double w_squares = 0;
    double h_squares = 0;
    for (int d = static_cast<int>(lane); d < a.width; d += kLanes) {
      const double w_entry = __ldcg(w + d);
      const double h_entry = __ldcg(h + d);
      if (d < a.rank) {
        const double w_gradient = a.lambda * w_entry - error * h_entry;
        const double h_gradient = a.lambda * h_entry - error * w_entry;
        w[d] = w_entry - w_step * w_gradient;
        h[d] = h_entry - h_step * h_gradient;
        w_squares += w_gradient * w_gradient;
        h_squares += h_gradient * h_gradient;
      } else if (d == a.user_bias) {
        // Each bias meets a fixed 1 on the other side, which does not move.
        const double w_gradient = a.lambda * w_entry - error;
        w[d] = w_entry - w_step * w_gradient;
        w_squares += w_gradient * w_gradient;
      } else {
        const double h_gradient = a.lambda * h_entry - error;
        h[d] = h_entry - h_step * h_gradient;
        h_squares += h_gradient * h_gradient;
      }
    }
    w_squares = warp_sum(w_squares);
    h_squares = warp_sum(h_squares);
    if (lane == 0) {
      a.user_sums[rating.user] = __ldcg(a.user_sums + rating.user) + w_squares * a.inverse_moving;
      a.item_sums[rating.item] = __ldcg(a.item_sums + rating.item) + h_squares * a.inverse_moving;
      squared_error += error * error;
    }
    __syncwarp();
  }
  if (lane == 0 && begin < end) atomicAdd(a.squared_error, squared_error);
}

struct GatherArguments {
  const CellRating* ratings;
  std::size_t count;
  double* residuals;
  FactorColumns users;  // rows on the GPU
  FactorColumns items;  // rows on the GPU
  bool relift;
  bool gather_users;
  double* numerator;
  double* denominator;
};

// ccd_gather, a thread per rating. The ratings are sorted by user, so a warp's lanes often add to the
// same row: lanes with equal rows add up their terms first (the lowest lane of each group, in shared
// memory) and only it adds to the row, one atomic per row and warp instead of one per rating.
__global__ void ccd_gather_kernel(const GatherArguments a) {
  __shared__ double numerator_terms[kThreads];
  __shared__ double denominator_terms[kThreads];
  const unsigned lane = threadIdx.x % kWarp;
  const bool lifted = a.users.lifted >= 0;
  // Every lane of a warp runs the same iterations (the stride is whole warps), so the warp's
  // collectives below see all the lanes that have a rating.
  for (std::size_t first = thread_index() - lane; first < a.count; first += thread_count()) {
    const std::size_t e = first + lane;
    const unsigned with_rating = __ballot_sync(kFullWarp, e < a.count);
    if (e >= a.count) continue;
    const CellRating rating = a.ratings[e];
    const double* w = a.users.rows + static_cast<std::size_t>(rating.user) * a.users.width;
    const double* h = a.items.rows + static_cast<std::size_t>(rating.item) * a.items.width;
    double residual = a.residuals[e];
    if (a.relift) {
      if (lifted) residual -= w[a.users.lifted] * h[a.items.lifted];
      residual += w[a.users.component] * h[a.items.component];
      a.residuals[e] = residual;
    }
    const double other = a.gather_users ? h[a.items.component] : w[a.users.component];
    const std::uint32_t row = a.gather_users ? rating.user : rating.item;
    numerator_terms[threadIdx.x] = residual * other;
    denominator_terms[threadIdx.x] = other * other;
    const unsigned same_row = __match_any_sync(with_rating, row);
    __syncwarp(with_rating);
    if (lane == static_cast<unsigned>(__ffs(static_cast<int>(same_row)) - 1)) {
      const unsigned warp_first = threadIdx.x - lane;
      double numerator = 0;
      double denominator = 0;
      for (unsigned lanes = same_row; lanes != 0; lanes &= lanes - 1) {
        const unsigned from = warp_first + static_cast<unsigned>(__ffs(static_cast<int>(lanes)) - 1);
        numerator += numerator_terms[from];
        denominator += denominator_terms[from];
      }
      atomicAdd(&a.numerator[row], numerator);
      atomicAdd(&a.denominator[row], denominator);
    }
    // The terms are read before the next iteration writes them again.
    __syncwarp(with_rating);
  }
}

// The CCD++ solve of every user row's entry `component`, a thread per row; totals[0] gets the decrease.
__global__ void ccd_solve_kernel(double* factors, int width, int component, double* numerator,
                                 double* denominator, const double* counts, std::size_t rows, double lambda,
                                 double* totals) {
  double decrease = 0;
  for (std::size_t row = thread_index(); row < rows; row += thread_count()) {
    if (counts[row] > 0) {
      const double curvature = lambda * counts[row] + denominator[row];
      double& factor = factors[row * width + component];
      const double solved = numerator[row] / curvature;
      decrease += curvature * (factor - solved) * (factor - solved);
      factor = solved;
    }
    numerator[row] = 0;
    denominator[row] = 0;
  }
  add_block_sums(decrease, 0, totals);
}

// error_sums, a thread per rating: totals[0] gets the squared errors, totals[1] the absolute ones.
__global__ void error_kernel(const CellRating* ratings, std::size_t count, const double* users,
                             const double* items, int width, double* totals) {
  double squared = 0;
  double absolute = 0;
  for (std::size_t e = thread_index(); e < count; e += thread_count()) {
    const CellRating rating = ratings[e];
    const double* w = users + static_cast<std::size_t>(rating.user) * width;
    const double* h = items + static_cast<std::size_t>(rating.item) * width;
    double dot = 0;
    for (int d = 0; d < width; ++d) dot += w[d] * h[d];
    const double error = rating.value - dot;
    squared += error * error;
    absolute += fabs(error);
  }
  add_block_sums(squared, absolute, totals);
}

class Event {
 public:
  Event() { check(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), "cudaEventCreate"); }
  ~Event() { cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// A cell's ratings on the GPU: cell c is [offsets[c], offsets[c + 1]).
struct DeviceCells {
  DeviceArray<CellRating> ratings;
  std::vector<std::size_t> offsets;
  std::size_t begin(std::size_t cell) const { return offsets.at(cell); }
  std::size_t size(std::size_t cell) const { return offsets.at(cell + 1) - offsets.at(cell); }
};

DeviceCells upload_cells(std::span<const std::vector<CellRating>> cells, cudaStream_t stream) {
  DeviceCells uploaded;
  uploaded.offsets.push_back(0);
  for (const auto& cell : cells) uploaded.offsets.push_back(uploaded.offsets.back() + cell.size());
  uploaded.ratings = DeviceArray<CellRating>(uploaded.offsets.back());
  for (std::size_t c = 0; c < cells.size(); ++c) {
    if (cells[c].empty()) continue;
    check(cudaMemcpyAsync(uploaded.ratings.data() + uploaded.offsets[c], cells[c].data(),
                          cells[c].size() * sizeof(CellRating), cudaMemcpyHostToDevice, stream),
          "upload of the ratings");
  }
  return uploaded;
}

// Everything the object holds on its GPU, created and freed with that GPU current.
struct Resident {
  Resident(RowLayout layout, std::span<const std::vector<CellRating>> train_cells,
           std::span<const std::vector<CellRating>> test_cells, std::span<const double> counts)
      : train(upload_cells(train_cells, stream.get())),
        test(upload_cells(test_cells, stream.get())),
        user_factors(counts.size() * static_cast<std::size_t>(layout.width())),
        user_numerator(counts.size()),
        user_denominator(counts.size()),
        user_counts(counts.size()),
        totals(4),
        totals_host(4) {
    if (!counts.empty()) user_counts.upload(counts, stream.get());
    stream.synchronize();
  }

  Stream stream;  // every copy and kernel of the object, in order
  DeviceCells train;
  DeviceCells test;
  DeviceArray<double> residuals;
  DeviceArray<double> user_factors;
  DeviceArray<double> user_gradient_sums;
  DeviceArray<double> user_numerator;  // a CCD++ user round's sums, until ccd_solve_users
  DeviceArray<double> user_denominator;
  DeviceArray<double> user_counts;
  DeviceArray<double> items;      // a call's travelling item arrays, end to end
  PinnedArray<double> staging;    // their host side, as large
  std::deque<Event> chunks_done;  // one per chunk of a staged download
  DeviceArray<double> totals;     // a call's reductions
  PinnedArray<double> totals_host;
};

class CudaFactorDevice final : public FactorDevice {
 public:
  CudaFactorDevice(int gpu, RowLayout layout, std::span<const std::vector<CellRating>> train,
                   std::span<const std::vector<CellRating>> test, std::span<const double> user_counts)
      : gpu_(gpu), layout_(layout) {
    if (test.size() != train.size())
      throw std::invalid_argument("make_factor_device: training and test cells differ in number");
    int sms = 0;
    check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, gpu), "cudaDeviceGetAttribute");
    max_blocks_ = static_cast<unsigned>(std::max(sms, 1)) * kBlocksPerSm;
    cuda::use_gpu(gpu_);
    on_gpu_ = std::make_unique<Resident>(layout, train, test, user_counts);
  }

  ~CudaFactorDevice() override {
    // Freed on the object's GPU; a destructor has no one to report a failure to.
    cuda::use_gpu_quietly(gpu_);
    on_gpu_.reset();
  }

  CudaFactorDevice(const CudaFactorDevice&) = delete;
  CudaFactorDevice& operator=(const CudaFactorDevice&) = delete;

  void set_users(std::span<const double> factors, std::span<const double> gradient_sums) override {
    cuda::use_gpu(gpu_);
    Resident& r = *on_gpu_;
    if (factors.size() != r.user_factors.size() ||
        (!gradient_sums.empty() && gradient_sums.size() != user_rows()))
      throw std::invalid_argument("FactorDevice::set_users: the rows do not fit the users");
    if (!factors.empty()) r.user_factors.upload(factors, r.stream.get());
    r.user_gradient_sums = DeviceArray<double>(gradient_sums.size());
    if (!gradient_sums.empty()) r.user_gradient_sums.upload(gradient_sums, r.stream.get());
    r.user_numerator.fill_zero(r.stream.get());
    r.user_denominator.fill_zero(r.stream.get());
    r.stream.synchronize();
  }

  std::vector<double> user_factors() const override { return download(on_gpu_->user_factors); }
  std::vector<double> user_gradient_sums() const override { return download(on_gpu_->user_gradient_sums); }

  void set_residuals(std::span<const std::vector<double>> residuals) override {
    cuda::use_gpu(gpu_);
    Resident& r = *on_gpu_;
    if (residuals.size() + 1 != r.train.offsets.size())
      throw std::invalid_argument("FactorDevice::set_residuals: not one list per cell");
    r.residuals = DeviceArray<double>(r.train.offsets.back());
    for (std::size_t c = 0; c < residuals.size(); ++c) {
      if (residuals[c].size() != r.train.size(c))
        throw std::invalid_argument("FactorDevice::set_residuals: not one residual per rating");
      if (residuals[c].empty()) continue;
      check(cudaMemcpyAsync(r.residuals.data() + r.train.begin(c), residuals[c].data(),
                            residuals[c].size() * sizeof(double), cudaMemcpyHostToDevice, r.stream.get()),
            "upload of the residuals");
    }
    r.stream.synchronize();
  }

  double sgd_pass(std::size_t cell, std::span<double> item_factors, std::span<double> item_gradient_sums,
                  double lambda, double learning_rate) override {
    cuda::use_gpu(gpu_);
    Resident& r = *on_gpu_;
    const std::size_t count = r.train.size(cell);
    if (item_factors.size() != item_gradient_sums.size() * static_cast<std::size_t>(layout_.width()) ||
        r.user_gradient_sums.size() != user_rows()) {
      throw std::invalid_argument("sgd_pass: item rows and sums, or the users' sums, of other sizes");
    }
    if (count == 0) return 0;
    const auto [factors, sums] = stage_in<2>({item_factors, item_gradient_sums});
    r.totals.fill_zero(r.stream.get());
    // Few concurrent warps per row, to keep Hogwild's lost updates rare; the grid holds whole blocks,
    // so some warps may get no run.
    const std::size_t wanted = std::min(
        count, std::max<std::size_t>(1, std::min(user_rows(), item_gradient_sums.size()) / kRowsPerWarp));
    const unsigned blocks = std::min(blocks_for(wanted, kThreads, kWarp), max_blocks_);
    const std::size_t warps = std::min<std::size_t>(wanted, std::size_t{blocks} * kThreads / kWarp);
    const SgdArguments arguments{r.train.ratings.data() + r.train.begin(cell),
                                 count,
                                 warps,
                                 r.user_factors.data(),
                                 r.user_gradient_sums.data(),
                                 factors,
                                 sums,
                                 layout_.rank,
                                 layout_.width(),
                                 layout_.biases ? layout_.user_bias() : -1,
                                 lambda,
                                 learning_rate,
                                 1.0 / (layout_.rank + (layout_.biases ? 1 : 0)),
                                 r.totals.data()};
    sgd_kernel<<<blocks, kThreads, 0, r.stream.get()>>>(arguments);
    check_launch("sgd_kernel");
    stage_out<2>({Out{factors, item_factors}, Out{sums, item_gradient_sums}});
    return totals()[0];
  }

  void ccd_gather(std::size_t cell, int component, int lifted, FactorColumns items, std::size_t item_count,
                  bool relift, bool gather_users, std::span<double> item_numerator,
                  std::span<double> item_denominator) override {
    cuda::use_gpu(gpu_);
    Resident& r = *on_gpu_;
    const std::size_t count = r.train.size(cell);
    if (count == 0) return;
    const std::span<const double> item_rows(items.rows, item_count * static_cast<std::size_t>(items.width));
    GatherArguments arguments{r.train.ratings.data() + r.train.begin(cell),
                              count,
                              r.residuals.data() + r.train.begin(cell),
                              FactorColumns{r.user_factors.data(), layout_.width(), component, lifted},
                              items,
                              relift,
                              gather_users,
                              r.user_numerator.data(),
                              r.user_denominator.data()};
    const unsigned blocks = std::min(blocks_for(count, kThreads), max_blocks_);
    if (gather_users) {
      arguments.items.rows = stage_in<1>({item_rows})[0];
      ccd_gather_kernel<<<blocks, kThreads, 0, r.stream.get()>>>(arguments);
      check_launch("ccd_gather_kernel");
      r.stream.synchronize();
      return;
    }
    if (item_numerator.size() != item_count || item_denominator.size() != item_count)
      throw std::invalid_argument("FactorDevice::ccd_gather: the item sums do not fit the items");
    const auto [rows, numerator, denominator] = stage_in<3>({item_rows, item_numerator, item_denominator});
    arguments.items.rows = rows;
    arguments.numerator = numerator;
    arguments.denominator = denominator;
    ccd_gather_kernel<<<blocks, kThreads, 0, r.stream.get()>>>(arguments);
    check_launch("ccd_gather_kernel");
    stage_out<2>({Out{numerator, item_numerator}, Out{denominator, item_denominator}});
  }

  double ccd_solve_users(int component, double lambda) override {
    cuda::use_gpu(gpu_);
    Resident& r = *on_gpu_;
    const std::size_t rows = user_rows();
    if (rows == 0) return 0;
    r.totals.fill_zero(r.stream.get());
    ccd_solve_kernel<<<std::min(blocks_for(rows, kThreads), max_blocks_), kThreads, 0, r.stream.get()>>>(
        r.user_factors.data(), layout_.width(), component, r.user_numerator.data(), r.user_denominator.data(),
        r.user_counts.data(), rows, lambda, r.totals.data());
    check_launch("ccd_solve_kernel");
    return totals()[0];
  }

  std::pair<ErrorSums, ErrorSums> error_sums(std::size_t cell,
                                             std::span<const double> item_factors) override {
    cuda::use_gpu(gpu_);
    Resident& r = *on_gpu_;
    const std::size_t train_count = r.train.size(cell);
    const std::size_t test_count = r.test.size(cell);
    if (train_count + test_count == 0) return {};
    const double* items = stage_in<1>({item_factors})[0];
    r.totals.fill_zero(r.stream.get());
    const int width = layout_.width();
    if (train_count > 0) {
      error_kernel<<<std::min(blocks_for(train_count, kThreads), max_blocks_), kThreads, 0, r.stream.get()>>>(
          r.train.ratings.data() + r.train.begin(cell), train_count, r.user_factors.data(), items, width,
          r.totals.data());
      check_launch("error_kernel");
    }
    if (test_count > 0) {
      error_kernel<<<std::min(blocks_for(test_count, kThreads), max_blocks_), kThreads, 0, r.stream.get()>>>(
          r.test.ratings.data() + r.test.begin(cell), test_count, r.user_factors.data(), items, width,
          r.totals.data() + 2);
      check_launch("error_kernel");
    }
    const std::array<double, 4> sums = totals();
    return {ErrorSums{sums[0], sums[1]}, ErrorSums{sums[2], sums[3]}};
  }

 private:
  // A device range of the item buffer and the host span it goes back to.
  struct Out {
    const double* from;
    std::span<double> to;
  };

  std::size_t user_rows() const { return on_gpu_->user_counts.size(); }

  std::vector<double> download(const DeviceArray<double>& array) const {
    cuda::use_gpu(gpu_);
    std::vector<double> host(array.size());
    if (host.empty()) return host;
    array.download(host, on_gpu_->stream.get());
    on_gpu_->stream.synchronize();
    return host;
  }

  // Queues the copies of `parts` into the item buffer, end to end, through the pinned staging buffer a
  // chunk at a time: the CPU copies the next chunk into pinned memory while the DMA engine moves the
  // last. Returns where on the GPU each part begins. No copy of an earlier call is in flight: every
  // call waits for its stream before it returns.
  template <std::size_t N>
  std::array<double*, N> stage_in(const std::array<std::span<const double>, N>& parts) {
    Resident& r = *on_gpu_;
    std::size_t total = 0;
    for (const auto& part : parts) total += part.size();
    if (r.items.size() < total) {
      r.items = DeviceArray<double>(total);
      r.staging = PinnedArray<double>(total);
    }
    std::array<double*, N> starts{};
    std::size_t offset = 0;
    for (std::size_t p = 0; p < N; ++p) {
      starts[p] = r.items.data() + offset;
      for (std::size_t done = 0; done < parts[p].size(); done += kChunk) {
        const std::size_t size = std::min(kChunk, parts[p].size() - done);
        double* pinned = r.staging.data() + offset + done;
        std::memcpy(pinned, parts[p].data() + done, size * sizeof(double));
        check(cudaMemcpyAsync(starts[p] + done, pinned, size * sizeof(double), cudaMemcpyHostToDevice,
                              r.stream.get()),
              "upload of the item rows");
      }
      offset += parts[p].size();
    }
    return starts;
  }

  // Copies parts of the item buffer back to the host through the staging buffer: the DMA of every
  // chunk is queued at once, and each is copied on to the host as soon as it has landed, while the
  // later ones are still on the bus. Waits for the stream.
  template <std::size_t N>
  void stage_out(const std::array<Out, N>& parts) {
    Resident& r = *on_gpu_;
    std::size_t chunks = 0;
    for (const Out& part : parts) {
      const std::size_t offset = static_cast<std::size_t>(part.from - r.items.data());
      for (std::size_t done = 0; done < part.to.size(); done += kChunk, ++chunks) {
        const std::size_t size = std::min(kChunk, part.to.size() - done);
        check(cudaMemcpyAsync(r.staging.data() + offset + done, part.from + done, size * sizeof(double),
                              cudaMemcpyDeviceToHost, r.stream.get()),
              "download of the item rows");
        if (r.chunks_done.size() == chunks) r.chunks_done.emplace_back();
        check(cudaEventRecord(r.chunks_done[chunks].get(), r.stream.get()), "cudaEventRecord");
      }
    }
    chunks = 0;
    for (const Out& part : parts) {
      const std::size_t offset = static_cast<std::size_t>(part.from - r.items.data());
      for (std::size_t done = 0; done < part.to.size(); done += kChunk, ++chunks) {
        const std::size_t size = std::min(kChunk, part.to.size() - done);
        check(cudaEventSynchronize(r.chunks_done[chunks].get()), "download of the item rows");
        std::memcpy(part.to.data() + done, r.staging.data() + offset + done, size * sizeof(double));
      }
    }
    r.stream.synchronize();
  }

  // The call's reductions, once its work is done.
  std::array<double, 4> totals() {
    Resident& r = *on_gpu_;
    check(cudaMemcpyAsync(r.totals_host.data(), r.totals.data(), r.totals.bytes(), cudaMemcpyDeviceToHost,
                          r.stream.get()),
          "download of the sums");
    r.stream.synchronize();
    std::array<double, 4> sums{};
    std::copy_n(r.totals_host.data(), sums.size(), sums.begin());
    return sums;
  }

  int gpu_;
  RowLayout layout_;
  unsigned max_blocks_ = 1;  // a grid larger than this many blocks strides instead
  std::unique_ptr<Resident> on_gpu_;
};

}  // namespace
}  // namespace cuda

std::unique_ptr<FactorDevice> cuda::make_factor_device(int gpu, RowLayout layout,
                                                       std::span<const std::vector<CellRating>> train,
                                                       std::span<const std::vector<CellRating>> test,
                                                       std::span<const double> user_counts) {
  return std::make_unique<CudaFactorDevice>(gpu, layout, train, test, user_counts);
}

}  // namespace schmp::kernels
