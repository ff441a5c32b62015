// RedisRuntime: the Runtime that runs clients against real redis-server processes.
//
// One thread, one libevent loop, hiredis's async API: every client has one connection per
// endpoint, and its coroutines are resumed from the loop. True time is CLOCK_MONOTONIC since
// Run() began (one process carries every client, so this is a true clock for the checkers).
//
// What each piece of the Runtime contract means here:
//  - commands: plain argv as is; scripts as EVALSHA (loaded on every server at start and after
//    a restart; EVAL when a server answers NOSCRIPT). Each command has a timer of
//    command_timeout_us: reply or timer, whichever comes first, completes it (a late reply is
//    recorded in the history, then dropped). A node that cannot be reached gives kError
//    (the command surely did not run); a connection lost with the command on it gives kTimeout
//    (it may have run). A lost connection is re-made on the client's next command.
//  - network (BackendConfig::net): the simulator's model (sim/net_model.h, one sim::Network):
//    every message (command, reply, SUBSCRIBE, its answer, published message) takes one hop,
//    partition -> loss -> delay -> hold, judged when it leaves: a command is held in the
//    runtime for its drawn one-way delay before it is written, a reply for another before
//    delivery; a lost or partitioned message is never written / never delivered (timeout). The
//    delays actually applied are measured and reported in Notes().
//  - clients: a paused client resumes nothing until its pause ends (replies and timers that
//    come due meanwhile are delivered after, in order); a crashed client resumes nothing ever
//    again; its frames are destroyed when Run() returns. Its in-flight commands still reach
//    Redis (they were on the wire). Clocks are the simulator's model (sim/clock.h) over the real
//    monotonic time: monotonic clock = true time x (1 + drift); wall clock = CLOCK_REALTIME +
//    offset + drift + jumps. Random() is xoshiro seeded by (seed, client).
//  - faults (PlanFault), at true times: client pause/crash/clock jump as above; node crash
//    (SIGKILL), restart (same port, empty; commands are refused until it answers), pause
//    (SIGSTOP, SIGCONT after duration_us), clock jump (the LD_PRELOAD clock shim), delayed
//    message (held in the runtime), partition (emulated in the runtime: that client's requests
//    to that node are dropped and its replies discarded for the interval: Notes() says so),
//    failover (endpoint 0 must have a replica): at at_us the replica is stopped and cut off
//    from the master (later writes on the master are not replicated), at at_us + duration_us
//    the master is killed, the replica resumed and promoted, and endpoint 0 points at it.
//    Sentinel mode (BackendConfig::failover_by_sentinel; sentinel.h): three redis-sentinel
//    watch node 0 and its replica; endpoint 0 is the master SENTINEL get-master-addr-by-name
//    names, and the runtime, subscribed on every sentinel, moves it when the first
//    +switch-master comes (every client reconnects on its next command). The failover's second
//    step then only kills the master and resumes the replica: Sentinel promotes it, and until it
//    announces so, commands to node 0 are refused (kError). The history gets a fault record at
//    the kill and one at the switch (value: µs after the kill); Notes() the steps' times.
//    With existing servers (--redis), faults that need to control a server are refused. Plans
//    are checked by ValidateFault (sim/fault.h), and each fault writes the same history record
//    as in the simulator (FaultStartRecord & co.); how it was applied goes to Notes().
//  - BLPOP: an ordinary command on the client's connection (so, as in Redis, the client's later
//    commands to that node wait behind it); its deadline is command_timeout_us plus its own
//    timeout. A timeout of 0 (block forever) is refused with an error reply, unsent, as the
//    simulator refuses it. redis-server 7.0 notices a blocked client's timeout in its cron
//    (hz 10): the nil may come up to ~100 ms after the timeout (the simulator: at it).
//  - pub/sub (Env::Subscribe, WaitMessage): one more hiredis connection per subscribing client
//    and node, in subscribe mode on the same loop; SUBSCRIBE is held, lost or partitioned like a
//    command and must be confirmed within the command timeout. Messages go through the same
//    network emulation as replies, then through the client's gate into its queue, which wakes a
//    WaitMessage. A subscription connection that is lost (node crash, restart, failover)
//    delivers nothing more (waiters time out; Notes() says so). Closed when Run() ends.
//
// Not thread-safe: build, run and destroy it on one thread (the servers it starts die with
// the thread that started them). Run() may be called once. MakeRedisRuntime ignores SIGPIPE
// process-wide (a write to a dead server must be an error, not the end of locklab) and raises
// RLIMIT_NOFILE to its hard limit (a connection per client per node, two when it subscribes).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "harness/real/redis_server.h"
#include "harness/run/runtime.h"

namespace locklab {

// Starts cfg.nodes servers (+ a replica of server 0 when cfg.with_replica) and connects to
// them, or uses `existing_endpoints` ("HOST:PORT", one per node; then cfg.with_replica must
// be false). Invalid for a bad config, Failed when the servers cannot be started or reached
// (nothing left running).
Result<std::unique_ptr<Runtime>> MakeRedisRuntime(const BackendConfig& cfg,
                                                  const std::vector<std::string>& existing_endpoints);

// Makes `--backend redis` available to RunOne (harness/run/backends.h). Programs call it once
// in main, before any run.
void RegisterRedisBackend();

class RedisRuntime : public Runtime {
 public:
  ~RedisRuntime() override;  // drops every pending command and frame, stops our servers

  int client_count() const override;
  int node_count() const override;
  Env& env(int client) override;
  int64_t TrueNowUs() override;
  void set_history(History* h) override;
  void SetClientClock(int client, const ClockSetting& c) override;
  // Needs our own servers and the clock shim; otherwise Run() fails saying why.
  void SetNodeClock(int node, const ClockSetting& c) override;
  Status PlanFault(const FaultAction& f) override;
  void StartClient(int client, Task<void> main) override;
  Status Run(const RuntimeLimits& limits) override;
  CommandStats Commands() const override;
  // How faults were applied, and (after Run) the INFO commandstats cross-check: what the servers
  // counted next to what the clients sent.
  std::vector<std::string> Notes() const override;
  std::vector<std::string> UnfiredFaults() const override;
  // The CPU of the thread that ran Run() (its event loop: every client), during Run.
  double ClientCpuUs() const override { return client_cpu_us_; }

  // --- Beyond the Runtime interface: cross-checks and tests. ---

  // Calls per command name ("SET", "EVALSHA", ...) from INFO commandstats, summed over the
  // servers behind the endpoints now. Stats are reset when Run() starts, so they hold the
  // run's commands plus locklab's own (INFO, SCRIPT LOAD, ...) and miss those of a server
  // that restarted. Failed when a server cannot be asked.
  Result<std::map<std::string, int64_t>> ServerCommandStats() const;
  // "HOST:PORT" of endpoint i now (after a failover: the promoted replica).
  std::string endpoint_address(int endpoint) const;
  // One blocking command to endpoint i (outside the run's accounting), for tests and checks.
  // The reply as QueryRedis gives it.
  Result<std::string> QueryEndpoint(int endpoint, const std::vector<std::string>& argv) const;
  // Our servers, or nullptr when the endpoints were given.
  RedisServers* servers();
  // A sleep's timer that begins a pass of the loop after the loop had nothing to do: how long the
  // loop had been idle when the timer fell due (since its last pass ended) and how late its
  // coroutine resumed. With `out` set before Run(), Run() appends one per such wake-up (at most
  // kMaxWakeSamples); `locklab calibrate` measures the wake-up after idling in a crowd this way.
  struct WakeSample {
    double idle_us = 0;
    double late_us = 0;
  };
  static constexpr size_t kMaxWakeSamples = 1'000'000;
  void RecordWakes(std::vector<WakeSample>* out);
  // A pass of the loop that had steps: how many of each kind (LOCKLAB_LOOP_LOG's T, W, R, H),
  // whether the thread blocked (slept in epoll_wait) since the pass before, and the thread's CPU
  // from the end of the pass before to its end. With `out` set before Run(), Run() appends one
  // per pass (at most kMaxPassSamples), at the cost of two system calls a pass; `locklab
  // calibrate` fits each kind's CPU to them (calibrate.h, cross_checks.client_pass_fit).
  struct PassSample {
    int timers = 0, writes = 0, reads = 0, held_replies = 0;
    bool slept = false;
    double cpu_us = 0;
  };
  static constexpr size_t kMaxPassSamples = 1'000'000;
  void RecordPasses(std::vector<PassSample>* out);

 private:
  friend Result<std::unique_ptr<Runtime>> MakeRedisRuntime(const BackendConfig&, const std::vector<std::string>&);
  struct Impl;
  explicit RedisRuntime(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  double client_cpu_us_ = -1;
};

}  // namespace locklab
