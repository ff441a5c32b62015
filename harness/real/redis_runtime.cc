#include "harness/real/hiredis_reply.h"
#include "harness/real/real_clock.h"
#include "harness/real/redis_runtime.h"
#include "harness/run/backends.h"
#include "harness/real/resp.h"

#include <event2/event.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <coroutine>
#include <cstdio>
#include <deque>
#include <functional>
#include <limits>
#include <sstream>
#include <unordered_set>
#include <utility>

#include "sim/rng.h"
#include "sim/scripts.h"

namespace locklab {

namespace {

// Limits: going over one fails the run with a message instead of growing without bound.
constexpr size_t kMaxReady = 10'000'000;     // resumptions waiting for the loop
constexpr size_t kMaxHeld = 1'000'000;       // resumptions held for one paused client
constexpr size_t kMaxInFlight = 2'000'000;   // commands the runtime tracks at once
constexpr size_t kMaxSpawned = 100'000;      // live background tasks per client
constexpr size_t kMaxNotes = 200;
constexpr int kMaxClients = 100'000;
constexpr int kMaxNodes = 64;
constexpr int64_t kConnectWaitUs = 15'000'000;  // all connections up before the run starts
constexpr int64_t kRestartWaitUs = 10'000'000;  // a restarted server must answer by then
constexpr int64_t kRestartPollUs = 2'000;
constexpr int64_t kWatchdogUs = 250'000;        // stall detection period

int64_t MonoNowUs() { return MonotonicNowUs(); }

int64_t RealNowUs() { return RealtimeNowUs(); }

timeval Tv(int64_t us) {
  if (us < 0) us = 0;
  return timeval{static_cast<time_t>(us / 1'000'000), static_cast<suseconds_t>(us % 1'000'000)};
}

std::string Ms(int64_t us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f ms", static_cast<double>(us) / 1000.0);
  return buf;
}

bool NeedsServerControl(FaultAction::Kind k) {
  return k == FaultAction::Kind::kCrashNode || k == FaultAction::Kind::kRestartNode ||
         k == FaultAction::Kind::kPauseNode || k == FaultAction::Kind::kNodeClockJump ||
         k == FaultAction::Kind::kFailover;
}



}  // namespace

// ---------------------------------------------------------------------------------------------

struct RedisRuntime::Impl {
  class ClientEnv;

  // One resumption that goes through a client's gate (paused: held; crashed: dropped).
  struct Item {
    enum Kind : uint8_t {
      kResume,       // resume coroutine address `ptr`
      kDeliver,      // complete CallRec `ptr`
      kMessage,      // a published message reaches the client
      kWaitTimeout,  // WaitMessage `id`'s timer
      kSubscribed,   // SubRec `ptr` answered: id = gen << 1 | confirmed
      kSubDeadline,  // SubRec `ptr`: callers whose deadline passed get false
    };
    Kind kind;
    int client;
    void* ptr = nullptr;
    uint64_t id = 0;
    bool deliver() const { return kind == kDeliver; }
  };

  // One hiredis connection: client -> endpoint. Made lazily, re-made after it drops.
  struct Conn {
    Impl* rt = nullptr;
    int client = 0;
    int endpoint = 0;
    redisAsyncContext* ac = nullptr;
    bool connected = false;
    bool flush_pending = false;
    bool sub = false;  // a subscription connection (SUBSCRIBE only)
  };

  // One subscription (endpoint, channel) of a client. Never freed during the run (hiredis
  // holds it as the subscription callback's privdata); reused once idle.
  struct SubRec {
    enum class State : uint8_t { kNone, kPending, kConfirmed };
    Impl* rt = nullptr;
    int client = 0;
    int endpoint = 0;
    std::string channel;
    State state = State::kNone;
    uint32_t gen = 0;         // bumped when it starts over or its connection is lost
    bool in_hiredis = false;  // a callback of hiredis's refers to it
    std::vector<std::pair<SubscribeCall*, int64_t>> callers;  // waiting, with deadlines (true time)
    event* deadline_ev = nullptr;
  };

  // A WaitMessage's timer.
  struct WaitTimer {
    Impl* rt;
    int client;
    uint64_t id;
    event* ev;
  };

  // Something to do after a while: a sleep's end, or what waits out a network delay (a
  // SUBSCRIBE, its answer, a message held in transit).
  struct Later {
    Impl* rt;
    event* ev;
    std::function<void()> fn;
  };

  struct Client {
    Impl* rt = nullptr;
    int id = 0;
    std::unique_ptr<ClientEnv> env;
    ClockSetting clock;
    int64_t jumps_us = 0;
    sim::Rng rng{0};
    bool has_main = false;
    bool main_done = false;
    bool crashed = false;
    bool paused = false;
    int64_t paused_until_us = 0;
    int64_t pause_started_us = 0;
    int64_t pause_planned_us = 0;
    std::string pause_label;  // "on its 1st GET" when an on_send trigger started the pause
    Task<void> main;
    std::vector<Task<void>> spawned;
    std::deque<Item> held;
    std::vector<Conn> conns;  // one per endpoint; never resized after construction
    event* pause_end = nullptr;
    std::vector<Conn> sub_conns;  // subscription connections, one per endpoint (made on Subscribe)
    std::vector<std::unique_ptr<SubRec>> subs;
    int64_t queued_messages = 0;
    struct Waiter {
      uint64_t id;
      MessageWait* wait;
      WaitTimer* timer;  // null once it fired
    };
    std::deque<Waiter> waiters;  // WaitMessage calls, longest waiting first
    uint64_t next_waiter = 0;
  };

  // One command from StartCall until nobody refers to it any more. Owned by the runtime (not
  // by the caller's frame, which may be destroyed by a crash while the command is still on
  // its way), returned to the pool by TryFree once every party is done with it. Pooled, never
  // freed during a run, so that a stale deadline entry can check `seq` safely.
  struct CallRec {
    Impl* rt = nullptr;
    uint64_t seq = 0;  // identifies this use of a pooled record (0 = free)
    int client = 0;
    int endpoint = 0;
    PendingCall* call = nullptr;  // null once delivered or dropped
    Command cmd;
    event* hold_ev = nullptr;  // kept across reuses of the record
    int64_t start_us = 0;       // true time of StartCall
    int64_t hold_start_us = 0;
    int64_t hold_planned_us = 0;
    int matcher = -1;           // kDelayMessage that matched this command
    bool hold_is_reply = false;
    bool hold_pending = false;
    bool hiredis_pending = false;  // hiredis will call OnReply (with a reply or NULL)
    bool decided = false;          // the caller's outcome is fixed
    bool delivered = false;        // Finish called, or dropped (caller crashed / run over)
    bool in_queue = false;         // an Item in the ready queue or a held queue points here
    bool retried_eval = false;     // NOSCRIPT -> EVAL done
    Reply reply;                   // the decided outcome
    Reply held_reply;              // a reply held for its network delay
  };

  // Every command has the same timeout, so deadlines come in start order: one FIFO and one
  // timer for all of them (a libevent timer per command costs a timerfd_settime each).
  struct Deadline {
    int64_t at_us;
    CallRec* rec;
    uint64_t seq;
  };
  // The command it watches was answered (or its record reused): the entry can go.
  static bool IsStale(const Deadline& d) { return d.rec->seq != d.seq || d.rec->decided; }

  // Our libevent adapter for hiredis (instead of hiredis's own): a persistent read event, and
  // reads wrapped so that commands written from inside reply callbacks are flushed right after.
  struct Adapter {
    Impl* rt;
    redisAsyncContext* ac;
    event* rev;
    event* wev;
  };

  struct FaultTimer {
    Impl* rt;
    FaultAction f;
    int step;  // failover: 0 = isolate the replica, 1 = promote it
    event* ev;
  };

  struct Matcher {
    int client;
    std::string name;
    int occurrence;
    int64_t extra_us;
    int seen = 0;
  };

  // A client pause or crash fired by the client's n-th command of a name (FaultAction::on_send).
  struct Trigger {
    FaultAction f;
    std::string name;  // as Command::Name() gives it, or "*"
    int seen = 0;
  };

  struct Partition {
    int client, node;
    int64_t from_us, to_us;
  };

  struct RestartPoll {
    int endpoint = -1;
    int server = -1;
    int64_t started_us = 0;
    event* ev = nullptr;
  };

  // --- State. ---
  BackendConfig cfg;
  std::unique_ptr<RedisServers> servers;  // null: endpoints given by the user
  std::vector<std::string> ep_host;
  std::vector<int> ep_port;
  std::vector<int> ep_server;  // endpoint -> our server index (when ours)
  std::vector<std::string> shas;  // by Script value
  std::string resp_buf;           // the command being encoded (Write), kept for its capacity
  event_base* base = nullptr;
  std::vector<std::unique_ptr<Client>> clients;
  History* history = nullptr;
  int64_t start_mono_us = 0;
  bool running = false;
  bool run_over = false;
  bool ran = false;
  int mains_left = 0;
  std::string fail_msg;
  std::string setup_error;
  sim::Rng net_rng{1};

  std::deque<Item> ready;
  event* ready_ev = nullptr;
  bool ready_scheduled = false;
  event* cap_ev = nullptr;
  event* watchdog_ev = nullptr;

  std::vector<std::unique_ptr<CallRec>> pool;
  std::vector<CallRec*> free_recs;
  uint64_t next_seq = 1;
  std::deque<Deadline> deadlines;
  event* deadline_ev = nullptr;
  bool deadline_armed = false;
  std::vector<Deadline> long_deadlines;  // BLPOPs' deadlines (each its own): a min-heap by at_us
  event* long_deadline_ev = nullptr;
  int64_t long_armed_at = -1;
  std::unordered_set<WaitTimer*> wait_timers;
  std::unordered_set<Later*> laters;
  int in_read = 0;                   // depth of hiredis read handling (reply callbacks)
  std::vector<Conn*> flush;          // connections written to from inside a reply callback
  std::vector<FaultAction> planned;
  std::vector<std::unique_ptr<FaultTimer>> fault_timers;
  int faults_pending = 0;
  std::vector<Matcher> matchers;
  std::vector<Trigger> triggers;
  std::vector<Partition> partitions;
  std::vector<RestartPoll> restarts;
  bool failover_planned = false;

  // Accounting.
  int64_t cmd_total = 0;
  std::map<std::string, int64_t> cmd_by_name;
  std::vector<int64_t> cmd_by_client;
  std::map<std::string, std::map<std::string, int64_t>> stats_at_start;  // address -> name -> calls
  // Network delay actually applied (measured from the monotonic clock).
  int64_t net_holds = 0, net_planned_sum_us = 0, net_applied_sum_us = 0, net_late_max_us = 0;
  int64_t lost_requests = 0, lost_replies = 0, partition_drops = 0;
  int64_t messages_received = 0, messages_lost = 0, messages_dropped = 0, subscriptions_lost = 0;
  int conn_ok = 0, conn_failed = 0;
  std::string first_conn_error;
  std::vector<std::string> notes;
  std::string stats_note;  // the INFO commandstats cross-check, made when Run() ends

  ~Impl();

  // --- Time. ---
  int64_t TrueNowUs() const { return MonoNowUs() - start_mono_us; }

  void Log(int client, Ev type, int64_t value, std::string detail) {
    if (history != nullptr && running) history->Add(TrueNowUs(), client, type, value, std::move(detail));
  }
  void Note(std::string s) {
    if (notes.size() < kMaxNotes) notes.push_back(std::move(s));
  }
  void Fail(std::string msg) {
    if (fail_msg.empty()) fail_msg = std::move(msg);
    if (base != nullptr) event_base_loopbreak(base);
  }

  // --- Set-up. ---
  bool Init(std::string* error);
  bool LoadScripts(const std::string& host, int port, std::string* error);
  bool ConnectAll(std::string* error);
  void SnapshotStats();

  // --- Gate and queues. ---
  void Dispatch(Item item, bool direct);
  void Execute(Item item);
  void Drop(Item item);
  void PushReady(Item item);
  void ScheduleReady();
  static void OnReadyEv(evutil_socket_t, short, void* arg);
  void RunReadyBatch();

  // --- Commands. ---
  void StartCall(int client, PendingCall* call);  // StartCallInner, then the on_send triggers
  void StartCallInner(int client, PendingCall* call);
  void FireTriggers(int client, const std::string& name);
  void CountCommand(int client, const Command& cmd);
  int64_t DrawDelayUs();
  bool Partitioned(int client, int endpoint) const;
  void Hold(CallRec* rec, int64_t us, bool is_reply);
  void Send(CallRec* rec);
  bool Write(CallRec* rec, Conn& conn, bool eval);
  bool EnsureConnected(Conn& conn, std::string* error);
  void CloseEndpoint(int endpoint);
  void OnNodeReply(CallRec* rec, Reply reply);
  void Decide(CallRec* rec, Reply reply, bool direct);
  void Deliver(CallRec* rec);
  void TryFree(CallRec* rec);
  void FreeRec(CallRec* rec);
  CallRec* AllocRec();
  size_t live_calls() const { return pool.size() - free_recs.size(); }
  void ArmDeadline(int64_t in_us);
  static void OnDeadline(evutil_socket_t, short, void* arg);
  void AddLongDeadline(CallRec* rec, int64_t at_us);
  static void OnLongDeadline(evutil_socket_t, short, void* arg);
  void Attach(redisAsyncContext* ac);
  void WriteSoon(Conn& conn);  // what hiredis holds for `conn`: written now, or after the read handler
  void FlushWrites();
  static void AdRead(evutil_socket_t, short, void* arg);
  static void AdWrite(evutil_socket_t, short, void* arg);
  static void OnReply(redisAsyncContext* ac, void* r, void* privdata);
  static void OnConnect(const redisAsyncContext* ac, int status);
  static void OnDisconnect(const redisAsyncContext* ac, int status);
  static void OnHold(evutil_socket_t, short, void* arg);

  // --- Pub/sub. ---
  void StartSubscribe(int client, SubscribeCall* call);
  void SendSubscribe(SubRec* rec);
  void FailSubscription(SubRec* rec);
  void ArmSubDeadline(SubRec* rec);
  static void OnSubDeadlineEv(evutil_socket_t, short, void* arg);
  static void OnSubReply(redisAsyncContext* ac, void* r, void* privdata);
  void OnPubMessage(int client, int endpoint);
  void FinishSubscribers(SubRec* rec, bool ok, bool only_due);
  void OnMessageItem(int client);
  void StartWaitMessage(int client, MessageWait* wait);
  static void OnWaitTimer(evutil_socket_t, short, void* arg);
  void After(int64_t us, std::function<void()> fn);
  static void OnLater(evutil_socket_t, short, void* arg);
  void CloseSubConns(int endpoint);  // -1: every endpoint

  // --- Sleeps, tasks. ---
  void StartSleep(int client, int64_t us, std::coroutine_handle<> h);
  // True µs that `us` of client `client`'s monotonic clock take (its drift).
  int64_t OnClientClockUs(int client, int64_t us) const;
  void Spawn(int client, Task<void> task);
  Task<void> RunMain(int client, Task<void> main);

  // --- Faults. ---
  Status PlanFault(const FaultAction& f);
  void ArmFault(const FaultAction& f, int step, int64_t at_us);
  static void OnFaultEv(evutil_socket_t, short, void* arg);
  void ApplyFault(const FaultAction& f, int step);
  static void OnPauseEnd(evutil_socket_t, short, void* arg);
  static void OnRestartPoll(evutil_socket_t, short, void* arg);
  static void OnCap(evutil_socket_t, short, void* arg);
  static void OnWatchdog(evutil_socket_t, short, void* arg);
  std::string ServerName(int endpoint) const;

  Status Run(const RuntimeLimits& limits);
};

// ---------------------------------------------------------------------------------------------

class RedisRuntime::Impl::ClientEnv : public Env {
 public:
  ClientEnv(Impl* rt, int id) : rt_(rt), id_(id) {}
  void StartCall(PendingCall* call) override { rt_->StartCall(id_, call); }
  void StartSleep(int64_t us, std::coroutine_handle<> h) override { rt_->StartSleep(id_, us, h); }
  int node_count() const override { return rt_->cfg.nodes; }
  int client_id() const override { return id_; }
  int64_t MonotonicUs() override {
    const int64_t t = rt_->TrueNowUs();
    return t + static_cast<int64_t>(static_cast<double>(t) * self().clock.drift_ppm / 1e6);
  }
  int64_t WallUs() override {
    const Client& c = self();
    const int64_t t = rt_->TrueNowUs();
    return RealNowUs() + c.clock.offset_us + static_cast<int64_t>(static_cast<double>(t) * c.clock.drift_ppm / 1e6) +
           c.jumps_us;
  }
  uint64_t Random() override { return self().rng.Next(); }
  void Spawn(Task<void> task) override { rt_->Spawn(id_, std::move(task)); }
  void StartSubscribe(SubscribeCall* call) override { rt_->StartSubscribe(id_, call); }
  void StartWaitMessage(MessageWait* wait) override { rt_->StartWaitMessage(id_, wait); }

 private:
  Client& self() const { return *rt_->clients[static_cast<size_t>(id_)]; }
  Impl* rt_;
  int id_;
};

// ---------------------------------------------------------------------------------------------
// Set-up and tear-down.

bool RedisRuntime::Impl::Init(std::string* error) {
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
  if (base == nullptr) {
    *error = "redis runtime: cannot create the libevent loop";
    return false;
  }
  deadline_ev = event_new(base, -1, 0, &Impl::OnDeadline, this);
  long_deadline_ev = event_new(base, -1, 0, &Impl::OnLongDeadline, this);
  ready_ev = event_new(base, -1, 0, &Impl::OnReadyEv, this);
  net_rng = sim::Rng(cfg.seed * 2 + 1);
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
  return true;
}

bool RedisRuntime::Impl::LoadScripts(const std::string& host, int port, std::string* error) {
  for (const auto& def : sim::Scripts()) {
    std::string sha;
    if (!QueryRedis(host, port, {"SCRIPT", "LOAD", def.lua}, &sha, error)) return false;
    shas[static_cast<size_t>(def.id)] = sha;
  }
  return true;
}

RedisRuntime::Impl::~Impl() {
  run_over = true;  // from here on nothing is delivered and nothing resumes
  CloseSubConns(-1);
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
  for (auto& rec : pool)
    if (rec->hold_ev != nullptr) event_free(rec->hold_ev);
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
  servers.reset();  // stops our redis-server processes
}

bool RedisRuntime::Impl::ConnectAll(std::string* error) {
  const int total = cfg.clients * cfg.nodes;
  for (auto& c : clients)
    for (auto& conn : c->conns) {
      std::string err;
      if (!EnsureConnected(conn, &err)) {
        *error = "redis runtime: " + err;
        return false;
      }
    }
  const int64_t deadline = MonoNowUs() + kConnectWaitUs;
  event* tick = event_new(base, -1, EV_PERSIST, [](evutil_socket_t, short, void*) {}, nullptr);
  const timeval tv = Tv(50'000);
  event_add(tick, &tv);  // wakes the loop so that the deadline is checked
  while (conn_ok + conn_failed < total && MonoNowUs() < deadline) event_base_loop(base, EVLOOP_ONCE);
  event_free(tick);
  if (conn_failed > 0 || conn_ok < total) {
    *error = "redis runtime: " + std::to_string(total - conn_ok) + " of " + std::to_string(total) +
             " connections could not be made" + (first_conn_error.empty() ? " in time" : ": " + first_conn_error);
    return false;
  }
  return true;
}

void RedisRuntime::Impl::SnapshotStats() {
  auto snap = [&](const std::string& host, int port) {
    std::string out, err;
    if (QueryRedis(host, port, {"INFO", "commandstats"}, &out, &err))
      stats_at_start[host + ":" + std::to_string(port)] = ParseCommandStats(out);
  };
  for (int e = 0; e < cfg.nodes; ++e) snap(ep_host[static_cast<size_t>(e)], ep_port[static_cast<size_t>(e)]);
  if (servers && servers->has_replica()) snap("127.0.0.1", servers->port(servers->replica_index()));
}

// ---------------------------------------------------------------------------------------------
// The gate: every resumption of a client's coroutine goes through Dispatch.

void RedisRuntime::Impl::Dispatch(Item item, bool direct) {
  Client& c = *clients[static_cast<size_t>(item.client)];
  if (c.crashed || run_over) {
    Drop(item);
    return;
  }
  if (c.paused) {
    if (c.held.size() >= kMaxHeld) {
      Fail("redis runtime: client " + std::to_string(c.id) + " has more than " + std::to_string(kMaxHeld) +
           " resumptions held during its pause");
      Drop(item);
      return;
    }
    if (item.deliver()) static_cast<CallRec*>(item.ptr)->in_queue = true;
    c.held.push_back(item);
    return;
  }
  if (direct) {
    Execute(item);
  } else {
    PushReady(item);
  }
}

void RedisRuntime::Impl::Execute(Item item) {
  switch (item.kind) {
    case Item::kDeliver:
      Deliver(static_cast<CallRec*>(item.ptr));
      return;
    case Item::kResume:
      std::coroutine_handle<>::from_address(item.ptr).resume();
      return;
    case Item::kMessage:
      OnMessageItem(item.client);
      return;
    case Item::kWaitTimeout: {
      Client& c = *clients[static_cast<size_t>(item.client)];
      for (auto it = c.waiters.begin(); it != c.waiters.end(); ++it) {
        if (it->id != item.id) continue;
        MessageWait* w = it->wait;
        c.waiters.erase(it);
        w->Finish(false);
        return;
      }
      return;  // a message came first
    }
    case Item::kSubscribed: {
      auto* rec = static_cast<SubRec*>(item.ptr);
      if (rec->gen != static_cast<uint32_t>(item.id >> 1)) return;  // started over since
      const bool ok = (item.id & 1) != 0;
      if (ok) rec->state = SubRec::State::kConfirmed;
      FinishSubscribers(rec, ok, /*only_due=*/false);
      return;
    }
    case Item::kSubDeadline:
      FinishSubscribers(static_cast<SubRec*>(item.ptr), false, /*only_due=*/true);
      return;
  }
}

void RedisRuntime::Impl::Drop(Item item) {
  if (!item.deliver()) return;  // the frame is destroyed with its client
  auto* rec = static_cast<CallRec*>(item.ptr);
  rec->call = nullptr;
  rec->delivered = true;
  TryFree(rec);
}

void RedisRuntime::Impl::PushReady(Item item) {
  if (ready.size() >= kMaxReady) {
    Fail("redis runtime: more than " + std::to_string(kMaxReady) + " resumptions ready at once");
    Drop(item);
    return;
  }
  if (item.deliver()) static_cast<CallRec*>(item.ptr)->in_queue = true;
  ready.push_back(item);
  ScheduleReady();
}

void RedisRuntime::Impl::ScheduleReady() {
  if (ready_scheduled) return;
  ready_scheduled = true;
  // A zero timer rather than event_active: the loop polls the sockets before it runs the
  // batch, so that clients spinning on Yield() cannot starve replies.
  const timeval zero = Tv(0);
  event_add(ready_ev, &zero);
}

void RedisRuntime::Impl::OnReadyEv(evutil_socket_t, short, void* arg) {
  auto* rt = static_cast<Impl*>(arg);
  rt->ready_scheduled = false;
  rt->RunReadyBatch();
}

void RedisRuntime::Impl::RunReadyBatch() {
  if (!running) return;  // the loop also turns before Run() (connecting): nothing resumes then
  // Only what was ready when the batch began: a yield inside it runs in the next batch.
  for (size_t n = ready.size(); n > 0 && !ready.empty(); --n) {
    Item item = ready.front();
    ready.pop_front();
    if (item.deliver()) static_cast<CallRec*>(item.ptr)->in_queue = false;
    Dispatch(item, /*direct=*/true);
  }
  if (!ready.empty()) {
    ScheduleReady();
  } else if (ready_scheduled) {
    event_del(ready_ev);  // nothing left for the zero timer: spare the loop a turn
    ready_scheduled = false;
  }
}

// ---------------------------------------------------------------------------------------------
// Commands.

void RedisRuntime::Impl::CountCommand(int client, const Command& cmd) {
  ++cmd_total;
  ++cmd_by_client[static_cast<size_t>(client)];
  ++cmd_by_name[cmd.Name()];
}

int64_t RedisRuntime::Impl::DrawDelayUs() {
  // Same shapes as the simulator (sim/simulator.cc), so that a setting means the same thing.
  const int64_t mean = cfg.net.mean_us;
  if (mean <= 0) return 0;
  switch (cfg.net.dist) {
    case NetSetting::Dist::kConstant: return mean;
    case NetSetting::Dist::kUniform: return net_rng.Uniform(0, 2 * mean);
    case NetSetting::Dist::kLongTail: {
      double v = static_cast<double>(mean) * std::exp(net_rng.Normal() - 0.5);
      return std::min<int64_t>(static_cast<int64_t>(v), 20 * mean);
    }
  }
  return mean;
}

bool RedisRuntime::Impl::Partitioned(int client, int endpoint) const {
  if (partitions.empty()) return false;
  const int64_t now = TrueNowUs();
  for (const auto& p : partitions)
    if (p.client == client && p.node == endpoint && now >= p.from_us && now < p.to_us) return true;
  return false;
}

void RedisRuntime::Impl::StartCall(int client, PendingCall* call) {
  if (triggers.empty()) {
    StartCallInner(client, call);
    return;
  }
  const std::string name = call->cmd.Name();  // the command moves into the runtime's record
  StartCallInner(client, call);
  FireTriggers(client, name);
}

void RedisRuntime::Impl::FireTriggers(int client, const std::string& name) {
  // The command has been handed to the network (written, held for its delay, or lost): the
  // fault applies now, so that its reply, like everything else of the client, is held (pause)
  // or dropped (crash). ApplyFault never resumes anything, so this is safe inside StartCall.
  for (Trigger& t : triggers) {
    if (t.f.target != client || (t.name != "*" && t.name != name)) continue;
    if (++t.seen != t.f.occurrence) continue;  // fires once: `seen` only grows
    ApplyFault(t.f, 0);
  }
}

void RedisRuntime::Impl::StartCallInner(int client, PendingCall* call) {
  CountCommand(client, call->cmd);
  CallRec* rec = AllocRec();
  rec->client = client;
  rec->endpoint = call->node;
  rec->call = call;
  rec->cmd = std::move(call->cmd);
  rec->start_us = TrueNowUs();
  // A BLPOP may wait its own timeout at the node: the command timeout counts from after it.
  int64_t block_ms = -1;
  const bool blpop = sim::BlpopTimeoutMs(rec->cmd, &block_ms);
  if (blpop && block_ms > 0) {
    int64_t at = rec->start_us + cfg.command_timeout_us;
    if (block_ms > std::numeric_limits<int64_t>::max() / 1000 || __builtin_add_overflow(at, block_ms * 1000, &at))
      at = std::numeric_limits<int64_t>::max() / 2;
    AddLongDeadline(rec, at);
  } else {
    deadlines.push_back(Deadline{rec->start_us + cfg.command_timeout_us, rec, rec->seq});
    if (!deadline_armed) ArmDeadline(cfg.command_timeout_us);
  }
  if (live_calls() > kMaxInFlight) {
    Fail("redis runtime: more than " + std::to_string(kMaxInFlight) + " commands in flight");
    Decide(rec, Reply::Error("ERR locklab: too many commands in flight"), /*direct=*/false);
    return;
  }
  if (rec->endpoint < 0 || rec->endpoint >= cfg.nodes) {
    Decide(rec, Reply::Error("ERR locklab: no node " + std::to_string(rec->endpoint)), /*direct=*/false);
    return;
  }
  if (blpop && block_ms == 0) {  // Redis would block this connection forever: refused, as by the simulator
    Decide(rec, Reply::Error(sim::kBlockForeverError), /*direct=*/false);
    return;
  }
  int64_t delay = DrawDelayUs();
  if (!matchers.empty()) {
    const std::string name = rec->cmd.Name();
    for (size_t i = 0; i < matchers.size(); ++i) {
      Matcher& m = matchers[i];
      if (m.client == client && (m.name == "*" || m.name == name) && ++m.seen == m.occurrence) {
        delay += m.extra_us;
        rec->matcher = static_cast<int>(i);
      }
    }
  }
  if (cfg.net.loss > 0 && net_rng.Chance(cfg.net.loss)) {
    ++lost_requests;  // never written: the timer decides (timeout)
    return;
  }
  if (delay > 0) {
    Hold(rec, delay, /*is_reply=*/false);
  } else {
    Send(rec);  // completes nothing here: errors are deferred through the ready queue
  }
}

void RedisRuntime::Impl::Hold(CallRec* rec, int64_t us, bool is_reply) {
  if (rec->hold_ev == nullptr) rec->hold_ev = event_new(base, -1, 0, &Impl::OnHold, rec);
  rec->hold_pending = true;
  rec->hold_is_reply = is_reply;
  rec->hold_start_us = TrueNowUs();
  rec->hold_planned_us = us;
  const timeval tv = Tv(us);
  event_add(rec->hold_ev, &tv);
}

void RedisRuntime::Impl::OnHold(evutil_socket_t, short, void* arg) {
  auto* rec = static_cast<CallRec*>(arg);
  Impl* rt = rec->rt;
  rec->hold_pending = false;
  const int64_t applied = rt->TrueNowUs() - rec->hold_start_us;
  ++rt->net_holds;
  rt->net_planned_sum_us += rec->hold_planned_us;
  rt->net_applied_sum_us += applied;
  rt->net_late_max_us = std::max(rt->net_late_max_us, applied - rec->hold_planned_us);
  if (!rec->hold_is_reply) {
    rt->Send(rec);
    rt->TryFree(rec);
    return;
  }
  if (rec->decided) {  // timed out while its reply was held
    rt->TryFree(rec);
    return;
  }
  rt->Decide(rec, std::move(rec->held_reply), /*direct=*/true);
}

void RedisRuntime::Impl::Send(CallRec* rec) {
  if (rec->matcher >= 0) {
    const Matcher& m = matchers[static_cast<size_t>(rec->matcher)];
    const int64_t applied = TrueNowUs() - rec->start_us;
    Note("delayed-message " + m.name + " (client " + std::to_string(m.client) + ", occurrence " +
         std::to_string(m.occurrence) + "): planned " + Ms(m.extra_us) + " extra, applied " + Ms(applied) +
         " (held in locklab before writing it to the socket)");
  }
  if (Partitioned(rec->client, rec->endpoint)) {
    ++partition_drops;  // never written: the timer decides (timeout)
    return;
  }
  Conn& conn = clients[static_cast<size_t>(rec->client)]->conns[static_cast<size_t>(rec->endpoint)];
  std::string err;
  if (!EnsureConnected(conn, &err)) {
    Decide(rec, Reply::Error("ERR locklab: " + err), /*direct=*/false);
    return;
  }
  if (!Write(rec, conn, /*eval=*/shas[static_cast<size_t>(rec->cmd.script)].empty())) {
    Decide(rec, Reply::Error("ERR locklab: the connection to " + ServerName(rec->endpoint) + " is closing"),
           /*direct=*/false);
  }
}

bool RedisRuntime::Impl::Write(CallRec* rec, Conn& conn, bool eval) {
  if (conn.ac == nullptr) return false;
  const Command& cmd = rec->cmd;
  // Encoded here into a buffer kept between commands (hiredis's own formatter allocates per word).
  std::string& out = resp_buf;
  out.clear();
  if (cmd.script != Script::kNone) {
    AppendRespArrayHeader(&out, cmd.argv.size() + 3);
    AppendRespWord(&out, eval ? "EVAL" : "EVALSHA");
    AppendRespWord(&out, eval ? std::string_view(sim::GetScript(cmd.script).lua)
                              : std::string_view(shas[static_cast<size_t>(cmd.script)]));
    char numkeys[24];
    const auto r = std::to_chars(numkeys, numkeys + sizeof numkeys, cmd.num_keys);
    AppendRespWord(&out, std::string_view(numkeys, static_cast<size_t>(r.ptr - numkeys)));
  } else {
    AppendRespArrayHeader(&out, cmd.argv.size());
  }
  for (const auto& a : cmd.argv) AppendRespWord(&out, a);
  if (redisAsyncFormattedCommand(conn.ac, &Impl::OnReply, rec, out.data(), out.size()) != REDIS_OK) return false;
  rec->hiredis_pending = true;
  WriteSoon(conn);
  return true;
}

void RedisRuntime::Impl::WriteSoon(Conn& conn) {
  if (!conn.connected) return;  // hiredis writes it once connected
  // Write now rather than on the next loop pass (saves a poll per command). Not from inside a
  // reply callback: a failed write frees the context, which hiredis 0.14 does not survive
  // there; those connections are flushed when the read handler returns.
  if (in_read > 0) {
    if (!conn.flush_pending) {
      conn.flush_pending = true;
      flush.push_back(&conn);
    }
  } else {
    redisAsyncHandleWrite(conn.ac);
  }
}

void RedisRuntime::Impl::FlushWrites() {
  // Bounded: each connection is in the list at most once.
  std::vector<Conn*> todo;
  todo.swap(flush);
  for (Conn* conn : todo) {
    conn->flush_pending = false;
    if (conn->ac != nullptr && conn->connected) redisAsyncHandleWrite(conn->ac);
  }
}

void RedisRuntime::Impl::AdRead(evutil_socket_t, short, void* arg) {
  auto* a = static_cast<Adapter*>(arg);
  Impl* rt = a->rt;
  ++rt->in_read;
  redisAsyncHandleRead(a->ac);  // may free the context, and `a` with it
  if (--rt->in_read != 0) return;
  if (!rt->flush.empty()) rt->FlushWrites();
  // The loop has just polled the sockets: what the replies made ready (a client's zero-length
  // sleep after its reply, say) runs now rather than one loop turn later.
  if (!rt->ready.empty()) rt->RunReadyBatch();
}

void RedisRuntime::Impl::AdWrite(evutil_socket_t, short, void* arg) {
  redisAsyncHandleWrite(static_cast<Adapter*>(arg)->ac);
}

void RedisRuntime::Impl::Attach(redisAsyncContext* ac) {
  auto* a = new Adapter{this, ac, nullptr, nullptr};
  a->rev = event_new(base, ac->c.fd, EV_READ | EV_PERSIST, &Impl::AdRead, a);
  a->wev = event_new(base, ac->c.fd, EV_WRITE, &Impl::AdWrite, a);
  ac->ev.data = a;
  ac->ev.addRead = [](void* p) { event_add(static_cast<Adapter*>(p)->rev, nullptr); };
  ac->ev.delRead = [](void* p) { event_del(static_cast<Adapter*>(p)->rev); };
  ac->ev.addWrite = [](void* p) { event_add(static_cast<Adapter*>(p)->wev, nullptr); };
  ac->ev.delWrite = [](void* p) { event_del(static_cast<Adapter*>(p)->wev); };
  ac->ev.cleanup = [](void* p) {
    auto* a = static_cast<Adapter*>(p);
    event_free(a->rev);
    event_free(a->wev);
    delete a;
  };
  event_add(a->rev, nullptr);
  event_add(a->wev, nullptr);  // the first write event completes the connect
}

bool RedisRuntime::Impl::EnsureConnected(Conn& conn, std::string* error) {
  if (conn.ac != nullptr) return true;
  const std::string& host = ep_host[static_cast<size_t>(conn.endpoint)];
  const int port = ep_port[static_cast<size_t>(conn.endpoint)];
  redisAsyncContext* ac = redisAsyncConnect(host.c_str(), port);
  if (ac == nullptr) {
    *error = "cannot connect to " + ServerName(conn.endpoint) + ": out of memory";
    return false;
  }
  if (ac->err) {
    *error = "cannot connect to " + ServerName(conn.endpoint) + ": " + ac->errstr;
    redisAsyncFree(ac);
    return false;
  }
  ac->data = &conn;
  Attach(ac);
  redisAsyncSetConnectCallback(ac, &Impl::OnConnect);
  redisAsyncSetDisconnectCallback(ac, &Impl::OnDisconnect);
  conn.ac = ac;
  conn.connected = false;
  return true;
}

void RedisRuntime::Impl::OnConnect(const redisAsyncContext* ac, int status) {
  auto* conn = static_cast<Conn*>(ac->data);
  if (status == REDIS_OK) {
    conn->connected = true;
    if (!conn->sub) ++conn->rt->conn_ok;
    return;
  }
  if (conn->sub) {  // hiredis frees it after this callback; its subscriptions fail (OnSubReply)
    if (conn->ac == ac) {
      conn->ac = nullptr;
      conn->connected = false;
    }
    return;
  }
  ++conn->rt->conn_failed;
  if (conn->rt->first_conn_error.empty())
    conn->rt->first_conn_error = conn->rt->ServerName(conn->endpoint) + ": " + (ac->errstr != nullptr ? ac->errstr : "?");
  if (conn->ac == ac) {  // hiredis frees it after this callback
    conn->ac = nullptr;
    conn->connected = false;
  }
}

void RedisRuntime::Impl::OnDisconnect(const redisAsyncContext* ac, int) {
  auto* conn = static_cast<Conn*>(ac->data);
  if (conn->ac == ac) {
    conn->ac = nullptr;
    conn->connected = false;
  }
}

void RedisRuntime::Impl::CloseEndpoint(int endpoint) {
  CloseSubConns(endpoint);
  for (auto& c : clients) {
    Conn& conn = c->conns[static_cast<size_t>(endpoint)];
    if (conn.ac == nullptr) continue;
    redisAsyncContext* ac = conn.ac;
    conn.ac = nullptr;
    conn.connected = false;
    redisAsyncFree(ac);  // commands on it: OnReply(NULL) -> kTimeout (they may have run)
  }
}

void RedisRuntime::Impl::OnReply(redisAsyncContext* ac, void* r, void* privdata) {
  auto* rec = static_cast<CallRec*>(privdata);
  Impl* rt = rec->rt;
  rec->hiredis_pending = false;
  if (r == nullptr) {
    // The connection is gone. If it had been established the command may have run.
    if (!rec->decided) {
      const bool maybe_ran = (ac->c.flags & REDIS_CONNECTED) != 0;
      rt->Decide(rec,
                 maybe_ran ? Reply::Timeout()
                           : Reply::Error("ERR locklab: cannot connect to " + rt->ServerName(rec->endpoint)),
                 /*direct=*/false);  // we may be inside hiredis tearing the context down
    }
    rt->TryFree(rec);
    return;
  }
  Reply reply = FromHiredis(static_cast<redisReply*>(r));
  if (rec->cmd.script != Script::kNone && !rec->retried_eval && reply.is_error() &&
      reply.str.rfind("NOSCRIPT", 0) == 0) {
    // The server lost its script cache (restarted, promoted): run the text, which reloads it.
    rec->retried_eval = true;
    Conn* conn = static_cast<Conn*>(ac->data);
    if (conn->ac == ac && rt->Write(rec, *conn, /*eval=*/true)) return;
  }
  rt->OnNodeReply(rec, std::move(reply));
}

void RedisRuntime::Impl::OnNodeReply(CallRec* rec, Reply reply) {
  if (history != nullptr && running && cfg.trace_commands) {
    Log(rec->client, Ev::kCommand, rec->endpoint, rec->cmd.ToString() + " -> " + ToString(reply));
  }
  if (rec->decided) {  // too late: the caller already has its timeout
    TryFree(rec);
    return;
  }
  if (Partitioned(rec->client, rec->endpoint)) {
    ++partition_drops;
    TryFree(rec);
    return;
  }
  if (cfg.net.loss > 0 && net_rng.Chance(cfg.net.loss)) {
    ++lost_replies;
    TryFree(rec);
    return;
  }
  const int64_t delay = DrawDelayUs();
  if (delay > 0) {
    rec->held_reply = std::move(reply);
    Hold(rec, delay, /*is_reply=*/true);
    return;
  }
  Decide(rec, std::move(reply), /*direct=*/true);
}

void RedisRuntime::Impl::Decide(CallRec* rec, Reply reply, bool direct) {
  if (rec->decided) return;
  rec->decided = true;
  rec->reply = std::move(reply);
  Dispatch(Item{Item::kDeliver, rec->client, rec}, direct);
}

void RedisRuntime::Impl::Deliver(CallRec* rec) {
  PendingCall* call = rec->call;
  rec->call = nullptr;
  rec->delivered = true;
  Reply r = std::move(rec->reply);
  TryFree(rec);  // before resuming: the coroutine may start the next command at once
  if (call != nullptr) call->Finish(std::move(r));
}

void RedisRuntime::Impl::ArmDeadline(int64_t in_us) {
  deadline_armed = true;
  const timeval tv = Tv(in_us);
  event_add(deadline_ev, &tv);
}

void RedisRuntime::Impl::OnDeadline(evutil_socket_t, short, void* arg) {
  auto* rt = static_cast<Impl*>(arg);
  rt->deadline_armed = false;
  const int64_t now = rt->TrueNowUs();
  while (!rt->deadlines.empty() && rt->deadlines.front().at_us <= now) {
    const Deadline d = rt->deadlines.front();
    rt->deadlines.pop_front();
    if (d.rec->seq == d.seq && !d.rec->decided) rt->Decide(d.rec, Reply::Timeout(), /*direct=*/true);
  }
  // Entries of finished commands wait for their deadline here; keep the queue near the number
  // of commands actually in flight.
  if (rt->deadlines.size() > 1'000'000 && rt->deadlines.size() > 4 * rt->live_calls()) {
    std::erase_if(rt->deadlines, IsStale);
  }
  // Entries of commands already answered need no timer: drop them from the front, so that the
  // timer is armed for a command still in flight (not once per finished command).
  for (size_t n = rt->deadlines.size(); n > 0 && IsStale(rt->deadlines.front()); --n) rt->deadlines.pop_front();
  if (!rt->deadlines.empty()) rt->ArmDeadline(rt->deadlines.front().at_us - now);
}

void RedisRuntime::Impl::AddLongDeadline(CallRec* rec, int64_t at_us) {
  auto later = [](const Deadline& a, const Deadline& b) { return a.at_us > b.at_us; };
  long_deadlines.push_back(Deadline{at_us, rec, rec->seq});
  std::push_heap(long_deadlines.begin(), long_deadlines.end(), later);
  if (long_armed_at < 0 || at_us < long_armed_at) {
    long_armed_at = at_us;
    const timeval tv = Tv(at_us - TrueNowUs());
    event_add(long_deadline_ev, &tv);
  }
}

void RedisRuntime::Impl::OnLongDeadline(evutil_socket_t, short, void* arg) {
  auto* rt = static_cast<Impl*>(arg);
  auto later = [](const Deadline& a, const Deadline& b) { return a.at_us > b.at_us; };
  rt->long_armed_at = -1;
  auto& heap = rt->long_deadlines;
  while (!heap.empty() && heap.front().at_us <= rt->TrueNowUs()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const Deadline d = heap.back();
    heap.pop_back();
    if (d.rec->seq == d.seq && !d.rec->decided) rt->Decide(d.rec, Reply::Timeout(), /*direct=*/true);
  }
  // Entries of BLPOPs answered early wait here for their deadline; keep the heap near the
  // number of commands in flight.
  if (heap.size() > 100'000 && heap.size() > 4 * rt->live_calls()) {
    std::erase_if(heap, IsStale);
    std::make_heap(heap.begin(), heap.end(), later);
  }
  if (!heap.empty() && (rt->long_armed_at < 0 || heap.front().at_us < rt->long_armed_at)) {
    rt->long_armed_at = heap.front().at_us;
    const timeval tv = Tv(heap.front().at_us - rt->TrueNowUs());
    event_add(rt->long_deadline_ev, &tv);
  }
}

void RedisRuntime::Impl::TryFree(CallRec* rec) {
  if (rec->delivered && !rec->hiredis_pending && !rec->hold_pending && !rec->in_queue) FreeRec(rec);
}

RedisRuntime::Impl::CallRec* RedisRuntime::Impl::AllocRec() {
  CallRec* rec;
  if (!free_recs.empty()) {
    rec = free_recs.back();
    free_recs.pop_back();
  } else {
    pool.push_back(std::make_unique<CallRec>());
    rec = pool.back().get();
    rec->rt = this;
  }
  rec->seq = next_seq++;
  return rec;
}

void RedisRuntime::Impl::FreeRec(CallRec* rec) {
  event* hold = rec->hold_ev;
  *rec = CallRec();
  rec->rt = this;
  rec->hold_ev = hold;  // not pending: TryFree waits for hold_pending to clear
  free_recs.push_back(rec);
}

std::string RedisRuntime::Impl::ServerName(int endpoint) const {
  if (endpoint < 0 || endpoint >= cfg.nodes) return "node " + std::to_string(endpoint);
  return "node " + std::to_string(endpoint) + " (" + ep_host[static_cast<size_t>(endpoint)] + ":" +
         std::to_string(ep_port[static_cast<size_t>(endpoint)]) + ")";
}

// ---------------------------------------------------------------------------------------------
// Sleeps and tasks.

int64_t RedisRuntime::Impl::OnClientClockUs(int client, int64_t us) const {
  // The client's monotonic clock runs (1 + drift) times as fast as true time.
  const double rate = 1.0 + clients[static_cast<size_t>(client)]->clock.drift_ppm / 1e6;
  return static_cast<int64_t>(std::ceil(static_cast<double>(us) / rate));
}

void RedisRuntime::Impl::StartSleep(int client, int64_t us, std::coroutine_handle<> h) {
  if (us <= 0) {
    PushReady(Item{Item::kResume, client, h.address()});
    return;
  }
  const Item item{Item::kResume, client, h.address()};
  After(OnClientClockUs(client, us), [this, item] { Dispatch(item, /*direct=*/true); });
}

void RedisRuntime::Impl::Spawn(int client, Task<void> task) {
  auto& spawned = clients[static_cast<size_t>(client)]->spawned;
  std::erase_if(spawned, [](const Task<void>& t) { return t.done(); });
  if (spawned.size() >= kMaxSpawned) {
    Fail("redis runtime: client " + std::to_string(client) + " has more than " + std::to_string(kMaxSpawned) +
         " background tasks");
    return;
  }
  PushReady(Item{Item::kResume, client, task.handle().address()});
  spawned.push_back(std::move(task));
}

// ---------------------------------------------------------------------------------------------
// Pub/sub.

void RedisRuntime::Impl::After(int64_t us, std::function<void()> fn) {
  auto* l = new Later{this, nullptr, std::move(fn)};
  l->ev = event_new(base, -1, 0, &Impl::OnLater, l);
  laters.insert(l);
  const timeval tv = Tv(us);
  event_add(l->ev, &tv);
}

void RedisRuntime::Impl::OnLater(evutil_socket_t, short, void* arg) {
  auto* l = static_cast<Later*>(arg);
  Impl* rt = l->rt;
  std::function<void()> fn = std::move(l->fn);
  rt->laters.erase(l);
  event_free(l->ev);
  delete l;
  if (!rt->run_over) fn();
}

void RedisRuntime::Impl::StartSubscribe(int client, SubscribeCall* call) {
  using State = SubRec::State;
  Client& c = *clients[static_cast<size_t>(client)];
  auto finish_soon = [&](bool ok) {  // from the loop, never from inside this call
    call->ok = ok;
    PushReady(Item{Item::kResume, client, call->waiter.address()});
  };
  if (call->node < 0 || call->node >= cfg.nodes) return finish_soon(false);
  SubRec* rec = nullptr;
  SubRec* spare = nullptr;
  int active = 0;
  for (auto& r : c.subs) {
    if (r->state != State::kNone) ++active;
    if (r->endpoint == call->node && r->channel == call->channel) {
      rec = r.get();
    } else if (spare == nullptr && r->state == State::kNone && r->callers.empty() && !r->in_hiredis) {
      spare = r.get();
    }
  }
  const int64_t deadline = TrueNowUs() + cfg.command_timeout_us;
  if (rec != nullptr && rec->state == State::kConfirmed) return finish_soon(true);
  if (rec != nullptr && rec->state == State::kPending) {  // shares the SUBSCRIBE on its way
    rec->callers.emplace_back(call, deadline);
    ArmSubDeadline(rec);
    return;
  }
  if (active >= Env::kMaxSubscriptions) return finish_soon(false);
  if (rec == nullptr) rec = spare;
  if (rec == nullptr) {
    c.subs.push_back(std::make_unique<SubRec>());
    rec = c.subs.back().get();
    rec->rt = this;
    rec->client = client;
    rec->deadline_ev = event_new(base, -1, 0, &Impl::OnSubDeadlineEv, rec);
  }
  rec->endpoint = call->node;
  rec->channel = call->channel;
  rec->state = State::kPending;
  ++rec->gen;
  rec->callers.emplace_back(call, deadline);
  ArmSubDeadline(rec);
  CountCommand(client, Command::Of("SUBSCRIBE", rec->channel));
  // On the network like a command: held for a drawn delay, or lost (its deadline decides).
  const int64_t delay = DrawDelayUs();
  if (cfg.net.loss > 0 && net_rng.Chance(cfg.net.loss)) {
    ++lost_requests;
    return;
  }
  if (delay > 0) {
    After(delay, [this, rec, gen = rec->gen] {
      if (rec->gen == gen) SendSubscribe(rec);
    });
  } else {
    SendSubscribe(rec);
  }
}

void RedisRuntime::Impl::SendSubscribe(SubRec* rec) {
  if (Partitioned(rec->client, rec->endpoint)) {
    ++partition_drops;  // never written: its deadline decides
    return;
  }
  Conn& conn = clients[static_cast<size_t>(rec->client)]->sub_conns[static_cast<size_t>(rec->endpoint)];
  std::string err;
  const char* words[2] = {"SUBSCRIBE", rec->channel.data()};
  const size_t lens[2] = {9, rec->channel.size()};
  if (!EnsureConnected(conn, &err) ||
      redisAsyncCommandArgv(conn.ac, &Impl::OnSubReply, rec, 2, words, lens) != REDIS_OK) {
    FailSubscription(rec);
    return;
  }
  rec->in_hiredis = true;
  WriteSoon(conn);
}

// The subscription cannot be made, or its connection is gone: callers waiting get false.
void RedisRuntime::Impl::FailSubscription(SubRec* rec) {
  rec->state = SubRec::State::kNone;
  ++rec->gen;
  if (!rec->callers.empty())
    Dispatch(Item{Item::kSubscribed, rec->client, rec, static_cast<uint64_t>(rec->gen) << 1}, /*direct=*/false);
}

void RedisRuntime::Impl::ArmSubDeadline(SubRec* rec) {
  event_del(rec->deadline_ev);
  if (rec->callers.empty()) return;
  int64_t first = rec->callers.front().second;
  for (const auto& c : rec->callers) first = std::min(first, c.second);
  const timeval tv = Tv(first - TrueNowUs());
  event_add(rec->deadline_ev, &tv);
}

void RedisRuntime::Impl::OnSubDeadlineEv(evutil_socket_t, short, void* arg) {
  auto* rec = static_cast<SubRec*>(arg);
  rec->rt->Dispatch(Item{Item::kSubDeadline, rec->client, rec}, /*direct=*/true);
}

void RedisRuntime::Impl::FinishSubscribers(SubRec* rec, bool ok, bool only_due) {
  // Collect first: a resumed caller may subscribe again.
  std::vector<SubscribeCall*> done;
  const int64_t now = TrueNowUs();
  for (auto it = rec->callers.begin(); it != rec->callers.end();) {
    if (!only_due || it->second <= now) {
      done.push_back(it->first);
      it = rec->callers.erase(it);
    } else {
      ++it;
    }
  }
  ArmSubDeadline(rec);
  for (SubscribeCall* call : done) call->Finish(ok);
}

void RedisRuntime::Impl::OnSubReply(redisAsyncContext* ac, void* r, void* privdata) {
  auto* rec = static_cast<SubRec*>(privdata);
  Impl* rt = rec->rt;
  if (r == nullptr) {  // the subscription connection is gone (lost, closed, or never made)
    rec->in_hiredis = false;
    if (rt->run_over || rec->state == SubRec::State::kNone) return;
    if (rec->state == SubRec::State::kConfirmed) {
      ++rt->subscriptions_lost;
      rt->Note("subscription of client " + std::to_string(rec->client) + " to '" + rec->channel + "' on " +
               rt->ServerName(rec->endpoint) + " lost at " + Ms(rt->TrueNowUs()) +
               ": its connection closed; no more messages on it (waiters time out)");
    }
    rt->FailSubscription(rec);  // deferred: we may be inside hiredis tearing the context down
    return;
  }
  const auto* reply = static_cast<const redisReply*>(r);
  if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 3 || reply->element[0]->type != REDIS_REPLY_STRING) return;
  const std::string kind(reply->element[0]->str, reply->element[0]->len);
  if (kind == "message") {
    rt->OnPubMessage(rec->client, rec->endpoint);
    return;
  }
  if (kind != "subscribe" || rt->run_over) return;
  rt->Log(rec->client, Ev::kCommand, rec->endpoint,
          Command::Of("SUBSCRIBE", rec->channel).ToString() + " -> " + ToString(FromHiredis(reply)));
  // The confirmation travels back like a reply.
  if (rt->Partitioned(rec->client, rec->endpoint)) {
    ++rt->partition_drops;
    return;
  }
  if (rt->cfg.net.loss > 0 && rt->net_rng.Chance(rt->cfg.net.loss)) {
    ++rt->lost_replies;
    return;
  }
  const Item item{Item::kSubscribed, rec->client, rec, (static_cast<uint64_t>(rec->gen) << 1) | 1};
  const int64_t delay = rt->DrawDelayUs();
  if (delay > 0) {
    rt->After(delay, [rt, item] { rt->Dispatch(item, /*direct=*/true); });
  } else {
    rt->Dispatch(item, /*direct=*/true);
  }
  (void)ac;
}

void RedisRuntime::Impl::OnPubMessage(int client, int endpoint) {
  if (run_over) return;
  if (Partitioned(client, endpoint)) {
    ++partition_drops;
    return;
  }
  if (cfg.net.loss > 0 && net_rng.Chance(cfg.net.loss)) {
    ++messages_lost;
    return;
  }
  ++messages_received;
  const Item item{Item::kMessage, client};
  const int64_t delay = DrawDelayUs();
  if (delay > 0) {
    After(delay, [this, item] { Dispatch(item, /*direct=*/true); });
  } else {
    Dispatch(item, /*direct=*/true);
  }
}

// Through the gate: wake the longest waiting WaitMessage, or queue the message.
void RedisRuntime::Impl::OnMessageItem(int client) {
  Client& c = *clients[static_cast<size_t>(client)];
  if (!c.waiters.empty()) {
    const Client::Waiter w = c.waiters.front();
    c.waiters.pop_front();
    if (w.timer != nullptr) {
      wait_timers.erase(w.timer);
      event_free(w.timer->ev);
      delete w.timer;
    }
    w.wait->Finish(true);
    return;
  }
  if (c.queued_messages < Env::kMaxQueuedMessages) {
    ++c.queued_messages;
  } else {
    ++messages_dropped;
  }
}

void RedisRuntime::Impl::StartWaitMessage(int client, MessageWait* wait) {
  Client& c = *clients[static_cast<size_t>(client)];
  if (c.queued_messages > 0 || wait->timeout_us <= 0) {
    wait->got = c.queued_messages > 0;
    if (wait->got) --c.queued_messages;
    PushReady(Item{Item::kResume, client, wait->waiter.address()});
    return;
  }
  // A timer of the client, on its monotonic clock (as StartSleep).
  const int64_t true_us = OnClientClockUs(client, wait->timeout_us);
  auto* t = new WaitTimer{this, client, ++c.next_waiter, nullptr};
  t->ev = event_new(base, -1, 0, &Impl::OnWaitTimer, t);
  wait_timers.insert(t);
  const timeval tv = Tv(true_us);
  event_add(t->ev, &tv);
  c.waiters.push_back(Client::Waiter{t->id, wait, t});
}

void RedisRuntime::Impl::OnWaitTimer(evutil_socket_t, short, void* arg) {
  auto* t = static_cast<WaitTimer*>(arg);
  Impl* rt = t->rt;
  const Item item{Item::kWaitTimeout, t->client, nullptr, t->id};
  for (auto& w : rt->clients[static_cast<size_t>(t->client)]->waiters)
    if (w.id == t->id) w.timer = nullptr;
  rt->wait_timers.erase(t);
  event_free(t->ev);
  delete t;
  rt->Dispatch(item, /*direct=*/true);
}

void RedisRuntime::Impl::CloseSubConns(int endpoint) {
  for (auto& c : clients)
    for (auto& conn : c->sub_conns) {
      if (conn.ac == nullptr || (endpoint >= 0 && conn.endpoint != endpoint)) continue;
      redisAsyncContext* ac = conn.ac;
      conn.ac = nullptr;
      conn.connected = false;
      redisAsyncFree(ac);  // its subscription callbacks run with NULL: no more messages
    }
}

Task<void> RedisRuntime::Impl::RunMain(int client, Task<void> main) {
  co_await main;
  clients[static_cast<size_t>(client)]->main_done = true;
  if (--mains_left == 0) event_base_loopbreak(base);
}

// ---------------------------------------------------------------------------------------------
// Faults.

Status RedisRuntime::Impl::PlanFault(const FaultAction& f) {
  const std::string name = FaultKindName(f.kind);
  if (ran) return Status::Invalid("fault " + name + ": faults must be planned before Run()");
  if (Status s = ValidateFault(f, FaultWorld{cfg.clients, cfg.nodes, cfg.with_replica}); !s.ok()) return s;
  if (NeedsServerControl(f.kind) && !servers)
    return Status::Invalid("fault " + name +
                           " needs control of the redis-server processes, but the servers given with --redis are "
                           "not locklab's: drop --redis to let locklab start its own servers");
  if (f.kind == FaultAction::Kind::kNodeClockJump && !servers->clock_shim_loaded())
    return Status::Invalid("fault " + name +
                           ": the clock shim (liblocklab_clockshim.so) was not found when the servers started; "
                           "build the locklab_clockshim target or set LOCKLAB_CLOCKSHIM");
  if (f.kind == FaultAction::Kind::kFailover) {
    if (f.target != 0) return Status::Invalid("fault " + name + ": only node 0 has a replica");
    if (failover_planned) return Status::Invalid("fault " + name + ": node 0 has one replica, so it can fail over once");
    failover_planned = true;
  }
  if (!f.on_send.empty()) {
    triggers.push_back(Trigger{f, MatchCommandName(f.on_send), 0});
    return Status::Ok();
  }
  if (f.kind == FaultAction::Kind::kDelayMessage) {
    matchers.push_back(Matcher{f.target, MatchCommandName(f.command), f.occurrence, f.duration_us, 0});
    return Status::Ok();
  }
  planned.push_back(f);
  return Status::Ok();
}

void RedisRuntime::Impl::ArmFault(const FaultAction& f, int step, int64_t at_us) {
  auto t = std::make_unique<FaultTimer>(FaultTimer{this, f, step, nullptr});
  t->ev = event_new(base, -1, 0, &Impl::OnFaultEv, t.get());
  const timeval tv = Tv(at_us - TrueNowUs());
  event_add(t->ev, &tv);
  ++faults_pending;
  fault_timers.push_back(std::move(t));
}

void RedisRuntime::Impl::OnFaultEv(evutil_socket_t, short, void* arg) {
  auto* t = static_cast<FaultTimer*>(arg);
  --t->rt->faults_pending;
  t->rt->ApplyFault(t->f, t->step);
}

void RedisRuntime::Impl::ApplyFault(const FaultAction& f, int step) {
  const std::string name = FaultKindName(f.kind);
  const int64_t now = TrueNowUs();
  auto failed = [&](const std::string& why) {
    Log(-1, Ev::kFault, 0, name + " failed: " + why);
    Note("fault " + name + " at " + Ms(now) + " could not be applied: " + why);
  };
  std::string err;
  switch (f.kind) {
    case FaultAction::Kind::kPauseClient: {
      Client& c = *clients[static_cast<size_t>(f.target)];
      if (c.crashed) return;
      const int64_t until = now + f.duration_us;
      if (c.paused && until <= c.paused_until_us) return;  // already paused for longer
      const std::string label = f.on_send.empty() ? std::string() : OnSendText(f);
      if (!c.paused) {
        c.pause_started_us = now;
        c.pause_label = label;
        Log(c.id, Ev::kPauseStart, f.duration_us,
            "pause " + std::to_string(f.duration_us / 1000) + " ms" + (label.empty() ? "" : " " + label));
      } else if (c.pause_label.empty()) {
        c.pause_label = label;
      }
      c.paused = true;
      c.paused_until_us = until;
      c.pause_planned_us = until - c.pause_started_us;
      event_del(c.pause_end);
      const timeval tv = Tv(until - now);
      event_add(c.pause_end, &tv);
      return;
    }
    case FaultAction::Kind::kCrashClient: {
      Client& c = *clients[static_cast<size_t>(f.target)];
      if (c.crashed) return;
      c.crashed = true;
      c.paused = false;
      event_del(c.pause_end);
      for (const Item& item : c.held) {
        if (item.deliver()) static_cast<CallRec*>(item.ptr)->in_queue = false;
        Drop(item);
      }
      c.held.clear();
      if (f.on_send.empty()) {
        Log(c.id, Ev::kCrash, 0, "crash");
      } else {
        Log(c.id, Ev::kCrash, 0, "crash " + OnSendText(f));
        Note("crash client " + std::to_string(c.id) + " " + OnSendText(f) + ": applied at " + Ms(now) +
             ", right after the command was handed to the network");
      }
      if (c.has_main && !c.main_done && --mains_left == 0) event_base_loopbreak(base);
      return;
    }
    case FaultAction::Kind::kClientClockJump: {
      Client& c = *clients[static_cast<size_t>(f.target)];
      c.jumps_us += f.delta_us;
      Log(c.id, Ev::kFault, f.delta_us, "wall clock jumps " + std::to_string(f.delta_us / 1000) + " ms");
      return;
    }
    case FaultAction::Kind::kCrashNode: {
      const int s = ep_server[static_cast<size_t>(f.target)];
      if (!servers->Kill(s, &err)) return failed(err);
      CloseEndpoint(f.target);
      Log(-1, Ev::kFault, f.target, "node " + std::to_string(f.target) + " crashes (SIGKILL, data lost)");
      return;
    }
    case FaultAction::Kind::kRestartNode: {
      const int s = ep_server[static_cast<size_t>(f.target)];
      CloseEndpoint(f.target);
      if (!servers->Respawn(s, &err)) return failed(err);
      Log(-1, Ev::kFault, f.target, "node " + std::to_string(f.target) + " restarts empty");
      // Wait for it from the loop (the other clients keep running); until it answers, commands
      // to it are refused (kError), as they would be by a real server that is starting.
      RestartPoll p;
      p.endpoint = f.target;
      p.server = s;
      p.started_us = now;
      restarts.push_back(p);
      const size_t idx = restarts.size() - 1;
      restarts[idx].ev = event_new(base, -1, 0, &Impl::OnRestartPoll, reinterpret_cast<void*>(this));
      // The callback finds its poll by scanning `restarts` (a handful at most).
      const timeval tv = Tv(kRestartPollUs);
      event_add(restarts[idx].ev, &tv);
      ++faults_pending;
      return;
    }
    case FaultAction::Kind::kPauseNode: {
      const int s = ep_server[static_cast<size_t>(f.target)];
      if (step == 0) {
        if (!servers->Pause(s, &err)) return failed(err);
        Log(-1, Ev::kFault, f.target,
            "node " + std::to_string(f.target) + " pauses " + std::to_string(f.duration_us / 1000) + " ms (SIGSTOP)");
        ArmFault(f, 1, now + f.duration_us);
      } else {
        if (!servers->Resume(s, &err)) return failed(err);
        Log(-1, Ev::kFault, f.target, "node " + std::to_string(f.target) + " resumes (SIGCONT)");
        Note("pause node " + std::to_string(f.target) + ": SIGSTOP at " + Ms(f.at_us) + " planned, SIGCONT after " +
             Ms(now - f.at_us) + " (planned " + Ms(f.duration_us) + ")");
      }
      return;
    }
    case FaultAction::Kind::kNodeClockJump: {
      const int s = ep_server[static_cast<size_t>(f.target)];
      if (!servers->JumpClock(s, f.delta_us, &err)) return failed(err);
      Log(-1, Ev::kFault, f.target,
          "node " + std::to_string(f.target) + " wall clock jumps " + std::to_string(f.delta_us / 1000) + " ms");
      return;
    }
    case FaultAction::Kind::kPartition: {
      partitions.push_back(Partition{f.target, f.node, now, now + f.duration_us});
      Log(f.target, Ev::kFault, f.node,
          "cut off from node " + std::to_string(f.node) + " for " + std::to_string(f.duration_us / 1000) + " ms");
      Note("partition client " + std::to_string(f.target) + " / node " + std::to_string(f.node) + " for " +
           Ms(f.duration_us) + " at " + Ms(now) +
           ": emulated in locklab, not in the kernel (requests dropped before they are written, replies "
           "discarded; both end as timeouts)");
      return;
    }
    case FaultAction::Kind::kFailover: {
      if (step == 0) {
        if (!servers->IsolateReplica(&err)) return failed(err);
        Log(-1, Ev::kFault, 0, "failover begins: node 0's replica is stopped and cut off (writes no longer replicate)");
        if (f.duration_us > 0) {
          ArmFault(f, 1, now + f.duration_us);
          return;
        }
      }
      const int64_t t0 = TrueNowUs();
      if (!servers->PromoteReplica(&err)) return failed(err);
      const int r = servers->replica_index();
      ep_server[0] = r;
      ep_port[0] = servers->port(r);
      CloseEndpoint(0);  // commands on the dead master's connections: kTimeout
      std::string sha_err;
      if (!LoadScripts("127.0.0.1", ep_port[0], &sha_err)) Note("failover: SCRIPT LOAD on the promoted replica: " + sha_err);
      Log(-1, Ev::kFault, 0,
          "failover: node 0's master is killed, its replica is promoted (unreplicated writes lost); node 0 is now " +
              servers->address(r));
      Note("failover node 0: replica cut off at " + Ms(f.at_us) + " (planned), master killed and replica promoted at " +
           Ms(t0) + " (took " + Ms(TrueNowUs() - t0) + "); clients now use " + servers->address(r));
      return;
    }
    case FaultAction::Kind::kDelayMessage:
      return;  // matched when the command is sent
  }
}

void RedisRuntime::Impl::OnPauseEnd(evutil_socket_t, short, void* arg) {
  auto* c = static_cast<Client*>(arg);
  Impl* impl = c->rt;
  if (c->crashed || !c->paused) return;
  c->paused = false;
  const int64_t applied = impl->TrueNowUs() - c->pause_started_us;
  impl->Log(c->id, Ev::kPauseEnd, applied, "resume");
  impl->Note("pause client " + std::to_string(c->id) + (c->pause_label.empty() ? "" : " " + c->pause_label) +
             ": planned " + Ms(c->pause_planned_us) + ", applied " + Ms(applied));
  c->pause_label.clear();
  // What came due during the pause runs now, in the order it came.
  std::deque<Item> held;
  held.swap(c->held);
  for (const Item& item : held) {
    if (item.deliver()) static_cast<CallRec*>(item.ptr)->in_queue = false;
    impl->PushReady(item);
  }
}

void RedisRuntime::Impl::OnRestartPoll(evutil_socket_t, short, void* arg) {
  auto* rt = static_cast<Impl*>(arg);
  const int64_t now = rt->TrueNowUs();
  for (auto& p : rt->restarts) {
    if (p.ev == nullptr || event_pending(p.ev, EV_TIMEOUT, nullptr)) continue;
    // This poll's timer fired (only fired timers are not pending).
    if (rt->servers->PingOnce(p.server)) {
      std::string err;
      if (!rt->LoadScripts("127.0.0.1", rt->servers->port(p.server), &err))
        rt->Note("restart node " + std::to_string(p.endpoint) + ": SCRIPT LOAD: " + err);
      rt->Log(-1, Ev::kFault, p.endpoint,
              "node " + std::to_string(p.endpoint) + " answers again after restart (" + Ms(now - p.started_us) + ")");
      rt->Note("restart node " + std::to_string(p.endpoint) + ": answered PING " + Ms(now - p.started_us) +
               " after the restart began (commands in between were refused)");
      event_free(p.ev);
      p.ev = nullptr;
      --rt->faults_pending;
    } else if (now - p.started_us > kRestartWaitUs) {
      rt->Fail("redis runtime: node " + std::to_string(p.endpoint) + " did not answer within " + Ms(kRestartWaitUs) +
               " of its restart; its log ends with:\n" + rt->servers->LogTail(p.server));
      event_free(p.ev);
      p.ev = nullptr;
      --rt->faults_pending;
    } else {
      const timeval tv = Tv(kRestartPollUs);
      event_add(p.ev, &tv);
    }
  }
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
  if (std::string error; !ConnectAll(&error)) return Status::Failed(error);
  SnapshotStats();

  start_mono_us = MonoNowUs();
  running = true;
  for (const auto& f : planned) ArmFault(f, 0, f.at_us);
  cap_ev = event_new(base, -1, 0, &Impl::OnCap, this);
  const timeval cap = Tv(limits.max_duration_us);
  event_add(cap_ev, &cap);
  watchdog_ev = event_new(base, -1, EV_PERSIST, &Impl::OnWatchdog, this);
  const timeval wd = Tv(kWatchdogUs);
  event_add(watchdog_ev, &wd);
  for (auto& c : clients)
    if (c->has_main) PushReady(Item{Item::kResume, c->id, c->main.handle().address()});
  if (!ready.empty()) ScheduleReady();

  while (mains_left > 0 && fail_msg.empty()) {
    if (event_base_loop(base, EVLOOP_ONCE) < 0) Fail("redis runtime: the event loop failed");
  }
  running = false;
  run_over = true;
  CloseSubConns(-1);  // unsubscribes: Redis drops a closed connection's subscriptions
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
  impl_->clients[static_cast<size_t>(client)]->clock = c;
}

void RedisRuntime::SetNodeClock(int node, const ClockSetting& c) {
  Impl& rt = *impl_;
  if (c.offset_us == 0 && c.drift_ppm == 0) return;
  if (!rt.servers) {
    rt.setup_error = "node clock settings need control of the redis-server processes, but the servers given "
                     "with --redis are not locklab's: drop --redis to let locklab start its own servers";
    return;
  }
  std::string err;
  if (!rt.servers->SetClock(rt.ep_server[static_cast<size_t>(node)], c.offset_us, c.drift_ppm, &err)) {
    rt.setup_error = "node " + std::to_string(node) + " clock: " + err;
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
  Status ok = impl_->Run(limits);
  // Cross-check the client-side count with what the servers themselves counted: part of what
  // this runtime reports (Notes()), while the servers are still up.
  std::map<std::string, int64_t> calls;
  std::string stats_error;
  if (ServerCommandStats(&calls, &stats_error)) {
    int64_t server_total = 0;
    std::string detail;
    for (const auto& [name, n] : calls) {
      server_total += n;
      detail += (detail.empty() ? "" : ", ") + name + " " + std::to_string(n);
    }
    impl_->stats_note = "INFO commandstats: the servers counted " + std::to_string(server_total) +
                        " commands; clients sent " + std::to_string(impl_->cmd_total) + " (" + detail +
                        "; calls made inside scripts count there too)";
  } else {
    impl_->stats_note = "INFO commandstats unavailable: " + stats_error;
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
  return out;
}

bool RedisRuntime::ServerCommandStats(std::map<std::string, int64_t>* calls, std::string* error) const {
  const Impl& rt = *impl_;
  calls->clear();
  for (int e = 0; e < rt.cfg.nodes; ++e) {
    const std::string& host = rt.ep_host[static_cast<size_t>(e)];
    const int port = rt.ep_port[static_cast<size_t>(e)];
    std::string out;
    if (!QueryRedis(host, port, {"INFO", "commandstats"}, &out, error)) return false;
    const auto now = ParseCommandStats(out);
    auto it = rt.stats_at_start.find(host + ":" + std::to_string(port));
    for (const auto& [name, n] : now) {
      int64_t base = 0;
      if (it != rt.stats_at_start.end()) {
        auto b = it->second.find(name);
        if (b != it->second.end() && b->second <= n) base = b->second;  // else: restarted, counts from 0
      }
      if (n - base > 0) (*calls)[name] += n - base;
    }
  }
  return true;
}

std::string RedisRuntime::endpoint_address(int endpoint) const {
  return impl_->ep_host[static_cast<size_t>(endpoint)] + ":" + std::to_string(impl_->ep_port[static_cast<size_t>(endpoint)]);
}

bool RedisRuntime::QueryEndpoint(int endpoint, const std::vector<std::string>& argv, std::string* out,
                                 std::string* error) const {
  return QueryRedis(impl_->ep_host[static_cast<size_t>(endpoint)], impl_->ep_port[static_cast<size_t>(endpoint)], argv,
                    out, error);
}

RedisServers* RedisRuntime::servers() { return impl_->servers.get(); }

std::unique_ptr<Runtime> MakeRedisRuntime(const BackendConfig& cfg, const std::vector<std::string>& existing_endpoints,
                                          std::string* error) {
  if (cfg.clients < 1 || cfg.clients > kMaxClients) {
    *error = "redis runtime: clients must be in [1, " + std::to_string(kMaxClients) + "]";
    return nullptr;
  }
  if (cfg.nodes < 1 || cfg.nodes > kMaxNodes) {
    *error = "redis runtime: nodes must be in [1, " + std::to_string(kMaxNodes) + "]";
    return nullptr;
  }
  if (cfg.command_timeout_us <= 0) {
    *error = "redis runtime: command_timeout_us must be > 0";
    return nullptr;
  }
  if (!existing_endpoints.empty() && static_cast<int>(existing_endpoints.size()) != cfg.nodes) {
    *error = "redis runtime: " + std::to_string(existing_endpoints.size()) + " endpoints given for " +
             std::to_string(cfg.nodes) + " nodes";
    return nullptr;
  }
  if (!existing_endpoints.empty() && cfg.with_replica) {
    *error = "redis runtime: a replica (failover) needs locklab's own servers: drop --redis";
    return nullptr;
  }
  // A write to a connection whose server just died must be an error, not the end of us.
  signal(SIGPIPE, SIG_IGN);
  RaiseFileLimit();

  auto impl = std::make_unique<RedisRuntime::Impl>();
  impl->cfg = cfg;
  if (existing_endpoints.empty()) {
    RedisServerOptions opt;
    opt.masters = cfg.nodes;
    opt.with_replica = cfg.with_replica;
    impl->servers = RedisServers::Start(opt, error);
    if (!impl->servers) return nullptr;
    for (int e = 0; e < cfg.nodes; ++e) {
      impl->ep_host.push_back("127.0.0.1");
      impl->ep_port.push_back(impl->servers->port(e));
      impl->ep_server.push_back(e);
    }
  } else {
    for (const auto& ep : existing_endpoints) {
      std::string host;
      int port = 0;
      if (!ParseHostPort(ep, &host, &port)) {
        *error = "redis runtime: bad endpoint '" + ep + "' (want HOST:PORT)";
        return nullptr;
      }
      impl->ep_host.push_back(host);
      impl->ep_port.push_back(port);
      impl->ep_server.push_back(-1);
    }
  }
  if (!impl->Init(error)) return nullptr;
  for (int e = 0; e < cfg.nodes; ++e) {
    std::string err;
    if (!impl->LoadScripts(impl->ep_host[static_cast<size_t>(e)], impl->ep_port[static_cast<size_t>(e)], &err)) {
      *error = "redis runtime: loading the scripts on " + impl->ServerName(e) + ": " + err;
      return nullptr;
    }
  }
  if (impl->servers && impl->servers->has_replica()) {
    std::string err;  // a replica may refuse; EVAL covers it after a failover
    impl->LoadScripts("127.0.0.1", impl->servers->port(impl->servers->replica_index()), &err);
  }
  return std::unique_ptr<Runtime>(new RedisRuntime(std::move(impl)));
}

void RegisterRedisBackend() { RegisterBackend("redis", &MakeRedisRuntime); }

}  // namespace locklab
