// Store's active expiry (sim/expire_cycle.h): the keys with a TTL in a keyed-hash order, a
// cursor through them, and one cycle of loops over them.
#include <algorithm>
#include <optional>
#include <string>

#include "sim/store.h"

namespace locklab::sim {

namespace {

// FNV-1a over the key, then a splitmix64 finish keyed by the seed: the same order on every
// standard library (std::hash is not), a different one for every seed.
uint64_t KeyedHash(std::string_view key, uint64_t seed) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : key) h = (h ^ c) * 0x100000001b3ULL;
  uint64_t z = h ^ seed;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

void Store::NoteTtl(std::string_view key) {
  // Entries of deleted keys leave when the cycle passes them; where no cycle runs (a replica,
  // a store used alone) they are swept here once they outnumber the keys, so the index stays
  // within twice the keyspace (amortised: a sweep follows as many insertions as it removes).
  if (ttl_order_.size() >= 2 * map_.size() + 64) {
    std::erase_if(ttl_order_, [this](const auto& e) {
      auto it = map_.find(e.second);
      return it == map_.end() || it->second.expire_at_ms == -1;
    });
  }
  // Most keys are indexed already (a lock key set again): find it without building a string.
  const uint64_t h = KeyedHash(key, expire_hash_seed_);
  for (auto it = ttl_order_.lower_bound({h, std::string()}); it != ttl_order_.end() && it->first == h; ++it)
    if (it->second == key) return;
  ttl_order_.emplace(h, std::string(key));
}

void Store::SetExpireHashSeed(uint64_t seed) {
  expire_hash_seed_ = seed;
  TtlOrder reordered;
  for (const auto& [hash, key] : ttl_order_) reordered.emplace(KeyedHash(key, seed), key);
  ttl_order_.swap(reordered);
  expire_cursor_.reset();
}

std::pair<int64_t, int64_t> Store::ExpireLoop(int64_t now_ms, int64_t per_loop, std::vector<std::string>* deleted) {
  int64_t sampled = 0, expired = 0;
  // One lap at most: the keys after the cursor, then (wrapped) those up to it. Each step looks
  // at a key or drops a stale entry (a key since deleted or persisted), so size() + 1 steps do.
  const std::optional<std::pair<uint64_t, std::string>> start = expire_cursor_;
  auto it = start ? ttl_order_.upper_bound(*start) : ttl_order_.begin();
  bool wrapped = false;
  for (size_t steps = ttl_order_.size() + 1; steps > 0 && sampled < per_loop; --steps) {
    if (it == ttl_order_.end()) {
      if (wrapped || !start) break;
      wrapped = true;
      it = ttl_order_.begin();
      continue;
    }
    if (wrapped && *it > *start) break;  // lapped
    auto entry = map_.find(it->second);
    if (entry == map_.end() || entry->second.expire_at_ms == -1) {
      it = ttl_order_.erase(it);
      continue;
    }
    expire_cursor_ = *it;  // a copy: still a valid bound after the entry is erased
    ++sampled;
    if (now_ms > entry->second.expire_at_ms) {  // the same test as lazy expiry
      if (deleted != nullptr) deleted->push_back(it->second);
      map_.erase(entry);
      it = ttl_order_.erase(it);
      ++expired;
    } else {
      ++it;
    }
  }
  return {sampled, expired};
}

ExpireCycleResult Store::ActiveExpireCycle(int64_t now_ms, std::vector<std::string>* deleted,
                                           const ExpireCycleLimits& limits) {
  ExpireCycleResult r;
  const int64_t per_loop = std::max<int64_t>(1, limits.keys_per_loop);
  const int64_t key_cost_ns = std::max<int64_t>(1, limits.key_cost_ns);
  while (r.loops < kExpireMaxLoopsPerCycle) {
    ++r.loops;
    const auto [sampled, expired] = ExpireLoop(now_ms, per_loop, deleted);
    r.sampled += sampled;
    r.expired += expired;
    if (sampled == 0) break;  // no key has a TTL
    // Redis reads its clock every 16 loops; here the time spent is the keys looked at so far.
    if (r.loops % kExpireBudgetCheckLoops == 0 && r.sampled * key_cost_ns / 1000 > limits.budget_us) {
      r.budget_hit = true;
      break;
    }
    if (expired * 100 / sampled <= limits.acceptable_stale_percent) break;
  }
  return r;
}

}  // namespace locklab::sim
