// The GPU collapsed Gibbs sampler for LDA (kernels/topic_kernels.hpp says what it draws and why that
// is the collapsed conditional).
#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cuda_support.hpp"
#include "kernels/gpu_module.hpp"
#include "schmp/kernels/fast_random.hpp"
#include "schmp/kernels/topic_kernels.hpp"

namespace schmp::kernels {

namespace {

constexpr unsigned kWarp = 32;
constexpr unsigned kFullMask = 0xFFFFFFFFu;
constexpr unsigned kThreads = 128;  // four warps, four tokens, per thread block
// A sweep draws its tokens in this many waves, one launch each, so that at most this share of them
// draw at once from the same counts: a small sweep (a small corpus, or many workers) would otherwise
// fit on the GPU whole and move every token at once (on an H100, sotu at K = 10 on 3 ranks, 9,000
// tokens per sweep, stayed 0.09 nats per token below the CPU's chain after 60 iterations). A large
// sweep's waves still fill the GPU, and 32 launches cost well under a millisecond.
constexpr std::size_t kWaves = 32;

// One wave of a sweep over a block's tokens. Totals are two's complement in 64 bits: atomicAdd of ~0 takes
// one off.
struct SweepArguments {
  const std::uint32_t* documents;  // each token's document row
  const std::uint32_t* words;      // each token's row in the block
  std::uint32_t* topics;
  std::size_t tokens;
  std::uint64_t first_token;  // the wave's first token among all the worker's: the random streams' ids
  std::uint32_t* document_counts;
  std::uint32_t* word_counts;
  long long* totals;
  unsigned long long* moved;
  std::uint32_t topics_count;
  float alpha;
  float beta;
  float beta_sum;
  std::uint64_t key;  // the seed and the iteration, mixed
};

// Uniform in [0, 1) with 53 random bits, the next of a splitmix64 stream.
__device__ double next_uniform(std::uint64_t& state) {
  return static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53;
}

// One warp per token (blockDim.x is a multiple of 32, so a warp's lanes share their token and every
// branch on it is taken by the whole warp: the full-mask shuffles and votes see all 32 lanes).
__global__ void __launch_bounds__(kThreads) sample_topics(const SweepArguments a) {
  __shared__ unsigned long long moved_here;
  if (threadIdx.x == 0) moved_here = 0;
  __syncthreads();
  const std::size_t token = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
  const unsigned lane = threadIdx.x % kWarp;
  if (token < a.tokens) {
    const std::uint32_t topics = a.topics_count;
    const std::uint32_t old_topic = a.topics[token];
    std::uint32_t* document = a.document_counts + static_cast<std::size_t>(a.documents[token]) * topics;
    std::uint32_t* word = a.word_counts + static_cast<std::size_t>(a.words[token]) * topics;
    std::uint64_t state = mix64(a.key ^ (a.first_token + token));
    // The weight of the chunks so far (the same on every lane), and the draw among them.
    double total = 0;
    std::uint32_t drawn = old_topic;
    for (std::uint32_t base = 0; base < topics; base += kWarp) {
      const std::uint32_t k = base + lane;
      float weight = 0;
      if (k < topics) {
        // The counts bypass L1 (__ldcg): other warps move them atomically in L2.
        const float own = k == old_topic ? 1.0f : 0.0f;
        const float n_dk = static_cast<float>(__ldcg(document + k)) - own;
        const float n_kw = static_cast<float>(__ldcg(word + k)) - own;
        const float n_k = static_cast<float>(__ldcg(a.totals + k)) - own;
        weight = (n_dk + a.alpha) * (n_kw + a.beta) / (n_k + a.beta_sum);
      }
      float running = weight;  // inclusive prefix sum over the chunk's lanes
      for (unsigned offset = 1; offset < kWarp; offset *= 2) {
        const float below = __shfl_up_sync(kFullMask, running, offset);
        if (lane >= offset) running += below;
      }
      const float chunk = __shfl_sync(kFullMask, running, kWarp - 1);
      total += chunk;
      // u * total falls below the chunk's weight with probability chunk / total, and is then uniform
      // in [0, chunk): it picks the topic inside the chunk too. The first chunk always takes it.
      const double target = next_uniform(state) * total;
      if (target < chunk) {
        // Only real topics vote: lane 31's sum (the chunk's) may exceed the last real lane's by a
        // rounding, as the shuffles add the padding lanes' zeros in another order.
        const unsigned passed = __ballot_sync(kFullMask, k < topics && running > static_cast<float>(target));
        // None passed only when rounding took the target up to the chunk's sum: its last topic.
        drawn = passed != 0 ? base + static_cast<std::uint32_t>(__ffs(static_cast<int>(passed)) - 1)
                            : std::min(base + kWarp, topics) - 1;
      }
    }
    if (lane == 0 && drawn != old_topic) {
      atomicSub(document + old_topic, 1u);
      atomicAdd(document + drawn, 1u);
      atomicSub(word + old_topic, 1u);
      atomicAdd(word + drawn, 1u);
      atomicAdd(reinterpret_cast<unsigned long long*>(a.totals + old_topic), ~0ull);
      atomicAdd(reinterpret_cast<unsigned long long*>(a.totals + drawn), 1ull);
      a.topics[token] = drawn;
      atomicAdd(&moved_here, 1ull);
    }
  }
  // One global atomic per thread block, not one per moved token.
  __syncthreads();
  if (threadIdx.x == 0 && moved_here > 0) atomicAdd(a.moved, moved_here);
}

using cuda::DeviceArray;
using cuda::PinnedArray;

class CudaTopicSampler final : public GpuTopicSampler {
 public:
  // Called with `gpu` current: the stream and the memory are made there.
  CudaTopicSampler(int gpu, const GpuTopicModel& model)
      : gpu_(gpu),
        topics_(static_cast<std::size_t>(model.topics)),
        alpha_(model.priors.alpha.empty() ? 0.0 : model.priors.alpha.front()),
        beta_(model.priors.beta),
        beta_sum_(model.priors.beta_sum),
        seed_(model.seed),
        block_rows_(model.block_rows.begin(), model.block_rows.end()),
        documents_(topics_ > 0 ? model.document_counts.size() / topics_ : 0) {
    if (model.topics < 1 || model.document_counts.size() % topics_ != 0 || model.blocks.empty() ||
        model.blocks.size() != model.block_rows.size()) {
      throw std::logic_error("a GPU topic model's sizes disagree");
    }
    block_starts_.push_back(0);
    for (const auto& tokens : model.blocks) block_starts_.push_back(block_starts_.back() + tokens.size());
    const std::size_t tokens = block_starts_.back();
    if (tokens > std::numeric_limits<std::uint32_t>::max())
      throw std::length_error("a GPU topic sampler holds at most 2^32 - 1 tokens per worker");
    // Indices out of range would write past the GPU's arrays: checked once, here.
    std::vector<std::uint32_t> token_documents;
    std::vector<std::uint32_t> token_words;
    token_documents.reserve(tokens);
    token_words.reserve(tokens);
    for (std::size_t b = 0; b < model.blocks.size(); ++b) {
      for (const TopicToken& token : model.blocks[b]) {
        if (token.document >= documents_ || token.word >= block_rows_[b] || token.topic >= topics_)
          throw std::logic_error("a GPU topic model's token is out of range");
        token_documents.push_back(token.document);
        token_words.push_back(token.word);
      }
    }
    shuffle_within_blocks();
    token_documents = in_device_order(token_documents);
    token_words = in_device_order(token_words);
    const std::size_t most_rows = *std::max_element(block_rows_.begin(), block_rows_.end());
    token_documents_ = DeviceArray<std::uint32_t>(tokens);
    token_words_ = DeviceArray<std::uint32_t>(tokens);
    token_topics_ = DeviceArray<std::uint32_t>(tokens);
    document_counts_ = DeviceArray<std::uint32_t>(model.document_counts.size());
    block_counts_ = DeviceArray<std::uint32_t>(most_rows * topics_);
    totals_ = DeviceArray<long long>(topics_);
    moved_ = DeviceArray<unsigned long long>(1);
    block_up_ = PinnedArray<std::uint32_t>(most_rows * topics_);
    block_down_ = PinnedArray<std::uint32_t>(most_rows * topics_);
    totals_up_ = PinnedArray<long long>(topics_);
    totals_down_ = PinnedArray<long long>(topics_);
    moved_down_ = PinnedArray<unsigned long long>(1);
    // The host vectors are gone when the constructor returns: their copies are waited for.
    upload_if_any(token_documents_, token_documents);
    upload_if_any(token_words_, token_words);
    stream_.synchronize();
    write_state(model.blocks, model.document_counts);
  }

  // A sweep still in flight must not copy into freed pinned memory.
  // The members are freed after the body, on its GPU (their owners ignore errors: nothing to do then).
  ~CudaTopicSampler() override {
    cuda::use_gpu_quietly(gpu_);
    cudaStreamSynchronize(stream_.get());
  }

  CudaTopicSampler(const CudaTopicSampler&) = delete;
  CudaTopicSampler& operator=(const CudaTopicSampler&) = delete;

  std::span<std::uint32_t> block_staging(std::uint32_t block) override {
    cuda::use_gpu(gpu_);
    refuse_in_flight("block_staging");
    return block_up_.span().first(cells(block));
  }

  void start_sweep(std::uint32_t block, std::span<const std::int64_t> totals,
                   std::uint64_t iteration) override {
    cuda::use_gpu(gpu_);
    refuse_in_flight("start_sweep");
    if (totals.size() != topics_) throw std::logic_error("start_sweep: totals of another topic count");
    const std::size_t block_cells = cells(block);
    const cudaStream_t stream = stream_.get();
    // In flight from the first copy on: should a call below throw, the staging memory stays refused
    // until finish_sweep has waited for what was queued.
    in_flight_ = block;
    std::copy(totals.begin(), totals.end(), totals_up_.data());
    upload_if_any(block_counts_, std::span<const std::uint32_t>(block_up_.data(), block_cells));
    totals_.upload(totals_up_.span(), stream);
    moved_.fill_zero(stream);
    const std::size_t first = block_starts_[block];
    const std::size_t tokens = block_starts_[block + 1] - first;
    // In waves: each wave's draws see the moves of the waves before it.
    const std::size_t wave = (tokens + kWaves - 1) / kWaves;
    for (std::size_t begin = 0; begin < tokens; begin += wave) {
      const std::size_t at = first + begin;
      const SweepArguments arguments{token_documents_.data() + at,
                                     token_words_.data() + at,
                                     token_topics_.data() + at,
                                     std::min(wave, tokens - begin),
                                     at,
                                     document_counts_.data(),
                                     block_counts_.data(),
                                     totals_.data(),
                                     moved_.data(),
                                     static_cast<std::uint32_t>(topics_),
                                     static_cast<float>(alpha_),
                                     static_cast<float>(beta_),
                                     static_cast<float>(beta_sum_),
                                     mix64(seed_ + mix64(iteration))};
      sample_topics<<<cuda::blocks_for(arguments.tokens, kThreads, kWarp), kThreads, 0, stream>>>(arguments);
      cuda::check_launch("sample_topics");
    }
    if (block_cells > 0)
      block_counts_.download(std::span<std::uint32_t>(block_down_.data(), block_cells), stream);
    totals_.download(totals_down_.span(), stream);
    moved_.download(moved_down_.span(), stream);
  }

  GpuSweep finish_sweep(std::span<std::int64_t> totals) override {
    cuda::use_gpu(gpu_);
    if (!in_flight_) throw std::logic_error("finish_sweep without start_sweep");
    if (totals.size() != topics_) throw std::logic_error("finish_sweep: totals of another topic count");
    // Waited for before the staging memory may be written again.
    stream_.synchronize();
    const std::uint32_t block = *std::exchange(in_flight_, std::nullopt);
    std::copy(totals_down_.data(), totals_down_.data() + topics_, totals.begin());
    return GpuSweep{std::span<const std::uint32_t>(block_down_.data(), cells(block)), moved_down_.data()[0]};
  }

  void download(std::span<std::vector<TopicToken>> blocks,
                std::span<std::uint32_t> document_counts) override {
    cuda::use_gpu(gpu_);
    refuse_in_flight("download");
    check_shape(blocks, document_counts.size());
    std::vector<std::uint32_t> topics(token_topics_.size());
    const cudaStream_t stream = stream_.get();
    if (!topics.empty()) token_topics_.download(topics, stream);
    if (!document_counts.empty()) document_counts_.download(document_counts, stream);
    stream_.synchronize();
    std::vector<std::uint32_t> in_blocks(topics.size());
    for (std::size_t at = 0; at < topics.size(); ++at) in_blocks[order_[at]] = topics[at];
    std::size_t at = 0;
    for (auto& tokens : blocks) {
      for (TopicToken& token : tokens) token.topic = in_blocks[at++];
    }
  }

  void upload(std::span<const std::vector<TopicToken>> blocks,
              std::span<const std::uint32_t> document_counts) override {
    cuda::use_gpu(gpu_);
    refuse_in_flight("upload");
    write_state(blocks, document_counts);
  }

 private:
  std::size_t cells(std::uint32_t block) const {
    if (block >= block_rows_.size()) throw std::logic_error("no block " + std::to_string(block));
    return static_cast<std::size_t>(block_rows_[block]) * topics_;
  }

  void refuse_in_flight(const char* what) const {
    if (in_flight_) throw std::logic_error(std::string(what) + " while a GPU sweep is in flight");
  }

  template <class Blocks>
  void check_shape(const Blocks& blocks, std::size_t document_cells) const {
    if (blocks.size() != block_rows_.size() || document_cells != document_counts_.size())
      throw std::logic_error("a GPU topic state of another shape");
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      if (blocks[b].size() != block_starts_[b + 1] - block_starts_[b])
        throw std::logic_error("a GPU topic state with other tokens");
    }
  }

  // A copy up on the sampler's stream, skipped when empty (an empty DeviceArray has no memory).
  template <class T>
  void upload_if_any(DeviceArray<T>& device, std::type_identity_t<std::span<const T>> host) {
    if (!host.empty()) device.upload(host, stream_.get());
  }

  // The blocks come by word, and a sweep samples as many tokens at once as the GPU holds warps: in that
  // order every token of a common word would be drawn at once from the same counts (on an H100, sotu at
  // K = 10 stayed 0.3 nats per token below the CPU's chain after 60 iterations). The GPU keeps each
  // block's tokens in a fixed shuffled order instead, so a word's tokens are spread over the sweep.
  void shuffle_within_blocks() {
    order_.resize(block_starts_.back());
    std::iota(order_.begin(), order_.end(), std::uint32_t{0});
    std::mt19937_64 random(mix64(seed_));
    for (std::size_t b = 0; b + 1 < block_starts_.size(); ++b) {
      std::shuffle(order_.begin() + static_cast<std::ptrdiff_t>(block_starts_[b]),
                   order_.begin() + static_cast<std::ptrdiff_t>(block_starts_[b + 1]), random);
    }
  }

  // `values` (one per token, in the blocks' order) in the GPU's order.
  std::vector<std::uint32_t> in_device_order(const std::vector<std::uint32_t>& values) const {
    std::vector<std::uint32_t> reordered(values.size());
    for (std::size_t at = 0; at < values.size(); ++at) reordered[at] = values[order_[at]];
    return reordered;
  }

  void write_state(std::span<const std::vector<TopicToken>> blocks,
                   std::span<const std::uint32_t> document_counts) {
    check_shape(blocks, document_counts.size());
    std::vector<std::uint32_t> topics;
    topics.reserve(token_topics_.size());
    for (const auto& tokens : blocks) {
      for (const TopicToken& token : tokens) {
        if (token.topic >= topics_) throw std::logic_error("a GPU topic state's topic is out of range");
        topics.push_back(token.topic);
      }
    }
    topics = in_device_order(topics);
    upload_if_any(token_topics_, std::span<const std::uint32_t>(topics));
    upload_if_any(document_counts_, document_counts);
    stream_.synchronize();  // before `topics` goes
  }

  // The stream comes first so that it is destroyed last, after the memory its copies use.
  cuda::Stream stream_;
  int gpu_;
  std::size_t topics_;
  // The priors, copied: TopicPriors views the caller's alpha. Symmetric (GpuTopicModel).
  double alpha_;
  double beta_;
  double beta_sum_;
  std::uint64_t seed_;
  std::vector<std::uint32_t> block_rows_;
  std::size_t documents_;
  std::vector<std::size_t> block_starts_;  // block b's tokens are [starts[b], starts[b + 1])
  std::vector<std::uint32_t> order_;       // per position on the GPU, the token's place in the blocks
  DeviceArray<std::uint32_t> token_documents_;
  DeviceArray<std::uint32_t> token_words_;
  DeviceArray<std::uint32_t> token_topics_;
  DeviceArray<std::uint32_t> document_counts_;
  DeviceArray<std::uint32_t> block_counts_;  // room for the largest block
  DeviceArray<long long> totals_;
  DeviceArray<unsigned long long> moved_;
  PinnedArray<std::uint32_t> block_up_;
  PinnedArray<std::uint32_t> block_down_;
  PinnedArray<long long> totals_up_;
  PinnedArray<long long> totals_down_;
  PinnedArray<unsigned long long> moved_down_;
  std::optional<std::uint32_t> in_flight_;  // the block of the sweep started and not yet finished
};

}  // namespace

std::unique_ptr<GpuTopicSampler> cuda::make_topic_sampler(int gpu, const GpuTopicModel& model) {
  cuda::use_gpu(gpu);
  return std::make_unique<CudaTopicSampler>(gpu, model);
}

}  // namespace schmp::kernels
