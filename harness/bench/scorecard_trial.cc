// One scorecard trial: see scorecard_trial.h.
#include "harness/bench/scorecard_trial.h"

#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "harness/bench/peer_driver.h"
#include "harness/real/child_process.h"
#include "harness/real/real_clock.h"
#include "harness/real/redis_server.h"
#include "harness/real/resp_proxy.h"
#include "harness/real/sentinel.h"
#include "harness/run/jepsen_history.h"
#include "harness/run/run_spec.h"

namespace locklab::scorecard {
namespace {

using nlohmann::json;

// Partition trials: A goes this long after its proxies started (the partition is planned on the
// proxies' clock); the drivers must be ready before (3 trials' 6 drivers starting at once on 2
// cores took more than 700 ms).
constexpr int64_t kPartitionGoMs = 1500;
constexpr int64_t kReadyTimeoutUs = 15'000'000;
constexpr int64_t kDriverDeadlineMs = 30'000;
const char kStaleValue[] = "stale-value-of-a-crashed-client";

bool UsesProxy(Fault f) { return f == Fault::kReleaseDelay || f == Fault::kPartition; }

std::string Join(const std::vector<int>& ports) {
  std::string s;
  for (int p : ports) s += (s.empty() ? "" : ",") + std::to_string(p);
  return s;
}

void Touch(const std::string& path) { std::ofstream(path) << "go\n"; }

struct Peer {
  std::vector<std::string> argv;
  std::string history, events, err;
  ChildProcess child;
};

struct PeerTrial {
  std::string key, counter, tag;
  // Sentinel failover: a master, its replica and three sentinels of this trial's own (destroyed
  // after the drivers, which are declared later).
  std::unique_ptr<RedisServers> servers;
  std::unique_ptr<Sentinels> sentinels;
  std::string note;  // the controller's own account, for the trial's fault_note
  std::vector<std::unique_ptr<RespProxy>> proxies;
  int64_t proxies_started_us = 0;
  Peer a, b;
};

// `where`: {"--ports", "P,..."} or, in Sentinel mode, {"--sentinels", "P,...", "--master-name", NAME}.
std::vector<std::string> PeerArgv(const TrialEnv& env, const ScImpl& impl, const PeerTrial& p, int client,
                                  const std::vector<std::string>& where, int64_t hold_ms, int64_t timeout_ms,
                                  int64_t ttl_ms) {
  std::vector<std::string> v;
  if (impl.runner == Runner::kNode) v = {env.node, env.drivers + "/node_peer.js", "--lib", impl.lib};
  else v = {env.python, env.drivers + "/py_peer.py"};
  const std::string base = env.tmp + "/" + p.tag + "-" + (client == 0 ? "a" : "b");
  v.insert(v.end(), where.begin(), where.end());
  const std::vector<std::string> args = {
      "--events", base + ".events", "--history-out", base + ".history", "--clients", "1",
      "--count", "1", "--key", p.key, "--ttl-ms", std::to_string(ttl_ms), "--acquire-timeout-ms",
      std::to_string(timeout_ms), "--hold-ms", std::to_string(hold_ms), "--counter-file", p.counter,
      "--client-base", std::to_string(client), "--deadline-ms", std::to_string(kDriverDeadlineMs), "--go-file",
      base + ".go", "--retry-until-timeout"};
  v.insert(v.end(), args.begin(), args.end());
  return v;
}

// The proxies in front of A's nodes, each with the fault on A's (first) connection.
Status StartProxies(const TrialEnv& env, const ScImpl& impl, Fault fault, const Timeline& t, PeerTrial* p) {
  FaultAction a;
  a.target = 0;
  a.duration_us = t.fault_ms * 1000;
  if (fault == Fault::kReleaseDelay) {
    a.kind = FaultAction::Kind::kDelayMessage;
    a.command = "ECHO";  // the marker right before the release: the release waits behind it
    a.occurrence = 1;
  } else {
    a.kind = FaultAction::Kind::kPartition;
    a.at_us = (kPartitionGoMs + t.fault_at_ms) * 1000;
  }
  p->proxies_started_us = MonotonicNowUs();
  for (int i = 0; i < impl.nodes; ++i) {
    ProxyOptions o;
    o.upstream_port = env.servers->port(i);
    o.faults = {a};
    o.max_duration_ms = 120'000;
    Result<std::unique_ptr<RespProxy>> started = RespProxy::Start(o);
    if (!started.ok()) return started.status().Prefixed("proxy");
    p->proxies.push_back(std::move(started).value());
  }
  return Status::Ok();
}

// Reads the child's stdout until a JSON line with `field` (at most 100 lines).
Result<json> AwaitLine(ChildProcess& c, const std::string& field, int64_t deadline_us) {
  std::string line;
  for (int i = 0; i < 100 && c.ReadLine(&line, deadline_us); ++i) {
    json j = json::parse(line, nullptr, false);
    if (j.is_object() && j.contains(field)) return j;
  }
  return Status::Failed("no {\"" + field + "\"} line");
}

// Sentinel failover: a master with its replica and three redis-sentinel watching them; the drivers
// find the master through the sentinels. {"--sentinels", ports, "--master-name", name}.
Result<std::vector<std::string>> StartSentinelWorld(PeerTrial* p) {
  RedisServerOptions so;
  so.with_replica = true;
  Result<std::unique_ptr<RedisServers>> servers = RedisServers::Start(so);
  if (!servers.ok()) return servers.status().Prefixed("master and replica");
  p->servers = std::move(servers).value();
  const SentinelOptions opt;
  Result<std::unique_ptr<Sentinels>> sentinels =
      Sentinels::Start(opt, p->servers->dir(), p->servers->port(0), p->servers->port(p->servers->replica_index()));
  if (!sentinels.ok()) return sentinels.status().Prefixed("sentinels");
  p->sentinels = std::move(sentinels).value();
  std::vector<int> ports;
  for (int i = 0; i < p->sentinels->count(); ++i) ports.push_back(p->sentinels->port(i));
  return std::vector<std::string>{"--sentinels", Join(ports), "--master-name", opt.master_name};
}

Status StartPeers(const TrialEnv& env, const ScImpl& impl, Fault fault, const Timeline& t, PeerTrial* p) {
  std::vector<int> direct, via_proxy;
  for (int i = 0; i < impl.nodes; ++i) direct.push_back(env.servers->port(i));
  std::vector<std::string> a_where = {"--ports", Join(direct)}, b_where = a_where;
  if (UsesProxy(fault)) {
    LOCKLAB_RETURN_IF_ERROR(StartProxies(env, impl, fault, t, p));
    for (const auto& x : p->proxies) via_proxy.push_back(x->port());
    a_where = {"--ports", Join(via_proxy)};
  } else if (fault == Fault::kSentinel) {
    Result<std::vector<std::string>> where = StartSentinelWorld(p);
    if (!where.ok()) return where.status();
    a_where = b_where = *where;
  }
  p->a.argv = PeerArgv(env, impl, *p, 0, a_where, t.a_hold_ms, 2000, t.ttl_ms);
  p->a.argv.push_back("--announce");
  if (fault == Fault::kReleaseDelay) p->a.argv.push_back("--release-marker");
  p->b.argv = PeerArgv(env, impl, *p, 1, b_where, t.b_hold_ms, t.b_timeout_ms, t.ttl_ms);
  for (Peer* x : {&p->a, &p->b}) {
    x->history = env.tmp + "/" + p->tag + "-" + (x == &p->a ? "a" : "b") + ".history";
    x->err = x->history + ".stderr";
    const std::vector<std::string> extra = {"NODE_PATH=" + env.modules + "/node_modules", "PYTHONDONTWRITEBYTECODE=1"};
    LOCKLAB_RETURN_IF_ERROR(x->child.Start(x->argv, extra, x->err).Prefixed("cannot start a driver"));
  }
  const int64_t deadline = MonotonicNowUs() + kReadyTimeoutUs;
  for (Peer* x : {&p->a, &p->b})
    if (Result<json> r = AwaitLine(x->child, "ready", deadline); !r.ok())
      return Status::Failed("driver not ready: " + TailOnOneLine(ReadWholeFile(x->err), 3));
  return Status::Ok();
}

std::string GoFile(const TrialEnv& env, const PeerTrial& p, char who) {
  return env.tmp + "/" + p.tag + "-" + who + ".go";
}

// A goes (after the stale keys of a crashed client are in place); A's {"holding"} time.
Result<int64_t> LetAGo(const TrialEnv& env, const ScImpl& impl, Fault fault, const Timeline& t, PeerTrial* p) {
  if (fault == Fault::kPartition) {
    const int64_t go_us = p->proxies_started_us + kPartitionGoMs * 1000;
    if (MonotonicNowUs() > go_us - 20'000)
      return Status::Failed("the drivers took longer than " + std::to_string(kPartitionGoMs) + " ms to start");
    SleepUntilUs(go_us);
  }
  if (t.stale_minority)
    for (int i : {3, 4}) {
      Result<std::string> r = env.servers->Query(i, {"SET", impl.key_prefix + p->key, kStaleValue, "PX", std::to_string(t.stale_px_ms)});
      if (!r.ok()) return r.status().Prefixed("stale key");
    }
  if (fault == Fault::kSentinel)  // A's lock never reaches the replica
    LOCKLAB_RETURN_IF_ERROR(p->servers->IsolateReplica().Prefixed("cutting the replica off"));
  Touch(GoFile(env, *p, 'a'));
  Result<json> holding = AwaitLine(p->a.child, "holding", MonotonicNowUs() + 10'000'000);
  if (!holding.ok() || !(*holding)["t_us"].is_number_integer()) return Status::Failed("A never held the lock");
  if (t.stale_minority)  // A must hold a bare majority: nodes 3 and 4 still the crashed client's
    for (int i : {3, 4}) {
      Result<std::string> v = env.servers->Query(i, {"GET", impl.key_prefix + p->key});
      if (v.ok() && !v->empty() && *v != kStaleValue)
        return Status::Failed("set-up missed: A holds node " + std::to_string(i) + " too (it asked after the "
                              "crashed client's key expired)");
    }
  return (*holding)["t_us"].get<int64_t>();
}

// Waits (10 s at most) until the sentinels name the replica as the master: the nemesis line.
Result<std::string> AwaitPromotion(PeerTrial* p, int64_t killed_us) {
  const int replica_port = p->servers->port(p->servers->replica_index());
  for (int i = 0; i < 1000; ++i) {
    std::string host;
    int port = 0;
    if (p->sentinels->MasterAddress(&host, &port).ok() && port == replica_port) {
      const int64_t now = MonotonicNowUs();
      p->note = "Redis Sentinel (" + std::to_string(p->sentinels->count()) + " redis-sentinel) named the replica " +
                host + ":" + std::to_string(port) + " the master " + std::to_string((now - killed_us) / 1000) +
                " ms after the master died";
      return NemesisLine(now, "promote", p->note);
    }
    SleepUntilUs(MonotonicNowUs() + 10'000);
  }
  return Status::Failed("Redis Sentinel did not promote the replica within 10 s; sentinel 0's log ends with: " +
                        TailOnOneLine(p->sentinels->LogTail(0), 3));
}

// The controller's part of the timeline from A's hold at t0; the fault lines for the history.
Result<std::vector<std::string>> PlayTimeline(const TrialEnv& env, Fault fault, const Timeline& t, int64_t t0,
                                              PeerTrial* p) {
  std::vector<std::string> lines;
  const int64_t at = t0 + t.fault_at_ms * 1000;
  const bool b_first = t.b_go_ms < t.fault_at_ms;
  if (b_first) {
    SleepUntilUs(t0 + t.b_go_ms * 1000);
    Touch(GoFile(env, *p, 'b'));
  }
  SleepUntilUs(at);
  const int64_t now = MonotonicNowUs();
  Status st = Status::Ok();
  if (fault == Fault::kPause) {
    p->a.child.Signal(SIGSTOP);
    lines.push_back(NemesisLine(now, "pause", "SIGSTOP of A for " + std::to_string(t.fault_ms) + " ms"));
  } else if (fault == Fault::kClockJump) {
    st = env.servers->JumpClock(t.target_node, t.fault_ms * 1000);
    lines.push_back(NemesisLine(now, "clock-jump", "node " + std::to_string(t.target_node) + " +" +
                                                       std::to_string(t.fault_ms) + " ms"));
  } else if (fault == Fault::kRestart) {
    st = env.servers->Restart(t.target_node);
    lines.push_back(NemesisLine(now, "restart", "node " + std::to_string(t.target_node) + " (answered after " +
                                                    std::to_string((MonotonicNowUs() - now) / 1000) + " ms)"));
  } else if (fault == Fault::kSentinel) {
    st = p->servers->KillMasterResumeReplica(0);  // the replica missed A's lock
    lines.push_back(NemesisLine(now, "kill", "master killed (its replica cut off since before A asked); "
                                             "Redis Sentinel is to promote the replica"));
  }
  if (!st.ok()) {
    p->a.child.Signal(SIGCONT);
    return st.Prefixed("fault");
  }
  if (!b_first) {
    SleepUntilUs(t0 + t.b_go_ms * 1000);
    Touch(GoFile(env, *p, 'b'));
  }
  if (fault == Fault::kSentinel) {
    Result<std::string> line = AwaitPromotion(p, now);
    if (!line.ok()) return line.status();
    lines.push_back(*line);
  }
  if (fault == Fault::kPause) {
    SleepUntilUs(at + t.fault_ms * 1000);
    p->a.child.Signal(SIGCONT);
    lines.push_back(NemesisLine(MonotonicNowUs(), "resume", "SIGCONT of A"));
  }
  return lines;
}

// Both drivers to their end; their histories and A's notifications.
Status CollectPeers(PeerTrial* p, std::vector<std::string>* texts, std::vector<Learned>* learned) {
  for (Peer* x : {&p->a, &p->b}) {
    std::string out;
    int status = -1;
    const bool in_time = x->child.Finish(MonotonicNowUs() + (kDriverDeadlineMs + 5000) * 1000, &out, &status);
    if (!in_time || (status != 0 && status != 70))
      return Status::Failed(std::string(x == &p->a ? "A" : "B") + " exited with status " + std::to_string(status) +
                            ": " + TailOnOneLine(ReadWholeFile(x->err), 3));
    bool have = false;
    texts->push_back(ReadWholeFile(x->history, &have));
    if (!have) return Status::Failed("no history from " + std::string(x == &p->a ? "A" : "B"));
    std::istringstream in(out);
    std::string line;
    for (int i = 0; i < 1000 && std::getline(in, line); ++i) {
      const json j = json::parse(line, nullptr, false);
      if (!j.is_object() || !j.contains("learned") || !j["learned"].is_array()) continue;
      for (const json& l : j["learned"])
        if (l.is_object() && l.value("t_us", int64_t{0}) > 0)
          learned->push_back(Learned{l.value("client", 0), l.value("t_us", int64_t{0}), l.value("how", std::string())});
    }
  }
  return Status::Ok();
}

// The proxies' reports, one line each, and each applied fault's asked and measured length.
void NoteProxies(const PeerTrial& p, TrialOutcome* o) {
  for (const auto& x : p.proxies)
    for (const std::string& r : x->Reports()) {
      o->fault_note += (o->fault_note.empty() ? "" : " ") + r;
      const json j = json::parse(r, nullptr, false);
      if (j.is_object() && j.contains("asked_ms") && j.contains("measured_ms") && j["measured_ms"].is_number())
        o->proxy_ms.emplace_back(j["asked_ms"].get<double>(), j["measured_ms"].get<double>());
    }
}

TrialOutcome RunPeerTrial(const TrialEnv& env, const ScImpl& impl, Fault fault, const Timeline& t, int trial) {
  TrialOutcome failed;
  PeerTrial p;
  p.tag = impl.id + "-" + FaultId(fault) + "-" + std::to_string(trial);
  p.key = "locklab:sc:" + p.tag;
  p.counter = env.tmp + "/" + p.tag + ".counter";
  std::ofstream(p.counter) << "0";
  Status st = StartPeers(env, impl, fault, t, &p);
  Result<int64_t> t0 = st.ok() ? LetAGo(env, impl, fault, t, &p) : Result<int64_t>(st);
  Result<std::vector<std::string>> lines =
      t0.ok() ? PlayTimeline(env, fault, t, *t0, &p) : Result<std::vector<std::string>>(t0.status());
  if (fault == Fault::kClockJump) (void)env.servers->SetClock(t.target_node, 0, 0);
  if (!lines.ok()) {
    failed.error = lines.status().message();
    return failed;
  }
  std::vector<std::string> texts;
  std::vector<Learned> learned;
  if (Status c = CollectPeers(&p, &texts, &learned); !c.ok()) {
    failed.error = c.message();
    return failed;
  }
  const int64_t fault_start_us = *t0 + (fault == Fault::kReleaseDelay ? t.a_hold_ms : t.fault_at_ms) * 1000;
  Result<std::string> merged = MergeHistories(texts, *lines);
  Result<TrialOutcome> o = merged.ok() ? JudgeTrial(*merged, fault_start_us, learned) : merged.status();
  if (!o.ok()) {
    failed.error = o.status().message();
    return failed;
  }
  o->fault_note = p.note;
  NoteProxies(p, &*o);
  if (env.keep_histories) std::ofstream(env.tmp + "/" + p.tag + ".jsonl") << *merged;
  return *o;
}

}  // namespace

TrialOutcome RunTrial(const TrialEnv& env, const ScImpl& impl, Fault fault, const Timeline& t, int trial) {
  if (impl.runner == Runner::kLocklab) return RunLocklabTrial(env, impl, fault, t, trial);
  return RunPeerTrial(env, impl, fault, t, trial);
}

}  // namespace locklab::scorecard
