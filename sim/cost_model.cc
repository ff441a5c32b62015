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

double CostDist::AtUs(double u) const {
  if (points.empty()) return 0.0;
  u = std::clamp(u, 0.0, 1.0);
  if (u <= points.front().first) return points.front().second;
  if (u >= points.back().first) return points.back().second;
  // The first point at or past u (what std::lower_bound finds); the segment (i - 1, i] holds u.
  // Found from a guess that is right at once when the points are evenly spaced in p (as measured
  // profiles are), then moved to that point: the same index for any rising points, and no
  // binary search on the simulator's hottest path.
  const size_t n = points.size();
  size_t i = std::clamp<size_t>(static_cast<size_t>(u * static_cast<double>(n - 1)) + 1, 1, n - 1);
  while (i < n - 1 && points[i].first < u) ++i;
  while (i > 1 && points[i - 1].first >= u) --i;
  const auto& [p1, v1] = points[i];
  const auto& [p0, v0] = points[i - 1];
  if (p1 <= p0) return v1;
  return v0 + (v1 - v0) * (u - p0) / (p1 - p0);
}

double WakeLateUs(const std::vector<WakeRow>& rows, double idle_us, double u) {
  if (rows.empty() || idle_us <= 0) return 0.0;
  if (idle_us >= rows.back().idle_us) return rows.back().late_us.AtUs(u);
  size_t i = 0;
  while (rows[i].idle_us < idle_us) ++i;  // bounded: the last row's idle_us exceeds idle_us
  const double x0 = i == 0 ? 0.0 : rows[i - 1].idle_us;
  const double y0 = i == 0 ? 0.0 : rows[i - 1].late_us.AtUs(u);
  const double y1 = rows[i].late_us.AtUs(u);
  if (rows[i].idle_us <= x0) return y1;
  return y0 + (y1 - y0) * (idle_us - x0) / (rows[i].idle_us - x0);
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
