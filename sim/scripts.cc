#include "sim/scripts.h"

#include <array>
#include <bit>
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

// A failing redis.call() aborts the script (no rollback of what it already wrote), and Redis
// reports the command's error followed by where it happened.
Reply Raise(Reply error, Script id) {
  error.str += " script: " + ScriptSha1(id) + ", on @user_script:1.";
  return error;
}

Reply CompareAndDelete(Store& store, int64_t now_ms, const Command& cmd, std::vector<std::string>* touched) {
  const std::string& key = cmd.argv[0];
  const std::string& token = cmd.argv[1];
  const Entry* e = store.Find(key, now_ms);  // GET, without copying the value
  if (e != nullptr && e->is_list) return Raise(store.Call({"GET", key}, now_ms), Script::kCompareAndDelete);
  if (e == nullptr || e->value != token) return Reply::Int(0);
  return store.Call({"DEL", key}, now_ms, touched);
}

Reply CompareAndPexpire(Store& store, int64_t now_ms, const Command& cmd, std::vector<std::string>* touched) {
  const std::string& key = cmd.argv[0];
  const std::string& token = cmd.argv[1];
  const std::string& ttl_ms = cmd.argv[2];
  const Entry* e = store.Find(key, now_ms);
  if (e != nullptr && e->is_list) return Raise(store.Call({"GET", key}, now_ms), Script::kCompareAndPexpire);
  if (e == nullptr || e->value != token) return Reply::Int(0);
  Reply r = store.Call({"PEXPIRE", key, ttl_ms}, now_ms, touched);
  return r.is_error() ? Raise(std::move(r), Script::kCompareAndPexpire) : r;
}

Reply SetNxPxIncrFence(Store& store, int64_t now_ms, const Command& cmd, std::vector<std::string>* touched) {
  const std::string& key = cmd.argv[0];
  const std::string& fence_key = cmd.argv[1];
  const std::string& token = cmd.argv[2];
  const std::string& ttl_ms = cmd.argv[3];
  Reply set = store.Call({"SET", key, token, "NX", "PX", ttl_ms}, now_ms, touched);
  if (set.is_error()) return Raise(std::move(set), Script::kSetNxPxIncrFence);
  if (set.is_nil()) return Reply::Nil();
  Reply fence = store.Call({"INCR", fence_key}, now_ms, touched);
  return fence.is_error() ? Raise(std::move(fence), Script::kSetNxPxIncrFence) : fence;
}

Reply NotifyOne(Store& store, int64_t now_ms, const Command& cmd, std::vector<std::string>* touched) {
  const std::string& key = cmd.argv[0];
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
  const std::string &lock = cmd.argv[0], &queue = cmd.argv[1], &token = cmd.argv[2], &ttl = cmd.argv[3];
  LOCKLAB_CALL(set, Script::kFifoAcquire, "SET", lock, token, "NX", "PX", ttl);
  if (set.is_ok()) return Reply::Int(1);
  LOCKLAB_CALL(push, Script::kFifoAcquire, "RPUSH", queue, token);
  return Reply::Int(0);
}

Reply FifoRelease(Store& store, int64_t now_ms, const Command& cmd, std::vector<std::string>* touched) {
  const std::string &lock = cmd.argv[0], &queue = cmd.argv[1], &token = cmd.argv[2], &ttl = cmd.argv[3];
  LOCKLAB_CALL(current, Script::kFifoRelease, "GET", lock);
  if (!current.is_string() || current.str != token) return Reply::Int(0);
  LOCKLAB_CALL(next, Script::kFifoRelease, "LPOP", queue);
  if (next.is_string()) {
    const std::string wake = lock + ":wake:" + next.str;
    LOCKLAB_CALL(set, Script::kFifoRelease, "SET", lock, next.str, "PX", ttl);
    LOCKLAB_CALL(push, Script::kFifoRelease, "RPUSH", wake, "1");
    LOCKLAB_CALL(expire, Script::kFifoRelease, "PEXPIRE", wake, ttl);
    return Reply::Int(1);
  }
  LOCKLAB_CALL(del, Script::kFifoRelease, "DEL", lock);
  return Reply::Int(1);
}

Reply FifoLeave(Store& store, int64_t now_ms, const Command& cmd, std::vector<std::string>* touched) {
  const std::string &lock = cmd.argv[0], &queue = cmd.argv[1], &token = cmd.argv[2];
  LOCKLAB_CALL(current, Script::kFifoLeave, "GET", lock);
  if (current.is_string() && current.str == token) return Reply::Int(1);
  LOCKLAB_CALL(removed, Script::kFifoLeave, "LREM", queue, "0", token);
  return Reply::Int(0);
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
