// The bare timer's lateness (harness/real/wake_probe.h).
#include "harness/real/wake_probe.h"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "harness/check/checkers.h"
#include "harness/real/real_clock.h"
#include "harness/run/host_info.h"

namespace locklab {
namespace {

constexpr int kSleepsUs[] = {1000, 5000};

double Tenth(double us) { return std::round(us * 10) / 10; }

}  // namespace

std::vector<WakeLateness> ProbeWakeLateness(int n) {
  n = std::clamp(n, 1, 1000);
  std::vector<WakeLateness> rows;
  for (int sleep_us : kSleepsUs) {
    std::vector<double> late_us;
    late_us.reserve(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      const int64_t due_us = MonotonicNowUs() + sleep_us;
      const timespec due{static_cast<time_t>(due_us / 1'000'000), static_cast<long>(due_us % 1'000'000) * 1000};
      // EINTR (a signal woke it early): sleep on to the same deadline, a bounded number of times.
      for (int tries = 0; tries < 100 && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, nullptr) != 0; ++tries) {
      }
      late_us.push_back(static_cast<double>(MonotonicNowUs() - due_us));
    }
    const LatencySummary s = Summarize(std::move(late_us));  // nearest rank (harness/check/checkers.h)
    rows.push_back({sleep_us, n, s.p50, s.p90});
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

nlohmann::ordered_json MachineNowJson() {
  return {{"load_average", LoadAverageText()}, {"wake_late_us", WakeLatenessJson(ProbeWakeLateness())}};
}

}  // namespace locklab
