// `locklab bench-peers`: see bench_peers.h.
#include "harness/bench/bench_peers.h"
#include "harness/run/build_info.h"
#include "harness/real/child_process.h"
#include "harness/bench/idle_poll.h"
#include "harness/bench/redis_benchmark.h"

#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "algorithms/lock.h"
#include "algorithms/options.h"
#include "harness/real/real_clock.h"
#include "harness/real/redis_server.h"
#include "harness/report/report.h"
#include "harness/run/run_spec.h"
#include "harness/report/text_table.h"


namespace locklab {

// ---------------------------------------------------------------------------------------------
// Event logs.

namespace {

constexpr size_t kMaxLogLines = 20'000'000;  // a limit on every loop

bool LogFail(std::string* error, size_t line, const std::string& msg) {
  *error = "event log line " + std::to_string(line) + ": " + msg;
  return false;
}

}  // namespace

bool ParsePeerEventLog(const std::string& text, PeerLog* out, std::string* error) {
  size_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    if (++line_no > kMaxLogLines) return LogFail(error, line_no, "too many lines");
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (line.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) return LogFail(error, line_no, "not a JSON object");
    if (!j.contains("t_us") || !j["t_us"].is_number_integer()) return LogFail(error, line_no, "no integer t_us");
    if (!j.contains("client") || !j["client"].is_number_integer()) return LogFail(error, line_no, "no integer client");
    if (!j.contains("ev") || !j["ev"].is_string()) return LogFail(error, line_no, "no event name (ev)");
    const int64_t t = j["t_us"].get<int64_t>();
    const int64_t client64 = j["client"].get<int64_t>();
    if (client64 < 0 || client64 > 1'000'000) return LogFail(error, line_no, "client out of range");
    const int client = static_cast<int>(client64);
    const std::string ev = j["ev"].get<std::string>();
    std::string detail;
    if (j.contains("error") && j["error"].is_string()) detail = j["error"].get<std::string>();
    auto add = [&](Ev type, int64_t value = 0) { out->events.push_back(Event{t, client, type, value, detail}); };
    auto number = [&](const char* field, int64_t* v) {
      if (!j.contains(field)) return false;
      if (!j[field].is_number_integer()) return false;
      *v = j[field].get<int64_t>();
      return true;
    };
    if (ev == "acquire_start") {
      if (j.contains("key")) {
        if (!j["key"].is_string()) return LogFail(error, line_no, "key is not a string");
        out->key_of_client[client] = j["key"].get<std::string>();
      }
      add(Ev::kAcquireStart);
    } else if (ev == "acquire_ok") {
      add(Ev::kAcquireOk);
    } else if (ev == "acquire_fail") {
      add(Ev::kAcquireFail);
    } else if (ev == "enter") {
      add(Ev::kEnter, -1);
      int64_t v = 0;
      if (j.contains("read") && !number("read", &v)) return LogFail(error, line_no, "read is not an integer");
      if (j.contains("read")) add(Ev::kRead, v);
    } else if (ev == "exit") {
      int64_t v = 0;
      if (j.contains("wrote") && !number("wrote", &v)) return LogFail(error, line_no, "wrote is not an integer");
      if (j.contains("wrote")) add(Ev::kWriteOk, v);
      add(Ev::kExit);
      add(Ev::kReleaseStart);
    } else if (ev == "release_ok") {
      add(Ev::kReleaseOk);
    } else if (ev == "release_fail") {
      add(Ev::kReleaseFail);
    } else if (ev == "crash") {
      add(Ev::kCrash);
    } else if (ev == "pause_start") {
      int64_t v = 0;
      number("duration_us", &v);
      add(Ev::kPauseStart, v);
    } else if (ev == "pause_end") {
      add(Ev::kPauseEnd);
    } else {
      return LogFail(error, line_no, "unknown event '" + ev + "'");
    }
  }
  return true;
}

int64_t ShiftToEarliest(std::vector<Event>* events) {
  std::stable_sort(events->begin(), events->end(), [](const Event& a, const Event& b) { return a.t_us < b.t_us; });
  if (events->empty()) return 0;
  const int64_t t0 = events->front().t_us;
  for (Event& e : *events) e.t_us -= t0;
  return t0;
}

// ---------------------------------------------------------------------------------------------
// Judging a row.

namespace {

void AddTo(History* h, const Event& e) { h->Add(e.t_us, e.client, e.type, e.value, e.detail); }

}  // namespace

RowCheck JudgeEvents(const std::vector<Event>& events, const JudgeInput& in) {
  RowCheck r;
  const int64_t end_us = events.empty() ? 0 : events.back().t_us;
  History all(std::numeric_limits<size_t>::max());
  for (const Event& e : events) AddTo(&all, e);
  CheckInput ci;
  ci.end_us = end_us;
  ci.counter_initial = in.counter_known ? in.counter_initial : 0;
  ci.counter_final = in.counter_known ? in.counter_final : 0;
  r.check = CheckAll(all, ci);

  // Mutual exclusion among the clients of each key.
  std::map<std::string, std::vector<const Event*>> by_key;
  for (const Event& e : events) {
    if (e.client < 0) continue;
    auto it = in.key_of_client.find(e.client);
    by_key[it == in.key_of_client.end() ? std::string() : it->second].push_back(&e);
  }
  if (by_key.size() <= 1) {
    r.safety = r.check.safety;
  } else {
    std::set<std::pair<int, int>> pairs;
    for (const auto& [key, evs] : by_key) {
      History h(std::numeric_limits<size_t>::max());
      for (const Event* e : evs) AddTo(&h, *e);
      SafetyResult s = CheckMutualExclusion(h, ci);
      r.safety.violations += s.violations;
      r.safety.overlap_ms_total += s.overlap_ms_total;
      r.safety.max_concurrent_holders = std::max(r.safety.max_concurrent_holders, s.max_concurrent_holders);
      pairs.insert(s.overlapping_pairs.begin(), s.overlapping_pairs.end());
      for (Violation& v : s.examples)
        if (r.safety.examples.size() < 3) r.safety.examples.push_back(std::move(v));
    }
    r.safety.overlapping_pairs.assign(pairs.begin(), pairs.end());
  }
  r.counter_judged = in.counter_known;
  r.lost_updates = in.counter_known ? r.check.resource.lost_updates : 0;
  r.acquired = r.check.liveness.acquired;
  r.failed = r.check.liveness.failed + r.check.liveness.unknown;
  r.releases_failed = r.check.liveness.releases_failed + r.check.liveness.releases_unknown;
  r.acquire = r.check.latency.acquire;

  // Wait: every request, from acquire_start to acquire_ok or to giving up.
  std::map<int, int64_t> started;
  std::vector<double> waits;
  int64_t first_start = -1;
  for (const Event& e : events) {
    if (e.type == Ev::kAcquireStart) {
      started[e.client] = e.t_us;
      if (first_start < 0) first_start = e.t_us;
    } else if (e.type == Ev::kAcquireOk || e.type == Ev::kAcquireFail || e.type == Ev::kAcquireUnknown) {
      auto it = started.find(e.client);
      if (it == started.end()) continue;
      waits.push_back(static_cast<double>(e.t_us - it->second) / 1000.0);
      started.erase(it);
    }
  }
  r.wait = Summarize(std::move(waits));
  r.span_s = first_start < 0 ? 0 : static_cast<double>(end_us - first_start) / 1e6;
  r.rate_per_s = r.span_s > 0 ? static_cast<double>(r.acquired) / r.span_s : 0;
  return r;
}

// ---------------------------------------------------------------------------------------------
// Command statistics and redis-benchmark.


CommandDelta CommandStatsDelta(const std::vector<std::map<std::string, int64_t>>& before,
                               const std::vector<std::map<std::string, int64_t>>& after,
                               const std::vector<std::string>& exclude) {
  CommandDelta d;
  const std::set<std::string> skip(exclude.begin(), exclude.end());
  static const std::map<std::string, int64_t> kEmpty;
  for (size_t i = 0; i < after.size(); ++i) {
    const auto& b = i < before.size() ? before[i] : kEmpty;
    for (const auto& [name, calls] : after[i]) {
      if (skip.count(name) > 0) continue;
      auto it = b.find(name);
      int64_t n = calls - (it == b.end() ? 0 : it->second);
      if (n < 0) {  // the server's counters started again (restart, CONFIG RESETSTAT)
        d.counter_went_back = true;
        n = calls;
      }
      if (n == 0) continue;
      d.by_name[name] += n;
      d.total += n;
    }
  }
  return d;
}


// ---------------------------------------------------------------------------------------------
// Driver processes (ChildProcess, harness/real/child_process.h).

namespace {

int64_t NowUs() { return MonotonicNowUs(); }

void SleepUntilUs(int64_t t_us) {
  for (int i = 0; i < 100'000; ++i) {
    const int64_t left = t_us - NowUs();
    if (left <= 0) return;
    std::this_thread::sleep_for(std::chrono::microseconds(std::min<int64_t>(left, 50'000)));
  }
}

// Sorts stdout into the summary line and other JSON lines.
void ReadStdout(const std::string& out, DriverResult* r) {
  std::istringstream in(out);
  std::string line;
  for (int i = 0; i < 100'000 && std::getline(in, line); ++i) {
    if (line.empty() || line[0] != '{') continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object()) continue;
    if (j.contains("summary")) r->summary = j;
    else r->other_lines.push_back(j);
  }
}

// After the child ended: stdout, the event log, the verdict.
void CompleteDriver(const DriverCall& call, bool in_time, int status, const std::string& out,
                    const std::string& stderr_path, DriverResult* r) {
  r->exit_status = status;
  ReadStdout(out, r);
  bool have_log = false;
  const std::string log = ReadWholeFile(call.events_path, &have_log);
  std::string parse_error;
  const bool parsed = have_log && ParsePeerEventLog(log, &r->log, &parse_error);
  const std::string err_tail = TailOnOneLine(ReadWholeFile(stderr_path), 4);
  if (!in_time) r->error = "did not finish within " + std::to_string(call.timeout_ms) + " ms (killed)";
  else if (status == 127) r->error = "could not start " + call.argv[0];
  else if (status != 0) r->error = "exited with status " + std::to_string(status);
  else if (r->summary.is_null()) r->error = "printed no summary line";
  else if (!have_log) r->error = "wrote no event log " + call.events_path;
  else if (!parsed) r->error = parse_error;
  if (r->error.empty()) {
    r->ok = true;
  } else {
    if (!r->summary.is_null() && r->summary.contains("crashed") && r->summary["crashed"].is_string())
      r->error += " (" + r->summary["crashed"].get<std::string>() + ")";
    if (!err_tail.empty()) r->error += "; stderr: " + err_tail;
    if (have_log && !parsed && r->log.events.empty()) r->log = PeerLog{};
  }
}

}  // namespace

DriverResult RunDriver(const DriverCall& call) {
  DriverResult r;
  std::error_code ec;
  std::filesystem::remove(call.events_path, ec);
  const std::string err_path = call.events_path + ".stderr";
  ChildProcess child;
  std::string error;
  if (Status st = child.Start(call.argv, call.extra_env, err_path); !st.ok()) {
    r.error = "cannot start " + (call.argv.empty() ? std::string("?") : call.argv[0]) + ": " + st.message();
    return r;
  }
  std::string out;
  int status = -1;
  const bool in_time = child.Finish(NowUs() + call.timeout_ms * 1000, &out, &status);
  CompleteDriver(call, in_time, status, out, err_path, &r);
  return r;
}

std::string DefaultPeerDriversDir() { return std::string(SourceDir()) + "/harness/bench/peers"; }
std::string DefaultPeerModulesDir() { return std::string(BinaryDir()) + "/peers"; }

// ---------------------------------------------------------------------------------------------
// The benchmark.

namespace {

using nlohmann::json;

enum class Kind { kLocklab, kNode, kPython };

// The setting of a row that runs an implementation as it comes (locklab: `locklab run`'s retry).
constexpr const char* kDefaultSetting = "default";

struct Impl {
  std::string id;         // what --only takes
  std::string name;       // shown in the table
  Kind kind;
  std::string algorithm;  // locklab: algorithm; node: --lib
  std::vector<int> nodes;
  int64_t default_retry_ms;  // the library's default retry delay; > tuned: a tuned row too
  bool watchdog = false;     // refreshes the lock by itself (the pause test also holds past a refresh)
};

const std::vector<Impl>& Impls() {
  static const std::vector<Impl> all = {
      {"locklab-token", "locklab token", Kind::kLocklab, "token", {1}, -1},
      {"locklab-redlock", "locklab redlock", Kind::kLocklab, "redlock", {1, 5}, -1},
      // The retry study's winner: waiters queue in Redis and each release hands the lock over.
      {"locklab-fifo", "locklab fifo", Kind::kLocklab, "fifo", {1}, -1},
      {"node-redlock", "node-redlock", Kind::kNode, "redlock", {1, 5}, 200},
      {"redis-semaphore", "redis-semaphore Mutex", Kind::kNode, "semaphore-mutex", {1}, 10, true},
      {"redis-semaphore-redlock", "redis-semaphore RedlockMutex", Kind::kNode, "semaphore-redlock", {5}, 10, true},
      {"redis-py", "redis-py Lock", Kind::kPython, "", {1}, 100},
  };
  return all;
}

// A locklab lock that waits in its own Redis queue (fifo): no retry policy of ours to vary.
bool WaitsInQueue(const Impl& impl) {
  const AlgorithmInfo* a = impl.kind == Kind::kLocklab ? FindAlgorithm(impl.algorithm) : nullptr;
  return a != nullptr && a->waits_in_queue;
}

struct Workload {
  std::string id;
  std::string label;
  int clients;
  bool per_key;
  bool timed;  // duration_ms; else count
};

std::vector<Workload> Workloads(const BenchPeersOptions& o) {
  const std::string n = std::to_string(o.clients);
  return {
      {"uncontended-1", "uncontended, 1 client", 1, false, true},
      {"uncontended-keys", "uncontended, " + n + " clients on " + n + " keys", o.clients, true, true},
      {"contended", "contended, " + n + " clients on 1 key", o.clients, false, false},
  };
}

struct Row {
  std::string workload, workload_label, impl, name, version, setting;
  Kind kind = Kind::kLocklab;
  int nodes = 1, clients = 1;
  bool per_key = false;
  json options = json::object();
  bool ran = false;
  std::string error;
  std::vector<std::string> notes;
  RowCheck check;
  CommandDelta server;
  int64_t sent_total = -1;
  std::map<std::string, int64_t> sent_by_name;
  int64_t counter_final = 0;
  std::vector<double> round_rates;  // measured in rounds with the limit: each round's rate
};

struct Limit : PairLimit {
  std::vector<double> round_pair_rps;  // measured in rounds with a locklab row: each round's figure
};

struct PauseRow {
  std::string impl, name, version;
  int nodes = 1;
  int64_t hold_ms = 0;  // A's time in its critical section (its own clock)
  bool ran = false;
  std::string error;
  RowCheck check;
  int64_t counter_final = 0;
  std::string observed;
  std::vector<Event> events;
};

struct BenchEnv {
  explicit BenchEnv(const BenchPeersOptions& opts) : o(opts) {}
  const BenchPeersOptions& o;
  RedisServers* servers = nullptr;
  std::string tmp;
  std::string drivers, modules;
  std::string node_versions, python_version;  // "" when not available
  std::string node_missing, python_missing;   // why not
  int row_counter = 0;
};

json LatencyJson(const LatencySummary& s) {
  auto r3 = [](double v) { return std::round(v * 1000.0) / 1000.0; };
  return {{"count", s.count}, {"p50", r3(s.p50)}, {"p90", r3(s.p90)}, {"p99", r3(s.p99)},
          {"max", r3(s.max)}, {"mean", r3(s.mean)}};
}

double R3(double v) { return std::round(v * 1000.0) / 1000.0; }

std::string Join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

std::vector<std::string> Addresses(const RedisServers& s, int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(s.address(i));
  return out;
}

std::string Ports(const RedisServers& s, int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(std::to_string(s.port(i)));
  return Join(out, ",");
}

bool Selected(const BenchPeersOptions& o, const std::string& id) {
  return o.only.empty() || std::find(o.only.begin(), o.only.end(), id) != o.only.end();
}

// A probe command's stdout (trimmed), or "" + *why when it fails.
std::string Probe(const std::vector<std::string>& argv, const std::vector<std::string>& env, const std::string& tmp,
                  std::string* why) {
  ChildProcess c;
  const std::string err_path = tmp + "/probe.stderr";
  if (Status st = c.Start(argv, env, err_path); !st.ok()) {
    *why = st.message();
    return "";
  }
  std::string out;
  int status = -1;
  const bool in_time = c.Finish(NowUs() + 20'000'000, &out, &status);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  if (!in_time || status != 0 || out.empty()) {
    *why = status == 127 ? argv[0] + " not found" : TailOnOneLine(ReadWholeFile(err_path), 2);
    if (why->empty()) *why = argv[0] + " exited with status " + std::to_string(status);
    return "";
  }
  return out;
}

bool SnapshotStats(const RedisServers& s, std::vector<std::map<std::string, int64_t>>* out, std::string* error) {
  out->clear();
  for (int i = 0; i < s.count(); ++i) {
    const Result<std::string> text = s.Query(i, {"INFO", "commandstats"});
    if (!text.ok()) return (*error = text.status().message(), false);
    out->push_back(ParseCommandStats(*text));
  }
  return true;
}

bool FlushAll(const RedisServers& s, std::string* error) {
  for (int i = 0; i < s.count(); ++i) {
    if (const Result<std::string> text = s.Query(i, {"FLUSHALL"}); !text.ok()) return (*error = text.status().message(), false);
  }
  return true;
}

bool ApplyRetry(const BenchPeersOptions& o, RunSpec* s, std::string* error) {
  s->retry = o.retry;
  for (const std::string& text : o.retry_opts) {
    Options opt;
    if (!Options::Parse(text, &opt, error)) {
      *error = "--retry-opt " + text + ": " + *error;
      return false;
    }
    for (const auto& [k, v] : opt.values()) s->retry_options.Set(k, v);
  }
  return true;
}

std::string RetryText(const BenchPeersOptions& o) {
  std::string s = "retry=" + o.retry;
  for (const auto& t : o.retry_opts) s += "," + t;
  return s;
}

// ---- locklab rows ----

RunSpec LocklabSpec(const BenchEnv& env, const std::string& algorithm, int nodes, int clients) {
  RunSpec s;
  s.backend = "redis";
  s.algorithm = algorithm;
  s.nodes = nodes;
  s.redis = Addresses(*env.servers, nodes);
  s.clients = clients;
  s.hold_ms = 0;
  s.ttl_ms = env.o.ttl_ms;
  s.acquire_timeout_ms = env.o.acquire_timeout_ms;
  s.max_duration_ms = 120'000;
  s.seed = env.o.seed;
  return s;
}

void RunLocklabRow(BenchEnv& env, const Workload& w, Row* row) {
  const Impl* impl = nullptr;
  for (const Impl& i : Impls())
    if (i.id == row->impl) impl = &i;
  RunSpec s = LocklabSpec(env, impl->algorithm, row->nodes, w.clients);
  s.key_per_client = w.per_key;
  s.trace_commands = false;  // the peers log their lock events only: so does locklab here
  std::string error;
  // "default": `locklab run`'s retry policy (auto). fifo waits inside the lock (its queue): a
  // retry policy's own wake-up would only add commands. Otherwise the --retry policy.
  const bool own_retry = row->setting != kDefaultSetting && !WaitsInQueue(*impl);
  s.retry = "auto";
  if ((own_retry && !ApplyRetry(env.o, &s, &error)) || !ResolveSpec(&s, &error)) {
    row->error = error;
    return;
  }
  row->options = {{"retry", s.retry}, {"retry_options", s.retry_options.values()},
                  {"algorithm_options", s.algorithm_options.values()}};
  if (w.timed) {
    // RunOne counts requests, so a fixed time is a request count from a short pilot run's rate.
    RunSpec pilot = s;
    pilot.requests = w.clients == 1 ? 1000 : static_cast<int64_t>(w.clients) * 40;
    RunResult p = RunOne(pilot, false, false);
    if (!p.completed || p.duration_us <= 0) {
      row->error = "pilot run: " + (p.error.empty() ? std::string("no time measured") : p.error);
      return;
    }
    const double rate = static_cast<double>(p.check.liveness.acquired) / (static_cast<double>(p.duration_us) / 1e6);
    s.requests = std::clamp<int64_t>(static_cast<int64_t>(rate * static_cast<double>(env.o.duration_ms) / 1000.0),
                                     pilot.requests, 5'000'000);
    row->notes.push_back("fixed time as a request count: " + std::to_string(s.requests) + " (pilot rate " +
                         std::to_string(static_cast<int64_t>(rate)) + "/s x " + std::to_string(env.o.duration_ms) +
                         " ms)");
  } else {
    s.requests = env.o.count;
  }
  std::vector<std::map<std::string, int64_t>> before, after;
  if (!FlushAll(*env.servers, &error) || !SnapshotStats(*env.servers, &before, &error)) {
    row->error = error;
    return;
  }
  RunResult res = RunOne(s, false, /*keep_events=*/true);
  if (!SnapshotStats(*env.servers, &after, &error)) {
    row->error = error;
    return;
  }
  if (!res.completed) {
    row->error = "run did not complete: " + res.error;
    return;
  }
  row->server = CommandStatsDelta(before, after, {"INFO"});
  row->sent_total = res.commands.total;
  row->sent_by_name = res.commands.by_name;
  std::vector<Event> events = std::move(res.events);
  ShiftToEarliest(&events);
  JudgeInput in;
  if (w.per_key)
    for (int c = 0; c < w.clients; ++c) in.key_of_client[c] = "locklab:lock:" + std::to_string(c);
  in.counter_known = !w.per_key;
  in.counter_final = res.counter_final;
  row->counter_final = res.counter_final;
  row->check = JudgeEvents(events, in);
  row->ran = true;
}

// ---- peer rows ----

std::vector<std::string> DriverArgv(const BenchEnv& env, const Impl& impl) {
  if (impl.kind == Kind::kNode) return {env.o.node, env.drivers + "/node_peer.js", "--lib", impl.algorithm};
  return {env.o.python, env.drivers + "/py_peer.py"};
}

std::vector<std::string> DriverEnv(const BenchEnv& env) {
  return {"NODE_PATH=" + env.modules + "/node_modules", "PYTHONDONTWRITEBYTECODE=1"};
}

std::string Unavailable(const BenchEnv& env, const Impl& impl) {
  if (impl.kind == Kind::kNode && !env.node_missing.empty()) return env.node_missing;
  if (impl.kind == Kind::kPython && !env.python_missing.empty()) return env.python_missing;
  return "";
}

std::string PeerVersion(const BenchEnv& env, const Impl& impl, const json& summary) {
  if (summary.is_object() && summary.contains("version") && summary["version"].is_string()) {
    std::string v = summary["version"].get<std::string>();
    if (summary.contains("ioredis") && summary["ioredis"].is_string())
      v += " (ioredis " + summary["ioredis"].get<std::string>() + ")";
    return v;
  }
  return impl.kind == Kind::kPython ? env.python_version : "";
}

void RunPeerRow(BenchEnv& env, const Workload& w, const Impl& impl, Row* row) {
  const std::string tag = std::to_string(++env.row_counter);
  DriverCall call;
  call.argv = DriverArgv(env, impl);
  call.extra_env = DriverEnv(env);
  call.events_path = env.tmp + "/row-" + tag + ".jsonl";
  const int64_t deadline_ms = w.timed ? env.o.duration_ms + 30'000 : 120'000;
  std::vector<std::string> args = {
      "--ports", Ports(*env.servers, row->nodes), "--events", call.events_path, "--clients",
      std::to_string(w.clients), "--key", "locklab:peer:" + tag, "--ttl-ms", std::to_string(env.o.ttl_ms),
      "--acquire-timeout-ms", std::to_string(env.o.acquire_timeout_ms), "--setting", row->setting, "--retry-ms",
      std::to_string(env.o.tuned_retry_ms), "--deadline-ms", std::to_string(deadline_ms)};
  if (w.timed) args.insert(args.end(), {"--duration-ms", std::to_string(env.o.duration_ms)});
  else args.insert(args.end(), {"--count", std::to_string(env.o.count)});
  if (w.per_key) args.push_back("--key-per-client");
  call.argv.insert(call.argv.end(), args.begin(), args.end());
  call.timeout_ms = deadline_ms + 10'000;

  std::string error;
  std::vector<std::map<std::string, int64_t>> before, after;
  if (!FlushAll(*env.servers, &error) || !SnapshotStats(*env.servers, &before, &error)) {
    row->error = error;
    return;
  }
  DriverResult r = RunDriver(call);
  if (!SnapshotStats(*env.servers, &after, &error)) {
    row->error = error;
    return;
  }
  row->version = PeerVersion(env, impl, r.summary);
  if (!r.ok) {
    row->error = r.error;
    return;
  }
  if (r.summary.contains("options")) row->options = r.summary["options"];
  row->server = CommandStatsDelta(before, after, {"INFO"});
  if (r.summary.contains("commands_sent_total") && r.summary["commands_sent_total"].is_number_integer())
    row->sent_total = r.summary["commands_sent_total"].get<int64_t>();
  if (r.summary.contains("commands_sent") && r.summary["commands_sent"].is_object())
    for (const auto& [k, v] : r.summary["commands_sent"].items())
      if (v.is_number_integer()) {
        std::string name = k;
        for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        row->sent_by_name[name] += v.get<int64_t>();
      }
  if (r.summary.contains("errors") && r.summary["errors"].is_array() && !r.summary["errors"].empty())
    row->notes.push_back("first library errors: " + r.summary["errors"].dump());
  std::vector<Event> events = std::move(r.log.events);
  ShiftToEarliest(&events);
  JudgeInput in;
  in.key_of_client = r.log.key_of_client;
  in.counter_known = !w.per_key && r.summary.contains("counter_final") && r.summary["counter_final"].is_number_integer();
  if (in.counter_known) in.counter_final = r.summary["counter_final"].get<int64_t>();
  row->counter_final = in.counter_final;
  row->check = JudgeEvents(events, in);
  row->ran = true;
}

// ---- the physical limit ----

// redis-benchmark with `clients` connections, on node 1, just before the rows it is compared with.
Limit MeasureLimit(const BenchEnv& env, int clients, std::vector<std::string>* notes) {
  Limit l;
  std::string why;
  static_cast<PairLimit&>(l) = MeasurePairLimit(*env.servers, 0, clients, &why);
  if (l.pair_rps <= 0) notes->push_back("limit with " + std::to_string(clients) + " clients: " + why);
  if (env.o.progress)
    std::fprintf(stderr, "bench-peers: limit, %d client(s): SET NX PX %.0f/s, release script %.0f/s\n", clients,
                 l.set_rps, l.release_rps);
  std::string ignored;
  FlushAll(*env.servers, &ignored);
  return l;
}

// The middle value (the lower of the two middle ones for an even count); -1 when empty.
double Median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 2];
}

// " (rounds: a, b, c)" when there was more than one.
std::string RoundsText(const std::vector<double>& v) {
  if (v.size() < 2) return "";
  std::string s = " (rounds:";
  for (size_t i = 0; i < v.size(); ++i) s += (i == 0 ? " " : ", ") + Fixed(v[i], 0);
  return s + ")";
}

// Runs the row --rounds times, each right after a measurement of the limit, so that the two see
// the machine in the same state (on a shared VM the rates drift by 10% from minute to minute).
// The row becomes the round with the median rate; the limit, the median of the limits.
void RunInRoundsWithLimit(BenchEnv& env, const Workload& w, Row* row, Limit* limit,
                          std::vector<std::string>* notes) {
  const Row blank = *row;
  std::vector<Row> runs;
  std::vector<double> sets, releases, pairs;
  for (int k = 0; k < env.o.rounds; ++k) {
    const Limit l = MeasureLimit(env, w.clients, notes);
    if (l.pair_rps > 0) {
      sets.push_back(l.set_rps);
      releases.push_back(l.release_rps);
      pairs.push_back(l.pair_rps);
    }
    Row r = blank;
    RunLocklabRow(env, w, &r);
    if (!r.ran) {
      *row = std::move(r);
      runs.clear();
      break;
    }
    if (env.o.progress)
      std::fprintf(stderr, "bench-peers: %s round %d/%d: %s %.0f acquisitions/s = %.2fx the limit's %.0f pairs/s\n",
                   w.id.c_str(), k + 1, env.o.rounds, r.name.c_str(), r.check.rate_per_s,
                   l.pair_rps > 0 ? r.check.rate_per_s / l.pair_rps : 0.0, l.pair_rps);
    runs.push_back(std::move(r));
  }
  limit->clients = w.clients;
  limit->set_rps = Median(sets);
  limit->release_rps = Median(releases);
  limit->pair_rps = Median(pairs);
  limit->round_pair_rps = pairs;
  if (runs.empty()) return;
  std::vector<double> rates;
  for (const Row& r : runs) rates.push_back(r.check.rate_per_s);
  const double middle = Median(rates);
  for (Row& r : runs)
    if (r.check.rate_per_s == middle) {
      *row = std::move(r);
      break;
    }
  row->round_rates = rates;
  if (rates.size() > 1)
    row->notes.push_back("the median of " + std::to_string(rates.size()) +
                         " rounds, each right after a measurement of the limit (round_rates)");
}

// ---- the pause test ----

std::string Ms(double ms) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f ms", ms);
  return buf;
}

// What happened to A (client 0) and B (client 1), from the judged history.
std::string Observe(const std::vector<Event>& ev, const RowCheck& c) {
  int64_t a_enter = -1, b_enter = -1, b_exit = -1, a_exit = -1, crash = -1;
  std::string a_release = "none", b_acquire = "none", crash_detail;
  for (const Event& e : ev) {
    if (e.client == 0 && e.type == Ev::kEnter && a_enter < 0) a_enter = e.t_us;
    if (e.client == 0 && e.type == Ev::kExit) a_exit = e.t_us;
    if (e.client == 1 && e.type == Ev::kEnter && b_enter < 0) b_enter = e.t_us;
    if (e.client == 1 && e.type == Ev::kExit) b_exit = e.t_us;
    if (e.client == 1 && e.type == Ev::kAcquireOk) b_acquire = "ok";
    if (e.client == 1 && e.type == Ev::kAcquireFail) b_acquire = "failed";
    if (e.client == 0 && e.type == Ev::kReleaseOk) a_release = "ok";
    if (e.client == 0 && e.type == Ev::kReleaseFail) a_release = "failed (lock no longer A's)";
    if (e.client == 0 && e.type == Ev::kCrash && crash < 0) {
      crash = e.t_us;
      crash_detail = e.detail;
    }
  }
  std::vector<std::string> parts;
  if (c.safety.violations > 0)
    parts.push_back("OVERLAP: A and B held at once for " + Ms(c.safety.overlap_ms_total));
  else
    parts.push_back("no overlap");
  if (b_enter >= 0 && a_enter >= 0)
    parts.push_back("B entered " + Ms(static_cast<double>(b_enter - a_enter) / 1000.0) + " after A");
  else
    parts.push_back("B's acquisition: " + b_acquire);
  if (crash >= 0)
    parts.push_back("A's process died at " + Ms(static_cast<double>(crash - std::max<int64_t>(a_enter, 0)) / 1000.0) +
                    " (" + crash_detail + ")");
  if (a_exit >= 0 && b_exit >= 0 && a_exit > b_exit)
    parts.push_back("A left its critical section " + Ms(static_cast<double>(a_exit - b_exit) / 1000.0) +
                    " after B had");
  parts.push_back("A's release: " + a_release);
  if (c.counter_judged) parts.push_back("lost updates: " + std::to_string(c.lost_updates));
  return Join(parts, "; ");
}

void RunLocklabPause(BenchEnv& env, const Impl& impl, int nodes, PauseRow* row) {
  const BenchPeersOptions& o = env.o;
  RunSpec s = LocklabSpec(env, impl.algorithm, nodes, 2);
  s.ttl_ms = o.pause_ttl_ms;
  s.retry = "fixed";
  s.retry_options.Set("sleep-ms", "50");
  s.client_plans = {ClientPlan{0, 1, row->hold_ms, -1}, ClientPlan{200, 1, o.pause_hold_ms, 10'000}};
  FaultAction a;
  a.kind = FaultAction::Kind::kPauseClient;
  a.target = 0;
  a.at_us = o.pause_at_ms * 1000;
  a.duration_us = o.pause_ms * 1000;
  s.faults.plan.push_back(a);
  std::string error;
  if (!ResolveSpec(&s, &error)) {
    row->error = error;
    return;
  }
  RunResult res = RunOne(s, false, true);
  if (!res.completed) {
    row->error = "run did not complete: " + res.error;
    return;
  }
  std::vector<Event> events;
  for (const Event& e : res.events)
    if (e.type != Ev::kCommand) events.push_back(e);
  ShiftToEarliest(&events);
  JudgeInput in;
  in.counter_known = true;
  in.counter_final = res.counter_final;
  row->counter_final = res.counter_final;
  row->check = JudgeEvents(events, in);
  row->observed = Observe(events, row->check);
  row->events = std::move(events);
  row->ran = true;
}

void RunPeerPause(BenchEnv& env, const Impl& impl, int nodes, PauseRow* row) {
  const BenchPeersOptions& o = env.o;
  const std::string tag = impl.id + "-" + std::to_string(nodes) + "-" + std::to_string(row->hold_ms);
  const std::string counter = env.tmp + "/pause-counter-" + tag;
  {
    std::ofstream f(counter);
    f << "0";
  }
  auto call_for = [&](int client, bool announce, int64_t hold_ms) {
    DriverCall c;
    c.argv = DriverArgv(env, impl);
    c.extra_env = DriverEnv(env);
    c.events_path = env.tmp + "/pause-" + tag + "-" + std::to_string(client) + ".jsonl";
    std::vector<std::string> args = {"--ports", Ports(*env.servers, nodes), "--events", c.events_path, "--clients", "1",
                                     "--count", "1", "--key", "locklab:pause:" + tag, "--ttl-ms",
                                     std::to_string(o.pause_ttl_ms), "--acquire-timeout-ms", "10000", "--hold-ms",
                                     std::to_string(hold_ms), "--counter-file", counter, "--client-base",
                                     std::to_string(client), "--deadline-ms", "30000"};
    if (announce) args.push_back("--announce");
    c.argv.insert(c.argv.end(), args.begin(), args.end());
    c.timeout_ms = 35'000;
    return c;
  };
  std::string error;
  if (!FlushAll(*env.servers, &error)) {
    row->error = error;
    return;
  }
  const DriverCall call_a = call_for(0, true, row->hold_ms), call_b = call_for(1, false, o.pause_hold_ms);
  ChildProcess a, b;
  const std::string err_a = call_a.events_path + ".stderr", err_b = call_b.events_path + ".stderr";
  if (Status st = a.Start(call_a.argv, call_a.extra_env, err_a); !st.ok()) {
    row->error = "cannot start A: " + st.message();
    return;
  }
  // Wait for A to hold, then stop it pause_at_ms into its critical section.
  std::string line;
  int64_t holding_at = -1;
  const int64_t wait_until = NowUs() + 20'000'000;
  for (int i = 0; i < 1000 && a.ReadLine(&line, wait_until); ++i) {
    json j = json::parse(line, nullptr, false);
    if (j.is_object() && j.contains("holding")) {
      holding_at = NowUs();
      break;
    }
  }
  if (holding_at < 0) {
    std::string out;
    int status = -1;
    a.Finish(NowUs() + 5'000'000, &out, &status);
    DriverResult ra;
    CompleteDriver(call_a, true, status, out, err_a, &ra);
    row->error = "A never announced that it holds the lock: " + ra.error;
    return;
  }
  SleepUntilUs(holding_at + o.pause_at_ms * 1000);
  a.Signal(SIGSTOP);
  const int64_t stop_us = NowUs();
  if (Status st = b.Start(call_b.argv, call_b.extra_env, err_b); !st.ok()) {
    a.Signal(SIGCONT);
    row->error = "cannot start B: " + st.message();
    return;
  }
  SleepUntilUs(stop_us + o.pause_ms * 1000);
  a.Signal(SIGCONT);
  const int64_t cont_us = NowUs();
  std::string out_a, out_b;
  int st_a = -1, st_b = -1;
  const bool a_in_time = a.Finish(NowUs() + 30'000'000, &out_a, &st_a);
  const bool b_in_time = b.Finish(NowUs() + 30'000'000, &out_b, &st_b);
  DriverResult ra, rb;
  CompleteDriver(call_a, a_in_time, st_a, out_a, err_a, &ra);
  CompleteDriver(call_b, b_in_time, st_b, out_b, err_b, &rb);
  row->version = PeerVersion(env, impl, !rb.summary.is_null() ? rb.summary : ra.summary);
  // A crashing is a finding (redis-semaphore's onLockLost throws), not a failure of the test.
  const bool a_crashed = st_a == 70 && !ra.log.events.empty();
  if ((!ra.ok && !a_crashed) || !rb.ok) {
    row->error = !rb.ok ? "B: " + rb.error : "A: " + ra.error;
    return;
  }
  std::vector<Event> events = ra.log.events;
  events.insert(events.end(), rb.log.events.begin(), rb.log.events.end());
  events.push_back(Event{stop_us, 0, Ev::kPauseStart, cont_us - stop_us, "SIGSTOP"});
  events.push_back(Event{cont_us, 0, Ev::kPauseEnd, 0, "SIGCONT"});
  ShiftToEarliest(&events);
  JudgeInput in;
  in.counter_known = true;
  in.counter_final = std::atoll(ReadWholeFile(counter).c_str());
  row->counter_final = in.counter_final;
  row->check = JudgeEvents(events, in);
  row->observed = Observe(events, row->check);
  row->events = std::move(events);
  row->ran = true;
}

// ---- output ----

std::string Cell(double v, int decimals) { return Fixed(v, decimals); }

std::string PerAcq(int64_t n, int64_t acquired) {
  if (n < 0 || acquired <= 0) return "-";
  return Fixed(static_cast<double>(n) / static_cast<double>(acquired), 2);
}

double Rate(const Row& r) { return r.ran ? r.check.rate_per_s : 0; }

const Row* BestPeer(const std::vector<Row>& rows, const Row& of) {
  const Row* best = nullptr;
  for (const Row& r : rows)
    if (r.ran && r.kind != Kind::kLocklab && r.workload == of.workload && r.nodes == of.nodes &&
        (best == nullptr || Rate(r) > Rate(*best)))
      best = &r;
  return best;
}

const Limit* LimitFor(const std::vector<Limit>& limits, const Row& r) {
  if (r.nodes != 1 || r.workload == "contended") return nullptr;
  for (const Limit& l : limits)
    if (l.clients == r.clients && l.pair_rps > 0) return &l;
  return nullptr;
}

std::string SettingText(const Row& r) { return r.setting; }

std::string RowsTable(const std::vector<Row>& rows) {
  TextTable t({"workload", "nodes", "implementation", "setting", "acq/s", "acq p50", "acq p99", "wait p50", "wait p99",
               "failed", "cmds/acq", "sent/acq", "lost", "overlaps"});
  for (const Row& r : rows) {
    if (!r.ran) {
      t.AddRow({r.workload, std::to_string(r.nodes), r.name, SettingText(r), "not run: " + r.error});
      continue;
    }
    const RowCheck& c = r.check;
    t.AddRow({r.workload, std::to_string(r.nodes), r.name, SettingText(r), Cell(c.rate_per_s, 0), Cell(c.acquire.p50, 3),
              Cell(c.acquire.p99, 3), Cell(c.wait.p50, 3), Cell(c.wait.p99, 3), std::to_string(c.failed),
              PerAcq(r.server.total, c.acquired), PerAcq(r.sent_total, c.acquired),
              c.counter_judged ? std::to_string(c.lost_updates) : "n/a", std::to_string(c.safety.violations)});
  }
  return t.ToString();
}

struct Ratio {
  const Row* row;
  const Row* peer;
  const Limit* limit;
};

std::vector<Ratio> Ratios(const std::vector<Row>& rows, const std::vector<Limit>& limits) {
  std::vector<Ratio> out;
  for (const Row& r : rows)
    if (r.ran && r.kind == Kind::kLocklab) out.push_back({&r, BestPeer(rows, r), LimitFor(limits, r)});
  return out;
}

std::string RatiosTable(const std::vector<Ratio>& ratios) {
  TextTable t({"workload", "nodes", "locklab", "acq/s", "best peer", "peer acq/s", "locklab/peer", "limit pairs/s",
               "locklab/limit"});
  for (const Ratio& q : ratios) {
    const Row& r = *q.row;
    t.AddRow({r.workload, std::to_string(r.nodes), r.name, Cell(Rate(r), 0),
              q.peer != nullptr ? q.peer->name + " (" + q.peer->setting + ")" : "-",
              q.peer != nullptr ? Cell(Rate(*q.peer), 0) : "-",
              q.peer != nullptr && Rate(*q.peer) > 0 ? Cell(Rate(r) / Rate(*q.peer), 2) + "x" : "-",
              q.limit != nullptr ? Cell(q.limit->pair_rps, 0) : "-",
              q.limit != nullptr ? Cell(Rate(r) / q.limit->pair_rps, 2) + "x" : "-"});
  }
  return t.ToString();
}

struct Target {
  std::string what;
  std::string measured;
  bool met = false;
  bool judged = false;
};

std::vector<Target> Targets(const std::vector<Row>& rows, const std::vector<Ratio>& ratios) {
  std::vector<Target> out;
  for (const Ratio& q : ratios) {
    const Row& r = *q.row;
    if (r.impl != "locklab-token" || r.workload == "contended") continue;
    Target peer{"uncontended token (" + r.workload + ") >= 1.3x the fastest peer", "-", false, false};
    if (q.peer != nullptr && Rate(*q.peer) > 0) {
      const double x = Rate(r) / Rate(*q.peer);
      peer.measured = Fixed(x, 2) + "x (" + Fixed(Rate(r), 0) + " vs " + q.peer->name + " " + Fixed(Rate(*q.peer), 0) + "/s)";
      peer.met = x >= 1.3;
      peer.judged = true;
    }
    out.push_back(peer);
    Target lim{"uncontended token (" + r.workload + ") >= 0.9x redis-benchmark's SET NX PX + release script", "-", false,
               false};
    if (q.limit != nullptr) {
      const double x = Rate(r) / q.limit->pair_rps;
      lim.measured = Fixed(x, 2) + "x (" + Fixed(Rate(r), 0) + " vs " + Fixed(q.limit->pair_rps, 0) + " pairs/s)";
      lim.met = x >= 0.9;
      lim.judged = true;
    }
    out.push_back(lim);
  }
  for (const Row& r : rows) {
    // The target asks for the retry study's best strategy: the fifo lock (the token rows are in
    // the table for comparison).
    if (r.impl != "locklab-fifo" || r.workload != "contended") continue;
    const std::string who = "contended " + r.name + " (" + r.setting + ")";
    Target rate{who + ", " + r.workload_label + ": >= 5000 acquisitions/s", "-", false, r.ran};
    Target wait{who + ": p99 wait <= 20 ms", "-", false, r.ran};
    Target cmds{who + ": <= 3 Redis commands per acquisition (sent by the clients)", "-", false, r.ran};
    if (r.ran) {
      rate.measured = Fixed(Rate(r), 0) + "/s";
      rate.met = Rate(r) >= 5000;
      wait.measured = Fixed(r.check.wait.p99, 2) + " ms";
      wait.met = r.check.wait.p99 <= 20;
      const double sent = r.check.acquired > 0 ? static_cast<double>(r.sent_total) / static_cast<double>(r.check.acquired) : 0;
      const double server =
          r.check.acquired > 0 ? static_cast<double>(r.server.total) / static_cast<double>(r.check.acquired) : 0;
      cmds.measured = Fixed(sent, 2) + " sent (" + Fixed(server, 2) + " in commandstats, script-internal GET/DEL included)";
      cmds.met = sent <= 3;
    }
    out.insert(out.end(), {rate, wait, cmds});
  }
  return out;
}

std::string PauseTable(const std::vector<PauseRow>& rows) {
  TextTable t({"implementation", "nodes", "A's hold", "overlap", "overlap ms", "lost", "what happened"});
  for (const PauseRow& p : rows) {
    if (!p.ran) {
      t.AddRow({p.name, std::to_string(p.nodes), std::to_string(p.hold_ms) + " ms", "not run: " + p.error});
      continue;
    }
    t.AddRow({p.name, std::to_string(p.nodes), std::to_string(p.hold_ms) + " ms",
              p.check.safety.violations > 0 ? "yes" : "no",
              Cell(p.check.safety.overlap_ms_total, 0), std::to_string(p.check.lost_updates), p.observed});
  }
  return t.ToString();
}

json SafetyJson(const SafetyResult& s) {
  json pairs = json::array();
  for (const auto& [a, b] : s.overlapping_pairs) pairs.push_back({a, b});
  return {{"violations", s.violations}, {"overlap_ms_total", R3(s.overlap_ms_total)},
          {"max_concurrent_holders", s.max_concurrent_holders}, {"overlapping_pairs", pairs}};
}

json RowJson(const Row& r, const std::vector<Row>& rows, const std::vector<Limit>& limits) {
  json j = {{"workload", r.workload}, {"workload_label", r.workload_label}, {"clients", r.clients},
            {"keys", r.per_key ? "one per client" : "one"}, {"nodes", r.nodes}, {"implementation", r.impl},
            {"name", r.name}, {"version", r.version}, {"setting", r.setting}, {"options", r.options},
            {"ran", r.ran}};
  if (!r.error.empty()) j["error"] = r.error;
  j["notes"] = r.notes;
  if (!r.ran) return j;
  const RowCheck& c = r.check;
  j["acquisitions"] = c.acquired;
  j["failed"] = c.failed;
  j["releases_failed"] = c.releases_failed;
  j["seconds"] = R3(c.span_s);
  j["acquisitions_per_s"] = R3(c.rate_per_s);
  if (!r.round_rates.empty()) j["round_acquisitions_per_s"] = r.round_rates;
  j["acquire_ms"] = LatencyJson(c.acquire);
  j["wait_ms"] = LatencyJson(c.wait);
  const double acq = static_cast<double>(std::max<int64_t>(c.acquired, 1));
  j["commands"] = {{"server_total", r.server.total},
                   {"server_by_name", r.server.by_name},
                   {"server_per_acquisition", c.acquired > 0 ? R3(static_cast<double>(r.server.total) / acq) : 0.0},
                   {"sent_total", r.sent_total},
                   {"sent_by_name", r.sent_by_name},
                   {"sent_per_acquisition", c.acquired > 0 && r.sent_total >= 0 ? R3(static_cast<double>(r.sent_total) / acq) : 0.0}};
  j["safety"] = SafetyJson(c.safety);
  j["safety"]["judged_per_key"] = r.per_key;
  j["counter"] = {{"judged", c.counter_judged},
                  {"final", r.counter_final},
                  {"writes", c.check.resource.writes_accepted},
                  {"lost_updates", c.counter_judged ? json(c.lost_updates) : json(nullptr)}};
  if (r.kind == Kind::kLocklab) {
    const Row* peer = BestPeer(rows, r);
    const Limit* lim = LimitFor(limits, r);
    j["ratios"] = {{"best_peer", peer != nullptr ? json(peer->name + " (" + peer->setting + ")") : json(nullptr)},
                   {"vs_best_peer", peer != nullptr && Rate(*peer) > 0 ? json(R3(Rate(r) / Rate(*peer))) : json(nullptr)},
                   {"limit_pairs_per_s", lim != nullptr ? json(R3(lim->pair_rps)) : json(nullptr)},
                   {"vs_limit", lim != nullptr ? json(R3(Rate(r) / lim->pair_rps)) : json(nullptr)}};
  }
  return j;
}

json PauseJson(const PauseRow& p, const BenchPeersOptions& o) {
  json j = {{"implementation", p.impl}, {"name", p.name}, {"version", p.version}, {"nodes", p.nodes},
            {"hold_ms", p.hold_ms}, {"ran", p.ran}};
  if (!p.error.empty()) j["error"] = p.error;
  if (!p.ran) return j;
  j["overlap"] = p.check.safety.violations > 0;
  j["safety"] = SafetyJson(p.check.safety);
  j["lost_updates"] = p.check.lost_updates;
  j["counter_final"] = p.counter_final;
  j["observed"] = p.observed;
  json tl = json::array();
  for (const Event& e : p.events) {
    json x = {{"t_ms", R3(static_cast<double>(e.t_us) / 1000.0)}, {"client", e.client}, {"event", EvName(e.type)}};
    if (e.type == Ev::kRead || e.type == Ev::kWriteOk || e.type == Ev::kPauseStart) x["value"] = e.value;
    if (!e.detail.empty()) x["detail"] = e.detail;
    tl.push_back(x);
  }
  j["timeline"] = tl;
  (void)o;
  return j;
}

std::string HostName() {
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) != 0) return "";
  return host;
}

std::string UtcNow() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string RedisVersion(const RedisServers& s) {
  const Result<std::string> reply = s.Query(0, {"INFO", "server"});
  if (!reply.ok()) return "";
  const std::string& info = *reply;
  const size_t at = info.find("redis_version:");
  if (at == std::string::npos) return "";
  const size_t end = info.find_first_of("\r\n", at);
  return info.substr(at + 14, end == std::string::npos ? std::string::npos : end - at - 14);
}

// Pins every thread of process `pid` (0: this thread) to `cpu`. false when it cannot.
bool PinTo(pid_t pid, int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (pid == 0) return sched_setaffinity(0, sizeof set, &set) == 0;
  bool ok = true;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec))
    ok = sched_setaffinity(static_cast<pid_t>(std::atoi(task.path().filename().c_str())), sizeof set, &set) == 0 && ok;
  return ok && !ec;
}

}  // namespace

int RunBenchPeers(const BenchPeersOptions& o, std::ostream& out, std::string* error) {
  // --- Options. ---
  if (o.clients < 2 || o.clients > 500) {
    *error = "--clients must be in [2, 500]";
    return 2;
  }
  if (o.duration_ms < 100 || o.duration_ms > 60'000) {
    *error = "--duration-ms must be in [100, 60000]";
    return 2;
  }
  if (o.count < 1 || o.count > 1'000'000) {
    *error = "--count must be in [1, 1000000]";
    return 2;
  }
  if (o.rounds < 1 || o.rounds > 20) {
    *error = "--rounds must be in [1, 20]";
    return 2;
  }
  if (o.ttl_ms < 100 || o.pause_ttl_ms < 10 || o.pause_ms <= o.pause_ttl_ms || o.tuned_retry_ms < 0 ||
      o.acquire_timeout_ms < 1) {
    *error = "--ttl-ms >= 100, --pause-ms > --pause-ttl-ms, --tuned-retry-ms >= 0, --acquire-timeout-ms >= 1";
    return 2;
  }
  for (const std::string& id : o.only) {
    bool known = false;
    for (const Impl& i : Impls()) known = known || i.id == id;
    if (!known) {
      std::vector<std::string> ids;
      for (const Impl& i : Impls()) ids.push_back(i.id);
      *error = "--only: unknown implementation '" + id + "' (" + Join(ids, ", ") + ")";
      return 2;
    }
  }
  {
    RunSpec probe;
    probe.backend = "redis";
    if (!ApplyRetry(o, &probe, error) || !ResolveSpec(&probe, error)) return 2;
  }

  // --- Set-up: the servers, a directory for the logs inside theirs (removed with it, also on
  // SIGINT/SIGTERM), the peers. ---
  std::vector<std::string> notes;
  RedisServerOptions so;
  so.masters = 5;
  Result<std::unique_ptr<RedisServers>> started = RedisServers::Start(so);
  if (!started.ok()) return (*error = started.status().message(), 1);
  std::unique_ptr<RedisServers> servers = std::move(started).value();
  BenchEnv env(o);
  env.servers = servers.get();
  env.tmp = servers->dir() + "/bench-peers";
  {
    std::error_code ec;
    std::filesystem::create_directory(env.tmp, ec);
    if (ec) {
      *error = "cannot create " + env.tmp + ": " + ec.message();
      return 1;
    }
  }
  env.drivers = o.drivers_dir.empty() ? DefaultPeerDriversDir() : o.drivers_dir;
  env.modules = o.peers_dir.empty() ? DefaultPeerModulesDir() : o.peers_dir;
  const auto progress = [&](const std::string& s) {
    if (o.progress) std::fprintf(stderr, "bench-peers: %s\n", s.c_str());
  };
  std::string why;
  env.node_versions =
      Probe({o.node, "-e",
             "const v=p=>require(p+'/package.json').version;"
             "process.stdout.write('node '+process.version+', redlock '+v('redlock')+', redis-semaphore '+"
             "v('redis-semaphore')+', ioredis '+v('ioredis'))"},
            DriverEnv(env), env.tmp, &why);
  if (env.node_versions.empty())
    env.node_missing = "node peers not installed (" + why + "): run `make bench-peers`, or npm ci in " + env.modules;
  why.clear();
  env.python_version = Probe({o.python, "-c", "import redis,sys; sys.stdout.write(redis.__version__)"}, DriverEnv(env),
                             env.tmp, &why);
  if (env.python_missing.empty() && env.python_version.empty())
    env.python_missing = "redis-py not importable by " + o.python + " (" + why + "): apt-get install python3-redis";
  progress(env.node_versions.empty() ? env.node_missing : env.node_versions);
  progress(env.python_version.empty() ? env.python_missing : "redis-py " + env.python_version);

  const std::string redis_version = RedisVersion(*servers);
  std::string placement = "not pinned (--no-pin or fewer than 2 CPUs)";
  cpu_set_t own_cpus;
  const bool have_own = sched_getaffinity(0, sizeof own_cpus, &own_cpus) == 0;
  if (o.pin && have_own && CPU_ISSET(0, &own_cpus) && CPU_ISSET(1, &own_cpus)) {
    bool ok = true;
    for (int i = 0; i < servers->count(); ++i) ok = PinTo(servers->pid(i), 0) && ok;
    ok = PinTo(0, 1) && ok;  // locklab's own clients; the drivers and redis-benchmark inherit it
    placement = ok ? "redis-servers on CPU 0, clients (locklab, drivers, redis-benchmark) on CPU 1"
                   : "pinning failed: scheduler's placement";
    if (!ok) notes.push_back("could not pin the processes to CPUs: the scheduler placed them");
  }
  progress(placement);
  // Idle CPUs poll rather than halt for the whole run (every row and the limit alike).
  std::optional<IdlePollHold> idle_poll;
  std::string idle = "idle CPUs halt (--no-idle-poll)";
  if (o.idle_poll) {
    idle_poll.emplace();
    idle = idle_poll->active() ? "idle CPUs poll (/dev/cpu_dma_latency held at 0 us)"
                               : "idle CPUs halt: " + idle_poll->why_not();
    if (!idle_poll->active())
      notes.push_back("idle CPUs halt (" + idle_poll->why_not() +
                      "): on a VM each wake-up of a halted vCPU adds tens of us, so the one-client rows are "
                      "slower and move by about 10% from run to run");
  }
  progress(idle);
  progress("5 redis-server " + redis_version + " on 127.0.0.1 ports " + Ports(*servers, 5));

  std::vector<Limit> limits;

  // --- The rows. ---
  std::vector<Row> rows;
  for (const Workload& w : Workloads(o)) {
    // The target row (locklab token, defaults, 1 node) and the limit are measured alternately
    // in --rounds rounds; without that row, the limit once.
    const bool paired = o.limit && w.timed && Selected(o, "locklab-token");
    if (o.limit && w.timed && !paired) limits.push_back(MeasureLimit(env, w.clients, &notes));
    for (int nodes : {1, 5}) {
      for (const Impl& impl : Impls()) {
        if (!Selected(o, impl.id)) continue;
        if (std::find(impl.nodes.begin(), impl.nodes.end(), nodes) == impl.nodes.end()) continue;
        // Every implementation with its defaults; where a waiting strategy matters (contended),
        // the peers with a tuned retry delay and locklab with --retry too.
        std::vector<std::string> settings = {WaitsInQueue(impl) ? "own queue" : kDefaultSetting};
        if (!w.timed && impl.kind != Kind::kLocklab && impl.default_retry_ms > o.tuned_retry_ms)
          settings.push_back("tuned");
        if (!w.timed && impl.kind == Kind::kLocklab && !WaitsInQueue(impl) && RetryText(o) != "retry=auto")
          settings.push_back(RetryText(o));
        for (const std::string& setting : settings) {
          Row row;
          row.workload = w.id;
          row.workload_label = w.label;
          row.impl = impl.id;
          row.name = impl.name;
          row.kind = impl.kind;
          row.setting = setting;
          row.nodes = nodes;
          row.clients = w.clients;
          row.per_key = w.per_key;
          if (impl.kind == Kind::kLocklab) {
            row.version = std::string(ToolVersion()) + " (" + GitSha() + ")";
            if (paired && impl.id == "locklab-token" && nodes == 1 && setting == kDefaultSetting) {
              Limit limit;
              RunInRoundsWithLimit(env, w, &row, &limit, &notes);
              limits.push_back(limit);
            } else {
              RunLocklabRow(env, w, &row);
            }
          } else if (std::string u = Unavailable(env, impl); !u.empty()) {
            row.error = u;
          } else {
            RunPeerRow(env, w, impl, &row);
          }
          progress(w.id + ", " + std::to_string(nodes) + " node(s), " + impl.name + " (" + setting + "): " +
                   (row.ran ? Fixed(row.check.rate_per_s, 0) + " acquisitions/s" : "not run: " + row.error));
          rows.push_back(std::move(row));
        }
      }
    }
  }

  // --- The pause test. ---
  std::vector<PauseRow> pauses;
  if (o.pause) {
    for (const Impl& impl : Impls()) {
      if (!Selected(o, impl.id)) continue;
      const int nodes = impl.nodes.back();  // Redlock implementations on 5 nodes
      // A watchdog refreshes at 0.8 x TTL: a hold that lasts past the pause lets it wake up.
      std::vector<int64_t> holds = {o.pause_hold_ms};
      if (impl.watchdog) holds.push_back(o.pause_at_ms + o.pause_ms + 1000);
      for (int64_t hold : holds) {
        PauseRow p;
        p.impl = impl.id;
        p.name = impl.name;
        p.nodes = nodes;
        p.hold_ms = hold;
        if (impl.kind == Kind::kLocklab) {
          p.version = std::string(ToolVersion()) + " (" + GitSha() + ")";
          RunLocklabPause(env, impl, nodes, &p);
        } else if (std::string u = Unavailable(env, impl); !u.empty()) {
          p.error = u;
        } else {
          RunPeerPause(env, impl, nodes, &p);
        }
        progress("pause test, " + impl.name + ", hold " + std::to_string(hold) + " ms: " +
                 (p.ran ? p.observed : "not run: " + p.error));
        pauses.push_back(std::move(p));
      }
    }
  }
  servers.reset();  // stops the servers before the report is written
  if (have_own) sched_setaffinity(0, sizeof own_cpus, &own_cpus);
  idle_poll.reset();

  // --- Report. ---
  const std::vector<Ratio> ratios = Ratios(rows, limits);
  const std::vector<Target> targets = Targets(rows, ratios);
  json report;
  report["schema"] = "locklab.bench-peers/1";
  report["context"] = {{"tool_version", ToolVersion()},
                       {"git_sha", GitSha()},
                       {"host", HostName()},
                       {"started_at", UtcNow()},
                       {"cpus", std::thread::hardware_concurrency()},
                       {"redis_server", redis_version},
                       {"node_peers", env.node_versions.empty() ? json(nullptr) : json(env.node_versions)},
                       {"redis_py", env.python_version.empty() ? json(nullptr) : json(env.python_version)}};
  report["config"] = {{"clients", o.clients},
                      {"duration_ms", o.duration_ms},
                      {"count", o.count},
                      {"ttl_ms", o.ttl_ms},
                      {"acquire_timeout_ms", o.acquire_timeout_ms},
                      {"tuned_retry_ms", o.tuned_retry_ms},
                      {"rounds", o.rounds},
                      {"locklab_retry", o.retry},
                      {"locklab_retry_options", o.retry_opts},
                      {"hold", "none: the critical section reads the counter, yields once, writes counter + 1"},
                      {"pause", {{"ttl_ms", o.pause_ttl_ms}, {"pause_ms", o.pause_ms}, {"hold_ms", o.pause_hold_ms},
                                 {"pause_at_ms", o.pause_at_ms}}},
                      {"only", o.only},
                      {"placement", placement},
                      {"idle_cpus", idle}};
  json limit_json = json::array();
  for (const Limit& l : limits)
    limit_json.push_back({{"clients", l.clients},
                          {"set_nx_px_per_s", R3(l.set_rps)},
                          {"release_script_per_s", R3(l.release_rps)},
                          {"pairs_per_s", R3(l.pair_rps)},
                          {"round_pairs_per_s", l.round_pair_rps}});
  report["limit"] = limit_json;
  json rows_json = json::array();
  for (const Row& r : rows) rows_json.push_back(RowJson(r, rows, limits));
  report["rows"] = rows_json;
  json targets_json = json::array();
  for (const Target& t : targets)
    targets_json.push_back({{"target", t.what}, {"measured", t.measured}, {"met", t.judged ? json(t.met) : json(nullptr)}});
  report["targets"] = targets_json;
  json pause_json = json::array();
  for (const PauseRow& p : pauses) pause_json.push_back(PauseJson(p, o));
  report["pause"] = pause_json;
  report["notes"] = notes;

  bool all_ran = true;
  for (const Row& r : rows) all_ran = all_ran && r.ran;
  for (const PauseRow& p : pauses) all_ran = all_ran && p.ran;

  if (!o.quiet) {
    out << "\nPeer benchmark: " << rows.size() << " rows on 5 redis-server " << redis_version
        << " processes on 127.0.0.1 (1 node = the first), one run; TTL " << o.ttl_ms << " ms; uncontended rows "
        << o.duration_ms << " ms each; contended rows " << o.count << " acquisitions; locklab rows: default retry (auto)"
        << (RetryText(o) != "retry=auto" ? ", contended also " + RetryText(o) : std::string()) << "; " << placement
        << "; " << idle << "\n";
    out << "acq/s = acquisitions per second; acq = acquire latency of successful acquisitions, wait = every "
           "request until acquired or given up (ms); cmds/acq = INFO commandstats delta (every command the "
           "servers ran, those inside Lua scripts too, INFO left out) per acquisition; sent/acq = commands the "
           "clients sent; lost = lost counter increments; overlaps = mutual-exclusion violations (per key)\n\n";
    out << RowsTable(rows) << "\n";
    if (!limits.empty()) {
      out << "Physical limit (redis-benchmark on node 1 with as many clients, SET NX PX then EVALSHA "
             "compare-and-delete; pairs/s = 1 / (1/set + 1/release); measured right before the uncontended "
             "rows, or before each round of locklab token's uncontended row when it runs: the median):\n";
      for (const Limit& l : limits)
        out << "  " << l.clients << " client(s): SET NX PX " << Fixed(l.set_rps, 0) << "/s, release script "
            << Fixed(l.release_rps, 0) << "/s -> " << Fixed(l.pair_rps, 0) << " pairs/s"
            << RoundsText(l.round_pair_rps) << "\n";
      out << "\n";
    }
    out << "Ratios (locklab / best peer in the same workload and node count; locklab / limit with as many "
           "clients):\n"
        << RatiosTable(ratios) << "\n";
    out << "Targets (measured, not asserted):\n";
    for (const Target& t : targets)
      out << "  [" << (!t.judged ? "n/a " : t.met ? " met" : "MISS") << "] " << t.what << ": " << t.measured << "\n";
    if (!pauses.empty()) {
      out << "\nPause test (the gc-pause scenario: TTL " << o.pause_ttl_ms << " ms; A is stopped " << o.pause_at_ms
          << " ms into its critical section for " << o.pause_ms
          << " ms: SIGSTOP of the peer's process, pause_client for locklab; B, a second process, acquires "
             "meanwhile and holds "
          << o.pause_hold_ms
          << " ms; the libraries with a watchdog also with a hold that outlasts the pause; judged by locklab's "
             "mutual-exclusion checker on the machine's monotonic clock):\n"
          << PauseTable(pauses);
    }
    for (const std::string& n : notes) out << "note: " << n << "\n";
  }
  std::string write_error;
  if (!WriteFileAtomic(o.out, ReportText(report), &write_error)) {
    *error = write_error;
    return 1;
  }
  out << "\nreport: " << o.out << "\n";
  out.flush();
  if (!all_ran) {
    *error = "some rows could not run (see the table and the report's \"error\" fields)";
    return 1;
  }
  return 0;
}

void AddBenchPeersFlags(CLI::App* app, BenchPeersOptions* o) {
  app->add_option("--out", o->out, "JSON report (written atomically)")->capture_default_str()->type_name("FILE");
  app->add_option("--retry", o->retry, "locklab's retry policy in extra contended rows (the \"default\" rows use `locklab run`'s; see `locklab list`)")
      ->capture_default_str();
  app->add_option("--retry-opt", o->retry_opts, "locklab retry policy option k=v (repeatable)")
      ->type_name("K=V")
      ->allow_extra_args(false);
  app->add_option("--only", o->only,
                  "implementations to run (repeatable): locklab-token, locklab-redlock, locklab-fifo, node-redlock, redis-semaphore, "
                  "redis-semaphore-redlock, redis-py")
      ->type_name("ID")
      ->allow_extra_args(false)
      ->delimiter(',');
  app->add_option("--clients", o->clients, "clients in the many-client rows")->capture_default_str();
  app->add_option("--duration-ms", o->duration_ms, "length of each uncontended row, ms")->capture_default_str();
  app->add_option("--count", o->count, "acquisitions in each contended row")->capture_default_str();
  app->add_option("--rounds", o->rounds,
                  "uncontended locklab token and redis-benchmark's limit: measured alternately this many times, "
                  "medians shown")
      ->capture_default_str();
  app->add_option("--ttl-ms", o->ttl_ms, "lock TTL in the speed rows, ms")->capture_default_str();
  app->add_option("--acquire-timeout-ms", o->acquire_timeout_ms, "a request gives up after this long, ms")
      ->capture_default_str();
  app->add_option("--tuned-retry-ms", o->tuned_retry_ms,
                  "retry delay of the peers' tuned rows (node-redlock retryDelay, redis-py sleep), ms")
      ->capture_default_str();
  app->add_option("--pause-ttl-ms", o->pause_ttl_ms, "pause test: lock TTL, ms")->capture_default_str();
  app->add_option("--pause-ms", o->pause_ms, "pause test: how long the holder is stopped, ms")->capture_default_str();
  app->add_flag("--no-pause", [o](int64_t) { o->pause = false; }, "skip the pause test");
  app->add_flag("--no-limit", [o](int64_t) { o->limit = false; }, "skip redis-benchmark");
  app->add_flag("--no-idle-poll", [o](int64_t) { o->idle_poll = false; },
                "let idle CPUs halt (without it, when run as root, /dev/cpu_dma_latency is held at 0 us so that they poll)");
  app->add_flag("--no-pin", [o](int64_t) { o->pin = false; },
                "let the scheduler place servers and clients (default: servers on CPU 0, clients on CPU 1)");
  app->add_option("--peers-dir", o->peers_dir, "where node_modules is (default BUILD/peers)")->type_name("DIR");
  app->add_option("--drivers-dir", o->drivers_dir, "where the driver scripts are (default harness/bench/peers)")
      ->type_name("DIR");
  app->add_option("--node", o->node, "node executable")->capture_default_str();
  app->add_option("--python", o->python, "Python with redis-py (Debian's python3-redis)")->capture_default_str();
  app->add_flag("--quiet", o->quiet, "no table on stdout");
  app->add_flag("--no-progress", [o](int64_t) { o->progress = false; }, "no progress lines on stderr");
}

int BenchPeersCommand(const BenchPeersOptions& o) {
  std::string error;
  const int code = RunBenchPeers(o, std::cout, &error);
  std::cout.flush();
  if (code != 0) std::fprintf(stderr, "locklab: %s\n", error.c_str());
  return code;
}

}  // namespace locklab
