#include "sim/scripts.h"

#include <array>
#include <bit>
#include <cctype>
#include <cstdlib>
#include <optional>
#include <stdexcept>

namespace locklab::sim {
namespace {

// Each Lua text is one line on purpose: Redis names the failing line in a script's error
// ("@user_script:1"), and one line keeps that the same for every redis.call() in it.
//
// The C++ bodies follow their Lua line by line, running each redis.call() through
// Store::Call so that replies and errors are the plain commands' own.

constexpr char kCompareAndDeleteLua[] =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then "
    "return redis.call('DEL', KEYS[1]) "
    "else return 0 end";

constexpr char kCompareAndPexpireLua[] =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then "
    "return redis.call('PEXPIRE', KEYS[1], ARGV[2]) "
    "else return 0 end";

// SET's status reply is a Lua table (true), its nil reply is false; `return false` is nil.
constexpr char kSetNxPxIncrFenceLua[] =
    "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then "
    "return redis.call('INCR', KEYS[2]) "
    "else return false end";

// A releaser's wake-up for BLPOP waiters: one token "1" only when the list is empty, so at most
// one waits however often it runs (a parked BLPOP empties the list again at once) -> the list's
// length after.
constexpr char kNotifyOneLua[] =
    "local n = redis.call('LLEN', KEYS[1]) "
    "if n == 0 then return redis.call('RPUSH', KEYS[1], '1') end "
    "return n";

// The fifo lock (algorithms/fifo.cc). KEYS: lock, queue. A waiter's wake list is <lock>:wake:<token>.
constexpr char kFifoAcquireLua[] =
    "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end "
    "redis.call('RPUSH', KEYS[2], ARGV[1]) "
    "return 0";
constexpr char kFifoReleaseLua[] =
    "if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end "
    "local nxt = redis.call('LPOP', KEYS[2]) "
    "if nxt then "
    "redis.call('SET', KEYS[1], nxt, 'PX', ARGV[2]) "
    "local wake = KEYS[1] .. ':wake:' .. nxt "
    "redis.call('RPUSH', wake, '1') "
    "redis.call('PEXPIRE', wake, ARGV[2]) "
    "return 1 end "
    "redis.call('DEL', KEYS[1]) "
    "return 1";
constexpr char kFifoLeaveLua[] =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return 1 end "
    "redis.call('LREM', KEYS[2], 0, ARGV[1]) "
    "return 0";

// The lock-free seckill (algorithms/lockfree.cc): one unit of stock, only while there is some.
constexpr char kStockDecrementLua[] =
    "local n = tonumber(redis.call('GET', KEYS[1])) "
    "if n ~= nil and n > 0 then return redis.call('DECR', KEYS[1]) end "
    "return -1";

// The semaphore (algorithms/semaphore.cc), redis-semaphore's design. KEYS: the sorted set.
// ARGV: id, now_ms, expired_ms (now - ttl: holders whose score is at or below it are gone),
// permits, ttl_ms.
constexpr char kSemaphoreAcquireLua[] =
    "redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3]) "
    "if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[4]) then "
    "redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1]) "
    "redis.call('PEXPIRE', KEYS[1], ARGV[5]) "
    "return 1 end "
    "return 0";

// The reentrant lock (algorithms/reentrant.cc), Redisson's design: a hash owner -> hold count.
// KEYS: the lock. ARGV: owner, ttl_ms.
constexpr char kReentrantAcquireLua[] =
    "if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then "
    "redis.call('HINCRBY', KEYS[1], ARGV[1], 1) "
    "redis.call('PEXPIRE', KEYS[1], ARGV[2]) "
    "return false end "
    "return redis.call('PTTL', KEYS[1])";
constexpr char kReentrantReleaseLua[] =
    "if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return -1 end "
    "local n = redis.call('HINCRBY', KEYS[1], ARGV[1], -1) "
    "if n > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return n end "
    "redis.call('DEL', KEYS[1]) "
    "return 0";

// The read-write lock (algorithms/rwlock.cc). KEYS: the writer's key, the readers' sorted set.
// Read ARGV: id, now_ms, expired_ms (now - ttl), ttl_ms. Write ARGV: token, expired_ms, ttl_ms.
constexpr char kRwReadAcquireLua[] =
    "if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end "
    "redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[3]) "
    "redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1]) "
    "redis.call('PEXPIRE', KEYS[2], ARGV[4]) "
    "return 1";
constexpr char kRwWriteAcquireLua[] =
    "redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[2]) "
    "if redis.call('ZCARD', KEYS[2]) > 0 then return 0 end "
    "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[3]) then return 1 end "
    "return 0";

// Lua 5.1's tonumber() of a string (luaO_str2d): the C library's strtod, or hexadecimal after
// "0x"; trailing spaces allowed; nothing read, or anything else after the number: nil. Like
// Lua, it reads the string as C does, up to a NUL byte.
std::optional<double> LuaToNumber(const std::string& s) {
  const char* p = s.c_str();
  char* end = nullptr;
  double v = std::strtod(p, &end);
  if (end == p) return std::nullopt;
  if (*end == 'x' || *end == 'X') v = static_cast<double>(std::strtoul(p, &end, 16));
  while (*end != '\0' && std::isspace(static_cast<unsigned char>(*end))) ++end;
  if (*end != '\0') return std::nullopt;
  return v;
}

// A failing redis.call() aborts the script (no rollback of what it already wrote), and Redis
// reports the command's error followed by where it happened.
Reply Raise(Reply error, Script id) {
  error.str += " script: " + ScriptSha1(id) + ", on @user_script:1.";
  return error;
}

Reply CompareAndDelete(Store& store, int64_t now_ms, const Command& cmd, std::vector<std::string>* touched) {
  const std::string_view key = cmd.argv[0];
  const std::string_view token = cmd.argv[1];
  const Entry* e = store.Find(key, now_ms);  // GET, without copying the value
  if (e != nullptr && !e->is_string()) return Raise(store.Call({"GET", key}, now_ms), Script::kCompareAndDelete);
  if (e == nullptr || e->value != token) return Reply::Int(0);
  return store.Call({"DEL", key}, now_ms, touched);
}

Reply CompareAndPexpire(Store& store, int64_t now_ms, const Command& cmd, std::vector<std::string>* touched) {
  const std::string_view key = cmd.argv[0];
  const std::string_view token = cmd.argv[1];
  const std::string_view ttl_ms = cmd.argv[2];
  const Entry* e = store.Find(key, now_ms);
  if (e != nullptr && !e->is_string()) return Raise(store.Call({"GET", key}, now_ms), Script::kCompareAndPexpire);
  if (e == nullptr || e->value != token) return Reply::Int(0);
  Reply r = store.Call({"PEXPIRE", key, ttl_ms}, now_ms, touched);
  return r.is_error() ? Raise(std::move(r), Script::kCompareAndPexpire) : r;
}

Reply SetNxPxIncrFence(Store& store, int64_t now_ms, const Command& cmd, std::vector<std::string>* touched) {
  const std::string_view key = cmd.argv[0];
  const std::string_view fence_key = cmd.argv[1];
  const std::string_view token = cmd.argv[2];
  const std::string_view ttl_ms = cmd.argv[3];
  Reply set = store.Call({"SET", key, token, "NX", "PX", ttl_ms}, now_ms, touched);
  if (set.is_error()) return Raise(std::move(set), Script::kSetNxPxIncrFence);
  if (set.is_nil()) return Reply::Nil();
  Reply fence = store.Call({"INCR", fence_key}, now_ms, touched);
  return fence.is_error() ? Raise(std::move(fence), Script::kSetNxPxIncrFence) : fence;
}

Reply NotifyOne(Store& store, int64_t now_ms, const Command& cmd, std::vector<std::string>* touched) {
  const std::string_view key = cmd.argv[0];
  Reply n = store.Call({"LLEN", key}, now_ms, touched);
  if (n.is_error()) return Raise(std::move(n), Script::kNotifyOne);
  if (n.integer != 0) return n;
  Reply r = store.Call({"RPUSH", key, "1"}, now_ms, touched);
  return r.is_error() ? Raise(std::move(r), Script::kNotifyOne) : r;
}

// One redis.call() of a script body: an error aborts the script (Raise), a reply goes on.
#define LOCKLAB_CALL(out, id, ...)                                  \
  Reply out = store.Call({__VA_ARGS__}, now_ms, touched);           \
  if (out.is_error()) return Raise(std::move(out), id)

Reply FifoAcquire(Store& store, int64_t now_ms, const Command& cmd, std::vector<std::string>* touched) {
  const std::string_view lock = cmd.argv[0], queue = cmd.argv[1], token = cmd.argv[2], ttl = cmd.argv[3];
  LOCKLAB_CALL(set, Script::kFifoAcquire, "SET", lock, token, "NX", "PX", ttl);
  if (set.is_ok()) return Reply::Int(1);
  LOCKLAB_CALL(push, Script::kFifoAcquire, "RPUSH", queue, token);
  return Reply::Int(0);
}

Reply FifoRelease(Store& store, int64_t now_ms, const Command& cmd, std::vector<std::string>* touched) {
  const std::string_view lock = cmd.argv[0], queue = cmd.argv[1], token = cmd.argv[2], ttl = cmd.argv[3];
  LOCKLAB_CALL(current, Script::kFifoRelease, "GET", lock);
  if (!current.is_string() || current.str != token) return Reply::Int(0);
  LOCKLAB_CALL(next, Script::kFifoRelease, "LPOP", queue);
  if (next.is_string()) {
    const std::string wake = std::string(lock) + ":wake:" + next.str;
    LOCKLAB_CALL(set, Script::kFifoRelease, "SET", lock, next.str, "PX", ttl);
    LOCKLAB_CALL(push, Script::kFifoRelease, "RPUSH", wake, "1");
    LOCKLAB_CALL(expire, Script::kFifoRelease, "PEXPIRE", wake, ttl);
    return Reply::Int(1);
  }
  LOCKLAB_CALL(del, Script::kFifoRelease, "DEL", lock);
  return Reply::Int(1);
}

Reply FifoLeave(Store& store, int64_t now_ms, const Command& cmd, std::vector<std::string>* touched) {
  const std::string_view lock = cmd.argv[0], queue = cmd.argv[1], token = cmd.argv[2];
  LOCKLAB_CALL(current, Script::kFifoLeave, "GET", lock);
  if (current.is_string() && current.str == token) return Reply::Int(1);
  LOCKLAB_CALL(removed, Script::kFifoLeave, "LREM", queue, "0", token);
  return Reply::Int(0);
}

Reply StockDecrement(Store& store, int64_t now_ms, const Command& cmd, std::vector<std::string>* touched) {
  const std::string_view stock = cmd.argv[0];
  LOCKLAB_CALL(value, Script::kStockDecrement, "GET", stock);
  if (!value.is_string()) return Reply::Int(-1);  // tonumber(false) is nil
  const std::optional<double> n = LuaToNumber(value.str);
  if (!n || !(*n > 0)) return Reply::Int(-1);
  LOCKLAB_CALL(left, Script::kStockDecrement, "DECR", stock);
  return left;
}

// The algorithm always passes an integer `permits`; anything else would be a Lua error
// (comparing with nil), which the C++ body reports under the same text.
Reply SemaphoreAcquire(Store& store, int64_t now_ms, const Command& cmd, std::vector<std::string>* touched) {
  const std::string_view sem = cmd.argv[0], id = cmd.argv[1], now = cmd.argv[2], expired = cmd.argv[3],
                    permits = cmd.argv[4], ttl = cmd.argv[5];
  LOCKLAB_CALL(trim, Script::kSemaphoreAcquire, "ZREMRANGEBYSCORE", sem, "-inf", expired);
  LOCKLAB_CALL(card, Script::kSemaphoreAcquire, "ZCARD", sem);
  const std::optional<double> limit = LuaToNumber(std::string(permits));
  if (!limit)
    return Raise(Reply::Error("ERR user_script:1: attempt to compare number with nil"), Script::kSemaphoreAcquire);
  if (!(static_cast<double>(card.integer) < *limit)) return Reply::Int(0);
  LOCKLAB_CALL(add, Script::kSemaphoreAcquire, "ZADD", sem, now, id);
  LOCKLAB_CALL(expire, Script::kSemaphoreAcquire, "PEXPIRE", sem, ttl);
  return Reply::Int(1);
}

Reply ReentrantAcquire(Store& store, int64_t now_ms, const Command& cmd, std::vector<std::string>* touched) {
  const std::string_view lock = cmd.argv[0], owner = cmd.argv[1], ttl = cmd.argv[2];
  LOCKLAB_CALL(exists, Script::kReentrantAcquire, "EXISTS", lock);
  bool ours = exists.integer == 0;
  if (!ours) {
    LOCKLAB_CALL(has, Script::kReentrantAcquire, "HEXISTS", lock, owner);
    ours = has.integer == 1;
  }
  if (!ours) {
    LOCKLAB_CALL(pttl, Script::kReentrantAcquire, "PTTL", lock);
    return pttl;
  }
  LOCKLAB_CALL(count, Script::kReentrantAcquire, "HINCRBY", lock, owner, "1");
  LOCKLAB_CALL(expire, Script::kReentrantAcquire, "PEXPIRE", lock, ttl);
  return Reply::Nil();
}

Reply ReentrantRelease(Store& store, int64_t now_ms, const Command& cmd, std::vector<std::string>* touched) {
  const std::string_view lock = cmd.argv[0], owner = cmd.argv[1], ttl = cmd.argv[2];
  LOCKLAB_CALL(has, Script::kReentrantRelease, "HEXISTS", lock, owner);
  if (has.integer == 0) return Reply::Int(-1);
  LOCKLAB_CALL(left, Script::kReentrantRelease, "HINCRBY", lock, owner, "-1");
  if (left.integer > 0) {
    LOCKLAB_CALL(expire, Script::kReentrantRelease, "PEXPIRE", lock, ttl);
    return left;
  }
  LOCKLAB_CALL(del, Script::kReentrantRelease, "DEL", lock);
  return Reply::Int(0);
}

Reply RwReadAcquire(Store& store, int64_t now_ms, const Command& cmd, std::vector<std::string>* touched) {
  const std::string_view writer = cmd.argv[0], readers = cmd.argv[1], id = cmd.argv[2], now = cmd.argv[3],
                    expired = cmd.argv[4], ttl = cmd.argv[5];
  LOCKLAB_CALL(exists, Script::kRwReadAcquire, "EXISTS", writer);
  if (exists.integer == 1) return Reply::Int(0);
  LOCKLAB_CALL(trim, Script::kRwReadAcquire, "ZREMRANGEBYSCORE", readers, "-inf", expired);
  LOCKLAB_CALL(add, Script::kRwReadAcquire, "ZADD", readers, now, id);
  LOCKLAB_CALL(expire, Script::kRwReadAcquire, "PEXPIRE", readers, ttl);
  return Reply::Int(1);
}

Reply RwWriteAcquire(Store& store, int64_t now_ms, const Command& cmd, std::vector<std::string>* touched) {
  const std::string_view writer = cmd.argv[0], readers = cmd.argv[1], token = cmd.argv[2], expired = cmd.argv[3],
                    ttl = cmd.argv[4];
  LOCKLAB_CALL(trim, Script::kRwWriteAcquire, "ZREMRANGEBYSCORE", readers, "-inf", expired);
  LOCKLAB_CALL(card, Script::kRwWriteAcquire, "ZCARD", readers);
  if (card.integer > 0) return Reply::Int(0);
  LOCKLAB_CALL(set, Script::kRwWriteAcquire, "SET", writer, token, "NX", "PX", ttl);
  return Reply::Int(set.is_ok() ? 1 : 0);
}

#undef LOCKLAB_CALL

constexpr size_t kNumScripts = static_cast<size_t>(Script::kCount) - 1;

size_t Index(Script id) {
  const auto i = static_cast<size_t>(id);
  if (i == 0 || i > kNumScripts) throw std::out_of_range("no such script");
  return i - 1;
}

}  // namespace

const std::vector<ScriptDef>& Scripts() {
  // In enum order, so that Script value - 1 is the index (store_test checks it).
  static const std::vector<ScriptDef> scripts = {
      {Script::kCompareAndDelete, 1, 1, kCompareAndDeleteLua, &CompareAndDelete},
      {Script::kCompareAndPexpire, 1, 2, kCompareAndPexpireLua, &CompareAndPexpire},
      {Script::kSetNxPxIncrFence, 2, 2, kSetNxPxIncrFenceLua, &SetNxPxIncrFence},
      {Script::kNotifyOne, 1, 0, kNotifyOneLua, &NotifyOne},
      {Script::kFifoAcquire, 2, 2, kFifoAcquireLua, &FifoAcquire},
      {Script::kFifoRelease, 2, 2, kFifoReleaseLua, &FifoRelease},
      {Script::kFifoLeave, 2, 1, kFifoLeaveLua, &FifoLeave},
      {Script::kStockDecrement, 1, 0, kStockDecrementLua, &StockDecrement},
      {Script::kSemaphoreAcquire, 1, 5, kSemaphoreAcquireLua, &SemaphoreAcquire},
      {Script::kReentrantAcquire, 1, 2, kReentrantAcquireLua, &ReentrantAcquire},
      {Script::kReentrantRelease, 1, 2, kReentrantReleaseLua, &ReentrantRelease},
      {Script::kRwReadAcquire, 2, 4, kRwReadAcquireLua, &RwReadAcquire},
      {Script::kRwWriteAcquire, 2, 3, kRwWriteAcquireLua, &RwWriteAcquire},
  };
  return scripts;
}

const ScriptDef& GetScript(Script id) { return Scripts()[Index(id)]; }

const std::string& ScriptSha1(Script id) {
  static const std::array<std::string, kNumScripts> shas = [] {
    std::array<std::string, kNumScripts> a;
    for (size_t i = 0; i < kNumScripts; ++i) a[i] = Sha1Hex(Scripts()[i].lua);
    return a;
  }();
  return shas[Index(id)];
}

// Plain FIPS 180-1 SHA-1; only ever run on the few short script texts.
std::string Sha1Hex(std::string_view data) {
  std::array<uint32_t, 5> h = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
  std::string msg(data);
  msg += '\x80';
  while (msg.size() % 64 != 56) msg += '\0';
  const uint64_t bit_len = static_cast<uint64_t>(data.size()) * 8;
  for (int i = 7; i >= 0; --i) msg += static_cast<char>(bit_len >> (i * 8));

  for (size_t off = 0; off < msg.size(); off += 64) {
    std::array<uint32_t, 80> w;
    for (size_t i = 0; i < 16; ++i) {
      w[i] = 0;
      for (size_t b = 0; b < 4; ++b) w[i] = (w[i] << 8) | static_cast<uint8_t>(msg[off + 4 * i + b]);
    }
    for (size_t i = 16; i < 80; ++i) w[i] = std::rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (size_t i = 0; i < 80; ++i) {
      uint32_t f, k;
      if (i < 20) {
        f = (b & c) | (~b & d), k = 0x5A827999;
      } else if (i < 40) {
        f = b ^ c ^ d, k = 0x6ED9EBA1;
      } else if (i < 60) {
        f = (b & c) | (b & d) | (c & d), k = 0x8F1BBCDC;
      } else {
        f = b ^ c ^ d, k = 0xCA62C1D6;
      }
      const uint32_t t = std::rotl(a, 5) + f + e + k + w[i];
      e = d, d = c, c = std::rotl(b, 30), b = a, a = t;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
  }

  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (uint32_t word : h)
    for (int shift = 28; shift >= 0; shift -= 4) out += kHex[(word >> shift) & 0xF];
  return out;
}

}  // namespace locklab::sim
