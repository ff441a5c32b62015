// The bare timer's lateness (harness/real/wake_probe.h).
#include "harness/real/wake_probe.h"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace locklab {
namespace {

constexpr int kSleepsUs[] = {1000, 5000};

int64_t MonotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// The q-quantile of sorted values (nearest rank).
double Quantile(const std::vector<double>& sorted, double q) {
  const size_t i = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size() - 1, i == 0 ? 0 : i - 1)];
}

double Tenth(double us) { return std::round(us * 10) / 10; }

}  // namespace

std::vector<WakeLateness> ProbeWakeLateness(int n) {
  n = std::clamp(n, 1, 1000);
  std::vector<WakeLateness> rows;
  for (int sleep_us : kSleepsUs) {
    std::vector<double> late_us;
    late_us.reserve(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      const int64_t due_ns = MonotonicNs() + static_cast<int64_t>(sleep_us) * 1000;
      const timespec due{static_cast<time_t>(due_ns / 1'000'000'000), static_cast<long>(due_ns % 1'000'000'000)};
      // EINTR (a signal woke it early): sleep on to the same deadline, a bounded number of times.
      for (int tries = 0; tries < 100 && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, nullptr) != 0; ++tries) {
      }
      late_us.push_back(static_cast<double>(MonotonicNs() - due_ns) / 1000.0);
    }
    std::sort(late_us.begin(), late_us.end());
    rows.push_back({sleep_us, n, Quantile(late_us, 0.5), Quantile(late_us, 0.9)});
  }
  return rows;
}

nlohmann::ordered_json WakeLatenessJson(const std::vector<WakeLateness>& rows) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const WakeLateness& r : rows)
    out.push_back({{"sleep_us", r.sleep_us}, {"n", r.n}, {"median_us", Tenth(r.median_us)}, {"p90_us", Tenth(r.p90_us)}});
  return out;
}

std::string WakeLatenessText(const std::vector<WakeLateness>& rows) {
  std::string out;
  char buf[128];
  for (const WakeLateness& r : rows) {
    if (out.empty())
      std::snprintf(buf, sizeof buf, "%g ms sleeps woke %.0f µs late (median; p90 %.0f)", r.sleep_us / 1000.0,
                    r.median_us, r.p90_us);
    else
      std::snprintf(buf, sizeof buf, ", %g ms %.0f (p90 %.0f)", r.sleep_us / 1000.0, r.median_us, r.p90_us);
    out += buf;
  }
  return out;
}

}  // namespace locklab
