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
