// One scorecard trial (internal to harness/bench): the fault's timeline (scorecard_plan.h) played
// against one implementation, judged by scorecard_judge.h.
//
// Peers (node_peer.js, py_peer.py): A and B are two driver processes that connect, print
// {"ready"}, and wait for a go file. A goes; when A announces that it holds (time 0), the
// controller plays the timeline: SIGSTOP/SIGCONT of A (pause), a clock jump (the clock shim) or a
// restart of a node (RedisServers), B's go file. A's connections pass through `locklab proxy`'s
// RespProxy, one per node, for the faults on the wire: delay_message of the ECHO marker A sends
// right before its release (the release waits behind it), or a partition. Both drivers write
// their histories (--history-out); the controller merges them with its own fault lines.
//
// locklab's own locks: one RunOne on real Redis servers it starts itself, with client plans and
// planned faults that follow the same timeline (A starts 20 ms into the run); its history goes
// through the same history format and judge. Redlock's bare majority: peers find a crashed
// client's key (PX stale_px_ms) on nodes 3 and 4 when A asks; locklab's A is cut off from nodes
// 3 and 4 while it asks (partition, 50 ms command timeout) - the same state by Kleppmann's route.
#pragma once

#include <cstdint>
#include <string>

#include "harness/bench/scorecard_judge.h"
#include "harness/bench/scorecard_plan.h"

namespace locklab {
class RedisServers;
}

namespace locklab::scorecard {

struct TrialEnv {
  RedisServers* servers = nullptr;  // 5 masters with the clock shim (peers' trials)
  std::string tmp;                  // trial files
  std::string drivers, modules;     // the driver scripts, BUILD/peers (node_modules)
  std::string node = "node", python = "/usr/bin/python3";
  uint64_t seed = 1;
  bool keep_histories = false;      // leave each trial's merged history in tmp (else removed)
};

// Runs one trial; ran == false (error says why) when it could not be played as planned.
TrialOutcome RunTrial(const TrialEnv& env, const ScImpl& impl, Fault fault, const Timeline& t, int trial);
// The locklab half (scorecard_locklab.cc): RunOne on servers of its own.
TrialOutcome RunLocklabTrial(const TrialEnv& env, const ScImpl& impl, Fault fault, const Timeline& t, int trial);

}  // namespace locklab::scorecard
