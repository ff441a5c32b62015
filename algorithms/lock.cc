#include "algorithms/lock.h"

namespace locklab {

// Defined in the algorithm files.
AlgorithmInfo NaiveInfo();
AlgorithmInfo NaiveExpireInfo();
AlgorithmInfo TimestampInfo();
AlgorithmInfo TokenInfo();
AlgorithmInfo WatchdogInfo();
AlgorithmInfo RedlockInfo();
AlgorithmInfo FencingInfo();
AlgorithmInfo FifoInfo();
AlgorithmInfo NoneInfo();
AlgorithmInfo LocalInfo();
AlgorithmInfo SemaphoreInfo();
AlgorithmInfo WaitInfo();
AlgorithmInfo RwLockInfo();
AlgorithmInfo ReentrantInfo();
AlgorithmInfo LockfreeLuaInfo();
AlgorithmInfo LockfreeWatchInfo();

const char* OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kOk: return "ok";
    case Outcome::kFail: return "fail";
    case Outcome::kUnknown: return "unknown";
  }
  return "?";
}

Outcome OutcomeOfOne(const Reply& r) {
  if (r.is_timeout()) return Outcome::kUnknown;
  return r.is_int(1) ? Outcome::kOk : Outcome::kFail;
}

Task<Outcome> AbandonTransaction(Env& env, int node) {
  co_await env.Send(node, Command::Of("DISCARD"));
  co_await env.Send(node, Command::Of("UNWATCH"));
  co_return Outcome::kUnknown;
}

int64_t ValidityLeftMs(int64_t ttl_ms, int64_t elapsed_us) {
  return ttl_ms - elapsed_us / 1000 - (ttl_ms / 100 + 2);
}

OptionSpec FitWorkOption() {
  return OptionSpec::LaterBool("fit-work",
                               "enter only if the lease left after acquiring (ttl - elapsed - ttl/100 - 2 ms) covers the "
                               "critical section's work; otherwise release and retry");
}

const std::vector<AlgorithmInfo>& Algorithms() {
  static const std::vector<AlgorithmInfo> all = {NaiveInfo(),    NaiveExpireInfo(), TimestampInfo(), TokenInfo(),
                                                 WatchdogInfo(), RedlockInfo(),     FencingInfo(),   FifoInfo(),
                                                 WaitInfo(),     SemaphoreInfo(),   ReentrantInfo(),   RwLockInfo(),
                                                 NoneInfo(),     LocalInfo(),
                                                 LockfreeLuaInfo(), LockfreeWatchInfo()};
  return all;
}

const AlgorithmInfo* FindAlgorithm(const std::string& name) {
  for (const auto& a : Algorithms())
    if (a.name == name) return &a;
  return nullptr;
}

}  // namespace locklab
