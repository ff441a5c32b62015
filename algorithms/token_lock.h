// TokenLock: the SET NX PX + random token lock, shared by `token` and `watchdog` (which adds
// a renewal task through the OnAcquired/BeforeRelease hooks).
#pragma once

#include <string>
#include <vector>

#include "algorithms/lock.h"

namespace locklab {

class TokenLock : public Lock {
 public:
  enum class ReleaseMode { kLua, kDel, kGetThenDel };

  TokenLock(Env& env, const LockConfig& cfg);
  Task<Outcome> TryAcquire() override;
  Task<Outcome> Release() override;
  static std::vector<OptionSpec> Specs();

 protected:
  virtual void OnAcquired() {}
  virtual void BeforeRelease() {}
  const std::string& token() const { return token_; }

  Env& env_;
  LockConfig cfg_;

 private:
  ReleaseMode release_;
  bool fit_work_ = false;  // only `token` declares fit-work (FitWorkOption)
  std::string ttl_ms_text_;  // cfg_.ttl_ms as SET's PX argument, written once
  std::string token_;  // while we believe we hold the lock
};

}  // namespace locklab
