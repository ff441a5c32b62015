// Test helpers for tests that talk to a redis-server with blocking hiredis (the differential
// tests): owning pointers, one command as locklab's Reply, and an integer from the environment.
#pragma once

#include <hiredis/hiredis.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/reply.h"
#include "harness/real/hiredis_reply.h"

namespace locklab {

struct RedisFree {
  void operator()(redisContext* c) const { redisFree(c); }
};
struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using RedisPtr = std::unique_ptr<redisContext, RedisFree>;
using ReplyPtr = std::unique_ptr<redisReply, ReplyFree>;

// One command on the server; nullopt (and *error) when the connection failed.
inline std::optional<Reply> RedisRun(redisContext* c, const std::vector<std::string>& argv, std::string* error) {
  std::vector<const char*> ptrs;
  std::vector<size_t> lens;
  for (const auto& w : argv) {
    ptrs.push_back(w.data());
    lens.push_back(w.size());
  }
  ReplyPtr r(static_cast<redisReply*>(redisCommandArgv(c, static_cast<int>(argv.size()), ptrs.data(), lens.data())));
  if (!r) {
    *error = std::string("hiredis: ") + c->errstr;
    return std::nullopt;
  }
  return FromHiredis(r.get());
}

// $name as an integer, or `fallback` when unset or empty (LOCKLAB_DIFF_SEQUENCES, ...).
inline int64_t EnvInt(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v == nullptr || *v == '\0' ? fallback : std::strtoll(v, nullptr, 10);
}

}  // namespace locklab
