// Store: the keyspace of one simulated Redis node: string, list, hash and sorted-set keys,
// optional expiry.
//
// Expiry is judged by the node's own wall clock, passed in as now_ms on every call (a node
// whose clock jumps forward drops keys early, as real Redis does). Expired keys vanish lazily
// on access, and in the background when the owner runs ActiveExpireCycle (sim/expire_cycle.h):
// a key deleted so stays deleted even if the node's clock later steps back.
//
// Execute() runs one command or one named script atomically and returns what real Redis 7
// would reply, including its error texts for wrong arity, syntax, non-integer values and wrong
// types (WRONGTYPE: GET on a list, LPUSH on a string, ...).
//
// Lists: LPUSH, RPUSH, LPOP [count], LLEN, LTRIM, LRANGE and BLPOP key [key ...] timeout. The
// store itself never waits: a BLPOP that finds every key empty reports it through BlockRequest
// (the simulator then parks the call at the node, see sim/simulator.h) and replies nil, which
// is also what Redis gives a BLPOP inside a script. A push that creates a list records its key
// as ready (TakeReadyKeys): the simulator serves parked BLPOPs from it after each command.
// PUBLISH asks the publish hook how many subscribers received the message (0 without a hook).
// WAIT numreplicas timeout: the store has no replicas, so it answers 0 at once when no more are
// asked for (or inside MULTI, as Redis does), and otherwise reports a BlockRequest with `wait`
// set and replies 0, what the timeout gives; the simulator, which owns the replication link,
// parks it until the replica acknowledges (sim/simulator.h).
//
// Hashes: HSET, HGET, HDEL, HEXISTS, HINCRBY, HLEN. Sorted sets: ZADD key [NX|XX] [CH] score
// member ..., ZCARD, ZSCORE, ZREM, ZREMRANGEBYSCORE (GT, LT and INCR of ZADD are refused with an
// error naming them: not simulated). Counters: INCR, INCRBY, DECR, DECRBY. As in Redis, a hash
// or sorted set whose last member goes is deleted. Connection state (MULTI/EXEC/WATCH) is not
// here: sim/transactions.h wraps the store for that.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <list>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "algorithms/command.h"
#include "algorithms/reply.h"
#include "sim/expire_cycle.h"

namespace locklab::sim {

struct Entry {
  Entry() = default;
  Entry(std::string v, int64_t expire_ms) : value(std::move(v)), expire_at_ms(expire_ms) {}

  enum class Kind : uint8_t { kString, kList, kHash, kZset };

  std::string value;          // a string key's value
  int64_t expire_at_ms = -1;  // absolute, on the node's wall clock; -1 = no expiry
  Kind kind = Kind::kString;
  // A list key: its elements, head first (`value` unused). As in Redis, a list whose last
  // element goes is deleted, so a stored list is never empty. Likewise hashes and sorted sets.
  std::list<std::string> list;
  std::map<std::string, std::string, std::less<>> hash;  // field -> value
  std::map<std::string, double, std::less<>> zscore;     // member -> score
  std::set<std::pair<double, std::string>> zorder;       // (score, member): Redis's order

  bool is_string() const { return kind == Kind::kString; }
  bool is_list() const { return kind == Kind::kList; }
  bool is_hash() const { return kind == Kind::kHash; }
  bool is_zset() const { return kind == Kind::kZset; }
  // Makes this a key of `k` with no contents (SET over a list, a new hash, ...).
  void Reset(Kind k) {
    kind = k;
    value.clear();
    list.clear();
    hash.clear();
    zscore.clear();
    zorder.clear();
  }
};

// Limits of the simulated node (a push past them is refused with an error reply).
inline constexpr size_t kMaxListLength = 1'000'000;  // elements in one list
inline constexpr size_t kMaxMembers = 1'000'000;     // fields of one hash, members of one sorted set

// What a BLPOP that found nothing to pop asks of its caller: wait up to timeout_ms (> 0) on
// its keys (the command's words between the name and the timeout).
// A WAIT that asks for more replicas than have acknowledged (see Store) fills it the same way,
// with `wait` set and how many replicas it wants.
struct BlockRequest {
  bool blocked = false;
  int64_t timeout_ms = 0;
  bool wait = false;
  int64_t replicas = 0;
};

// BLPOP's timeout argument as Redis 7.0 reads it (timeout.c): a decimal number of seconds
// (strtold: no spaces, nothing after the number, not NaN), times 1000, rounded up to whole ms.
// Sets *ms and returns nullptr, or returns the error reply's text ("ERR timeout is not a float
// or out of range", "ERR timeout is negative"). *ms == 0 means "block forever" to Redis; locklab
// refuses it (kBlockForeverError) because nothing here may wait without a bound.
const char* ParseBlockTimeout(std::string_view word, int64_t* ms);
inline constexpr char kBlockForeverError[] =
    "ERR locklab: BLPOP timeout 0 would block forever; pass a positive timeout";
// True when `cmd` is a plain BLPOP with enough words and a timeout that parses; *ms as above.
bool BlpopTimeoutMs(const Command& cmd, int64_t* ms);
// WAIT numreplicas timeout_ms blocks until that many replicas acknowledged the connection's
// writes or the timeout passes; timeout 0 would block forever, which locklab refuses.
inline constexpr char kWaitForeverError[] =
    "ERR locklab: WAIT timeout 0 would block forever; pass a positive timeout";
// True when `cmd` is a plain WAIT whose arguments parse (replication.c waitCommand); *ms is its
// timeout (0 included).
bool WaitTimeoutMs(const Command& cmd, int64_t* ms);

class Store {
 public:
  // Runs `cmd` at node time now_ms. Keys written or deleted are appended to *touched (may be
  // nullptr): replication forwards their new state to a replica. A plain BLPOP with nothing to
  // pop fills *block (when given) and replies nil; without `block` it just replies nil.
  Reply Execute(const Command& cmd, int64_t now_ms, std::vector<std::string>* touched = nullptr,
                BlockRequest* block = nullptr);

  // The error a command would get for its name or arity alone (unknown command, wrong number
  // of arguments), or nullopt: what MULTI checks before it queues a command.
  static std::optional<Reply> CheckNameAndArity(const Command& cmd);

  // Runs one plain command given as its words, as a script's redis.call() does (same replies
  // and errors as Execute, no copies of the words).
  Reply Call(std::span<const std::string_view> argv, int64_t now_ms,
             std::vector<std::string>* touched = nullptr);
  Reply Call(std::initializer_list<std::string_view> argv, int64_t now_ms,
             std::vector<std::string>* touched = nullptr) {
    return Call(std::span<const std::string_view>(argv.begin(), argv.size()), now_ms, touched);
  }

  // Building blocks for scripts (sim/scripts.cc) and replication. All honour expiry at now_ms.
  const Entry* Find(std::string_view key, int64_t now_ms);
  void Put(const std::string& key, Entry e) {
    const bool ttl = e.expire_at_ms != -1;
    map_[key] = std::move(e);
    if (ttl) NoteTtl(key);
  }
  bool Erase(const std::string& key, int64_t now_ms);  // true if a live key was removed
  // Replication: make `key` look exactly like the master's state (nullopt = absent).
  void Apply(const std::string& key, const std::optional<Entry>& e);
  std::optional<Entry> Snapshot(const std::string& key) const;
  // Whether `key` holds a live value at now_ms, without copying it and without expiring it
  // (a lookup would delete an expired key lazily; WATCH and EXEC's check must not).
  bool IsLiveRaw(const std::string& key, int64_t now_ms) const;

  // BLPOP serving (the simulator): removes and returns the head of the live list at `key`,
  // nullopt when there is none. A list left empty is deleted.
  std::optional<std::string> PopHead(const std::string& key, int64_t now_ms, std::vector<std::string>* touched);
  // Keys whose list was created by a push since the last call (each once, in push order): where
  // parked BLPOPs may now be served. Redis signals exactly these (dbAdd of a list key).
  bool has_ready_keys() const { return !ready_.empty(); }
  void TakeReadyKeys(std::vector<std::string>* out) {
    out->clear();
    out->swap(ready_);
  }

  // PUBLISH channel message -> the hook's return value (the number of receivers).
  using PublishHook = std::function<int64_t(std::string_view channel, std::string_view message)>;
  void set_publish_hook(PublishHook hook) { publish_ = std::move(hook); }

  // Active expiry (sim/expire_cycle.cc): one cycle at node time now_ms. Deleted keys are
  // appended to *deleted (may be nullptr): the master's DELs for its replica.
  ExpireCycleResult ActiveExpireCycle(int64_t now_ms, std::vector<std::string>* deleted,
                                      const ExpireCycleLimits& limits = {});
  // The seed of the hash that orders the keys the cycle walks (Redis's dict hash seed, drawn at
  // server start). Reorders the keys already known.
  void SetExpireHashSeed(uint64_t seed);

  void Clear() {
    map_.clear();
    ready_.clear();
    ttl_order_.clear();
    expire_cursor_.reset();
  }
  size_t size() const { return map_.size(); }  // including not-yet-collected expired keys

 private:
  // Transparent hashing lets commands look keys up by string_view without building a string.
  // Deliberately not noexcept: libstdc++ then caches each node's hash, so a lookup does not
  // rehash neighbouring keys to find the bucket's end.
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  // Records that `key` has a TTL now: where the expire cycle will look. Entries of keys since
  // deleted or persisted are dropped when the cycle's cursor reaches them.
  void NoteTtl(std::string_view key);
  using TtlOrder = std::set<std::pair<uint64_t, std::string>>;  // (keyed hash, key)
  // One loop of the cycle: up to per_loop keys with a TTL after the cursor, wrapping, each at
  // most once; deletes the expired ones. Returns (keys looked at, keys deleted).
  std::pair<int64_t, int64_t> ExpireLoop(int64_t now_ms, int64_t per_loop, std::vector<std::string>* deleted);

  Entry* Live(std::string_view key, int64_t now_ms);  // nullptr if absent or expired (then dropped)
  Reply Set(std::span<const std::string_view> argv, int64_t now_ms, std::vector<std::string>* touched);
  Reply Expire(std::span<const std::string_view> argv, int64_t unit_ms, int64_t now_ms,
               std::vector<std::string>* touched);
  Reply Incr(std::string_view key, int64_t now_ms, std::vector<std::string>* touched);
  Reply Flushall(std::span<const std::string_view> argv, std::vector<std::string>* touched);
  Reply Push(std::span<const std::string_view> argv, bool head, int64_t now_ms, std::vector<std::string>* touched);
  Reply Lpop(std::span<const std::string_view> argv, int64_t now_ms, std::vector<std::string>* touched);
  Reply Blpop(std::span<const std::string_view> argv, int64_t now_ms, std::vector<std::string>* touched,
              BlockRequest* block);
  Reply Ltrim(std::span<const std::string_view> argv, int64_t now_ms, std::vector<std::string>* touched);
  Reply Lrem(std::span<const std::string_view> argv, int64_t now_ms, std::vector<std::string>* touched);
  Reply Lrange(std::span<const std::string_view> argv, int64_t now_ms);
  // One command each (CallImpl checked the name and the arity).
  using Argv = std::span<const std::string_view>;
  using Touched = std::vector<std::string>*;
  Reply Get(Argv argv, int64_t now_ms);
  Reply Setnx(Argv argv, int64_t now_ms, Touched touched);
  Reply Getset(Argv argv, int64_t now_ms, Touched touched);
  Reply Del(Argv argv, int64_t now_ms, Touched touched);
  Reply Exists(Argv argv, int64_t now_ms);
  Reply Ttl(Argv argv, int64_t now_ms, bool in_ms);
  Reply Ping(Argv argv);
  Reply Llen(Argv argv, int64_t now_ms);
  Reply Wait(Argv argv, int64_t now_ms, BlockRequest* block);
  // Counters, hashes and sorted sets (sim/store_types.cc).
  Reply IncrBy(Argv argv, int64_t sign, int64_t now_ms, Touched touched);
  Reply Hset(Argv argv, int64_t now_ms, Touched touched);
  Reply Hget(Argv argv, int64_t now_ms);
  Reply Hdel(Argv argv, int64_t now_ms, Touched touched);
  Reply Hexists(Argv argv, int64_t now_ms);
  Reply Hincrby(Argv argv, int64_t now_ms, Touched touched);
  Reply Hlen(Argv argv, int64_t now_ms);
  Reply Zadd(Argv argv, int64_t now_ms, Touched touched);
  Reply Zcard(Argv argv, int64_t now_ms);
  Reply Zscore(Argv argv, int64_t now_ms);
  Reply Zrem(Argv argv, int64_t now_ms, Touched touched);
  Reply Zremrangebyscore(Argv argv, int64_t now_ms, Touched touched);
  // The live key of kind `k` at `key`, created empty when absent (*wrong_type: another kind is
  // there; nullptr then).
  Entry* Of(std::string_view key, Entry::Kind k, int64_t now_ms, bool create, bool* wrong_type);
  void DropIfEmpty(std::string_view key, const Entry& e);
  Reply CallImpl(std::span<const std::string_view> argv, int64_t now_ms, std::vector<std::string>* touched,
                 BlockRequest* block);

  std::unordered_map<std::string, Entry, KeyHash, std::equal_to<>> map_;
  std::vector<std::string> ready_;
  PublishHook publish_;
  TtlOrder ttl_order_;  // keys that may have a TTL, in the cycle's walking order
  std::optional<std::pair<uint64_t, std::string>> expire_cursor_;  // the last key looked at
  uint64_t expire_hash_seed_ = 0;
};

}  // namespace locklab::sim
