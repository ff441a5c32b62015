// Rng: the simulator's only source of randomness (xoshiro256**, seeded by splitmix64).
// Written here rather than taken from <random> so that a seed means the same stream on every
// standard library: a report must replay byte for byte.
#pragma once

#include <cmath>
#include <cstdint>

namespace locklab::sim {

class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (auto& w : s_) w = SplitMix(seed);
  }

  uint64_t Next() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, 1).
  double Unit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  // Uniform integer in [lo, hi].
  int64_t Uniform(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(Next() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool Chance(double p) { return p > 0 && Unit() < p; }
  // Exponential with the given mean (Poisson process gaps).
  double Exponential(double mean) { return -mean * std::log1p(-Unit()); }
  // Standard normal (Box-Muller, one value per call).
  double Normal() {
    double u1 = Unit(), u2 = Unit();
    if (u1 < 1e-300) u1 = 1e-300;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static uint64_t SplitMix(uint64_t& x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  uint64_t s_[4];
};

}  // namespace locklab::sim
