// Our own seeded random number generator (xoshiro256**, seeded by splitmix64).
//
// std::*_distribution differ between standard libraries, so every draw the
// model makes goes through these few functions: same seed, same bytes, on any
// platform.
//
// Every seed of the model goes into an Rng, and every draw the model makes is
// uniform(), below() or exponential() (next() alone seeds one Rng from
// another). So a run that made no draw did not depend on its seed: every seed
// gives its bytes, and the driver copies it instead of running the others
// (driver/simulate.cpp; the draws() counter, tests/cpp/test_seed_free.cpp).
#pragma once

#include <cmath>
#include <cstdint>

namespace semsim {

class Rng {
 public:
  explicit Rng(std::uint64_t seed = 1) { reseed(seed); }

  void reseed(std::uint64_t seed) {
    std::uint64_t x = seed;
    for (auto& word : s_) word = splitmix64(x);
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform double in [0, 1) with 53 random bits.
  double uniform() {
    ++draws_;
    return static_cast<double>(next() >> 11) * 0x1.0p-53;
  }

  // Uniform integer in [0, n), n > 0 (Lemire's multiply-shift, no modulo bias worth
  // mentioning for the small n the model uses).
  std::uint64_t below(std::uint64_t n) {
    __extension__ using u128 = unsigned __int128;  // GCC/Clang extension; -Wpedantic-clean
    ++draws_;
    return static_cast<std::uint64_t>((static_cast<u128>(next()) * n) >> 64);
  }

  // Exponential variate with the given mean.
  double exponential(double mean) { return -mean * std::log1p(-uniform()); }

  // The model's draws in this process since reset_draws() (one simulation runs
  // at a time in a process).
  static std::uint64_t draws() { return draws_; }
  static void reset_draws() { draws_ = 0; }

  // An independent stream derived from this seed and a stream id.
  static Rng derive(std::uint64_t seed, std::uint64_t stream) {
    std::uint64_t x = seed ^ (0x9E3779B97F4A7C15ULL * (stream + 1));
    return Rng(splitmix64(x));
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static std::uint64_t splitmix64(std::uint64_t& x) {
    std::uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  std::uint64_t s_[4];
  inline static std::uint64_t draws_ = 0;
};

}  // namespace semsim
