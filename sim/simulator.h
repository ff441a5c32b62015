// Simulator: deterministic discrete-event simulation of client processes, a network and
// Redis nodes, in virtual time (µs). One seed drives every random choice.
//
// Model, in one paragraph. Each client is a process with its own clocks (sim/clock.h) whose
// coroutines are resumed only from the event queue. A command travels to its node with a drawn
// one-way delay, executes there atomically at arrival (expiry judged by the node's wall clock),
// and its reply leaves after the node's queue of earlier work (a single-threaded server; what
// each step costs: SimConfig::cost, below) and travels back with another drawn delay. A reply
// that is lost or would
// arrive after the caller's deadline becomes a timeout at the deadline (unknown outcome: the
// command may have run). A paused client has every resumption (replies, timers, yields)
// deferred to the end of its pause; a crashed client has them dropped. Nodes can crash (data
// lost, commands refused), restart empty, pause (commands queue), and have clocks that jump.
// Node 0 may have an asynchronous replica that receives each written key's new state after
// repl_delay_us; failover cuts the replica off (in-flight replication is lost), then kills
// node 0 and promotes the replica in its place.
//
// WAIT numreplicas timeout on node 0 with its replica: the replication offset counts the
// items the master sends; the replica's offset is the last one it applied. A WAIT whose
// client's last write the replica has applied answers 1 at once; otherwise it is parked like a
// BLPOP and answered 1 when the acknowledgement can have come back (repl_delay_us after the
// last item sent is applied), or, at its timeout, with the replicas that acknowledged by then
// (0 once the replica is cut off, crashed or promoted). Without a replica it waits its timeout
// and answers 0, as Redis does.
//
// Waiting at the node. A BLPOP that finds its lists empty is parked at its node (not
// answered); a later command that creates one of its lists (LPUSH, RPUSH, a script) serves the
// parked BLPOPs of that key in the order they blocked, one element each, right after it runs;
// a parked BLPOP that nobody serves gets nil once the node's wall clock (in ms, as Redis
// compares) is past park time + its timeout. Its caller's deadline is command_timeout_us plus
// that timeout. While it is parked, the same client's later commands to that node wait behind
// it and run, in order, once it is answered (a blocked Redis connection reads nothing more).
// A node crash (or restart, or failover away from it) ends parked and held commands without a
// reply: their callers get kTimeout at once (the connection is gone with them on it, as in the
// real runtime). A crashed client's parked BLPOP stays parked and may still take an element
// (its connection stays open, as in the real runtime); a caller whose deadline passed while
// parked gets kTimeout, and the element a later push gives it is taken all the same.
//
// Costs (SimConfig::cost, sim/cost_model.h), drawn from a random stream of their own (seed ^
// kCostStreamSalt) in event order, so they never shift the network's draws:
//  - a node is one thread with a busy-until time (ns): each step starts when the node is free
//    and takes its drawn cost: command_us for a command, SUBSCRIBE or a BLPOP's timeout reply;
//    script_us + (redis.call's in the script's Lua text) x script_call_us for EVALSHA;
//    command_us + receivers x publish_per_receiver_us for PUBLISH; blpop_serve_us per parked
//    BLPOP served. A BLPOP that parks costs nothing until it is answered (no figure for it).
//    Wake-up: work that finds the node idle (busy-until <= now) first pays wake_us; work that
//    arrives while it is busy joins the same turn and pays none, as an event loop that reads
//    every ready connection per wake-up shares one wake-up among them. The command still
//    executes at its arrival; only its reply waits for the node's time.
//  - a client process is one CPU with a busy-until time (ns): one for all clients
//    (Placement::kOneProcess) or one each. A command leaves after send_us on it; a reply (or a
//    published message, or a SUBSCRIBE's answer) resumes its caller after reply_us on it, a
//    timer (a sleep, a timeout, a spawn's first step) after timer_us: the event is put back to
//    when the CPU is done with it. A request or reply held for an injected delay (a NetModel
//    draw or a delay_message fault above 0) costs hold_us more on it: the real runtime holds
//    such a message with a timer of its own (the delay faults live in the client process).
//    A timer that fires while the CPU is idle (a sleep's, a timeout's, a held reply's or
//    message's) starts late by a draw from wake_after_idle for how long the CPU had idled:
//    the real process sleeps in epoll_wait and its halted vCPU takes time to run again, the
//    longer the idle the later (measured by `locklab calibrate`). Other timers due while it
//    wakes queue behind it, and so fire together, as in one pass of the real event loop. A
//    reply that is not held pays none: the measured one_way_us has that wake-up in it. Nor does
//    a held request (its hold is a delay on the path here, not an event on the client's CPU),
//    unless the profile's loop has held_request "loop" (LoopCosts::held_request_waits): then
//    arming the hold costs hold_us when the command is sent, and at the end of the delay the
//    hold's timer waits for the CPU like any timer (kSendHeld) and the write costs send_us.
//  - the path: a message arrives after a drawn one_way_us plus the injected delay (NetModel),
//    except that one_way_us, measured with a client that did its own send or receive work
//    inside the trip, is lowered by the mean client cost charged on that side (send_us for a
//    request, reply_us for an answer or message; never below 0), so that work is not counted
//    twice.
//  - a profile with the passes loop (CostModel::loop, sim/cost_model.h) instead: a path (a
//    client process to a node, or back) is FIFO and takes a draw of wire_us (sim_costs.cc);
//    a reply or message that finds its client CPU idle waits for its wake-up as a timer does;
//    a command that finds its node idle waits for the node to poll (the same wake-up draw less
//    the first row's), and everything that arrives before then is read by that pass; the pass
//    costs wake_us and its commands' costs, less reply_write_us each, then writes their
//    replies, the last read first, reply_write_us apiece. Work arriving during a pass is read
//    by the next, which polls as soon as this one ends.
//  - with the loop's client passes as well (LoopCosts::client_passes, sim_client_loop.cc): a
//    client event is not charged when it arrives but joins its process's next pass; a pass
//    begins once the process is free (after its wake-up when it was idle), takes replies and
//    messages before timers, and charges them one at a time, each after the sends of the one
//    before; what arrives during a pass joins the next. A wake-up's CPU (wake_cpu_us) is spent
//    when its pass is done: it delays the next pass, not the handlers of this one. With
//    socket_wakes, a reply or message wakes an idle process as a node's poll does (the draw
//    less the first row's), and one that arrives while the process sleeps toward a late timer
//    brings that pass forward when its own wake-up comes sooner.
//
// One world model for both runtimes: the fault plan, its check and the history records of
// each fault are sim/fault.h, the network (delays, loss, partitions, delayed messages, on_send
// triggers) is sim/net_model.h, a process's clocks sim/clock.h; the real runtime
// (harness/real/) applies the same ones to real redis-servers.
//
// Active expiry. Every master runs Redis 7's expire cycle (sim/expire_cycle.h) every 100 ms of
// its monotonic clock (hz 10), from a phase drawn when it starts: expired keys nobody touches
// are deleted then, judged by the node's wall clock, and stay deleted if that clock later steps
// back. A master with a replica sends it each deletion like a write (Redis propagates a DEL).
// A paused node runs its overdue cycle when it resumes; a crashed node runs none; a restarted
// node, or a promoted replica, starts its cycle anew; a replica runs none. Each node has a
// random stream of its own for this (phase, hash order of its keys), so other draws do not
// shift. Cycles cost no node time; they add no events (each runs, at its own time, before the
// first event at or after it), only the replication of their deletions.
//
// Machine stalls (CostModel::machine): every client CPU and every node's thread is taken away
// at Poisson times of its own for a drawn length, after the step under way if any (work that
// wants it meanwhile waits for the end), from a random stream of their own. Like expire cycles
// they add no events: each is applied, at its own time, before the first event at or after it.
//
// Pub/sub. A node keeps its subscribers per channel; PUBLISH counts them and sends each a
// message with a drawn one-way delay (lost like any message, dropped when that client is
// partitioned from the node), delivered through the client's gate into its queue. SUBSCRIBE is
// a round trip; a node crash drops its subscriptions.
#pragma once

#include <array>
#include <coroutine>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/env.h"
#include "algorithms/status.h"
#include "algorithms/task.h"
#include "sim/clock.h"
#include "sim/cost_model.h"
#include "sim/event_fifo.h"
#include "sim/event_wheel.h"
#include "sim/fault.h"
#include "sim/net_model.h"
#include "sim/pause_draws.h"
#include "sim/rng.h"
#include "sim/store.h"
#include "sim/wake_rows.h"

namespace locklab::sim {

struct SimConfig {
  int clients = 1;
  int nodes = 1;
  bool with_replica = false;
  uint64_t seed = 1;
  int64_t command_timeout_us = 1'000'000;
  NetModel net{NetModel::Dist::kConstant, 100, 0};  // one way, per message
  CostModel cost = LegacyCostModel();  // what each step costs (the header's "Costs")
  int64_t repl_delay_us = 1'000;  // master -> replica
  bool active_expire = true;      // masters run the expire cycle; false: keys expire lazily only
  // (simulated nodes have no separate connection set-up: a crashed node refuses at once)
  int64_t max_events = 2'000'000'000;
  int64_t max_time_us = 3'600'000'000LL;
};

// Limits of the waiting at a node (over one: an error reply instead of parking or holding).
inline constexpr size_t kMaxParkedPerNode = 100'000;      // BLPOPs parked at one node
inline constexpr size_t kMaxHeldPerConnection = 100'000;  // commands held behind one parked BLPOP

class Simulator {
 public:
  explicit Simulator(SimConfig config);
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  Env& env(int client);
  int64_t now_us() const { return now_us_; }
  const SimConfig& config() const { return config_; }
  const Network& network() const { return net_; }
  // The client CPU charged so far (ChargeCpuNs: every cost drawn, over every client process),
  // ns; wake-up lateness is a delay, not CPU, and is not in it. 0 without client costs.
  int64_t client_cpu_ns() const { return client_cpu_ns_; }

  void SetClientClock(int client, int64_t offset_us, double drift_ppm);
  void SetNodeClock(int node, int64_t offset_us, double drift_ppm);

  // Plans one fault (sim/fault.h), checked by ValidateFault against this simulator's world.
  // Timed faults apply at f.at_us of true time. kPartition: client `target` cannot reach node
  // `node` in [at, at + duration). kFailover: at `at` node 0's replica is cut off (nothing more
  // reaches it); at `at + duration` the master dies and the replica takes its place as endpoint
  // 0. kDelayMessage: the `occurrence`-th command named `command` (Command::Name(); "*" = any)
  // that `target` sends gets duration_us more one-way delay. With on_send (client pauses and
  // crashes): when `target` sends its `occurrence`-th command named `on_send`, the fault is
  // planned at that instant, at the end of StartCall, after the command has been scheduled: the
  // command still reaches its node, and the event queue applies the fault before any event of
  // that instant queued after it, so the reply is gated (pause) or dropped (crash) like any
  // other resumption. Other commands of a SendAll group started in the same synchronous loop
  // still go out. Each trigger fires at most once; its OnSendText ends the record's detail.
  Status PlanFault(const FaultAction& f);
  // PlanFault(pause) at each of at_us (rising, >= 0) for a timed pause_client, before the run
  // (Invalid otherwise): one check and one stored action for all of them (the events keep the
  // order PlanFault would give them). A run's drawn pauses take the form below; this one is for
  // times known as a list.
  Status PlanPauses(FaultAction pause, const std::vector<int64_t>& at_us);
  // The same for pauses drawn one at a time (sim/pause_draws.h): each drawn when the one before
  // it is taken, so a run that ends early draws few of them; the same events as PlanPauses with
  // every time drawn first.
  Status PlanPauses(FaultAction pause, PauseDraws draws);

  // Observers (optional). Command: at execution on a node (true time). Fault: when applied.
  using CommandObserver = std::function<void(int64_t t_us, int client, int node, const Command&, const Reply&)>;
  // What the fault writes into the history (sim/fault.h: the same records as the real runtime).
  using FaultObserver = std::function<void(int64_t t_us, const FaultRecord& record)>;
  void set_command_observer(CommandObserver f) { on_command_ = std::move(f); }
  void set_fault_observer(FaultObserver f) { on_fault_ = std::move(f); }
  // Loop steps (client passes only; a debugging aid, the real runtime's LOCKLAB_LOOP_LOG in the
  // simulator): `kind` 'T' a timer fired (a sleep's or a yield's), 'W' a command written (a held
  // one when its hold ends, any other when sent, at the write's end), 'R' a reply read, 'H' a
  // held reply's callback when its hold ends, 'E' the pass ended;
  // `pass` counts client passes (of every process) from 1; t_us: when the step began on its CPU;
  // x and y: for 'T' when it was due and -1, for 'E' the client CPU charged so far (µs) and the
  // wake-ups from idle so far (as the real log's CPU and blocks), else -1.
  using LoopObserver = std::function<void(int64_t pass, char kind, int client, int64_t t_us, int64_t x, int64_t y)>;
  void set_loop_observer(LoopObserver f) { on_loop_ = std::move(f); }

  void SetLimits(int64_t max_events, int64_t max_time_us) {
    config_.max_events = max_events;
    config_.max_time_us = max_time_us;
  }

  // Registers `main` as the client's main task; it starts when Run() starts.
  void StartClient(int client, Task<void> main);
  // Runs until every main task is done or its client crashed. Failed when a limit was hit or
  // the simulation stalled (nothing left to do, tasks still waiting).
  Status Run();

  // Commands sent by each client, and by name.
  const std::vector<int64_t>& commands_by_client() const { return cmd_by_client_; }
  std::vector<std::pair<std::string, int64_t>> commands_by_name() const;
  int64_t commands_total() const { return cmd_total_; }
  int64_t events_processed() const { return events_; }
  // Direct access for tests: the physical node behind endpoint i.
  Store& store(int endpoint);
  // BLPOPs parked at the physical node behind endpoint i now.
  size_t parked(int endpoint) const;
  // Messages a client's queue dropped because it was full (Env::kMaxQueuedMessages).
  int64_t messages_dropped(int client) const;
  bool client_crashed(int client) const;

 private:
  class ClientEnv;
  struct Process;
  struct NodeState;
  struct InFlight;
  struct ReplItem;
  struct Fault;
  struct Event {
    int64_t t_us;
    uint64_t seq;
    uint8_t kind;
    uint8_t charged;  // a client-side event whose CPU cost is paid (put back to when it is)
    int32_t a;
    uint64_t b;
    // One 128-bit comparison (t_us >= 0) instead of two branches: heap sifts run branch-free.
    unsigned __int128 key() const { return (static_cast<unsigned __int128>(t_us) << 64) | seq; }
    bool operator<(const Event& o) const { return key() < o.key(); }
  };

  void Push(int64_t t_us, uint8_t kind, int32_t a, uint64_t b, uint8_t charged = 0);
  // The next event in (time, sequence) order, from the current instant's queue, the wheel, the
  // charged FIFO or the faults planned before the run (planned_); false when there is none.
  bool Next(Event* ev);
  // Pops planned_'s earliest and puts the next time of the same fault there, if it has one.
  void TakePlanned();
  // Costs (sim_costs.cc).
  void InitCosts();
  double DrawUs(const CostDist& d);
  double CommandCostUs(const Command& cmd, size_t receivers);
  int64_t Depart(int physical, double cost_us);  // the node does the work: when its reply leaves
  // The client process's CPU takes `cost` (and hold_us when `held`, and extra_ns) after what it is
  // busy with: when it is done (ns).
  // A `timer` (a sleep, timeout or held message firing) that finds the CPU idle first waits for
  // the process to wake: a draw from wake_after_idle by how long it idled.
  int64_t ChargeCpuNs(int client, const CostDist& cost, bool held, bool timer = false, int64_t extra_ns = 0);
  // The idle CPU `cpu` wakes at now_ns: how late it runs (wake_after_idle, by how long it idled;
  // less the first row's for a `socket`, LoopCosts::socket_wakes); the wake-up's own CPU
  // (wake_cpu_us) is counted and left as its debt.
  int64_t WakeFromIdleNs(size_t cpu, int64_t now_ns, bool socket = false);
  int64_t StepCostNs(const CostDist& cost, bool held);  // a client step's CPU: cost (+ hold_us when held)
  // When work handed to client CPU `cpu` at now_ns starts: once the CPU is free; in a running
  // pass, a handler's work (and its sends) follows the handler before it at that one's end,
  // which the event queue saw rounded up to the µs.
  int64_t WorkStartNs(size_t cpu, int64_t now_ns) const;
  // A client event put back to ready_us, its CPU paid (Event::charged).
  void PushCharged(int64_t ready_us, const Event& ev, uint8_t charged);
  // The client process `client` runs in: 0 for all (one process) or its own.
  size_t ProcessOf(int client) const { return cpu_busy_ns_.size() == 1 ? 0 : static_cast<size_t>(client); }
  bool passes() const { return config_.cost.loop.passes; }  // the passes loop (CostModel::loop)
  int64_t ClientSendNs(int client, bool held);    // the client sends: when the message leaves (ns)
  // Cold connections (ClientCosts::cold_after_ms; 0 when off): the extra CPU of a client's write
  // (`read` false) or read whose last read was that long ago; a read restarts the count.
  int64_t ColdNs(int client, bool read);
  int64_t ColdStepNs(const Event& ev, int client);  // ColdNs for a pass's step: a held write or a read
  // When a message that leaves at leave_ns reaches the other end of the path between `client`
  // (its process) and `endpoint`, in the direction `request` says.
  int64_t ArriveUs(int64_t leave_ns, bool request, int64_t injected_us, int client, int endpoint);
  bool ChargeClient(const Event& ev);             // true: put back until the client's CPU is done
  // What a client event costs its process: false for events that are not a client's.
  struct ClientCharge {
    int client = 0;
    const CostDist* cost = nullptr;
    bool held = false;   // hold_us on top (a reply or message held for an injected delay)
    bool timer = false;  // a timer fires it in the real runtime (else it is read from a socket)
  };
  bool ClientEventCost(const Event& ev, ClientCharge* out);
  // The client a client event (ClientEventCost's kinds) belongs to; ev.a for the others' kinds.
  int ClientOfEvent(const Event& ev) const;
  // Client passes (sim_client_loop.cc; JoinClientPass inline in simulator_impl.h): queue an
  // arriving client event for its process's next pass; run a pass; charge the pass's next event
  // once the one before it has run.
  void JoinClientPass(const Event& ev, const ClientCharge& charge);
  void QueueClientPass(size_t cpu, bool timer);  // the loop is not in a pass: its next one, queued
  void LogLoopStep(const Event& ev, const ClientCharge& c, int64_t start_ns);  // for on_loop_
  // A client pass's step as the loop logs name it: 'T' a timer, 'W' a held request's write, 'R' a
  // reply read, 'H' a held reply's callback; 0 for any other event (a timeout reads nothing).
  char StepKind(const Event& ev) const;
  // socket_wakes: a socket event reaches `cpu` while it sleeps toward a late timer.
  void WakeForSocket(size_t cpu, int64_t now_ns);
  void OnClientPass(size_t cpu, uint64_t gen);
  void StepClientPass(size_t cpu);
  size_t CpuOfClientEvent(const Event& ev) const;  // the CPU of the process a client event belongs to
  // A held reply or message a pass has just read: its hold's timer starts (true); false for
  // any other event.
  bool ReadHeld(const Event& ev);
  bool client_passes() const { return config_.cost.loop.client_passes; }
  void StartCall(int client, PendingCall* call);
  void SendRequest(uint32_t id, int64_t leave_ns, int64_t injected_us, bool lost);
  void StartSleep(int client, int64_t us, std::coroutine_handle<> h);
  void StartSubscribe(int client, SubscribeCall* call);
  void StartWaitMessage(int client, MessageWait* wait);
  void Spawn(int client, Task<void> task);
  void OnNodeReceive(uint32_t id);
  void RunAtNode(uint32_t id, int physical);
  // The passes loop (sim_costs.cc): the command just run at `physical` waits for its pass's
  // reply writes; OnNodePass is the pass (kNodePass, b = the node's pass generation).
  void JoinPass(int physical, uint32_t id, Reply&& reply, double cost_us);
  void OnNodePass(int physical, uint64_t gen);
  int64_t FifoArriveNs(int64_t leave_ns, bool request, int client, int endpoint);
  void AnswerFromNode(int physical, uint32_t id, Reply&& reply, double cost_us);
  void ReplyFromNode(uint32_t id, Reply&& reply, int64_t depart);
  void Replicate(int physical, const std::vector<std::string>& touched);
  // Queues one key's new state for the replica, applied at due_us (kRepl).
  void PushRepl(ReplItem item, int64_t due_us);
  void Park(uint32_t id, int physical, int64_t deadline_ms);
  void Unpark(uint32_t id);
  void ScheduleBlockTimeout(uint32_t id);
  void ServeReady(int physical);
  void SendMessages(int64_t depart);
  void DropConnections(int physical);
  void EndHeld(uint32_t id);
  void OnBlockTimeout(uint32_t id, uint64_t token);
  void OnHeldDeadline(uint32_t id, uint64_t use);
  void OnDrain(int physical, int client);
  void OnSubArrive(int client, uint64_t ref);
  void OnSubConfirm(int client, uint64_t ref);
  void OnSubDeadline(int client, uint64_t ref);
  void OnMessage(int client);
  void OnWaitTimeout(int client, uint64_t waiter);
  void FinishSubscribers(int client, size_t rec, bool ok, bool only_due);
  void OnDeliver(uint32_t id);
  void OnWake(int client, uint64_t handle);
  void OnRepl(uint32_t id);
  // WAIT (sim_waiting.cc): how many replicas of `physical` have applied `offset`; park a WAIT
  // that wants more (true), or leave its reply to RunAtNode (false, *reply set).
  int64_t AckedReplicas(int physical, int64_t offset) const;
  bool ParkWait(uint32_t id, int physical, const BlockRequest& block, int64_t node_ms, Reply* reply);
  void OnWaitAck(uint32_t id, uint64_t use);
  // Faults (sim_faults.cc): one function per kind, and the steps that follow some of them.
  void PushFault(const FaultAction& f, uint8_t step, int64_t at_us);
  void OnFault(uint32_t id);
  void Report(const FaultRecord& r) {
    if (on_fault_) on_fault_(now_us_, r);
  }
  void PauseClient(const FaultAction& f);
  void ResumeClient(int client);
  void CrashClient(const FaultAction& f);
  void CrashNode(const FaultAction& f);
  void RestartNode(const FaultAction& f);
  void PauseNode(const FaultAction& f);
  void ResumeNode(int endpoint);
  void JumpNodeClock(const FaultAction& f);
  void BeginFailover(const FaultAction& f);
  void PromoteReplica();
  // Active expiry (sim_expire.cc).
  void StartExpireCycle(int physical);
  void StopExpireCycle(int physical);
  void RunExpireCycles();
  void ExpireCycleAt(int physical, int64_t t_us);
  // Machine stalls (sim_stalls.cc).
  void InitStalls();
  int64_t NextStallAfterUs(int64_t t_us);
  void StallCpu(int64_t* busy_ns, int64_t t_us, int64_t now_ns);
  void RunStalls();
  NodeState& NodeAt(int endpoint);
  bool ClientGate(int client, uint8_t kind, int32_t a, uint64_t b);  // false: deferred/dropped
  bool ClientRuns(int client) const;  // neither crashed nor paused now
  const Clock& MonotonicClockOf(int client) const;  // for MonotonicUs and TrueAfterUs only
  void CountCommand(int client, const Command& cmd);
  void FireTriggers(int client, const std::string& name);
  uint32_t AllocInFlight();
  void FreeInFlight(uint32_t id);
  Task<void> RunMain(int client, Task<void> main);

  SimConfig config_;
  int64_t now_us_ = 0;
  uint64_t seq_ = 0;
  int64_t events_ = 0;
  Network net_;
  Rng cost_rng_;
  WakeRows wake_rows_;                // config_.cost.client.wake_after_idle, ready for lookups (clients, nodes)
  std::vector<int64_t> cpu_busy_ns_;  // client processes: when each CPU is free (one, or one per client)
  int64_t client_cpu_ns_ = 0;         // the CPU charged on them, summed (client_cpu_ns())
  std::vector<int64_t> wake_debt_ns_; // per CPU: wake CPU (client.wake_cpu_us) its next arriving event waits for
  std::vector<int64_t> last_read_ns_;  // per client, with cold connections: when it last read a reply
  double send_shift_us_ = 0;          // one_way_us minus this for a request (the header's "Costs")
  double reply_shift_us_ = 0;         // ... for a reply or message
  bool client_costs_ = false;         // any client figure: ChargeClient has work to do
  std::vector<int64_t> path_last_ns_; // passes: the last arrival on each path (FifoArriveNs)
  // A client event waiting for its pass, with what ClientEventCost said of it when it arrived
  // (classified once).
  struct PassEvent {
    Event ev;
    ClientCharge charge;
  };
  // Client passes, per client CPU: the events that arrived since its pass began (for the next),
  // the current pass's events not yet charged, and whether a pass is queued or running. Events
  // read from a socket and events a timer fired are kept apart ([kSockets], [kTimers]), each in
  // the order it arrived: a pass takes its sockets first, then its timers, and begins by swapping
  // the vectors rather than copying its events. Bounded by the events in flight.
  static constexpr size_t kSockets = 0, kTimers = 1;
  struct ClientLoop {
    std::vector<PassEvent> arrived[2];
    std::vector<PassEvent> pass[2];
    size_t next = 0;  // the pass's events from next on (its sockets counted first) are still to be charged
    uint64_t gen = 0;            // the queued kClientPass's (an earlier one is stale: WakeForSocket)
    int64_t idle_since_ns = 0;   // when it last went idle (socket_wakes)
    bool timer_wake = false;     // queued for a timer's late wake-up from idle (socket_wakes)
    bool queued = false;
    bool running = false;
  };
  std::vector<ClientLoop> client_loops_;
  const CostDist* message_cost_ = nullptr;  // a pub/sub message's: message_us, else reply_us
  const CostDist* held_write_cost_ = nullptr;  // a held request's write: held_write_us, else send_us
  const CostDist* held_read_cost_ = nullptr;   // a reply read to hold: held_read_us, else hold_us
  const CostDist* held_callback_cost_ = nullptr;  // a held reply's callback: held_callback_us, else reply_us
  EventWheel<Event> queue_;
  // Events pushed for the current instant while running (a zero sleep, a spawn, a wake at once):
  // in push order, which is their key order, and after every wheel event of the same instant
  // (those were pushed earlier). Next() takes the smallest key of the four queues, so the order
  // is that of one heap. Bounded by the event limit.
  EventFifo<Event> now_queue_;
  // Client events put back until the one client CPU is free (ChargeClient, one-process
  // placement): that CPU's busy-until time only grows and their sequence numbers do, so they
  // come in key order; a FIFO instead of the wheel (the CPU's backlog often reaches past its
  // window). Bounded by the events in flight.
  EventFifo<Event> charged_queue_;
  // Timed faults planned before Run(), with the keys the heap would have given them (a heap of
  // their own, earliest first, once the run starts). Next() merges them with the heap, so the order is that of one
  // queue; they stay out of the heap because a fault plan (GC pauses drawn up to the run's time
  // limit) is mostly never reached: a run that ends early does not pay for sifting them, and of a
  // fault planned at several times (a client's pauses) only the next one is here.
  std::vector<Event> planned_;
  static bool EarliestFirst(const Event& x, const Event& y) { return y < x; }  // planned_'s heap order
  // A fault planned before the run (PlanFault: one time; PlanPauses: a client's GC pauses): only
  // its next time waits in planned_, with the key it was given when planned (seq0 + its index);
  // taking it puts the following one there (TakePlanned). Times and keys rise within one, so the
  // heap's smallest key is the one a heap of every time would give. Its event's b is its index.
  struct PlannedTimes {
    std::vector<int64_t> at_us;  // the times; empty when they are drawn one at a time:
    PauseDraws draws;            // ... from here
    size_t count = 0;            // the times in all
    uint64_t seq0 = 0;
    int32_t fault = 0;
    size_t next = 0;  // the next-th time is in planned_ (or all have been taken)
  };
  // Keeps the fault's times (at_us, or draws with draws.count > 0 and its first time drawn:
  // first_us) and puts the first in planned_, its keys reserved.
  void PlanTimes(int32_t fault, std::vector<int64_t> at_us, PauseDraws draws, int64_t first_us);
  Status CheckPause(FaultAction* pause, int64_t first_us);
  std::vector<PlannedTimes> planned_times_;
  bool running_ = false;
  std::vector<std::unique_ptr<Process>> clients_;
  std::vector<std::unique_ptr<NodeState>> nodes_;  // physical nodes; replica last
  std::vector<int> endpoint_;                      // endpoint -> physical node
  std::vector<InFlight> inflight_;
  std::vector<uint32_t> free_inflight_;
  std::vector<ReplItem> repl_;
  std::vector<uint32_t> free_repl_;
  std::vector<Fault> faults_;
  std::vector<FaultAction> fired_;  // scratch: the on_send faults one command fires
  std::vector<std::pair<int, int>> messages_out_;  // (client, endpoint) to send a PUBLISH's message to
  std::vector<std::string> scratch_keys_;
  uint64_t use_seq_ = 0;    // identifies one use of an InFlight record
  uint64_t timer_seq_ = 0;  // identifies a parked BLPOP's live timeout event
  std::vector<int64_t> cmd_by_client_;
  struct WordCount {
    std::string word;  // a plain command's first word, as sent
    std::string name;  // Command::Name(): upper case
    int64_t count;
  };
  std::vector<WordCount> cmd_by_word_;  // CountCommand; few entries (one per spelling)
  std::array<int64_t, static_cast<size_t>(Script::kCount)> cmd_by_script_{};
  int64_t cmd_total_ = 0;
  int mains_left_ = 0;
  // What holds for every client at once, so that the common case reads no client's record (a
  // cache miss per event with a thousand clients): how many have crashed, when the last pause
  // of any client ends, whether any client's clock drifts.
  int crashed_clients_ = 0;
  int64_t pauses_end_us_ = 0;
  bool clients_drift_ = false;
  uint32_t repl_generation_ = 0;
  int64_t repl_sent_ = 0;         // the master's replication offset: items sent to the replica
  int64_t repl_applied_ = 0;      // the replica's: the last item it applied
  int64_t repl_last_due_us_ = 0;  // when the last item sent is due at the replica
  int64_t next_expire_us_ = std::numeric_limits<int64_t>::max();  // earliest node's next cycle
  std::vector<std::string> expired_keys_;  // scratch: one cycle's deletions
  Rng stall_rng_{0};                         // machine stalls' own stream (sim_stalls.cc)
  std::vector<int64_t> stall_next_us_;       // per client CPU, then per physical node: its next stall
  int64_t next_stall_us_ = std::numeric_limits<int64_t>::max();  // the earliest of them
  bool repl_cut_ = false;
  CommandObserver on_command_;
  FaultObserver on_fault_;
  LoopObserver on_loop_;
  int64_t loop_passes_ = 0;  // client passes begun, for on_loop_
  int64_t client_wakes_ = 0; // client wake-ups from idle, for on_loop_
};

}  // namespace locklab::sim
