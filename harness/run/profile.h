// A cost profile on disk: the sim::CostModel that `locklab calibrate` measured, as JSON, with
// where and when it was measured. The simulator loads one with LoadProfile.
//
// Format (schema "locklab.profile/1"), keys in this order when written:
//   {"schema": "locklab.profile/1",
//    "name": "calibrated:HOST:DATE",                      the model's name (CostModel::name)
//    "context": {"host", "cpu_model", "cpu_count", "redis_server_version", "date_utc",
//                "locklab_version", "locklab_sha", "load_average_1m", "rounds", "quick"},
//    "node": {"command_us": DIST, "wake_us": DIST, "script_us": DIST, "script_call_us": DIST,
//             "publish_per_receiver_us": DIST, "blpop_serve_us": DIST},
//    "client": {"placement": "one-process" | "process-per-client",
//               "send_us": DIST, "reply_us": DIST, "timer_us": DIST, "hold_us": DIST,
//               "message_us": DIST,                      optional: a pub/sub message (else reply_us)
//               "wake_cpu_us": DIST,                     optional: a wake-up's own CPU
//               "held_callback_us": DIST,                optional, client passes only: a held
//                                                         reply's callback (else reply_us)
//               "held_write_us": DIST,                   optional, client passes only: a held
//                                                         request's write when its timer fires
//                                                         (else send_us; needs held_request loop)
//               "held_read_us": DIST,                    optional, client passes only: reading a
//                                                         reply or message to hold, its hold
//                                                         armed (else hold_us)
//               "cold_write_us": DIST, "cold_read_us": DIST, "cold_after_ms": 1000,  optional,
//                                                         together, client passes only: a write
//                                                         or read that long after the client's
//                                                         last read costs that much more
//               "wake_after_idle": [{"idle_us": 20, "late_us": DIST}, ...]},  optional: how
//                                                         late a timer fires after the process
//                                                         idled so long (idle_us rising, > 0)
//    "loop": {"model": "passes", "wire_us": DIST,         optional (absent or "queue": the queue
//             "reply_write_us": DIST,                       model): how messages travel and when a
//             "held_request": "loop",                       process handles them; held_request
//             "client": "passes",                           optional ("path", the default, or "loop":
//             "client_wake": "socket"},                   how a held request leaves); client optional
//                                                         ("events", the default, or "passes": how a
//                                                         client process takes its events);
//                                                         client_wake optional ("timer", the default,
//                                                         or "socket", with client "passes": what an
//                                                         idle client's wake-up costs a reply;
//                                                         sim/cost_model.h, LoopCosts)
//    "one_way_us": DIST,
//    "connections": 1000,                                 optional: the connections the figures
//                                                         were measured with
//    "fewer_connections": {"connections": 20, "node": ..., "client": ..., "loop": ...,
//                          "one_way_us": ..., "replica_one_way_us": ...},  optional: the same
//                                                         figures measured at fewer connections
//                                                         (needs "connections", and below it)
//    "replica_one_way_us": 17.2,                          optional: master to replica one way, µs,
//                                                         a constant from 1 to 1e6 (absent: the
//                                                         simulator's 1 ms)
//    "machine": {"stalls_per_s": 6.1,                     optional: the machine's stalls, per CPU
//                "stall_us": DIST},                         (a rate from 0 to 1e5 a second, and their
//                                                         lengths; absent: none; sim/cost_model.h,
//                                                         StallCosts); fewer_connections shares it
//    "measurements": {...}}                               how each figure was measured: sample
//                                                         counts, trimming, cross-checks (free
//                                                         form, informative, not read back)
// DIST = {"mean_us": 12.3, "points": [[0, 10.1], [0.05, 10.9], ..., [1, 31.0]]}: points of the
// inverse CDF (p, µs), p rising strictly from exactly 0 to exactly 1, µs non-decreasing, finite,
// >= 0. mean_us is informative: it is recomputed from the points on load.
//
// Loading is strict: an unknown key, a missing figure, a non-finite or negative number, or
// points that do not rise from 0 to 1 is Status::Invalid naming the key
// ("node.script_us.points[2]: p must rise (0.3 after 0.4)"). context and measurements may be
// absent; every other key is required.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "algorithms/status.h"
#include "sim/cost_model.h"

namespace locklab {

inline constexpr char kProfileSchema[] = "locklab.profile/1";

// Where and how a profile was measured (the "context" block, and "measurements").
struct ProfileContext {
  std::string host;
  std::string cpu_model;
  int cpu_count = 0;
  std::string redis_server_version;  // "7.0.15"
  std::string date_utc;              // "2026-11-23T18:40:00Z"
  std::string locklab_version;       // ToolVersion()
  std::string locklab_sha;           // GitSha()
  double load_average_1m = 0;        // /proc/loadavg when the measuring began (a busy machine
                                     // measures slower figures)
  int rounds = 0;
  bool quick = false;
  std::string cpu_placement;         // where the measured processes ran (harness/real/cpu_placement.h);
                                     // "" in profiles made before it was recorded
  nlohmann::ordered_json measurements = nlohmann::ordered_json::object();
};

// This machine's host name, CPU model and count, the date, locklab's version and sha and the
// 1-minute load average; redis_server_version, rounds, quick and measurements are left empty.
ProfileContext LocalProfileContext();

// The profile as JSON (the format above; numbers rounded to 0.001 µs).
nlohmann::ordered_json ProfileJson(const sim::CostModel& model, const ProfileContext& context);

// Writes ProfileJson to `path` (parent directories created) through a temporary file in the
// same directory and rename(), so a reader never sees half a profile. Failed on I/O errors.
Status WriteProfile(const std::string& path, const sim::CostModel& model, const ProfileContext& context);

// Reads a profile (and its context, when `context` is given). Invalid, naming the path, for a
// file that cannot be read (ReadFileText's reasons: no such file, a directory, ...) and, naming
// the key too, for one that is not a valid profile.
Result<sim::CostModel> LoadProfile(const std::string& path, ProfileContext* context = nullptr);
// What a run's `profile` field (RunSpec::profile) names: "default" (CommittedProfilePath()), "legacy"
// (sim::LegacyCostModel(), built in) or a profile file's path. Each file is read once per process
// (a cache; safe from several threads). Invalid "--profile FILE: KEY: what is wrong" when the
// file is missing, unreadable or not a valid profile.
inline constexpr char kDefaultProfileChoice[] = "default";
inline constexpr char kLegacyProfileChoice[] = "legacy";
// `clients`: the run's client count. A profile with a fewer_connections block gives the figures
// measured nearest it on a log scale (the block's, named "NAME@N", when clients^2 is below the
// product of the two connection counts); 0 gives the profile's main figures.
std::string CommittedProfilePath();  // the "default" choice: <source dir>/harness/profiles/default.json
Result<sim::CostModel> ChooseProfile(const std::string& profile, int clients = 0);
// The chosen figures' name only (ResolveSpec's check), without copying the model.
Result<std::string> ChosenProfileName(const std::string& profile, int clients = 0);
// The name of a profile's fewer_connections set: "NAME@N".
std::string FewerConnectionsName(const std::string& name, int connections);
// The figures of `model` for a run of `clients` clients (the rule above); `model` itself when it
// has no fewer_connections block or clients is 0.
const sim::CostModel& ForClients(const sim::CostModel& model, int clients);
// The same from parsed JSON; `context_out` (may be null) gets the context block.
Result<sim::CostModel> ProfileFromJson(const nlohmann::json& j, ProfileContext* context_out = nullptr);

// A distribution from samples (µs): the largest floor(n / 1000) samples are trimmed (the
// outliers beyond p99.9: none below 1,000 samples), then 21 quantile points (11 for fewer than
// 100 samples) at evenly spaced p from 0 to 1, type-7 interpolation. Negative samples are
// clamped to 0 (`clamped` counts them). Empty samples: an empty distribution.
struct SampleSummary {
  sim::CostDist dist;
  size_t samples = 0;
  size_t trimmed = 0;
  size_t clamped = 0;
};
SampleSummary DistFromSamples(std::vector<double> samples_us);

}  // namespace locklab
