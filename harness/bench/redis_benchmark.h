// redis-benchmark (Debian's redis-tools) on one of our servers: the rate the server gives a client
// that does nothing but send, for the two commands of locklab's token lock. The benchmarks
// (bench-peers, locklab_bench) call this the physical limit of an acquire+release loop.
#pragma once

#include <string>
#include <vector>

#include "algorithms/status.h"

namespace locklab {

class RedisServers;

// redis-benchmark -q output -> requests per second of its last result line; -1 when none.
double ParseRedisBenchmarkRps(const std::string& output);

// `redis-benchmark -c clients -n (20000 for 1 client, else 100000) -r 100000 -q <command>`
// against server `index`, within 60 s: its rate, requests per second. Failed saying why when it
// cannot run or prints no positive rate.
Result<double> RedisBenchmarkRps(const RedisServers& servers, int index, int clients,
                                 const std::vector<std::string>& command);

struct PairLimit {
  int clients = 0;
  double set_rps = -1;      // SET bench:<random> tok NX PX 10000
  double release_rps = -1;  // EVALSHA of the compare-and-delete script on random keys
  double pair_rps = -1;     // 1 / (1/set + 1/release): acquire+release pairs per second
  Status status;            // Failed saying why when pair_rps is -1
};

// Both rates with `clients` connections to server `index` (loads the release script first). A
// rate that cannot be measured stays -1, and so does pair_rps (status says why).
PairLimit MeasurePairLimit(const RedisServers& servers, int index, int clients);

}  // namespace locklab
