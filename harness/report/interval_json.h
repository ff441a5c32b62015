// An Interval (stats.h) in JSON, the one shape every results file uses:
// {"estimate", "low", "high", "n", "method"}. Written by the map and study outputs, read back by
// `locklab study --redis-from`.
#pragma once

#include <nlohmann/json.hpp>

#include "harness/report/stats.h"

namespace locklab {

nlohmann::ordered_json IntervalJson(const Interval& i);
// Throws nlohmann::json::exception when a field is missing or of another type.
Interval IntervalFromJson(const nlohmann::json& j);

}  // namespace locklab
