#include "harness/report/report.h"
#include "harness/run/host_info.h"
#include "harness/run/build_info.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "algorithms/lock.h"
#include "algorithms/retry.h"
#include "harness/run/config.h"
#include "sim/history.h"
#include "harness/run/spec_fields.h"
#include "harness/report/timeline_text.h"

namespace locklab {
namespace {

using nlohmann::json;

double R3(double x) { return Round3(x); }
double UsToMs(int64_t us) { return R3(static_cast<double>(us) / 1000.0); }

json LatencyJson(const LatencySummary& s, bool with_cdf = false) {
  json j = {{"count", s.count}, {"p50", R3(s.p50)}, {"p90", R3(s.p90)},
            {"p99", R3(s.p99)}, {"max", R3(s.max)}, {"mean", R3(s.mean)}};
  if (with_cdf) {  // [[percent, ms], ...] for plots
    json cdf = json::array();
    for (size_t i = 0; i < s.cdf.size(); ++i) cdf.push_back({kCdfPermille[i] / 10.0, R3(s.cdf[i])});
    j["cdf"] = cdf;
  }
  return j;
}

// [[a, b], ...]: pairs of clients that held at the same instant.
json PairsJson(const std::vector<std::pair<int, int>>& pairs) {
  json j = json::array();
  for (const auto& [a, b] : pairs) j.push_back({a, b});
  return j;
}

json OptionsJson(const Options& o) {
  json j = json::object();
  for (const auto& [k, v] : o.values()) j[k] = v;
  return j;
}

// RunText's stand-in for example k's timeline (WithTimelines puts the text in its place), and
// how dump() prints it with its key. In dump()'s text every '"' inside a string is printed as
// \", so `"timeline": "` (the key, its colon and the quote that opens the stand-in) occurs only
// where the layout put that key.
std::string TimelineMark(size_t k) { return "\x01timeline " + std::to_string(k) + "\x01"; }
std::string TimelineNeedle(size_t k) { return "\"timeline\": " + json(TimelineMark(k)).dump(); }

// `mark`: the example's number, for a stand-in timeline; none: the timeline's JSON.
json ExampleJson(const Violation& v, const std::string& replay, std::optional<size_t> mark) {
  json tl = mark ? json(TimelineMark(*mark)) : TimelineJson(v.timeline);
  return {{"start_ms", UsToMs(v.start_us)},
          {"end_ms", UsToMs(v.end_us)},
          {"clients", v.clients},
          {"timeline", std::move(tl)},
          {"replay", replay}};
}

// The spec a field's value is compared with in a replay command: defaults, resolved for the
// same algorithm, retry policy and backend (so default options and nodes are left out).
RunSpec ResolvedDefaults(const RunSpec& spec) {
  RunSpec d;
  d.backend = spec.backend;
  d.algorithm = spec.algorithm;
  d.retry = spec.retry;
  // The server list only decides whether a sim spec resolves (--redis is redis-only); for the
  // redis backend it is left out, so that no address is checked or looked up here.
  if (spec.backend != "redis") d.redis = spec.redis;
  RunSpec resolved = d;
  if (ResolveSpec(&resolved).ok()) return resolved;
  return d;
}

// ResolvedDefaults, kept: every run of a sweep asks again for the same few (backend, algorithm,
// retry policy, servers). At most kMaxKept are kept (then they are resolved each time); the
// map's nodes never move, so the references stay valid. Safe from several threads.
const RunSpec& ReplayDefaults(const RunSpec& spec, RunSpec* scratch) {
  constexpr size_t kMaxKept = 1024;
  static std::mutex mu;
  static std::map<std::string, RunSpec> kept;
  std::string key = spec.backend + '\n' + spec.algorithm + '\n' + spec.retry;
  if (spec.backend != "redis")
    for (const std::string& r : spec.redis) key += '\n' + r;
  {
    std::lock_guard lock(mu);
    auto it = kept.find(key);
    if (it != kept.end()) return it->second;
  }
  *scratch = ResolvedDefaults(spec);
  std::lock_guard lock(mu);
  if (kept.size() >= kMaxKept) return *scratch;
  return kept.emplace(std::move(key), *scratch).first->second;
}

void AddOptionFlags(const char* flag, const Options& given, const Options& defaults, std::vector<std::string>* out) {
  for (const auto& [k, v] : given.values()) {
    auto it = defaults.values().find(k);
    if (it != defaults.values().end() && it->second == v) continue;
    out->push_back(flag);
    out->push_back(ShellQuote(k + "=" + v));
  }
}

std::string Join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

}  // namespace

std::string ShellQuote(const std::string& s) {
  bool plain = !s.empty();
  for (char c : s)
    plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || std::strchr("_.,:=/@%+-", c) != nullptr);
  if (plain) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::vector<std::string> ReplayArgs(const RunSpec& spec) {
  RunSpec scratch;
  const RunSpec& d = ReplayDefaults(spec, &scratch);
  std::vector<std::string> out;
  for (const SpecField& f : SpecFields()) {
    const std::string key = f.key;
    const bool always = key == "backend" || key == "algorithm" || key == "seed";
    // d.retry is spec.retry (to resolve its options), so the policy is compared with the default.
    if (key == "retry" ? spec.retry == RunSpec().retry : !always && FieldEquals(f, spec, d)) continue;
    if (key == "replica") {  // a flag without a value
      if (spec.replica) out.push_back("--replica");
      continue;
    }
    out.push_back(f.flag());
    out.push_back(ShellQuote(FieldText(f, spec)));
    if (key == "algorithm") AddOptionFlags("--opt", spec.algorithm_options, d.algorithm_options, &out);
  }
  AddOptionFlags("--retry-opt", spec.retry_options, d.retry_options, &out);
  if (!spec.redis.empty()) {
    out.push_back("--redis");
    out.push_back(ShellQuote(Join(spec.redis, ",")));
  }
  for (const FaultAction& a : spec.faults.plan) {
    out.push_back("--fault");
    out.push_back(ShellQuote(FaultFlag(a)));
  }
  return out;
}

std::string ReplayCommand(const RunSpec& spec) { return "locklab run " + Join(ReplayArgs(spec), " "); }

namespace {

// RunJson, or with each example's timeline a stand-in (timeline_marks: for RunText).
json RunJsonMarked(const RunResult& r, bool timeline_marks) {
  const CheckResult& c = r.check;
  const std::string replay = r.replay.empty() ? ReplayCommand(r.spec) : r.replay;
  json examples = json::array();
  for (size_t k = 0; k < c.safety.examples.size(); ++k)
    examples.push_back(ExampleJson(c.safety.examples[k], replay, timeline_marks ? std::optional<size_t>(k) : std::nullopt));
  const ResourceResult& res = c.resource;
  json safety = {{"violations", c.safety.violations},
                 {"overlap_ms_total", R3(c.safety.overlap_ms_total)},
                 {"max_concurrent_holders", c.safety.max_concurrent_holders},
                 {"overlapping_pairs", PairsJson(c.safety.overlapping_pairs)},
                 {"resource",
                  {{"writes_accepted", res.writes_accepted},
                   {"lost_updates", res.lost_updates},
                   {"orders", res.orders},
                   {"oversold", res.oversold},
                   {"stale_writes_accepted", res.stale_writes_accepted},
                   {"stale_writes_rejected", res.stale_writes_rejected},
                   {"stale_reads_rejected", res.stale_reads_rejected},
                   {"counter_final", r.counter_final},
                   {"stock_final", r.stock_final}}},
                 {"examples", std::move(examples)}};
  // Only for runs with readers (rwlock), so that earlier reports keep their bytes.
  if (res.read_holds > 0) {
    safety["resource"]["read_holds"] = res.read_holds;
    safety["resource"]["stale_reads"] = res.stale_reads;
  }
  const LivenessResult& l = c.liveness;
  json liveness = {{"acquired", l.acquired},
                   {"failed", l.failed},
                   {"unknown", l.unknown},
                   {"releases_failed", l.releases_failed},
                   {"releases_unknown", l.releases_unknown},
                   {"stuck_ms_max", R3(l.stuck_ms_max)}};
  json latency = {{"acquire", LatencyJson(c.latency.acquire)},
                  {"hold", LatencyJson(c.latency.hold)},
                  {"release", LatencyJson(c.latency.release)},
                  {"request", LatencyJson(c.latency.request, /*with_cdf=*/true)}};
  json fairness = {{"clients", c.fairness.clients},
                   {"jain_index", R3(c.fairness.jain_index)},
                   {"max_wait_ms", R3(c.fairness.max_wait_ms)}};
  json by_name = json::object();
  for (const auto& [name, n] : r.commands.by_name) by_name[name] = n;
  json redis = {{"commands", r.commands.total},
                {"commands_per_acquire", R3(CommandsPerAcquire(r))},
                {"by_name", std::move(by_name)}};
  return {{"algorithm", r.spec.algorithm},
          {"algorithm_options", OptionsJson(r.spec.algorithm_options)},
          {"retry", r.spec.retry},
          {"retry_options", OptionsJson(r.spec.retry_options)},
          {"workload", r.spec.workload},
          {"faults", ToJson(r.spec.faults)},
          {"config", ToJson(r.spec)},
          {"completed", r.completed},
          {"error", r.error},
          {"safety", std::move(safety)},
          {"liveness", std::move(liveness)},
          {"latency_ms", std::move(latency)},
          {"fairness", std::move(fairness)},
          {"redis", std::move(redis)},
          {"throughput_per_s", R3(ThroughputPerS(r))},
          {"duration_ms", UsToMs(r.duration_us)},
          {"history", {{"events", r.history_events}, {"commands_dropped", r.commands_dropped}}},
          {"notes", r.notes},
          {"replay", replay}};
}

}  // namespace

json RunJson(const RunResult& r) { return RunJsonMarked(r, /*timeline_marks=*/false); }

json ReportConfig(std::span<const RunResult> runs) {
  std::vector<RunSpec> specs;
  for (const RunResult& r : runs) specs.push_back(r.spec);
  return ReportConfigOfSpecs(specs);
}

json ReportConfigOfSpecs(const std::vector<RunSpec>& runs) {
  if (runs.empty()) return json::object();
  const json first = ToJson(runs[0]);
  if (runs.size() == 1) return first;
  auto strip = [](json j) {
    j.erase("algorithm");
    j.erase("algorithm_options");
    j.erase("seed");
    return j;
  };
  const json base = strip(first);
  std::vector<std::string> algs;
  std::vector<uint64_t> seeds;
  std::vector<std::pair<std::string, uint64_t>> order;
  for (const RunSpec& r : runs) {
    if (strip(ToJson(r)) != base) return first;  // not a sweep: the first spec stands for all
    std::string a = AlgorithmChoice{r.algorithm, r.algorithm_options}.ToString();
    if (std::find(algs.begin(), algs.end(), a) == algs.end()) algs.push_back(a);
    if (std::find(seeds.begin(), seeds.end(), r.seed) == seeds.end()) seeds.push_back(r.seed);
    order.emplace_back(a, r.seed);
  }
  // Only a full product in ExpandSweep's order reads back as the same runs.
  if (algs.size() * seeds.size() != runs.size()) return first;
  for (size_t i = 0; i < order.size(); ++i)
    if (order[i].first != algs[i / seeds.size()] || order[i].second != seeds[i % seeds.size()]) return first;
  json c = base;
  if (algs.size() > 1) {
    c["algorithms"] = algs;
  } else {
    c["algorithm"] = first["algorithm"];
    c["algorithm_options"] = first["algorithm_options"];
  }
  if (seeds.size() > 1)
    c["seeds"] = seeds;
  else
    c["seed"] = first["seed"];
  return c;
}

ReportContext MakeReportContext(const std::vector<RunResult>& runs) {
  return runs.empty() ? MakeReportContext(RunSpec()) : MakeReportContext(runs[0].spec);
}

ReportContext MakeReportContext(const RunSpec& first) {
  ReportContext c;
  c.backend = first.backend;
  c.seed = first.seed;
  if (c.backend == "redis") {
    c.host = HostName();
    c.started_at = UtcNowText();
  }
  return c;
}

json BuildReportHead(std::span<const RunResult> runs, const ReportContext& ctx) {
  json context = {
      {"tool_version", ToolVersion()}, {"git_sha", GitSha()}, {"backend", ctx.backend}, {"seed", ctx.seed}};
  // Real-time facts only where the run was real: a sim report must not change between runs.
  if (!ctx.host.empty()) context["host"] = ctx.host;
  if (!ctx.started_at.empty()) context["started_at"] = ctx.started_at;
  return {{"schema", kReportSchema}, {"context", context}, {"config", ReportConfig(runs)}, {"runs", json::array()}};
}

json BuildReport(std::span<const RunResult> runs, const ReportContext& ctx) {
  json report = BuildReportHead(runs, ctx);
  json& list = report["runs"];
  for (const RunResult& r : runs) list.push_back(RunJson(r));
  return report;
}

double Round3(double x) {
  // 3 decimals: enough for µs in ms figures, and it keeps the printed digits stable.
  double r = std::round(x * 1000.0) / 1000.0;
  return r == 0 ? 0.0 : r;  // no "-0.0"
}

double CommandsPerAcquire(const RunResult& r) {
  // Per acquisition that succeeded; 0 when none did (the count of commands still tells).
  const int64_t acquired = r.check.liveness.acquired;
  return acquired > 0 ? static_cast<double>(r.commands.total) / static_cast<double>(acquired) : 0;
}

double ThroughputPerS(const RunResult& r) {
  const double seconds = static_cast<double>(r.duration_us) / 1e6;
  return seconds > 0 ? static_cast<double>(r.check.liveness.acquired) / seconds : 0;
}

namespace {

// Text that nlohmann's dump(2) printed at depth 0, as it prints it `spaces` deeper: its strings
// hold no raw newline (they are escaped), so every line break is one of the layout's.
std::string Indented(const std::string& text, size_t spaces) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  size_t from = 0;
  for (size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', from)) {
    out.append(text, from, nl + 1 - from);
    out.append(spaces, ' ');
    from = nl + 1;
  }
  out.append(text, from);
  return out;
}

// `text` with each example's stand-in timeline (RunJsonMarked) replaced by the timeline's text,
// laid out for the column its key starts in.
std::string WithTimelines(const std::string& text, const std::vector<Violation>& examples) {
  std::string out;
  out.reserve(text.size() + examples.size() * 4096);
  size_t from = 0;
  for (size_t k = 0; k < examples.size(); ++k) {
    const std::string needle = TimelineNeedle(k);
    const size_t at = text.find(needle, from);
    if (at == std::string::npos) throw std::logic_error("RunText: timeline stand-in " + std::to_string(k) + " not printed");
    const size_t line = text.rfind('\n', at);
    const size_t indent = at - (line == std::string::npos ? 0 : line + 1);
    const size_t value = at + std::string_view("\"timeline\": ").size();
    out.append(text, from, value - from);
    AppendTimelineText(examples[k].timeline, indent, &out);
    from = at + needle.size();
  }
  out.append(text, from);
  return out;
}

}  // namespace

std::string RunText(const RunResult& run) {
  return WithTimelines(Indented(RunJsonMarked(run, /*timeline_marks=*/true).dump(2), 4), run.check.safety.examples);
}

std::string ReportTextWithRuns(const json& report, const std::vector<std::string>& run_texts) {
  // dump(2) of an object: "{\n", then per key two spaces, the quoted key, ": ", the value one
  // level deeper, joined by ",\n", then "\n}". An empty array is "[]".
  std::string out = "{\n";
  bool first = true;
  for (const auto& [key, value] : report.items()) {
    if (!first) out += ",\n";
    first = false;
    out += "  " + json(key).dump() + ": ";
    if (key != "runs") {
      out += Indented(value.dump(2), 2);
    } else if (run_texts.empty()) {
      out += "[]";
    } else {
      out += "[\n";
      for (size_t i = 0; i < run_texts.size(); ++i) {
        out += i > 0 ? ",\n    " : "    ";
        out += run_texts[i];
      }
      out += "\n  ]";
    }
  }
  out += "\n}\n";
  return out;
}

std::string ReportTextWithRuns(const json& report, std::span<const RunResult> runs) {
  std::vector<std::string> run_texts;
  run_texts.reserve(runs.size());
  for (const RunResult& run : runs) run_texts.push_back(RunText(run));
  return ReportTextWithRuns(report, run_texts);
}

std::string ReportText(const json& report) { return report.dump(2) + "\n"; }


}  // namespace locklab
