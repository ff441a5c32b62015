// Store: the keyspace of one simulated Redis node: string keys, optional expiry.
//
// Expiry is judged by the node's own wall clock, passed in as now_ms on every call (a node
// whose clock jumps forward drops keys early, as real Redis does). Expired keys vanish lazily
// on access, which is all a client can observe.
//
// Execute() runs one command or one named script atomically and returns what real Redis 7
// would reply, including its error texts for wrong arity, syntax and non-integer values.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "algorithms/command.h"
#include "algorithms/reply.h"

namespace locklab::sim {

struct Entry {
  std::string value;
  int64_t expire_at_ms = -1;  // absolute, on the node's wall clock; -1 = no expiry
};

class Store {
 public:
  // Runs `cmd` at node time now_ms. Keys written or deleted are appended to *touched (may be
  // nullptr): replication forwards their new state to a replica.
  Reply Execute(const Command& cmd, int64_t now_ms, std::vector<std::string>* touched = nullptr);

  // Runs one plain command given as its words, as a script's redis.call() does (same replies
  // and errors as Execute, no copies of the words).
  Reply Call(std::span<const std::string_view> argv, int64_t now_ms,
             std::vector<std::string>* touched = nullptr);
  Reply Call(std::initializer_list<std::string_view> argv, int64_t now_ms,
             std::vector<std::string>* touched = nullptr) {
    return Call(std::span<const std::string_view>(argv.begin(), argv.size()), now_ms, touched);
  }

  // Building blocks for scripts (sim/scripts.cc) and replication. All honour expiry at now_ms.
  const Entry* Find(const std::string& key, int64_t now_ms);
  void Put(const std::string& key, Entry e) { map_[key] = std::move(e); }
  bool Erase(const std::string& key, int64_t now_ms);  // true if a live key was removed
  // Replication: make `key` look exactly like the master's state (nullopt = absent).
  void Apply(const std::string& key, const std::optional<Entry>& e);
  std::optional<Entry> Snapshot(const std::string& key) const;

  void Clear() { map_.clear(); }
  size_t size() const { return map_.size(); }  // including not-yet-collected expired keys

 private:
  // Transparent hashing lets commands look keys up by string_view without building a string.
  // Deliberately not noexcept: libstdc++ then caches each node's hash, so a lookup does not
  // rehash neighbouring keys to find the bucket's end.
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  Entry* Live(std::string_view key, int64_t now_ms);  // nullptr if absent or expired (then dropped)
  Reply Set(std::span<const std::string_view> argv, int64_t now_ms, std::vector<std::string>* touched);
  Reply Expire(std::span<const std::string_view> argv, int64_t unit_ms, int64_t now_ms,
               std::vector<std::string>* touched);
  Reply Incr(std::string_view key, int64_t now_ms, std::vector<std::string>* touched);
  Reply Flushall(std::span<const std::string_view> argv, std::vector<std::string>* touched);

  std::unordered_map<std::string, Entry, KeyHash, std::equal_to<>> map_;
};

}  // namespace locklab::sim
