// A fast random stream for the samplers' inner loops: xoshiro256** (Blackman and Vigna, 2018), seeded
// through splitmix64. Several times cheaper per draw than std::mt19937_64, and a standard uniform random
// bit generator, so the <random> distributions take it too.
#pragma once

#include <cstdint>
#include <limits>

namespace schmp::kernels {

// The splitmix64 finaliser (Steele, Lea and Flood, 2014): 64 well-mixed bits from any 64, so that
// hashes of seeds and ids serve as random starting values.
constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// splitmix64: the next value of a stream whose state is `state`.
constexpr std::uint64_t splitmix64(std::uint64_t& state) { return mix64(state += 0x9E3779B97F4A7C15ull); }

class FastRandom {
 public:
  using result_type = std::uint64_t;
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return std::numeric_limits<result_type>::max(); }

  explicit FastRandom(std::uint64_t seed = 1) {
    for (std::uint64_t& word : state_) word = splitmix64(seed);
  }

  result_type operator()() {
    const std::uint64_t result = rotate(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotate(state_[3], 45);
    return result;
  }

  // Uniform in [0, 1), 53 random bits.
  double uniform() { return static_cast<double>((*this)() >> 11) * 0x1.0p-53; }

 private:
  static std::uint64_t rotate(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

  std::uint64_t state_[4];
};

}  // namespace schmp::kernels
