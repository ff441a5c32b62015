// Command: one Redis command, or one call of a named script, addressed to a node by the caller.
//
// Plain commands carry their words in argv ("SET", key, value, "NX", "PX", "3000"), one buffer
// (algorithms/command_words.h).
// Script calls name a Script and carry keys and args separately; each runtime decides how to
// run it (the simulator runs the script's C++ body atomically, real Redis runs its Lua text:
// see sim/scripts.h, where both bodies sit side by side).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "algorithms/command_words.h"

namespace locklab {

enum class Script : uint8_t {
  kNone = 0,
  kCompareAndDelete,   // if GET(key) == token then DEL key -> 1, else 0
  kCompareAndPexpire,  // if GET(key) == token then PEXPIRE key ttl_ms -> 1, else 0
  kSetNxPxIncrFence,   // SET key token NX PX ttl; on success INCR fence_key -> fence, else nil
  kNotifyOne,          // RPUSH wake_key "1" only if the list is empty -> its length after (a releaser's
                       // wake-up for one BLPOP waiter: at most one token ever waits in the list)
  kFifoAcquire,        // fifo lock: SET lock token NX PX ttl -> 1; else RPUSH queue token -> 0
  kFifoRelease,        // fifo lock: if GET lock == token: hand it to LPOP queue (SET lock next PX ttl,
                       // RPUSH <lock>:wake:<next> 1) or DEL lock -> 1; else 0
  kFifoLeave,          // fifo lock: GET lock == token -> 1 (handed over after all); else LREM queue token -> 0
  kStockDecrement,     // lock-free seckill: if tonumber(GET stock) > 0 then DECR stock -> stock left; else -1
  kSemaphoreAcquire,   // semaphore: ZREMRANGEBYSCORE sem -inf expired_ms; if ZCARD < permits: ZADD sem now id,
                       // PEXPIRE sem ttl -> 1; else 0 (redis-semaphore's design)
  kReentrantAcquire,   // reentrant: lock free or ours: HINCRBY lock owner 1, PEXPIRE lock ttl -> nil; else PTTL lock
  kReentrantRelease,   // reentrant: not ours -> -1; HINCRBY lock owner -1 > 0: PEXPIRE -> count left; else DEL -> 0
  kRwReadAcquire,      // rwlock: no writer: drop expired readers, ZADD readers now id, PEXPIRE -> 1; else 0
  kRwWriteAcquire,     // rwlock: drop expired readers; none left: SET writer token NX PX ttl -> 1; else 0
  kCount,
};

// The stable name of a script ("compare_and_delete", ...), used in reports and command counts.
std::string_view ScriptName(Script s);

struct Command {
  Script script = Script::kNone;
  CommandWords argv;  // plain: full command words; script: keys then args
  int num_keys = 0;   // script calls only

  static Command Plain(CommandWords words) { return Command{Script::kNone, std::move(words), 0}; }
  // Cmd("SET", key, value, "NX"): a plain command from its words. (Preferred inside coroutines:
  // GCC 12 miscompiles braced lists of string literals in co_await expressions.)
  // The words are copied once, into one buffer sized for them all.
  template <typename... Words>
  static Command Of(const Words&... words) {
    Command c;
    const std::string_view views[] = {std::string_view(words)...};
    c.argv.Assign(views, sizeof...(words));
    return c;
  }
  // Script call: the first num_keys words are keys, the rest args (same GCC 12 reason).
  template <typename... Words>
  static Command Run(Script s, int num_keys, const Words&... words) {
    Command c = Of(words...);
    c.script = s;
    c.num_keys = num_keys;
    return c;
  }
  static Command Call(Script s, const std::vector<std::string>& keys, const std::vector<std::string>& args) {
    Command c{s, CommandWords(keys), 0};
    c.num_keys = static_cast<int>(c.argv.size());
    c.argv.append(args.begin(), args.end());
    return c;
  }

  // Upper-case command name ("SET") or the script's name; used to count commands.
  std::string Name() const;
  // "SET k v NX PX 3000" or "compare_and_delete k | tok", for timelines and logs.
  std::string ToString() const;
  // The same text appended to *out (no allocation when *out has room: history traces).
  void AppendTo(std::string* out) const;
};

}  // namespace locklab
