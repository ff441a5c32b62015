#include "sim/pause_draws.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace locklab::sim {
namespace {

// The loop of PauseTimes, its starts kept when `starts` is not null; the pauses it made.
size_t PauseLoop(Rng* rng, double mean_gap_us, int64_t duration_us, int64_t horizon_us, size_t max_count,
                 std::vector<int64_t>* starts) {
  int64_t t = 0;
  for (size_t i = 0; i < max_count; ++i) {
    t += static_cast<int64_t>(rng->Exponential(mean_gap_us));
    if (t >= horizon_us) return i;
    if (starts != nullptr) starts->push_back(t);
    t += duration_us;
  }
  return max_count;
}

// The product of the draws' 1 - u, as m * 2^e (m kept normal): the sum of k gaps is about
// -mean * ln(product), each gap being -mean * log1p(-u).
struct Product {
  double m = 1.0;
  int64_t e = 0;

  void Times(double factor) {  // factor >= 2^-53 (1 - u of a Unit() draw): m stays normal
    m *= factor;
    if (m < 0x1p-960) Renormalize();
  }
  void Renormalize() {
    int x = 0;
    m = std::frexp(m, &x);
    e += x;
  }
  double Ln() const { return std::log(m) + static_cast<double>(e) * 0.6931471805599453; }
};

// Where t, after k draws (k >= 1) whose product is p, must lie: the loop's t is the sum of the
// gaps cut to whole µs (each loses less than 1) plus k - 1 pauses. `slack` covers the rounding of
// each gap, of the product and of the logarithms: some 1e-16 of mean * k and of the sum each, a
// billionth allowed.
struct Bounds {
  double lower, upper;
};
Bounds TimeBounds(const Product& p, size_t k, double mean_gap_us, int64_t duration_us) {
  const double sum = -mean_gap_us * p.Ln();
  const double slack = 1e-9 * (mean_gap_us * static_cast<double>(k + 1) + sum);
  const double pauses = static_cast<double>(k - 1) * static_cast<double>(duration_us);
  return {sum - slack - static_cast<double>(k) + pauses, sum + slack + pauses};
}

// PauseTimes' count from the bounds, *rng moved as the loop moves it; nullopt when a bound is
// too close to the horizon to call (then *rng is anywhere).
std::optional<size_t> CountByProduct(Rng* rng, double mean_gap_us, int64_t duration_us, int64_t horizon_us,
                                     size_t max_count) {
  constexpr size_t kBlock = 32;  // draws between two looks at the bound
  const double horizon = static_cast<double>(horizon_us);
  Product p;
  size_t k = 0;
  while (k < max_count) {  // at most max_count draws
    const Product block_p = p;
    const size_t n = std::min(kBlock, max_count - k);
    Rng block_rng = *rng;  // a copy the loop can keep in registers; *rng stays at the block's start
    for (size_t j = 0; j < n; ++j) p.Times(1.0 - block_rng.Unit());
    if (TimeBounds(p, k + n, mean_gap_us, duration_us).upper < horizon) {  // t only grows: the
      *rng = block_rng;                                                    // whole block is early
      k += n;
      p.Renormalize();
      continue;
    }
    p = block_p;  // the horizon is in this block: draw by draw
    for (size_t j = 0; j < n; ++j) {
      p.Times(1.0 - rng->Unit());
      ++k;
      const Bounds b = TimeBounds(p, k, mean_gap_us, duration_us);
      if (b.upper < horizon) continue;
      if (b.lower >= horizon) return k - 1;  // the k-th draw's t is past the horizon
      return std::nullopt;
    }
    p.Renormalize();
  }
  return max_count;
}

}  // namespace

std::vector<int64_t> PauseTimes(Rng* rng, double mean_gap_us, int64_t duration_us, int64_t horizon_us,
                                size_t max_count) {
  std::vector<int64_t> starts;
  PauseLoop(rng, mean_gap_us, duration_us, horizon_us, max_count, &starts);
  return starts;
}

PauseDraws DrawPauses(Rng* rng, double mean_gap_us, int64_t duration_us, int64_t horizon_us, size_t max_count) {
  PauseDraws d;
  d.rng = *rng;
  d.mean_gap_us = mean_gap_us;
  d.duration_us = duration_us;
  // The bounds hold for gaps that fit in an int64_t and a mean that is a number.
  const bool bounded = mean_gap_us > 0 && mean_gap_us < 1e12 && duration_us >= 0;
  if (const std::optional<size_t> n =
          bounded ? CountByProduct(rng, mean_gap_us, duration_us, horizon_us, max_count) : std::nullopt) {
    d.count = *n;
    return d;
  }
  *rng = d.rng;
  d.count = PauseLoop(rng, mean_gap_us, duration_us, horizon_us, max_count, nullptr);
  return d;
}

}  // namespace locklab::sim
