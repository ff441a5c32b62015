#include "sim/cost_model.h"

#include <algorithm>

namespace locklab::sim {

double CostDist::MeanUs() const {
  if (points.empty()) return 0.0;
  if (points.size() == 1) return points[0].second;
  // The area under the piecewise-linear inverse CDF, segment by segment (trapezoids).
  double area = 0.0;
  for (size_t i = 1; i < points.size(); ++i) {
    const double dp = points[i].first - points[i - 1].first;
    area += dp * (points[i].second + points[i - 1].second) / 2.0;
  }
  // Points that do not span [0, 1] (not valid in a profile) hold their end values outside.
  area += points.front().first * points.front().second;
  area += (1.0 - points.back().first) * points.back().second;
  return area;
}

namespace {

// WakeLateUs with the row quantiles read through at(i) (rows[i].late_us.AtUs(u)), so that a
// caller can read one row once for two lookups; the same arithmetic, so the same doubles.
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

}  // namespace

double WakeLateUs(const std::vector<WakeRow>& rows, double idle_us, double u) {
  return WakeLateAt(rows, idle_us, [&](size_t i) { return rows[i].late_us.AtUs(u); });
}

double SocketWakeLateUs(const std::vector<WakeRow>& rows, double idle_us, double u) {
  if (rows.empty()) return 0.0;
  const double first = rows.front().late_us.AtUs(u);  // the floor's row, often the lateness's too
  const auto at = [&](size_t i) { return i == 0 ? first : rows[i].late_us.AtUs(u); };
  const double floor_us = WakeLateAt(rows, rows.front().idle_us, at);
  return std::max(0.0, WakeLateAt(rows, idle_us, at) - floor_us);
}

CostModel LegacyCostModel() {
  CostModel m;
  m.name = kLegacyCostName;
  m.legacy_delay_floor_us = 50;
  m.node.command_us = CostDist::Constant(2);
  m.node.script_us = CostDist::Constant(2);
  m.node.blpop_serve_us = CostDist::Constant(2);
  m.client.placement = ClientCosts::Placement::kProcessPerClient;
  return m;
}

}  // namespace locklab::sim
