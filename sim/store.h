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
#include <optional>
#include <string>
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
  std::unordered_map<std::string, Entry> map_;
};

}  // namespace locklab::sim
