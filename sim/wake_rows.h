// A profile's wake_after_idle rows (cost_model.h: how late a timer or a socket's poll runs after
// the process idled) made ready for the simulator, which reads them at every wake-up: the same
// doubles as WakeLateUs and SocketWakeLateUs, but when every row's lateness has its quantiles at
// the same p values (as the rows `locklab calibrate` measures have) the quantile's place among
// them is found once per lookup rather than once per row read.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "sim/cost_model.h"

namespace locklab::sim {

// The lateness at quantile u after `idle_us` of idling: between two rows, the two rows' values
// at u interpolated linearly in idle time; below the first row, from 0 at 0 idle; past the last,
// the last row's. 0 for no rows or idle_us <= 0.
double WakeLateUs(const std::vector<WakeRow>& rows, double idle_us, double u);
// How late a loop that idled idle_us polls when a socket wakes it: WakeLateUs at idle_us less
// WakeLateUs at the first row's idle time (the wake-up a socket's measured trip already holds),
// never below 0; 0 for no rows. Each row's quantile is read once.
double SocketWakeLateUs(const std::vector<WakeRow>& rows, double idle_us, double u);

// WakeLateUs with row r's lateness at the lookup's quantile read through at(r).
template <typename At>
double WakeLateAt(const std::vector<WakeRow>& rows, double idle_us, const At& at) {
  if (rows.empty() || idle_us <= 0) return 0.0;
  if (idle_us >= rows.back().idle_us) return at(rows.size() - 1);
  size_t i = 0;
  while (rows[i].idle_us < idle_us) ++i;  // bounded: the last row's idle_us exceeds idle_us
  const double x0 = i == 0 ? 0.0 : rows[i - 1].idle_us;
  const double y0 = i == 0 ? 0.0 : at(i - 1);
  const double y1 = at(i);
  if (rows[i].idle_us <= x0) return y1;
  return y0 + (y1 - y0) * (idle_us - x0) / (rows[i].idle_us - x0);
}

// SocketWakeLateUs the same way; the first row is read once for its two uses.
template <typename At>
double SocketWakeLateAt(const std::vector<WakeRow>& rows, double idle_us, const At& at) {
  if (rows.empty()) return 0.0;
  const double first = at(0);  // the floor's row, often the lateness's too
  const auto row = [&](size_t i) { return i == 0 ? first : at(i); };
  const double floor_us = WakeLateAt(rows, rows.front().idle_us, row);
  return std::max(0.0, WakeLateAt(rows, idle_us, row) - floor_us);
}

class WakeRows {
 public:
  WakeRows() = default;
  explicit WakeRows(const std::vector<WakeRow>& rows);
  double LateUs(double idle_us, double u) const;        // WakeLateUs(rows, idle_us, u), to the bit
  double SocketLateUs(double idle_us, double u) const;  // SocketWakeLateUs(rows, idle_us, u), to the bit
  bool empty() const { return rows_.empty(); }          // no rows: every wake-up on time
  bool shared_place() const { return !p_.empty(); }     // the quantile found once per lookup

 private:
  // For rows that share their p values: where u falls among them, and row r's value there.
  QuantilePlace Place(double u) const {
    return PlaceQuantile(p_.size(), [this](size_t k) { return p_[k]; }, u);
  }
  double RowAt(const QuantilePlace& place, size_t r) const {
    const double* v = v_.data() + r * p_.size();
    return place.Value([v](size_t k) { return v[k]; });
  }

  std::vector<WakeRow> rows_;
  std::vector<double> p_;  // the p values every row shares (empty: they differ; each row is read alone)
  std::vector<double> v_;  // row r's value at p_[k]: v_[r * p_.size() + k]
};

}  // namespace locklab::sim
