#include "harness/report/interval_json.h"

namespace locklab {

nlohmann::ordered_json IntervalJson(const Interval& i) {
  return nlohmann::ordered_json{
      {"estimate", i.estimate}, {"low", i.low}, {"high", i.high}, {"n", i.n}, {"method", i.method}};
}

Interval IntervalFromJson(const nlohmann::json& j) {
  Interval i;
  i.estimate = j.at("estimate").get<double>();
  i.low = j.at("low").get<double>();
  i.high = j.at("high").get<double>();
  i.n = j.at("n").get<int64_t>();
  i.method = j.at("method").get<std::string>();
  return i;
}

}  // namespace locklab
