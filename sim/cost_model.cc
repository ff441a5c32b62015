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
