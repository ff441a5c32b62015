// Private to the simulator's source files (simulator.cc, sim_*.cc): the event kinds, the records
// behind Simulator's forward-declared types, and the few small steps every command takes several
// times (inline at the end: they were calls across those files).
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/simulator.h"
#include "sim/transactions.h"

namespace locklab::sim {
namespace detail {

enum EventKind : uint8_t {
  kNodeReceive, kDeliver, kWake, kRepl, kFault,
  kBlockTimeout,  // a = InFlight id, b = timer token: a parked BLPOP's timeout at its node
  kHeldDeadline,  // a = InFlight id, b = its use: the caller's deadline while parked or held
  kDrain,         // a = physical node, b = client: run the commands held behind an answered BLPOP
  kSubArrive,     // a = client, b = SubRef: a SUBSCRIBE reaches its node
  kSubConfirm,    // a = client, b = SubRef: its answer reaches the client (gated)
  kSubDeadline,   // a = client, b = SubRef: callers whose deadline passed get false (gated)
  kMessage,       // a = client: a published message reaches the client (gated)
  kWaitTimeout,   // a = client, b = waiter id: a WaitMessage's timer (gated)
  kWaitAck,       // a = InFlight id, b = its use: a parked WAIT's replica may have acknowledged by now
  kNodePass,      // a = physical node, b = its pass generation: the node polls, runs, writes (passes loop)
  kSendHeld,      // a = InFlight id: the hold of its request ends; written once the client's CPU is done
                  // (LoopCosts::held_request_waits)
  kClientPass,    // a = client CPU: its event loop begins a pass (LoopCosts::client_passes)
};

// Event::charged: 0 not yet charged, 1 charged, 2 charged as a pass's event (its process
// charges the pass's next one once it has run).
constexpr uint8_t kChargedInPass = 2;

// kMessage's b: how the message reaches its client. Held for an injected delay: under client
// passes, read first (kMessageUnread + the delay in µs), then its hold's timer (kMessageAfterHold);
// otherwise the hold is on the path (kMessageHeld).
constexpr uint64_t kMessagePlain = 0, kMessageHeld = 1, kMessageAfterHold = 2, kMessageUnread = 3;

constexpr uint32_t kNoCall = 0xffffffffu;
constexpr uint64_t kCostStreamSalt = 0xc0575c0575c0575cULL;  // the cost draws' stream: seed ^ this
constexpr int64_t kMaxInt64 = std::numeric_limits<int64_t>::max();

// A subscription record named in events: its index in Process::subs and its generation.
inline uint64_t SubRef(size_t index, uint32_t gen) { return (static_cast<uint64_t>(gen) << 32) | index; }

// Costs in µs (a double) to ns: std::llround(max(us, 0) * 1000) without the libm call (it was 2%
// of a run): the same value, halves away from zero; the fraction ns - trunc(ns) is exact.
inline int64_t Ns(double us) {
  const double ns = (us > 0.0 ? us : 0.0) * 1000.0;
  auto whole = static_cast<int64_t>(ns);
  if (ns - static_cast<double>(whole) >= 0.5) ++whole;
  return whole;
}
inline int64_t CeilUs(int64_t ns) { return ns <= 0 ? 0 : (ns + 999) / 1000; }

inline int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? kMaxInt64 : r;
}

}  // namespace detail
using namespace detail;  // NOLINT: the simulator's own files only

struct Simulator::Process {
  // One subscription (endpoint, channel) as the client sees it.
  struct SubRec {
    enum class State : uint8_t { kNone, kPending, kConfirmed };
    int endpoint = 0;
    std::string channel;
    State state = State::kNone;
    uint32_t gen = 0;      // bumped when the record starts over or its connection is lost
    bool refused = false;  // the answer on its way says the node was down
    std::vector<std::pair<SubscribeCall*, int64_t>> callers;  // waiting, with their deadlines
  };

  Clock clock;
  int64_t paused_until_us = 0;
  bool crashed = false;
  bool main_done = false;
  Task<void> main;
  std::vector<Task<void>> spawned;
  std::unique_ptr<ClientEnv> env;
  std::vector<SubRec> subs;
  int64_t queued_messages = 0;
  int64_t dropped_messages = 0;
  std::deque<std::pair<uint64_t, MessageWait*>> waiters;  // WaitMessage calls, longest waiting first
  uint64_t next_waiter = 0;
};

struct Simulator::NodeState {
  // One client's connection to this node, while a BLPOP of it is parked here or commands of it
  // wait behind one (otherwise there is no entry).
  struct Conn {
    uint32_t parked = kNoCall;
    std::deque<uint32_t> held;
  };

  Store store;
  Transactions tx;  // its connections' MULTI and WATCH state; every command goes through it
  Clock clock;
  bool up = true;
  int64_t busy_until_ns = 0;  // the node's thread is free from then on
  int64_t paused_until_us = 0;
  std::map<int, Conn> conns;                                               // by client
  std::map<int, int64_t> woff;  // by client: the replication offset of its last write (WAIT waits for it)
  std::map<std::string, std::deque<uint32_t>, std::less<>> waiting;        // key -> parked BLPOPs, FIFO
  size_t parked = 0;
  std::map<std::string, std::vector<std::pair<int, int>>, std::less<>> subscribers;  // channel -> (client, endpoint)
  Rng expire_rng{0};                  // active expiry's own stream (sim_expire.cc)
  int64_t next_expire_us = kMaxInt64;  // true time of its next expire cycle; kMaxInt64: none
  // The passes loop: the commands run since the node last polled, waiting for their pass to
  // write their replies (bounded by the calls in flight).
  struct PassReply {
    uint32_t id;
    Reply reply;
    double cost_us;
    std::vector<std::pair<int, int>> messages;  // a PUBLISH's: they leave with its reply
  };
  std::vector<PassReply> pass;
  bool pass_open = false;  // a kNodePass of generation pass_gen is queued
  uint64_t pass_gen = 0;
};

// One command between StartCall and delivery. It owns the command (the caller's frame may be
// gone by the time a late request reaches its node) and lives until both the node side and
// the client side are finished with it.
struct Simulator::InFlight {
  int client = 0;
  int endpoint = 0;
  PendingCall* call = nullptr;
  Command cmd;
  Reply reply;
  int64_t deadline_us = 0;
  uint64_t use = 0;              // this use of the record (events of an earlier use are stale)
  bool node_pending = false;     // the node still has it: a kNodeReceive queued, or parked, or held
  bool deliver_pending = false;  // a kDeliver is queued (reply or timeout decided)
  bool parked = false;           // a BLPOP waiting at node park_node
  bool held = false;             // waiting at node park_node behind its connection's parked BLPOP
  bool reply_held = false;       // its reply was held for an injected delay (client.hold_us)
  // Client passes: a held reply is read by a pass first (reply_unread: it arms the hold), then
  // its hold's timer, reply_hold_us later, joins a pass (reply_after_hold).
  bool reply_unread = false;
  bool reply_after_hold = false;
  int64_t reply_hold_us = 0;
  int park_node = -1;            // physical node
  int64_t park_deadline_ms = 0;  // parked: times out once the node's wall clock (ms) is past this
  uint64_t park_timer = 0;       // parked: the token of its live kBlockTimeout event
  int64_t wait_replicas = -1;    // a parked WAIT: the replicas it wants (-1: not a WAIT)
  int64_t wait_offset = 0;       // ... and the replication offset they must have acknowledged
};

struct Simulator::ReplItem {
  std::string key;
  std::optional<Entry> entry;
  uint32_t generation = 0;
  int64_t offset = 0;  // the master's replication offset once this item is sent (1, 2, ...)
};

// A planned fault, or a step that follows one (scheduled by the simulator itself).
enum FaultStep : uint8_t { kApply, kResumeClient, kResumeNode, kPromote };
struct Simulator::Fault {
  FaultAction action;
  uint8_t step = kApply;
};

// A client's Env, with the client's random stream: a call on it touches this object, so the
// stream is read without the client's Process record (a cache miss with a thousand clients).
// Aligned to a cache line, so that the object (56 bytes) is one.
class alignas(64) Simulator::ClientEnv : public Env {
 public:
  ClientEnv(Simulator* sim, int id, uint64_t seed) : sim_(sim), id_(id), rng_(seed) {}
  void StartCall(PendingCall* call) override { sim_->StartCall(id_, call); }
  void StartSleep(int64_t us, std::coroutine_handle<> h) override { sim_->StartSleep(id_, us, h); }
  int node_count() const override { return sim_->config_.nodes; }
  int client_id() const override { return id_; }
  int64_t MonotonicUs() override { return sim_->MonotonicClockOf(id_).MonotonicUs(sim_->now_us_); }
  int64_t WallUs() override { return proc().clock.WallUs(sim_->now_us_); }
  uint64_t Random() override { return rng_.Next(); }
  void Spawn(Task<void> task) override { sim_->Spawn(id_, std::move(task)); }
  void StartSubscribe(SubscribeCall* call) override { sim_->StartSubscribe(id_, call); }
  void StartWaitMessage(MessageWait* wait) override { sim_->StartWaitMessage(id_, wait); }

 private:
  Process& proc() { return *sim_->clients_[static_cast<size_t>(id_)]; }
  Simulator* sim_;
  int id_;
  Rng rng_;
};

// The cost path's and the client loop's small steps, inline here: each runs several times per
// simulated command, from more than one of the simulator's files (sim_costs.cc,
// sim_client_loop.cc, simulator.cc).
inline double Simulator::DrawUs(const CostDist& d) {
  if (d.points.empty()) return 0.0;
  if (d.points.front().second == d.points.back().second) return d.points.front().second;  // a constant: no draw
  return d.AtUs(cost_rng_.Unit());
}

// A client's monotonic time depends on its clock's drift alone: while no client's drifts, any
// drift-free clock reads it, and the client's record is not touched.
inline constexpr Clock kDriftFreeClock{};
inline const Clock& Simulator::MonotonicClockOf(int client) const {
  return clients_drift_ ? clients_[static_cast<size_t>(client)]->clock : kDriftFreeClock;
}

inline bool Simulator::ClientRuns(int client) const {
  if (crashed_clients_ == 0 && now_us_ >= pauses_end_us_) return true;
  const Process& p = *clients_[static_cast<size_t>(client)];
  return !p.crashed && now_us_ >= p.paused_until_us;
}

inline int64_t Simulator::WorkStartNs(size_t cpu, int64_t now_ns) const {
  const int64_t busy_ns = cpu_busy_ns_[cpu];
  if (!client_loops_.empty() && client_loops_[cpu].running && now_ns - busy_ns < 1000) return busy_ns;
  return std::max(now_ns, busy_ns);
}

inline int64_t Simulator::StepCostNs(const CostDist& cost, bool held) {
  int64_t cost_ns = Ns(DrawUs(cost));
  if (held) cost_ns += Ns(DrawUs(config_.cost.client.hold_us));  // the real runtime's hold timer
  return cost_ns;
}

inline void Simulator::PushCharged(int64_t ready_us, const Event& ev, uint8_t charged) {
  if (cpu_busy_ns_.size() == 1) {  // one CPU: in key order (simulator.h, charged_queue_)
    charged_queue_.push_back(Event{ready_us, seq_++, ev.kind, charged, ev.a, ev.b});
  } else {
    Push(ready_us, ev.kind, ev.a, ev.b, charged);
  }
}

// Inline: most events reach a loop that is running a pass, and only join the next one's list.
inline void Simulator::JoinClientPass(const Event& ev, const ClientCharge& charge) {
  const size_t cpu = ProcessOf(charge.client);
  ClientLoop& loop = client_loops_[cpu];
  loop.arrived[charge.timer ? kTimers : kSockets].push_back(PassEvent{ev, charge});
  if (!loop.running) QueueClientPass(cpu, charge.timer);  // else the pass after this one takes it
}

inline int Simulator::ClientOfEvent(const Event& ev) const {
  if (ev.kind == kDeliver || ev.kind == kSendHeld) return inflight_[static_cast<uint32_t>(ev.a)].client;
  return ev.a;
}

inline size_t Simulator::CpuOfClientEvent(const Event& ev) const {
  if (cpu_busy_ns_.size() == 1) return 0;  // one process: no need to find the event's client
  return ProcessOf(ClientOfEvent(ev));
}

inline bool Simulator::ReadHeld(const Event& ev) {
  if (ev.kind == kMessage && ev.b >= kMessageUnread) {
    Push(SaturatingAdd(now_us_, static_cast<int64_t>(ev.b - kMessageUnread)), kMessage, ev.a, kMessageAfterHold);
    return true;
  }
  if (ev.kind != kDeliver) return false;
  InFlight& f = inflight_[static_cast<uint32_t>(ev.a)];
  if (!f.reply_unread) return false;
  f.reply_unread = false;
  f.reply_after_hold = true;
  Push(SaturatingAdd(now_us_, f.reply_hold_us), kDeliver, ev.a, 0);
  return true;
}

}  // namespace locklab::sim
