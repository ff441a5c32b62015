// local: an in-process mutex per application server, the second baseline for the seckill race
// (source: "Solving overselling with a distributed lock: a SETNX implementation", document 002
// in the README's "Sources"): each app server guards the critical section with its own
// synchronized block.
// Client c runs on server c % app_servers (LockConfig::app_server); clients of one server
// exclude each other, clients of different servers do not. No Redis command.
//
//   acquire: yield; the server's mutex free -> take it (kOk), else kFail (the retry policy waits)
//   release: free it if this client holds it (kOk), else kFail
//
// A paused client keeps its mutex; a crashed one never frees it (its thread died in the block).
#include <cstddef>
#include <memory>

#include "algorithms/lock.h"

namespace locklab {
namespace {

class LocalMutex : public Lock {
 public:
  LocalMutex(Env& env, const LockConfig& cfg)
      : env_(env), mutexes_(cfg.local_mutexes), server_(cfg.app_server < 0 ? 0 : static_cast<size_t>(cfg.app_server)) {
    if (!mutexes_) mutexes_ = std::make_shared<LocalMutexes>();
    if (mutexes_->holder.size() <= server_) mutexes_->holder.resize(server_ + 1, -1);
  }

  Task<Outcome> TryAcquire() override {
    co_await env_.Yield();
    int& holder = mutexes_->holder[server_];
    if (holder >= 0) co_return Outcome::kFail;
    holder = env_.client_id();
    co_return Outcome::kOk;
  }

  Task<Outcome> Release() override {
    int& holder = mutexes_->holder[server_];
    if (holder != env_.client_id()) co_return Outcome::kFail;
    holder = -1;
    co_return Outcome::kOk;
  }

 private:
  Env& env_;
  std::shared_ptr<LocalMutexes> mutexes_;
  size_t server_;
};

}  // namespace

AlgorithmInfo LocalInfo() {
  AlgorithmInfo a;
  a.name = "local";
  a.summary =
      "in-process mutex per application server (baseline): client c on server c % --app-servers; excludes only "
      "clients of the same server";
  a.uses_ttl = false;
  a.is_lock = false;
  a.make = [](Env& env, const LockConfig& cfg) -> std::unique_ptr<Lock> {
    return std::make_unique<LocalMutex>(env, cfg);
  };
  return a;
}

}  // namespace locklab
