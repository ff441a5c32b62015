#include "harness/real/redis_runtime.h"

#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "harness/real/cpu_time.h"
#include "harness/real/hiredis_reply.h"
#include "harness/real/redis_runtime_impl.h"
#include "harness/run/backends.h"
#include "sim/scripts.h"

namespace locklab {

// ---------------------------------------------------------------------------------------------
// Set-up and tear-down.

Status RedisRuntime::Impl::Init() {
  event_config* ec = event_config_new();
  // One thread; timers at µs precision (timerfd) and from a fresh clock, not one cached at the
  // start of the loop iteration, so that sleeps never end early.
  event_config_set_flag(ec, EVENT_BASE_FLAG_NOLOCK);
  event_config_set_flag(ec, EVENT_BASE_FLAG_NO_CACHE_TIME);
  event_config_set_flag(ec, EVENT_BASE_FLAG_PRECISE_TIMER);
  // Coalesce the add/del pairs hiredis makes around every write into no system call at all.
  event_config_set_flag(ec, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
  base = event_base_new_with_config(ec);
  event_config_free(ec);
  if (base == nullptr) return Status::Failed("redis runtime: cannot create the libevent loop");
  deadline_ev = event_new(base, -1, 0, &Impl::OnDeadline, this);
  long_deadline_ev = event_new(base, -1, 0, &Impl::OnLongDeadline, this);
  ready_ev = event_new(base, -1, 0, &Impl::OnReadyEv, this);
  net = sim::Network(cfg.net, cfg.seed);
  cmd_by_client.assign(static_cast<size_t>(cfg.clients), 0);
  for (int c = 0; c < cfg.clients; ++c) {
    auto p = std::make_unique<Client>();
    p->rt = this;
    p->id = c;
    p->env = std::make_unique<ClientEnv>(this, c);
    p->rng = sim::Rng(cfg.seed ^ (0x5851f42d4c957f2dULL * static_cast<uint64_t>(c + 1)));
    p->conns.resize(static_cast<size_t>(cfg.nodes));
    p->sub_conns.resize(static_cast<size_t>(cfg.nodes));
    for (int e = 0; e < cfg.nodes; ++e) {
      p->conns[static_cast<size_t>(e)] = Conn{this, c, e, nullptr, false, false, false};
      p->sub_conns[static_cast<size_t>(e)] = Conn{this, c, e, nullptr, false, false, true};
    }
    p->pause_end = event_new(base, -1, 0, &Impl::OnPauseEnd, p.get());
    clients.push_back(std::move(p));
  }
  shas.assign(static_cast<size_t>(Script::kCount), std::string());
  return Status::Ok();
}

Status RedisRuntime::Impl::LoadScripts(const std::string& host, int port) {
  for (const auto& def : sim::Scripts()) {
    Result<std::string> sha = QueryRedis(host, port, {"SCRIPT", "LOAD", def.lua});
    if (!sha.ok()) return sha.status();
    shas[static_cast<size_t>(def.id)] = std::move(sha).value();
  }
  return Status::Ok();
}

RedisRuntime::Impl::~Impl() {
  run_over = true;  // from here on nothing is delivered and nothing resumes
  CloseSubConns(-1);
  CloseSentinelSubs();
  if (sentinel_fo.deadline_ev != nullptr) event_free(sentinel_fo.deadline_ev);
  for (auto& c : clients)
    for (auto& conn : c->conns)
      if (conn.ac != nullptr) {
        redisAsyncContext* ac = conn.ac;
        conn.ac = nullptr;
        redisAsyncFree(ac);  // pending callbacks run with NULL and are dropped
      }
  for (auto& c : clients)
    for (auto& rec : c->subs)
      if (rec->deadline_ev != nullptr) event_free(rec->deadline_ev);
  for (WaitTimer* t : wait_timers) {
    event_free(t->ev);
    delete t;
  }
  wait_timers.clear();
  for (Later* l : laters) {
    event_free(l->ev);
    delete l;
  }
  laters.clear();
  if (long_deadline_ev != nullptr) event_free(long_deadline_ev);
  pool.clear();
  free_recs.clear();
  if (deadline_ev != nullptr) event_free(deadline_ev);
  for (auto& f : fault_timers) event_free(f->ev);
  for (auto& r : restarts)
    if (r.ev != nullptr) event_free(r.ev);
  for (auto& c : clients) {
    c->held.clear();
    c->spawned.clear();  // destroys the frames (nothing refers to them any more)
    c->main = Task<void>();
    if (c->pause_end != nullptr) event_free(c->pause_end);
  }
  if (ready_ev != nullptr) event_free(ready_ev);
  if (cap_ev != nullptr) event_free(cap_ev);
  if (watchdog_ev != nullptr) event_free(watchdog_ev);
  if (base != nullptr) event_base_free(base);
  sentinels.reset();  // stops our redis-sentinel processes
  servers.reset();    // stops our redis-server processes
}

Status RedisRuntime::Impl::ConnectAll() {
  const int total = cfg.clients * cfg.nodes;
  for (auto& c : clients)
    for (auto& conn : c->conns)
      if (Status s = EnsureConnected(conn); !s.ok()) return s.Prefixed("redis runtime");
  const int64_t deadline = MonoNowUs() + kConnectWaitUs;
  event* tick = event_new(base, -1, EV_PERSIST, [](evutil_socket_t, short, void*) {}, nullptr);
  const timeval tv = Tv(50'000);
  event_add(tick, &tv);  // wakes the loop so that the deadline is checked
  while (conn_ok + conn_failed < total && MonoNowUs() < deadline) event_base_loop(base, EVLOOP_ONCE);
  event_free(tick);
  if (conn_failed > 0 || conn_ok < total) {
    return Status::Failed("redis runtime: " + std::to_string(total - conn_ok) + " of " + std::to_string(total) +
                          " connections could not be made" +
                          (first_conn_error.empty() ? " in time" : ": " + first_conn_error));
  }
  return Status::Ok();
}

void RedisRuntime::Impl::SnapshotStats() {
  auto snap = [&](const std::string& host, int port) {
    if (Result<std::string> out = QueryRedis(host, port, {"INFO", "commandstats"}); out.ok())
      stats_at_start[host + ":" + std::to_string(port)] = ParseCommandStats(*out);
  };
  for (int e = 0; e < cfg.nodes; ++e) snap(ep_host[static_cast<size_t>(e)], ep_port[static_cast<size_t>(e)]);
  if (servers && servers->has_replica()) snap("127.0.0.1", servers->port(servers->replica_index()));
}


void RedisRuntime::Impl::OnCap(evutil_socket_t, short, void* arg) {
  auto* rt = static_cast<Impl*>(arg);
  rt->Fail("redis runtime: the run hit its time limit (" + Ms(rt->TrueNowUs()) + " of true time) with " +
           std::to_string(rt->mains_left) + " client(s) not done: a client may be retrying forever");
}

void RedisRuntime::Impl::OnWatchdog(evutil_socket_t, short, void* arg) {
  auto* rt = static_cast<Impl*>(arg);
  if (rt->mains_left <= 0 || rt->live_calls() > 0 || !rt->ready.empty() ||
      rt->faults_pending > 0 || !rt->wait_timers.empty() || !rt->laters.empty())
    return;
  for (const auto& c : rt->clients) {
    if (c->paused || !c->held.empty()) return;
    for (const auto& rec : c->subs)
      if (!rec->callers.empty()) return;
  }
  rt->Fail("redis runtime: stalled at " + Ms(rt->TrueNowUs()) + ": " + std::to_string(rt->mains_left) +
           " client(s) wait for something that never happens");
}

// ---------------------------------------------------------------------------------------------

Status RedisRuntime::Impl::Run(const RuntimeLimits& limits) {
  if (ran) return Status::Failed("redis runtime: Run() may be called once");
  ran = true;
  if (!setup_error.empty()) return Status::Failed(setup_error);
  // Connections first, outside the run's time: a thousand clients connecting during the run
  // would measure the TCP handshake instead of the lock.
  if (Status s = ConnectAll(); !s.ok()) return s;
  if (sentinels)
    if (Status s = SubscribeSentinels(); !s.ok()) return s;
  SnapshotStats();

  start_mono_us = MonoNowUs();
  running = true;
  // Faults due at the start are applied now, before any client runs, in the order planned: as
  // the simulator orders them (faults planned before the run come first at their instant). As
  // zero-length timers they raced the clients' first commands (a partition at 0 ms could miss a
  // SET that client 0 sent at 0.0 ms).
  for (const auto& f : planned) {
    if (f.at_us <= 0) {
      ApplyFault(f, 0);
    } else {
      ArmFault(f, 0, f.at_us);
    }
  }
  cap_ev = event_new(base, -1, 0, &Impl::OnCap, this);
  const timeval cap = Tv(limits.max_duration_us);
  event_add(cap_ev, &cap);
  watchdog_ev = event_new(base, -1, EV_PERSIST, &Impl::OnWatchdog, this);
  const timeval wd = Tv(kWatchdogUs);
  event_add(watchdog_ev, &wd);
  for (auto& c : clients)
    if (c->has_main) PushReady(Item{Item::kResume, c->id, c->main.handle().address()});
  if (!ready.empty()) ScheduleReady();

  if (const char* path = std::getenv("LOCKLAB_LOOP_LOG"); path != nullptr) loop_log = std::fopen(path, "w");
  if (pass_samples != nullptr) {
    pass_end_cpu_us = ClockUs(CLOCK_THREAD_CPUTIME_ID);
    pass_end_blocks = ThreadBlocks();
  }
  const LoopCpuPin pin(cpu_split);  // the loop on a CPU of its own (cpu_placement.h), until the run ends
  while (mains_left > 0 && fail_msg.empty()) {
    ++loop_pass;
    if (event_base_loop(base, EVLOOP_ONCE) < 0) Fail("redis runtime: the event loop failed");
    EndPass();
  }
  if (loop_log != nullptr) std::fclose(loop_log);
  loop_log = nullptr;
  running = false;
  run_over = true;
  CloseSubConns(-1);  // unsubscribes: Redis drops a closed connection's subscriptions
  CloseSentinelSubs();
  event_del(cap_ev);
  event_del(watchdog_ev);
  // A crashed client's frames go now: nothing will ever resume them.
  for (auto& c : clients)
    if (c->crashed) {
      c->held.clear();
      c->spawned.clear();
      c->main = Task<void>();
    }
  if (!fail_msg.empty()) return Status::Failed(fail_msg);
  return Status::Ok();
}

void RedisRuntime::Impl::EndPass() {
  if (loop_log != nullptr) LogPassEnd();
  if (wake_samples != nullptr) pass_end_us = TrueNowUs();  // only RecordWakes reads it
  if (pass_samples != nullptr) {
    const int64_t cpu_us = ClockUs(CLOCK_THREAD_CPUTIME_ID);
    const double blocks = ThreadBlocks();
    if (PassSteps() > 0 && pass_samples->size() < RedisRuntime::kMaxPassSamples)
      pass_samples->push_back({pass_steps[kStepTimer], pass_steps[kStepWrite], pass_steps[kStepRead],
                               pass_steps[kStepHeldReply], blocks > pass_end_blocks,
                               static_cast<double>(cpu_us - pass_end_cpu_us)});
    pass_end_cpu_us = cpu_us;
    pass_end_blocks = blocks;
  }
  for (int& n : pass_steps) n = 0;
}

// ---------------------------------------------------------------------------------------------
// RedisRuntime: the public face.

RedisRuntime::RedisRuntime(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RedisRuntime::~RedisRuntime() = default;

int RedisRuntime::client_count() const { return impl_->cfg.clients; }
int RedisRuntime::node_count() const { return impl_->cfg.nodes; }
Env& RedisRuntime::env(int client) { return *impl_->clients[static_cast<size_t>(client)]->env; }
int64_t RedisRuntime::TrueNowUs() { return impl_->running || impl_->run_over ? impl_->TrueNowUs() : 0; }
void RedisRuntime::set_history(History* h) { impl_->history = h; }

void RedisRuntime::SetClientClock(int client, const ClockSetting& c) {
  sim::Clock& clock = impl_->clients[static_cast<size_t>(client)]->clock;
  clock.offset_us = c.offset_us;
  clock.drift_ppm = c.drift_ppm;
}

void RedisRuntime::SetNodeClock(int node, const ClockSetting& c) {
  Impl& rt = *impl_;
  if (c.offset_us == 0 && c.drift_ppm == 0) return;
  if (!rt.servers) {
    rt.setup_error = "node clock settings need control of the redis-server processes, but the servers given "
                     "with --redis are not locklab's: drop --redis to let locklab start its own servers";
    return;
  }
  if (Status s = rt.servers->SetClock(rt.ep_server[static_cast<size_t>(node)], c.offset_us, c.drift_ppm); !s.ok()) {
    rt.setup_error = "node " + std::to_string(node) + " clock: " + s.message();
    return;
  }
  rt.Note("node " + std::to_string(node) + " wall clock: offset " + Ms(c.offset_us) + ", drift " +
          std::to_string(c.drift_ppm) + " ppm (clock shim; applied to the wall clock only)");
}

Status RedisRuntime::PlanFault(const FaultAction& f) { return impl_->PlanFault(f); }

void RedisRuntime::StartClient(int client, Task<void> main) {
  Impl& rt = *impl_;
  auto& c = *rt.clients[static_cast<size_t>(client)];
  if (!c.has_main) ++rt.mains_left;
  c.has_main = true;
  c.main = rt.RunMain(client, std::move(main));
}

Status RedisRuntime::Run(const RuntimeLimits& limits) {
  const double cpu_start_us = CpuUs(RUSAGE_THREAD);
  Status ok = impl_->Run(limits);
  const double cpu_end_us = CpuUs(RUSAGE_THREAD);
  client_cpu_us_ = cpu_start_us >= 0 && cpu_end_us >= cpu_start_us ? cpu_end_us - cpu_start_us : -1;
  // Cross-check the client-side count with what the servers themselves counted: part of what
  // this runtime reports (Notes()), while the servers are still up.
  if (Result<std::map<std::string, int64_t>> calls = ServerCommandStats(); calls.ok()) {
    int64_t server_total = 0;
    std::string detail;
    for (const auto& [name, n] : *calls) {
      server_total += n;
      detail += (detail.empty() ? "" : ", ") + name + " " + std::to_string(n);
    }
    impl_->stats_note = "INFO commandstats: the servers counted " + std::to_string(server_total) +
                        " commands; clients sent " + std::to_string(impl_->cmd_total) + " (" + detail +
                        "; calls made inside scripts count there too)";
  } else {
    impl_->stats_note = "INFO commandstats unavailable: " + calls.status().message();
  }
  return ok;
}

CommandStats RedisRuntime::Commands() const {
  CommandStats s;
  s.total = impl_->cmd_total;
  s.by_name = impl_->cmd_by_name;
  s.by_client = impl_->cmd_by_client;
  return s;
}

std::vector<std::string> RedisRuntime::UnfiredFaults() const { return impl_->net.Unfired(); }

std::vector<std::string> RedisRuntime::Notes() const {
  const Impl& rt = *impl_;
  std::vector<std::string> out = rt.notes;
  if (rt.net_holds > 0) {
    out.push_back("network delay held in locklab: " + std::to_string(rt.net_holds) + " messages, planned mean " +
                  Ms(rt.net_planned_sum_us / rt.net_holds) + ", applied mean " +
                  Ms(rt.net_applied_sum_us / rt.net_holds) + ", latest by " + Ms(rt.net_late_max_us));
  }
  if (rt.lost_requests + rt.lost_replies > 0) {
    out.push_back("network loss emulated in locklab: " + std::to_string(rt.lost_requests) + " requests never sent, " +
                  std::to_string(rt.lost_replies) + " replies discarded");
  }
  if (rt.partition_drops > 0)
    out.push_back("partitions: " + std::to_string(rt.partition_drops) + " messages dropped in locklab");
  if (rt.messages_lost + rt.messages_dropped + rt.subscriptions_lost > 0) {
    out.push_back("pub/sub: " + std::to_string(rt.messages_received) + " messages received, " +
                  std::to_string(rt.messages_lost) + " lost in the emulated network, " +
                  std::to_string(rt.messages_dropped) + " dropped by full client queues (" +
                  std::to_string(Env::kMaxQueuedMessages) + " each), " + std::to_string(rt.subscriptions_lost) +
                  " subscriptions lost with their connection (no more messages on them)");
  }
  if (rt.notes.size() >= kMaxNotes) out.push_back("(more notes were left out)");
  if (!rt.stats_note.empty()) out.push_back(rt.stats_note);
  out.push_back("CPUs: " + (rt.servers ? CpuPlacementText(rt.cpu_split)
                                        : std::string("not pinned (the --redis servers run where they run)")));
  return out;
}

Result<std::map<std::string, int64_t>> RedisRuntime::ServerCommandStats() const {
  const Impl& rt = *impl_;
  std::map<std::string, int64_t> calls;
  for (int e = 0; e < rt.cfg.nodes; ++e) {
    const std::string& host = rt.ep_host[static_cast<size_t>(e)];
    const int port = rt.ep_port[static_cast<size_t>(e)];
    const Result<std::string> out = QueryRedis(host, port, {"INFO", "commandstats"});
    if (!out.ok()) return out.status();
    const auto now = ParseCommandStats(*out);
    auto it = rt.stats_at_start.find(host + ":" + std::to_string(port));
    for (const auto& [name, n] : now) {
      int64_t base = 0;
      if (it != rt.stats_at_start.end()) {
        auto b = it->second.find(name);
        if (b != it->second.end() && b->second <= n) base = b->second;  // else: restarted, counts from 0
      }
      if (n - base > 0) calls[name] += n - base;
    }
  }
  return calls;
}

std::string RedisRuntime::endpoint_address(int endpoint) const {
  return impl_->ep_host[static_cast<size_t>(endpoint)] + ":" + std::to_string(impl_->ep_port[static_cast<size_t>(endpoint)]);
}

Result<std::string> RedisRuntime::QueryEndpoint(int endpoint, const std::vector<std::string>& argv) const {
  return QueryRedis(impl_->ep_host[static_cast<size_t>(endpoint)], impl_->ep_port[static_cast<size_t>(endpoint)], argv);
}

void RedisRuntime::RecordWakes(std::vector<WakeSample>* out) { impl_->wake_samples = out; }
void RedisRuntime::RecordPasses(std::vector<PassSample>* out) { impl_->pass_samples = out; }

RedisServers* RedisRuntime::servers() { return impl_->servers.get(); }

namespace {

Status CheckConfig(const BackendConfig& cfg, const std::vector<std::string>& existing_endpoints) {
  if (cfg.clients < 1 || cfg.clients > kMaxClients)
    return Status::Invalid("redis runtime: clients must be in [1, " + std::to_string(kMaxClients) + "]");
  if (cfg.nodes < 1 || cfg.nodes > kMaxNodes)
    return Status::Invalid("redis runtime: nodes must be in [1, " + std::to_string(kMaxNodes) + "]");
  if (cfg.command_timeout_us <= 0) return Status::Invalid("redis runtime: command_timeout_us must be > 0");
  if (!existing_endpoints.empty() && static_cast<int>(existing_endpoints.size()) != cfg.nodes)
    return Status::Invalid("redis runtime: " + std::to_string(existing_endpoints.size()) + " endpoints given for " +
                           std::to_string(cfg.nodes) + " nodes");
  if (!existing_endpoints.empty() && cfg.with_replica)
    return Status::Invalid("redis runtime: a replica (failover) needs locklab's own servers: drop --redis");
  if (cfg.failover_by_sentinel && !cfg.with_replica)
    return Status::Invalid("redis runtime: Sentinel mode watches node 0 and its replica: it needs with_replica");
  return Status::Ok();
}

}  // namespace

// Our servers, or the given ones: the endpoints' addresses.
Status RedisRuntime::Impl::SetEndpoints(const std::vector<std::string>& existing_endpoints) {
  if (existing_endpoints.empty()) {
    cpu_split = PlanCpuSplit();  // given servers run where they run: nothing to pin then
    RedisServerOptions opt;
    opt.masters = cfg.nodes;
    opt.with_replica = cfg.with_replica;
    if (cpu_split) opt.cpus = cpu_split->servers;
    Result<std::unique_ptr<RedisServers>> started = RedisServers::Start(opt);
    if (!started.ok()) return started.status();
    servers = std::move(started).value();
    for (int e = 0; e < cfg.nodes; ++e) {
      ep_host.push_back("127.0.0.1");
      ep_port.push_back(servers->port(e));
      ep_server.push_back(e);
    }
    return cfg.failover_by_sentinel ? StartSentinels() : Status::Ok();
  }
  for (const auto& ep : existing_endpoints) {
    std::string host;
    int port = 0;
    if (!ParseHostPort(ep, &host, &port))
      return Status::Invalid("redis runtime: bad endpoint '" + ep + "' (want HOST:PORT)");
    ep_host.push_back(host);
    ep_port.push_back(port);
    ep_server.push_back(-1);
  }
  return Status::Ok();
}

Result<std::unique_ptr<Runtime>> MakeRedisRuntime(const BackendConfig& cfg,
                                                  const std::vector<std::string>& existing_endpoints) {
  if (Status s = CheckConfig(cfg, existing_endpoints); !s.ok()) return s;
  // A write to a connection whose server just died must be an error, not the end of us.
  signal(SIGPIPE, SIG_IGN);
  RaiseFileLimit();

  auto impl = std::make_unique<RedisRuntime::Impl>();
  impl->cfg = cfg;
  if (Status s = impl->SetEndpoints(existing_endpoints); !s.ok()) return s;
  if (Status s = impl->Init(); !s.ok()) return s;
  for (int e = 0; e < cfg.nodes; ++e) {
    Status s = impl->LoadScripts(impl->ep_host[static_cast<size_t>(e)], impl->ep_port[static_cast<size_t>(e)]);
    if (!s.ok()) return Status::Failed("redis runtime: loading the scripts on " + impl->ServerName(e) + ": " + s.message());
  }
  if (impl->servers && impl->servers->has_replica()) {
    // A replica may refuse; EVAL covers it after a failover.
    (void)impl->LoadScripts("127.0.0.1", impl->servers->port(impl->servers->replica_index()));
  }
  return std::unique_ptr<Runtime>(new RedisRuntime(std::move(impl)));
}

void RegisterRedisBackend() { RegisterBackend("redis", &MakeRedisRuntime); }

}  // namespace locklab
