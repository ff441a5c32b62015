// Private to the real runtime's source files (redis_runtime*.cc): RedisRuntime::Impl, the one
// object behind RedisRuntime (redis_runtime.h says what it does). Its parts live in
//   redis_runtime.cc           set-up, Run, tear-down and the public face
//   redis_runtime_gate.cc      the client gate and the ready queue, sleeps, tasks, timers
//   redis_runtime_conn.cc      hiredis connections and our libevent adapter
//   redis_runtime_commands.cc  commands, their network hop, deadlines and records
//   redis_runtime_pubsub.cc    SUBSCRIBE, published messages, WaitMessage
//   redis_runtime_faults.cc    the fault plan, one function per kind
//   redis_runtime_sentinel.cc  Sentinel mode: the sentinels, +switch-master, failover by Sentinel
// Single-threaded: everything runs on the thread that runs the libevent loop.
#pragma once

#include <event2/event.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <coroutine>
#include <cstdio>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "harness/real/cpu_placement.h"
#include "harness/real/cpu_time.h"
#include "harness/real/real_clock.h"
#include "harness/real/redis_runtime.h"
#include "harness/real/sentinel.h"
#include "sim/clock.h"
#include "sim/fault.h"
#include "sim/net_model.h"
#include "sim/rng.h"

namespace locklab {
namespace redis_rt {

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
constexpr int64_t kSentinelWaitUs = 15'000'000;  // Sentinel must announce +switch-master by then

inline int64_t MonoNowUs() { return MonotonicNowUs(); }

inline int64_t RealNowUs() { return RealtimeNowUs(); }

inline timeval Tv(int64_t us) {
  if (us < 0) us = 0;
  return timeval{static_cast<time_t>(us / 1'000'000), static_cast<suseconds_t>(us % 1'000'000)};
}

inline std::string Ms(int64_t us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f ms", static_cast<double>(us) / 1000.0);
  return buf;
}

inline bool NeedsServerControl(FaultAction::Kind k) {
  return k == FaultAction::Kind::kCrashNode || k == FaultAction::Kind::kRestartNode ||
         k == FaultAction::Kind::kPauseNode || k == FaultAction::Kind::kNodeClockJump ||
         k == FaultAction::Kind::kFailover;
}




}  // namespace redis_rt
using namespace redis_rt;  // NOLINT: private to the runtime's own files

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
    sim::Clock clock;  // the simulator's clock model over the real monotonic time
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
    int64_t start_us = 0;       // true time of StartCall
    int matcher = -1;           // the delay_message (Network::delay index) that matched it
    bool hold_pending = false;  // a message of it is held for its network delay (Hop)
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

  // Sentinel mode: one subscription connection per sentinel (the channels of the failover's steps).
  struct SentinelSub {
    Impl* rt = nullptr;
    int index = 0;
    redisAsyncContext* ac = nullptr;
    int confirmed = 0;  // SUBSCRIBE answers
  };
  // Sentinel mode: a failover's times (true time; -1 until seen), first seen from any sentinel.
  struct SentinelFailover {
    int64_t killed_us = -1, odown_us = -1, promote_sent_us = -1, promoted_us = -1, switch_us = -1;
    int switch_from = -1;  // the sentinel whose +switch-master came first
    int64_t at_us = 0;     // the fault's planned cut-off
    event* deadline_ev = nullptr;
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
  sim::Network net{NetSetting{}, 1};  // the emulated network: the simulator's model (Init sets it)

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
  // LOCKLAB_LOOP_LOG=FILE: a line per step of the event loop, "PASS KIND CLIENT T_US WHAT" with
  // KIND T (a sleep's timer fired; WHAT: when it was due and the loop thread's CPU so far, µs),
  // W (a command written; its name), R (a reply read; the reply), H (a held reply's callback, when
  // its hold ends) or E (the pass ended; WHAT: the loop thread's CPU so far, user and system, µs,
  // and how many times it blocked: what a pass cost outside its steps, and whether it slept); how
  // the simulator's passes loop was checked against this runtime (README).
  FILE* loop_log = nullptr;
  int64_t loop_pass = 0;
  // RecordWakes and RecordPasses: where the samples go (null: not recorded), when the last pass
  // ended (and the thread's CPU and blocks then), and the steps of the pass under way by kind.
  enum StepKind { kStepTimer, kStepWrite, kStepRead, kStepHeldReply, kStepKinds };
  std::vector<RedisRuntime::WakeSample>* wake_samples = nullptr;
  std::vector<RedisRuntime::PassSample>* pass_samples = nullptr;
  int64_t pass_end_us = 0;
  int64_t pass_end_cpu_us = 0;
  double pass_end_blocks = 0;
  int pass_steps[kStepKinds] = {};
  int PassSteps() const { return pass_steps[0] + pass_steps[1] + pass_steps[2] + pass_steps[3]; }
  void SleepFired(int client, int64_t due_us);
  void EndPass();
  void LoopLog(char kind, int client, const char* what) const {
    if (loop_log != nullptr)
      std::fprintf(loop_log, "%lld %c %d %lld %s\n", static_cast<long long>(loop_pass), kind, client,
                   static_cast<long long>(TrueNowUs()), what);
  }
  void LogPassEnd() const {
    // The clock, not getrusage's CPU: that is brought up to date only when the thread blocks or
    // at the scheduler's tick, too coarse for a pass.
    LoopLog('E', -1, (std::to_string(ClockUs(CLOCK_THREAD_CPUTIME_ID)) + " " +
                      std::to_string(static_cast<long long>(ThreadBlocks()))).c_str());
  }
  std::vector<Conn*> flush;          // connections written to from inside a reply callback
  std::vector<FaultAction> planned;
  std::vector<std::unique_ptr<FaultTimer>> fault_timers;
  int faults_pending = 0;
  std::vector<RestartPoll> restarts;
  bool failover_planned = false;
  std::unique_ptr<Sentinels> sentinels;  // Sentinel mode only
  std::optional<CpuSplit> cpu_split;     // this run's CPUs (cpu_placement.h), planned once
  std::vector<std::unique_ptr<SentinelSub>> sentinel_subs;
  SentinelFailover sentinel_fo;

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
  Status SetEndpoints(const std::vector<std::string>& existing_endpoints);  // starts ours when none are given
  Status Init();
  Status LoadScripts(const std::string& host, int port);
  Status ConnectAll();  // every client's connections, within kConnectWaitUs
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
  // What a message is, for the counters of those the network drops.
  enum class Leg : uint8_t { kRequest, kReply, kMessage };
  // One message's hop through the emulated network (sim::Network, the simulator's model):
  // partition -> loss -> delay -> hold. A dropped message is counted by `leg` and goes no
  // further (`rec`, if any, is offered to TryFree); otherwise `arrive` runs after the drawn
  // delay plus extra_us: at once when that is 0, else from a timer (the held time is measured
  // for Notes(); `rec` is kept from the pool meanwhile). The one hop of commands, replies,
  // SUBSCRIBEs, their answers and published messages.
  void Hop(int client, int endpoint, Leg leg, int64_t extra_us, CallRec* rec, std::function<void()> arrive);
  void Send(CallRec* rec);
  bool Write(CallRec* rec, Conn& conn, bool eval);
  Status EnsureConnected(Conn& conn);  // starts connecting when there is no context
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
  // True µs from now until `us` more of client `client`'s monotonic clock have passed (its drift).
  int64_t OnClientClockUs(int client, int64_t us) const;
  void Spawn(int client, Task<void> task);
  Task<void> RunMain(int client, Task<void> main);

  // --- Faults. ---
  Status PlanFault(const FaultAction& f);
  void ArmFault(const FaultAction& f, int step, int64_t at_us);
  static void OnFaultEv(evutil_socket_t, short, void* arg);
  void ApplyFault(const FaultAction& f, int step);  // a flat switch over the kinds below
  void Record(const FaultRecord& r) { Log(r.client, r.type, r.value, r.detail); }
  void FaultFailed(const FaultAction& f, const std::string& why);
  void PauseClient(const FaultAction& f);
  void CrashClient(const FaultAction& f);
  void JumpClientClock(const FaultAction& f);
  void CrashNode(const FaultAction& f);
  void RestartNode(const FaultAction& f);
  void PauseNode(const FaultAction& f);
  void ResumeNode(const FaultAction& f);
  void JumpNodeClock(const FaultAction& f);
  void CutOff(const FaultAction& f);
  void BeginFailover(const FaultAction& f);
  void PromoteReplica(const FaultAction& f);
  void FailoverSecondStep(const FaultAction& f) { return sentinels ? KillMasterForSentinel(f) : PromoteReplica(f); }

  // --- Sentinel mode (redis_runtime_sentinel.cc). ---
  Status StartSentinels();      // next to our servers; endpoint 0 from SENTINEL get-master-addr-by-name
  Status SubscribeSentinels();  // before the run: every sentinel's failover channels, confirmed
  void CloseSentinelSubs();
  static void OnSentinelConnect(const redisAsyncContext* ac, int status);
  static void OnSentinelDisconnect(const redisAsyncContext* ac, int status);
  static void OnSentinelReply(redisAsyncContext* ac, void* r, void* privdata);
  void OnSentinelEvent(int sentinel, const std::string& channel, const std::string& payload);
  void KillMasterForSentinel(const FaultAction& f);  // the failover's second step: SIGKILL, SIGCONT
  void FollowSwitch(const std::string& host, int port);  // endpoint 0 -> the new master
  static void OnSentinelDeadline(evutil_socket_t, short, void* arg);
  static void OnPauseEnd(evutil_socket_t, short, void* arg);
  static void OnRestartPoll(evutil_socket_t, short, void* arg);
  static void OnCap(evutil_socket_t, short, void* arg);
  static void OnWatchdog(evutil_socket_t, short, void* arg);
  std::string ServerName(int endpoint) const;

  Status Run(const RuntimeLimits& limits);
};

class RedisRuntime::Impl::ClientEnv : public Env {
 public:
  ClientEnv(Impl* rt, int id) : rt_(rt), id_(id) {}
  void StartCall(PendingCall* call) override { rt_->StartCall(id_, call); }
  void StartSleep(int64_t us, std::coroutine_handle<> h) override { rt_->StartSleep(id_, us, h); }
  int node_count() const override { return rt_->cfg.nodes; }
  int client_id() const override { return id_; }
  int64_t MonotonicUs() override { return self().clock.MonotonicUs(rt_->TrueNowUs()); }
  // The host's wall clock as its epoch: CLOCK_REALTIME minus true time.
  int64_t WallUs() override {
    const int64_t t = rt_->TrueNowUs();
    return self().clock.WallFromEpochUs(RealNowUs() - t, t);
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

}  // namespace locklab
