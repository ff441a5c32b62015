// rwlock: a read-write lock, many readers or one writer. The writer holds a string key (the
// token lock's SET NX PX); the readers are members of a sorted set next to it, scored by the
// time they acquired, as the semaphore's holders are (algorithms/semaphore.cc).
//
//   read acquire (script rw_read_acquire):
//     if EXISTS writer: fail
//     ZREMRANGEBYSCORE readers -inf (now - ttl); ZADD readers now id; PEXPIRE readers ttl
//   write acquire (script rw_write_acquire):
//     ZREMRANGEBYSCORE readers -inf (now - ttl); if ZCARD readers > 0: fail
//     SET writer token NX PX ttl
//   release: ZREM readers id (read), compare-and-delete writer token (write)
//
// The workload says which each request is (Lock::set_read: --read-ratio, or a scenario client's
// mode). Readers may starve a writer: a new reader is admitted while others read. `now` is the
// client's wall clock, as in the semaphore: a reader paused past the TTL is dropped by the next
// acquire, and a writer gets in while it still reads (a stale read).
#include <memory>
#include <string>

#include "algorithms/lock.h"

namespace locklab {
namespace {

class RwLock : public Lock {
 public:
  RwLock(Env& env, const LockConfig& cfg) : env_(env), cfg_(cfg), readers_(cfg.key + ":readers") {}

  void set_read(bool read) override { read_ = read; }

  Task<Outcome> TryAcquire() override {
    const Env::TokenText id = env_.RandomTokenText();  // a string only once it holds the lock
    const int64_t now_ms = env_.WallMs();
    const std::string expired = std::to_string(now_ms - cfg_.ttl_ms), ttl = std::to_string(cfg_.ttl_ms);
    Command cmd = read_ ? Command::Run(Script::kRwReadAcquire, 2, cfg_.key, readers_, id.view(), std::to_string(now_ms),
                                      expired, ttl)
                        : Command::Run(Script::kRwWriteAcquire, 2, cfg_.key, readers_, id.view(), expired, ttl);
    Reply r = co_await env_.Send(0, std::move(cmd));
    if (r.is_timeout()) co_return Outcome::kUnknown;
    if (!r.is_int(1)) co_return Outcome::kFail;
    id_ = std::string(id.view());
    held_read_ = read_;
    co_return Outcome::kOk;
  }

  Task<Outcome> Release() override {
    const std::string id = std::move(id_);
    id_.clear();
    Command cmd = held_read_ ? Command::Of("ZREM", readers_, id) : Command::Run(Script::kCompareAndDelete, 1, cfg_.key, id);
    Reply r = co_await env_.Send(0, std::move(cmd));
    co_return OutcomeOfOne(r);
  }

 private:
  Env& env_;
  LockConfig cfg_;
  std::string readers_;    // the readers' sorted set
  bool read_ = false;      // the next acquisition reads
  bool held_read_ = false; // the one held is a read
  std::string id_;         // our reader id or writer token while we believe we hold
};

}  // namespace

AlgorithmInfo RwLockInfo() {
  AlgorithmInfo a;
  a.name = "rwlock";
  a.summary = "read-write lock: a writer key and a sorted set of readers (--read-ratio mixes reads and writes)";
  a.make = [](Env& env, const LockConfig& cfg) -> std::unique_ptr<Lock> { return std::make_unique<RwLock>(env, cfg); };
  return a;
}

}  // namespace locklab
