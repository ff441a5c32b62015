// `locklab bench-peers`: locklab's `token` and `redlock` side by side with the Redis lock
// libraries people run (node-redlock, redis-semaphore's Mutex and RedlockMutex with ioredis,
// redis-py's Lock), on the same redis-server processes, in one run.
//
// The peers run as small driver scripts (harness/bench/peers/node_peer.js, py_peer.py; peer_driver.h)
// that write one JSON line per event (t_us on CLOCK_MONOTONIC, client, ev, key, read/wrote) to a
// file; that log (peer_log.h) becomes a locklab History and the same checkers judge peers and
// locklab (row_check.h), each key's clients apart. locklab's rows go through RunOne with backend
// "redis" on the started servers' addresses.
//
// Rows: uncontended (1 client for a fixed time; N clients on N keys), contended (N clients on one
// key, a fixed number of acquisitions, each incrementing a shared counter inside the lock), on 1
// node and, for the Redlock implementations, on 5. Per row: acquisitions/s, acquire latency and
// wait, failures, Redis commands per acquisition (INFO commandstats deltas, and what the clients
// sent), mutual exclusion and the counter check. Next to them, redis-benchmark's rate for SET NX
// PX + the release script (the physical limit), and a pause test per implementation (the holder
// is stopped with SIGSTOP for longer than the TTL while a second process acquires).
//
// Every child process (drivers, redis-benchmark) dies with locklab (PR_SET_PDEATHSIG), is killed
// when its time limit passes and when the bench stops on an error; the servers are RedisServers.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "algorithms/status.h"
#include "harness/bench/peer_driver.h"
#include "harness/bench/peer_log.h"
#include "harness/bench/row_check.h"

namespace locklab {

// ---------------------------------------------------------------------------------------------
// The benchmark.

struct BenchPeersOptions {
  std::string out = "results/bench/peers.json";
  std::string drivers_dir;  // "" = DefaultPeerDriversDir()
  std::string peers_dir;    // holds node_modules; "" = DefaultPeerModulesDir()
  std::string node = "node";
  std::string python = "/usr/bin/python3";  // Debian's Python: python3-redis lives there
  std::string retry = "queue";              // locklab's retry policy in extra contended rows (the rows
                                            // "default" use `locklab run`'s): the retry study's best
                                            // waiting policy for the token lock (FIFO wake-up on release)
  std::vector<std::string> retry_opts;      // k=v
  std::vector<std::string> only;            // implementations to run (empty: all)
  int clients = 50;
  int64_t duration_ms = 2000;   // uncontended rows
  int64_t count = 2000;         // contended rows: acquisitions in total
  int rounds = 5;               // uncontended locklab token rows and the limit, measured alternately
  int64_t ttl_ms = 10'000;      // the lock's TTL in the speed rows
  int64_t acquire_timeout_ms = 10'000;
  int64_t tuned_retry_ms = 10;  // the peers' "tuned" retry delay
  int64_t pause_ttl_ms = 1000, pause_ms = 2000, pause_hold_ms = 300, pause_at_ms = 100;
  bool pause = true;   // the pause test
  bool limit = true;   // redis-benchmark
  // With 2+ CPUs: the redis-servers run on CPU 0, every client (locklab itself, the drivers,
  // redis-benchmark) on CPU 1, the same placement for every row; otherwise the scheduler's choice
  // (same core or not) moves a one-client ping-pong by 2x from run to run.
  bool pin = true;
  // As root: idle CPUs poll instead of halting while the benchmark runs (IdlePollHold), so that a
  // one-client ping-pong measures the clients and the server, not a VM's vCPU wake-ups.
  bool idle_poll = true;
  bool quiet = false;  // no table
  bool progress = true;
  uint64_t seed = 1;
};

// Runs everything, prints the table to `out` (unless quiet), writes the JSON report. Ok: every
// row ran. Failed: some row could not run (the report says which), the servers could not start
// or the report could not be written. Invalid: bad options (nothing run).
Status RunBenchPeers(const BenchPeersOptions& o, std::ostream& out);

// The subcommand's flags, and the command itself (exit status 0 ok, 1 Failed, 2 Invalid; the
// message on stderr).
void AddBenchPeersFlags(CLI::App* app, BenchPeersOptions* o);
int BenchPeersCommand(const BenchPeersOptions& o);

}  // namespace locklab
