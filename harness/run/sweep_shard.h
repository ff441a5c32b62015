// Shards of a sweep and the hashes that name a sweep and a configuration.
//
// `--shard I/N` runs the I-th of N slices of a sweep: I is 1-based (1..N, as GNU parallel's {}
// and Slurm's array task ids count), and the slicing is round-robin: shard I runs the sweep's
// runs I, I+N, I+2N, ... (1-based run numbers), so every shard gets a similar mix of algorithms
// and seeds. Every shard expands the whole sweep, so a run's number, replay command and the
// sweep's hash are the same in every shard and in the unsharded sweep.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/status.h"
#include "harness/run/run_spec.h"

namespace locklab {

constexpr int kMaxShards = 10'000;

struct Shard {
  int index = 1;  // 1..count
  int count = 1;
  bool operator==(const Shard&) const = default;
};

// "I/N" with 1 <= I <= N <= kMaxShards, decimal digits only. kInvalid "--shard TEXT: ..."
// otherwise.
Result<Shard> ParseShard(const std::string& text);

// The 0-based sweep indices of `shard` among `total` runs, ascending (round-robin: index % count
// == shard.index - 1). Empty when the shard has no run (count > total).
std::vector<size_t> ShardRuns(size_t total, const Shard& shard);

// 64-bit FNV-1a, as 16 lower-case hex digits: the same on every platform and standard library.
std::string HashHex(const std::string& text);

// The configuration of a run: the hash of its resolved spec as JSON without its seed, so the
// runs of one configuration over many seeds share it.
std::string ConfigHash(const RunSpec& spec);

// The sweep: the hash of the program's version and git sha and every (resolved) spec as JSON,
// in order. Shards of one sweep by one build agree on it; anything else does not.
std::string SweepHash(const std::vector<RunSpec>& specs);

// SweepHash and every spec's ConfigHash at once, the JSON work spread over `jobs` threads (a
// big sweep has thousands of specs): the same values as those two functions give.
struct SweepHashes {
  std::string sweep;
  std::vector<std::string> configs;  // by spec
};
SweepHashes HashSweep(const std::vector<RunSpec>& specs, int jobs);

}  // namespace locklab
