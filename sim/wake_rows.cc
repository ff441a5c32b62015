#include "sim/wake_rows.h"

namespace locklab::sim {

double WakeLateUs(const std::vector<WakeRow>& rows, double idle_us, double u) {
  return WakeLateAt(rows, idle_us, [&](size_t i) { return rows[i].late_us.AtUs(u); });
}

double SocketWakeLateUs(const std::vector<WakeRow>& rows, double idle_us, double u) {
  return SocketWakeLateAt(rows, idle_us, [&](size_t i) { return rows[i].late_us.AtUs(u); });
}

WakeRows::WakeRows(const std::vector<WakeRow>& rows) : rows_(rows) {
  if (rows.empty() || rows.front().late_us.points.empty()) return;
  const auto& first = rows.front().late_us.points;
  for (const WakeRow& r : rows) {
    const auto& pts = r.late_us.points;
    if (pts.size() != first.size()) return;
    for (size_t k = 0; k < pts.size(); ++k)
      if (pts[k].first != first[k].first) return;
  }
  for (const auto& pt : first) p_.push_back(pt.first);
  for (const WakeRow& r : rows)
    for (const auto& pt : r.late_us.points) v_.push_back(pt.second);
}

double WakeRows::LateUs(double idle_us, double u) const {
  if (p_.empty()) return WakeLateUs(rows_, idle_us, u);
  const QuantilePlace place = Place(u);
  return WakeLateAt(rows_, idle_us, [&](size_t r) { return RowAt(place, r); });
}

double WakeRows::SocketLateUs(double idle_us, double u) const {
  if (p_.empty()) return SocketWakeLateUs(rows_, idle_us, u);
  const QuantilePlace place = Place(u);
  return SocketWakeLateAt(rows_, idle_us, [&](size_t r) { return RowAt(place, r); });
}

}  // namespace locklab::sim
