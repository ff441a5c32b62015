// A held command's CPU split over the loop's steps (calibrate.h, CalibrateHeldSplit), and the
// pass fit it and the full calibration's cross-checks read (calibrate_internal.h, PassFitJson).
#include <algorithm>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/real/calibrate.h"
#include "harness/real/calibrate_internal.h"
#include "harness/real/cpu_placement.h"
#include "harness/real/least_squares.h"
#include "harness/real/redis_server.h"

namespace locklab {
namespace calib {

ojson PassFitJson(const std::vector<RedisRuntime::PassSample>& passes) {
  std::vector<std::vector<double>> rows;
  std::vector<double> y;
  for (const RedisRuntime::PassSample& p : passes) {
    rows.push_back({1.0, static_cast<double>(p.timers), static_cast<double>(p.writes), static_cast<double>(p.reads),
                    static_cast<double>(p.held_replies), p.slept ? 1.0 : 0.0});
    y.push_back(p.cpu_us);
  }
  static constexpr const char* kNames[] = {"per_pass_us", "timer_us", "write_us", "read_us", "held_reply_us", "slept_us"};
  std::vector<size_t> kept;  // the columns that are not always zero
  for (size_t c = 0; c < std::size(kNames); ++c)
    for (const auto& r : rows)
      if (r[c] != 0) {
        kept.push_back(c);
        break;
      }
  for (auto& r : rows) {
    std::vector<double> k;
    for (size_t c : kept) k.push_back(r[c]);
    r = std::move(k);
  }
  ojson j{{"passes", passes.size()}};
  const std::optional<LinearFit> fit = FitLinear(rows, y);
  if (!fit) {
    j["fit"] = "none (too few passes, or kinds of step that always come together)";
    return j;
  }
  for (size_t i = 0; i < kept.size(); ++i) j[kNames[kept[i]]] = R3(fit->coef[i]);
  j["r2"] = R3(fit->r2);
  return j;
}

}  // namespace calib

namespace {

using calib::ojson;

// The warm waves' fit, checked: every coefficient the split needs, above 0, and R² >= kHeldFitMinR2.
Status CheckHeldFit(const ojson& fit) {
  for (const char* k : {"timer_us", "write_us", "read_us", "held_reply_us"}) {
    if (!fit.contains(k) || !fit.at(k).is_number())
      return Status::Failed(std::string("the waves' pass fit has no ") + k + " (" + fit.dump() + ")");
    if (std::string(k) != "timer_us" && !(fit.at(k).get<double>() > 0))
      return Status::Failed(std::string("the waves' pass fit gives ") + k + " <= 0 (" + fit.dump() +
                            "): measure again on a quieter machine");
  }
  if (!(fit.value("r2", 0.0) >= kHeldFitMinR2))
    return Status::Failed("the waves' pass fit explains too little (R2 " + fit.value("r2", ojson()).dump() + " < " +
                          ojson(kHeldFitMinR2).dump() + "): measure again on a quieter machine");
  return Status::Ok();
}

}  // namespace

Result<sim::CostModel> CalibrateHeldSplit(const CalibrateOptions& options, const sim::CostModel& base,
                                          ojson* measurements) {
  if (options.rounds < 1 || options.rounds > 1000) return Status::Invalid("rounds: give 1 to 1000");
  if (!base.loop.client_passes || !base.loop.held_request_waits)
    return Status::Invalid("the profile's loop must have \"client\": \"passes\" and \"held_request\": \"loop\" (the "
                           "held steps are steps of the client loop's passes)");
  // A wave of every client of the retry study's size, even with quick (a wave of --quick's 20
  // clients is too short to fit): quick only shortens the cold waves' sleep and their count.
  calib::Sizes sizes;
  if (options.quick) {
    const calib::Sizes quick = calib::Sizes::Quick();
    sizes.cold_idle_ms = quick.cold_idle_ms;
    sizes.cold_rounds = quick.cold_rounds;
  }
  RaiseFileLimit();
  const std::optional<CpuSplit> split = PlanCpuSplit();
  const LoopCpuPin pin(split);  // the runtime's loop where real runs put it
  Result<std::unique_ptr<RedisServers>> started = RedisServers::Start(calib::ServerOptions(options, split));
  if (!started.ok()) return started.status().Prefixed("cannot start redis-server");
  calib::ClientSamples cs;
  for (int r = 0; r < options.rounds; ++r) {
    if (options.progress)
      options.progress("round " + std::to_string(r + 1) + "/" + std::to_string(options.rounds) +
                       ": cold and warm waves of held GETs (" + std::to_string(sizes.clients) + " clients)");
    if (Status s = calib::ClientCold((*started)->address(0), sizes, &cs); !s.ok()) return s.Prefixed("held waves");
  }
  started->reset();
  const ojson warm = calib::PassFitJson(cs.warm_passes);
  ojson& x = (*measurements)["cross_checks"];
  x["held_split_fit"] = ojson{{"idle_ms", cs.cold_idle_ms}, {"cold", calib::PassFitJson(cs.cold_passes)}, {"warm", warm}};
  x["held_split_note"] =
      "client.held_write_us, held_read_us and held_callback_us are the warm waves' write, read and held-reply "
      "coefficients (a wave of held GETs from every client, each after 10 ms of sleep); client.hold_us, the hold's "
      "arming, is the wave's timer step (a sleep's timer, its coroutine resumed, its GET's hold armed) less the "
      "profile's timer_us, at least 0";
  return HeldSplitFromFit(base, warm);
}

Result<sim::CostModel> HeldSplitFromFit(const sim::CostModel& base, const nlohmann::ordered_json& warm_fit) {
  if (Status s = CheckHeldFit(warm_fit); !s.ok()) return s;
  sim::CostModel m = base;
  const double timer_step_us = warm_fit.at("timer_us").get<double>();
  m.client.held_write_us = sim::CostDist::Constant(warm_fit.at("write_us").get<double>());
  m.client.held_read_us = sim::CostDist::Constant(warm_fit.at("read_us").get<double>());
  m.client.held_callback_us = sim::CostDist::Constant(warm_fit.at("held_reply_us").get<double>());
  m.client.hold_us = sim::CostDist::Constant(std::max(0.0, timer_step_us - base.client.timer_us.MeanUs()));
  return m;
}

}  // namespace locklab
