// Active expiry: the periodic cycle by which a Redis 7 master deletes expired keys that nobody
// touches (Store::ActiveExpireCycle runs one; the simulator decides when, see sim/simulator.h).
//
// What Redis 7.0 does (src/expire.c activeExpireCycle, called "slow" from serverCron every
// 1000/hz ms, hz 10 by default, on a master only: replicas wait for the master's DEL):
//  - One loop looks at up to 20 keys that have a TTL (ACTIVE_EXPIRE_CYCLE_KEYS_PER_LOOP at
//    active-expire-effort 1), deletes those whose deadline has passed (now > deadline, as lazy
//    expiry judges) and propagates each deletion to replicas as a DEL.
//  - The keys are not drawn at random (that was Redis <= 5, and what the EXPIRE docs still
//    describe): a cursor walks the buckets of the TTL dictionary, in hash order, and carries on
//    where the previous loop (and cycle) stopped. The hash is SipHash with a seed drawn when the
//    server starts, so the order is a fixed pseudo-random permutation of the keys. Here: keys
//    are ordered by a hash keyed with a seed the simulator draws from the node's own random
//    stream (Store::SetExpireHashSeed), and the cursor is the last key looked at.
//  - The cycle loops again while more than 10% of a loop's keys had expired
//    (expired * 100 / sampled > ACTIVE_EXPIRE_CYCLE_ACCEPTABLE_STALE, integer division: with 20
//    keys, 3 or more expired means "again"), and stops when no key has a TTL.
//  - Budget: ACTIVE_EXPIRE_CYCLE_SLOW_TIME_PERC = 25% of the cron period, i.e. 25 ms of CPU
//    per cycle at hz 10, checked once every 16 loops; past it the cycle stops.
// Not modelled: the fast cycle from beforeSleep (Redis runs it only when the previous cycle ran
// out of budget or its estimate of stale keys is >= 10%: never with the few lock keys of these
// experiments), the skip of a nearly empty (< 1% full) TTL table, and buckets holding several
// keys (a loop here looks at exactly min(20, keys with a TTL) keys).
// The simulator charges the cycle no node time (a node's CPU model has no figure for it yet);
// the budget is counted in an assumed cost per key looked at, kExpireAssumedKeyCostNs.
#pragma once

#include <cstdint>

namespace locklab::sim {

inline constexpr int64_t kExpireCyclePeriodUs = 100'000;  // 1000 / hz ms, hz 10
inline constexpr int64_t kExpireKeysPerLoop = 20;
inline constexpr int64_t kExpireAcceptableStalePercent = 10;
inline constexpr int64_t kExpireBudgetUs = kExpireCyclePeriodUs * 25 / 100;  // 25 ms
inline constexpr int64_t kExpireBudgetCheckLoops = 16;   // the budget is checked every 16 loops
inline constexpr int64_t kExpireAssumedKeyCostNs = 1'000;  // for the budget only, not charged
// Hard bound on loops per cycle whatever the limits say (the budget ends a cycle far sooner).
inline constexpr int64_t kExpireMaxLoopsPerCycle = 1'000'000;

struct ExpireCycleLimits {
  int64_t keys_per_loop = kExpireKeysPerLoop;                    // >= 1
  int64_t acceptable_stale_percent = kExpireAcceptableStalePercent;
  int64_t budget_us = kExpireBudgetUs;
  int64_t key_cost_ns = kExpireAssumedKeyCostNs;                 // >= 1
};

// What one cycle did.
struct ExpireCycleResult {
  int64_t loops = 0;
  int64_t sampled = 0;  // keys with a TTL looked at (a key may be looked at in several loops)
  int64_t expired = 0;  // keys deleted
  bool budget_hit = false;
};

}  // namespace locklab::sim
