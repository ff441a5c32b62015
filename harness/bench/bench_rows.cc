// bench-peers' rows and the physical limit: see bench_rows.h.
#include "harness/bench/bench_rows.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "harness/bench/peer_driver.h"
#include "harness/report/text_table.h"

namespace locklab::bench_peers {
namespace {

// ---- locklab rows ----

// The row's spec: its retry policy, resolved; for a timed workload the request count that lasts
// about --duration-ms (RunOne counts requests), from a short pilot run's rate.
Result<RunSpec> LocklabRowSpec(BenchEnv& env, const Workload& w, const Impl& impl, Row* row) {
  RunSpec s = LocklabSpec(env, impl.algorithm, row->nodes, w.clients);
  s.key_per_client = w.per_key;
  s.trace = "locks";  // the peers log their lock events only: so does locklab here
  // "default": `locklab run`'s retry policy (auto). fifo waits inside the lock (its queue): a
  // retry policy's own wake-up would only add commands. Otherwise the --retry policy.
  const bool own_retry = row->setting != kDefaultSetting && !WaitsInQueue(impl);
  s.retry = "auto";
  if (own_retry)
    if (Status st = ApplyRetry(env.o, &s); !st.ok()) return st;
  if (Status st = ResolveSpec(&s); !st.ok()) return st;
  row->options = {{"retry", s.retry}, {"retry_options", s.retry_options.values()},
                  {"algorithm_options", s.algorithm_options.values()}};
  if (!w.timed) {
    s.requests = env.o.count;
    return s;
  }
  RunSpec pilot = s;
  pilot.requests = w.clients == 1 ? 1000 : static_cast<int64_t>(w.clients) * 40;
  RunResult p = RunOne(pilot, false, false);
  if (!p.completed || p.duration_us <= 0)
    return Status::Failed("pilot run: " + (p.error.empty() ? std::string("no time measured") : p.error));
  const double rate = static_cast<double>(p.check.liveness.acquired) / (static_cast<double>(p.duration_us) / 1e6);
  s.requests = std::clamp<int64_t>(static_cast<int64_t>(rate * static_cast<double>(env.o.duration_ms) / 1000.0),
                                   pilot.requests, 5'000'000);
  row->notes.push_back("fixed time as a request count: " + std::to_string(s.requests) + " (pilot rate " +
                       std::to_string(static_cast<int64_t>(rate)) + "/s x " + std::to_string(env.o.duration_ms) +
                       " ms)");
  return s;
}

// The servers flushed, their command counts before and after `run`; Failed when a server does
// not answer.
template <class F>
Status MeasureCommands(const BenchEnv& env, F run, CommandDelta* delta) {
  if (Status s = FlushAll(*env.servers); !s.ok()) return s;
  auto before = SnapshotStats(*env.servers);
  if (!before.ok()) return before.status();
  run();
  auto after = SnapshotStats(*env.servers);
  if (!after.ok()) return after.status();
  *delta = CommandStatsDelta(*before, *after, {"INFO"});
  return Status::Ok();
}

void RunLocklabRow(BenchEnv& env, const Workload& w, Row* row) {
  Result<RunSpec> s = LocklabRowSpec(env, w, *FindImpl(row->impl), row);
  if (!s.ok()) {
    row->error = s.status().message();
    return;
  }
  RunResult res;
  CommandDelta server;
  if (Status st = MeasureCommands(env, [&] { res = RunOne(*s, false, /*keep_events=*/true); }, &server); !st.ok()) {
    row->error = st.message();
    return;
  }
  if (!res.completed) {
    row->error = "run did not complete: " + res.error;
    return;
  }
  row->server = server;
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

DriverCall PeerRowCall(BenchEnv& env, const Workload& w, const Impl& impl, const Row& row) {
  const std::string tag = std::to_string(++env.row_counter);
  DriverCall call;
  call.argv = DriverArgv(env, impl);
  call.extra_env = DriverEnv(env);
  call.events_path = env.tmp + "/row-" + tag + ".jsonl";
  const int64_t deadline_ms = w.timed ? env.o.duration_ms + 30'000 : 120'000;
  std::vector<std::string> args = {
      "--ports", Ports(*env.servers, row.nodes), "--events", call.events_path, "--clients",
      std::to_string(w.clients), "--key", "locklab:peer:" + tag, "--ttl-ms", std::to_string(env.o.ttl_ms),
      "--acquire-timeout-ms", std::to_string(env.o.acquire_timeout_ms), "--setting", row.setting, "--retry-ms",
      std::to_string(env.o.tuned_retry_ms), "--deadline-ms", std::to_string(deadline_ms)};
  if (w.timed) args.insert(args.end(), {"--duration-ms", std::to_string(env.o.duration_ms)});
  else args.insert(args.end(), {"--count", std::to_string(env.o.count)});
  if (w.per_key) args.push_back("--key-per-client");
  call.argv.insert(call.argv.end(), args.begin(), args.end());
  call.timeout_ms = deadline_ms + 10'000;
  return call;
}

// What the driver's summary line says about the commands it sent, its options and its errors.
void ReadSummary(const json& summary, Row* row) {
  if (summary.contains("options")) row->options = summary["options"];
  if (summary.contains("commands_sent_total") && summary["commands_sent_total"].is_number_integer())
    row->sent_total = summary["commands_sent_total"].get<int64_t>();
  if (summary.contains("commands_sent") && summary["commands_sent"].is_object())
    for (const auto& [k, v] : summary["commands_sent"].items())
      if (v.is_number_integer()) {
        std::string name = k;
        for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        row->sent_by_name[name] += v.get<int64_t>();
      }
  if (summary.contains("errors") && summary["errors"].is_array() && !summary["errors"].empty())
    row->notes.push_back("first library errors: " + summary["errors"].dump());
}

void RunPeerRow(BenchEnv& env, const Workload& w, const Impl& impl, Row* row) {
  const DriverCall call = PeerRowCall(env, w, impl, *row);
  DriverResult r;
  CommandDelta server;
  if (Status st = MeasureCommands(env, [&] { r = RunDriver(call); }, &server); !st.ok()) {
    row->error = st.message();
    return;
  }
  row->version = PeerVersion(env, impl, r.summary);
  if (!r.ok) {
    row->error = r.error;
    return;
  }
  row->server = server;
  ReadSummary(r.summary, row);
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
  static_cast<PairLimit&>(l) = MeasurePairLimit(*env.servers, 0, clients);
  if (l.pair_rps <= 0) notes->push_back("limit with " + std::to_string(clients) + " clients: " + l.status.message());
  if (env.o.progress)
    std::fprintf(stderr, "bench-peers: limit, %d client(s): SET NX PX %.0f/s, release script %.0f/s\n", clients,
                 l.set_rps, l.release_rps);
  (void)FlushAll(*env.servers);  // best effort: a failure shows in the next row
  return l;
}

}  // namespace

double Median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 2];
}

std::string RoundsText(const std::vector<double>& v) {
  if (v.size() < 2) return "";
  std::string s = " (rounds:";
  for (size_t i = 0; i < v.size(); ++i) s += (i == 0 ? " " : ", ") + Fixed(v[i], 0);
  return s + ")";
}

namespace {

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
// Every implementation with its defaults; where a waiting strategy matters (contended), the
// peers with a tuned retry delay and locklab with --retry too.
std::vector<std::string> Settings(const BenchPeersOptions& o, const Workload& w, const Impl& impl) {
  std::vector<std::string> settings = {WaitsInQueue(impl) ? "own queue" : kDefaultSetting};
  if (!w.timed && impl.kind != Kind::kLocklab && impl.default_retry_ms > o.tuned_retry_ms)
    settings.push_back("tuned");
  if (!w.timed && impl.kind == Kind::kLocklab && !WaitsInQueue(impl) && RetryText(o) != "retry=auto")
    settings.push_back(RetryText(o));
  return settings;
}

Row NewRow(const Workload& w, const Impl& impl, int nodes, const std::string& setting) {
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
  return row;
}

// One row; `paired`: the workload's target row (locklab token, defaults, 1 node) is measured in
// rounds alternately with the limit, which goes to *limits.
void RunRow(BenchEnv& env, const Workload& w, const Impl& impl, bool paired, Row* row, std::vector<Limit>* limits) {
  if (impl.kind == Kind::kLocklab) {
    row->version = LocklabVersion();
    if (paired && impl.id == "locklab-token" && row->nodes == 1 && row->setting == kDefaultSetting) {
      Limit limit;
      RunInRoundsWithLimit(env, w, row, &limit, &env.notes);
      limits->push_back(limit);
    } else {
      RunLocklabRow(env, w, row);
    }
  } else if (std::string u = Unavailable(env, impl); !u.empty()) {
    row->error = u;
  } else {
    RunPeerRow(env, w, impl, row);
  }
}

}  // namespace

std::vector<Row> RunRows(BenchEnv& env, std::vector<Limit>* limits) {
  const BenchPeersOptions& o = env.o;
  std::vector<Row> rows;
  for (const Workload& w : Workloads(o)) {
    // The target row and the limit are measured alternately in --rounds rounds; without that
    // row, the limit once.
    const bool paired = o.limit && w.timed && Selected(o, "locklab-token");
    if (o.limit && w.timed && !paired) limits->push_back(MeasureLimit(env, w.clients, &env.notes));
    for (int nodes : {1, 5}) {
      for (const Impl& impl : Impls()) {
        if (!Selected(o, impl.id)) continue;
        if (std::find(impl.nodes.begin(), impl.nodes.end(), nodes) == impl.nodes.end()) continue;
        for (const std::string& setting : Settings(o, w, impl)) {
          Row row = NewRow(w, impl, nodes, setting);
          RunRow(env, w, impl, paired, &row, limits);
          if (o.progress)
            std::fprintf(stderr, "bench-peers: %s\n",
                         (w.id + ", " + std::to_string(nodes) + " node(s), " + impl.name + " (" + setting + "): " +
                          (row.ran ? Fixed(row.check.rate_per_s, 0) + " acquisitions/s" : "not run: " + row.error))
                             .c_str());
          rows.push_back(std::move(row));
        }
      }
    }
  }
  return rows;
}

}  // namespace locklab::bench_peers
