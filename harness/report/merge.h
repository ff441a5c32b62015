// Merging the outputs of the shards of one sweep (`locklab merge OUT IN...`) into exactly the
// bytes the unsharded sweep writes.
//
// Reports: a shard's report (`locklab run --shard I/N --out F`) is the sweep's report with only
// the shard's runs and a "shard" object {"index", "count", "runs", "sweep"} ("runs": the
// sweep's run count, "sweep": SweepHash). The merge checks that every input is a shard of the
// same sweep (same sweep hash, count and run count, and the same schema, context and config),
// that shards 1..N are each there exactly once and hold the runs round-robin slicing gives
// them; then it interleaves the runs back into sweep order and drops "shard". The context's
// host and started_at (redis backend only) may differ between shards: shard 1's are kept.
// Results (jsonl): the lines of all inputs, which must carry one sweep hash and run count, with
// no run twice and none missing, sorted by run number; each line is copied unchanged.
#pragma once

#include <string>
#include <vector>

#include "algorithms/status.h"

namespace locklab {

constexpr size_t kMaxMergeInputs = 10'000;  // as many as kMaxShards

// One input: its name (for messages) and its whole text.
struct MergeInput {
  std::string name;
  std::string text;
};

// The merged text, or kInvalid with a one-line message naming the input and the problem
// (not a shard, a different sweep, a missing or a duplicate shard or run, reports mixed with
// results). A text whose first non-blank character opens an object with a "schema" of
// locklab.report/1 is a report; anything else is read as results lines.
Result<std::string> MergeShards(const std::vector<MergeInput>& inputs);

}  // namespace locklab
