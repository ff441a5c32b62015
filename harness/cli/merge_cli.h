// `locklab merge OUT IN...`: the outputs of the shards of one sweep (reports or results lines,
// harness/report/merge.h) joined into OUT, byte for byte what the unsharded sweep writes.
// Exit 0 merged; 2 bad input (an input unreadable, not a shard, of another sweep, a shard
// missing or twice), one line on stderr; 1 OUT could not be written.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace locklab {

struct MergeFlags {
  std::string out;
  std::vector<std::string> inputs;
};

void AddMergeFlags(CLI::App* app, MergeFlags* f);
int MergeCommand(const MergeFlags& f);

}  // namespace locklab
