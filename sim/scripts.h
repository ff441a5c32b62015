// The named scripts, each with its two bodies side by side: the Lua text that real Redis runs
// (EVALSHA) and the C++ function the simulated node runs atomically. A differential test
// (harness/real/differential_test.cc) runs both and demands the same replies.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/command.h"
#include "algorithms/reply.h"
#include "sim/store.h"

namespace locklab::sim {

struct ScriptDef {
  Script id;
  int num_keys;
  int num_args;
  const char* lua;
  // keys = cmd.argv[0, num_keys), args = the rest. Appends written keys to *touched (may be null).
  Reply (*body)(Store& store, int64_t now_ms, const Command& cmd, std::vector<std::string>* touched);
};

// Every script, indexed by Script (kNone excluded).
const std::vector<ScriptDef>& Scripts();
const ScriptDef& GetScript(Script id);

// SHA-1 of the script's Lua text, lower-case hex: what EVALSHA takes, and what Redis names in
// the error a failing redis.call() raises ("... script: <sha1>, on @user_script:1.").
const std::string& ScriptSha1(Script id);
std::string Sha1Hex(std::string_view data);

}  // namespace locklab::sim
