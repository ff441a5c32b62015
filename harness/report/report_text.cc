#include "harness/report/report_text.h"

#include "algorithms/lock.h"
#include "algorithms/retry.h"
#include "harness/run/spec_fields.h"
#include "harness/report/text_table.h"

namespace locklab {
namespace {

constexpr size_t kMaxCell = 56;  // long command lines are cut, the JSON keeps them whole

std::string NonDefault(const Options& given, const std::vector<OptionSpec>* specs) {
  std::string s;
  for (const auto& [k, v] : given.values()) {
    bool is_default = false;
    if (specs != nullptr)
      for (const auto& o : *specs) is_default = is_default || (o.name == k && o.default_value == v);
    if (!is_default) s += (s.empty() ? "" : ",") + k + "=" + v;
  }
  return s;
}

std::string Ms(double ms) { return Fixed(ms, ms >= 100 ? 0 : 1); }

}  // namespace

std::string AlgorithmLabel(const RunSpec& spec) {
  const AlgorithmInfo* a = FindAlgorithm(spec.algorithm);
  std::string o = NonDefault(spec.algorithm_options, a ? &a->options : nullptr);
  return o.empty() ? spec.algorithm : spec.algorithm + "[" + o + "]";
}

std::string RetryLabel(const RunSpec& spec) {
  const RetryInfo* r = FindRetryPolicy(spec.retry);
  std::string o = NonDefault(spec.retry_options, r ? &r->options : nullptr);
  return o.empty() ? spec.retry : spec.retry + "[" + o + "]";
}

std::string FaultSummary(const FaultSpec& f) {
  std::vector<std::string> parts;
  if (f.gc_pause_ms > 0 && f.gc_pause_rate > 0)
    parts.push_back("gc " + std::to_string(f.gc_pause_ms) + "ms x" + DoubleText(f.gc_pause_rate) + "/s");
  if (f.net_delay_ms > 0) parts.push_back("net " + DoubleText(f.net_delay_ms) + "ms " + f.net_dist);
  if (f.net_loss > 0) parts.push_back("loss " + DoubleText(f.net_loss));
  if (f.clock_skew_ms > 0) parts.push_back("skew " + std::to_string(f.clock_skew_ms) + "ms");
  if (f.clock_drift_ppm > 0) parts.push_back("drift " + DoubleText(f.clock_drift_ppm) + "ppm");
  if (!f.plan.empty()) parts.push_back("plan " + std::to_string(f.plan.size()));
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : ", ") + p;
  return s.empty() ? "none" : s;
}

std::string RunsTable(const std::vector<RunResult>& runs) {
  // A seed column only when the runs differ in seed (a sweep): otherwise it is noise.
  bool many_seeds = false;
  for (const RunResult& r : runs) many_seeds = many_seeds || r.spec.seed != runs[0].spec.seed;
  std::vector<std::string> header = {"algorithm",   "retry",   "faults",     "viol",      "overlap ms",
                                     "max holders", "lost",    "oversold",   "stale acc", "acquired",
                                     "failed",      "unknown", "p99 acq ms", "cmds/acq"};
  if (many_seeds) header.insert(header.begin() + 1, "seed");
  // A column for every other scalar field a sweep varies (clients, hold_ms, ...).
  std::vector<const SpecField*> varying;
  for (const SpecField& f : SpecFields()) {
    const std::string key = f.key;
    if (key == "algorithm" || key == "seed" || key == "retry" || f.in_faults) continue;
    for (const RunResult& r : runs)
      if (!FieldEquals(f, r.spec, runs[0].spec)) {
        varying.push_back(&f);
        break;
      }
  }
  const size_t first_varying = many_seeds ? 3 : 2;  // after algorithm, (seed,) retry
  for (size_t k = 0; k < varying.size(); ++k) header.insert(header.begin() + first_varying + k, varying[k]->key);
  TextTable t(header);
  std::string incomplete;
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunResult& r = runs[i];
    const CheckResult& c = r.check;
    std::string name = AlgorithmLabel(r.spec);
    if (!r.completed) {
      name += " (incomplete)";
      incomplete += "run " + std::to_string(i + 1) + " (" + r.spec.algorithm + ", seed " + std::to_string(r.spec.seed) +
                    ") did not complete: " + r.error + "\n";
    }
    const double per_acq = c.liveness.acquired > 0 ? static_cast<double>(r.commands.total) / c.liveness.acquired : 0;
    std::vector<std::string> row = {name,
                                    RetryLabel(r.spec),
                                    // a checked history (locklab check) carries its own faults
                                    r.spec.backend == "history" ? "recorded" : FaultSummary(r.spec.faults),
                                    std::to_string(c.safety.violations),
                                    Ms(c.safety.overlap_ms_total),
                                    std::to_string(c.safety.max_concurrent_holders),
                                    std::to_string(c.resource.lost_updates),
                                    std::to_string(c.resource.oversold),
                                    std::to_string(c.resource.stale_writes_accepted),
                                    std::to_string(c.liveness.acquired),
                                    std::to_string(c.liveness.failed),
                                    std::to_string(c.liveness.unknown),
                                    Ms(c.latency.acquire.p99),
                                    Fixed(per_acq, 2)};
    if (many_seeds) row.insert(row.begin() + 1, std::to_string(r.spec.seed));
    for (size_t k = 0; k < varying.size(); ++k)
      row.insert(row.begin() + first_varying + k, FieldText(*varying[k], r.spec));
    t.AddRow(row);
  }
  return t.ToString() + incomplete;
}

std::string EventText(const Event& e) {
  std::string s = EvName(e.type);
  const std::string v = std::to_string(e.value);
  switch (e.type) {
    case Ev::kAcquireStart:
      s += " #" + v;
      break;
    case Ev::kAcquireOk:
    case Ev::kAcquireFail:
    case Ev::kAcquireUnknown:
      s += " (" + v + (e.value == 1 ? " attempt)" : " attempts)");
      break;
    case Ev::kEnter:
      if (e.value >= 0) s += " fence=" + v;
      break;
    case Ev::kRead:
    case Ev::kWriteOk:
      s += " " + v;
      break;
    case Ev::kWriteRejected:
    case Ev::kReadRejected:
      s += " fence=" + v;
      break;
    case Ev::kOrder:
      s += " (stock " + v + ")";
      break;
    case Ev::kCommand:
      s = "[n" + v + "] " + (e.detail.empty() ? "command" : e.detail);
      break;
    case Ev::kPauseStart:
      s += ' ';
      s += Fixed(static_cast<double>(e.value) / 1000.0, 0);
      s += "ms";
      break;
    default:
      break;
  }
  // A fault's detail already says what happened ("pause 1500 ms", "resume", "crash").
  const bool fault = e.type == Ev::kPauseStart || e.type == Ev::kPauseEnd || e.type == Ev::kCrash;
  if (fault && !e.detail.empty()) s = e.detail;
  else if (e.type != Ev::kCommand && !e.detail.empty()) s += " " + e.detail;
  if (s.size() > kMaxCell) s = s.substr(0, kMaxCell - 3) + "...";
  return s;
}

std::string TimelineTable(const Violation& v) {
  std::vector<std::string> header = {"", "t ms"};
  for (int c : v.clients) header.push_back("client " + std::to_string(c));
  bool other = false;
  for (const Event& e : v.timeline) {
    bool involved = false;
    for (int c : v.clients) involved = involved || c == e.client;
    other = other || !involved;
  }
  if (other) header.push_back("other");
  TextTable t(header);
  for (const Event& e : v.timeline) {
    std::vector<std::string> row(header.size());
    row[0] = (e.t_us >= v.start_us && e.t_us <= v.end_us) ? "!!" : "";
    row[1] = Fixed(static_cast<double>(e.t_us) / 1000.0, 3);
    size_t col = header.size() - 1;  // "other" unless the client has a column
    for (size_t i = 0; i < v.clients.size(); ++i)
      if (v.clients[i] == e.client) col = 2 + i;
    // In the "other" column, a client's event says whose it is.
    std::string cell;
    if (col == header.size() - 1 && other && e.client >= 0)
      cell.append(1, 'c').append(std::to_string(e.client)).append(1, ' ');
    row[col] = cell.append(EventText(e));
    t.AddRow(row);
  }
  return t.ToString();
}

}  // namespace locklab
