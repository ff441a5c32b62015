// Test fixtures shared by the config, report, scenario and end-to-end run tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>

#include "algorithms/status.h"
#include "harness/run/build_info.h"
#include "harness/run/config.h"
#include "harness/run/run_spec.h"

namespace locklab {

// For tests written as `ASSERT_TRUE(F(..., &out, &error)) << error`: the value of `r` into *out
// when ok, else its message into *error. Returns r.ok().
template <class T>
bool Take(Result<T> r, T* out, std::string* error) {
  if (!r.ok()) {
    *error = r.status().message();
    return false;
  }
  *out = std::move(r).value();
  return true;
}

// The profile file that tests bound to particular seeds run under: the default of 2026-11-25 to
// 2026-11-27 under its own name, the one their seeds were chosen with, so that they keep showing
// what they are there for when the default changes.
inline std::string SeedsChosenProfile() {
  return std::string(SourceDir()) + "/harness/profiles/vm-2026-11-24b-passes-replica.json";
}

// The small fault-free simulator run the end-to-end tests start from.
inline RunSpec SmallSpec(const std::string& algorithm) {
  RunSpec s;
  s.algorithm = algorithm;
  s.clients = 8;
  s.requests = 120;
  s.ttl_ms = 1000;
  s.hold_ms = 20;
  s.seed = 7;
  return s;
}

// `clients` clients taking `requests` locks in all, 1 s TTL, 5 ms critical sections: the shape
// of the real-Redis tests (either backend), capped at `max_duration_ms`.
inline RunSpec ShortHoldSpec(const std::string& backend, const std::string& algorithm, int clients, int requests,
                             uint64_t seed, int64_t max_duration_ms) {
  RunSpec s;
  s.backend = backend;
  s.algorithm = algorithm;
  s.clients = clients;
  s.requests = requests;
  s.ttl_ms = 1000;
  s.hold_ms = 5;
  s.seed = seed;
  s.max_duration_ms = max_duration_ms;
  return s;
}

// Resolves and runs `s`; a test failure when it does not resolve or does not complete.
inline RunResult RunResolved(RunSpec s) {
  std::string err;
  EXPECT_TRUE(ResolveSpec(&s).ok(&err)) << err;
  RunResult r = RunOne(s, false);
  EXPECT_TRUE(r.completed) << r.error;
  return r;
}

// A spec with every field away from its default, and a plan with each kind of fault.
inline RunSpec FullSpec() {
  RunSpec s;
  s.backend = "sim";
  s.algorithm = "watchdog";
  s.algorithm_options.Set("renew", "blind");
  s.algorithm_options.Set("renew-every-ms", "50");
  s.retry = "random";
  s.retry_options.Set("max-ms", "40");
  s.workload = "seckill";
  s.clients = 7;
  s.app_servers = 3;
  s.requests = 123;
  s.ttl_ms = 900;
  s.hold_ms = 33;
  s.acquire_timeout_ms = 4000;
  s.command_timeout_ms = 250;
  s.nodes = 2;
  s.replica = true;
  s.stock = 42;
  s.seed = 18446744073709551615ULL;  // the largest seed survives JSON
  s.max_duration_ms = 90'000;
  s.profile = "legacy";
  s.trace = "locks";
  s.faults.gc_pause_ms = 1500;
  s.faults.gc_pause_rate = 0.25;
  s.faults.net_delay_ms = 2.5;
  s.faults.net_dist = "long-tail";
  s.faults.net_loss = 0.001;
  s.faults.clock_skew_ms = 3000;
  s.faults.clock_drift_ppm = 150;
  using K = FaultAction::Kind;
  for (int i = 0; i <= static_cast<int>(K::kDelayMessage); ++i) {
    FaultAction a;
    a.kind = static_cast<K>(i);
    a.at_us = 1000 * i + 500;  // fractional ms
    a.target = i % 2;
    a.node = 1;
    a.duration_us = 120'000;
    a.delta_us = -2'000'000;
    if (a.kind == K::kDelayMessage) {
      a.command = "SET";
      a.occurrence = 3;
    }
    s.faults.plan.push_back(a);
  }
  return s;
}

// `s` with a fixed retry of `sleep_ms` and one planned fault (a --fault flag's text), resolved and
// run on the simulator; the test fails when the flag or the spec is refused or the run stops early.
inline RunResult RunWithFault(RunSpec s, int64_t sleep_ms, const std::string& fault_flag) {
  s.retry = "fixed";
  s.retry_options.Set("sleep-ms", std::to_string(sleep_ms));
  std::string error;
  FaultAction a;
  EXPECT_TRUE(Take(ParseFaultFlag(fault_flag), &a, &error)) << error;
  s.faults.plan = {a};
  EXPECT_TRUE(ResolveSpec(&s).ok(&error)) << error;
  RunResult r = RunOne(s, false);
  EXPECT_TRUE(r.completed) << r.error;
  return r;
}

}  // namespace locklab
