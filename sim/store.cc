#include "sim/store.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "sim/scripts.h"
#include "sim/store_words.h"

namespace locklab::sim {
using namespace words;  // NOLINT: the store's own helpers
namespace {

Reply InvalidExpire(std::string_view command_lower) {
  return Reply::Error("ERR invalid expire time in '" + std::string(command_lower) + "' command");
}

// server.c processCommand's text: the name (128 bytes at most), then the arguments quoted
// until 128 bytes of them are shown, with CR and LF blanked so the reply stays one line.
Reply UnknownCommand(std::span<const std::string_view> argv) {
  std::string args;
  for (size_t i = 1; i < argv.size() && args.size() < 128; ++i) {
    const size_t room = 128 - args.size();
    args += '\'';
    args.append(argv[i].substr(0, room));
    args += "' ";
  }
  const std::string_view name = argv.empty() ? std::string_view() : argv[0].substr(0, 128);
  std::string msg = "ERR unknown command '" + std::string(name) + "', with args beginning with: " + args;
  std::replace_if(msg.begin(), msg.end(), [](char c) { return c == '\r' || c == '\n'; }, ' ');
  return Reply::Error(std::move(msg));
}

// A script's integer reply has been a Lua number (a double): redis.call() hands Lua its integers
// as doubles, and Redis casts a returned number back with (long long)lua_tonumber(). So beyond
// 2^53 it comes back rounded to a double, and from 2^63 up as INT64_MIN (x86-64's conversion).
// redis-server 7.0.15: a fence INCRed to 9223372036854775807 in a script is returned as
// -9223372036854775808, one INCRed to 9007199254740993 as 9007199254740992.
int64_t ThroughLuaNumber(int64_t v) {
  const auto d = static_cast<double>(v);
  return d >= 9223372036854775808.0 ? kMinInt : static_cast<int64_t>(d);
}


// Redis (db.c keyIsExpired) drops a key only when now > when: a key is still there at its exact
// expiry millisecond and gone one millisecond later. (Contrast EXPIRE, which deletes at once
// when the new deadline is <= now: see Store::Expire.)
bool Expired(const Entry& e, int64_t now_ms) { return e.expire_at_ms != -1 && now_ms > e.expire_at_ms; }

enum class Cmd {
  kGet, kSet, kDel, kTtl, kIncr, kPing, kPttl, kSetnx, kGetset, kExists, kExpire, kPexpire, kFlushall,
  kLpush, kRpush, kLpop, kLlen, kLtrim, kLrange, kBlpop, kPublish, kLrem,
  kIncrby, kDecr, kDecrby, kHset, kHget, kHdel, kHexists, kHincrby, kHlen,
  kZadd, kZcard, kZscore, kZrem, kZremrangebyscore, kWait,
};

struct CommandInfo {
  Cmd cmd;
  std::string_view name;  // lower case, as Redis names it in errors
  int arity;              // Redis's convention: n = exactly n words, -n = at least n
};

// Sorted by name length (checked below).
constexpr CommandInfo kCommands[] = {
    {Cmd::kSet, "set", -3},       {Cmd::kGet, "get", 2},         {Cmd::kDel, "del", -2},
    {Cmd::kTtl, "ttl", 2},        {Cmd::kIncr, "incr", 2},       {Cmd::kPing, "ping", -1},
    {Cmd::kPttl, "pttl", 2},      {Cmd::kLpop, "lpop", -2},      {Cmd::kLlen, "llen", 2},
    {Cmd::kLrem, "lrem", 4},      {Cmd::kDecr, "decr", 2},       {Cmd::kHset, "hset", -4},
    {Cmd::kHget, "hget", 3},      {Cmd::kHdel, "hdel", -3},      {Cmd::kHlen, "hlen", 2},
    {Cmd::kZadd, "zadd", -4},     {Cmd::kZrem, "zrem", -3},      {Cmd::kWait, "wait", 3},
    {Cmd::kSetnx, "setnx", 3},    {Cmd::kLpush, "lpush", -3},    {Cmd::kRpush, "rpush", -3},
    {Cmd::kLtrim, "ltrim", 4},    {Cmd::kBlpop, "blpop", -3},    {Cmd::kZcard, "zcard", 2},
    {Cmd::kGetset, "getset", 3},  {Cmd::kExists, "exists", -2},  {Cmd::kExpire, "expire", -3},
    {Cmd::kLrange, "lrange", 4},  {Cmd::kIncrby, "incrby", 3},   {Cmd::kDecrby, "decrby", 3},
    {Cmd::kZscore, "zscore", 3},
    {Cmd::kPexpire, "pexpire", -3}, {Cmd::kPublish, "publish", 3}, {Cmd::kHexists, "hexists", 3},
    {Cmd::kHincrby, "hincrby", 4},
    {Cmd::kFlushall, "flushall", -1},
    {Cmd::kZremrangebyscore, "zremrangebyscore", 4},
};

constexpr size_t kMaxNameSize = 16;  // "zremrangebyscore"

// Where the names of each length sit in kCommands (which is sorted by name length), so that a
// name is compared only with the names of its length, without allocating.
struct Run {
  uint8_t first = 0, last = 0;
};
constexpr std::array<Run, kMaxNameSize + 1> kRunsBySize = [] {
  std::array<Run, kMaxNameSize + 1> runs{};
  for (uint8_t i = 0; i < std::size(kCommands); ++i) {
    Run& r = runs[kCommands[i].name.size()];
    if (r.last == 0) r.first = i;
    r.last = static_cast<uint8_t>(i + 1);
  }
  return runs;
}();
static_assert([] {
  for (size_t i = 1; i < std::size(kCommands); ++i)
    if (kCommands[i - 1].name.size() > kCommands[i].name.size()) return false;
  return true;
}(), "kCommands must be sorted by name length");

const CommandInfo* Lookup(std::string_view name) {
  if (name.size() > kMaxNameSize) return nullptr;
  const Run r = kRunsBySize[name.size()];
  for (size_t i = r.first; i < r.last; ++i)
    if (EqNoCase(name, kCommands[i].name)) return &kCommands[i];
  return nullptr;
}

}  // namespace

Entry* Store::Live(std::string_view key, int64_t now_ms) {
  auto it = map_.find(key);
  if (it == map_.end()) return nullptr;
  if (Expired(it->second, now_ms)) {  // lazy expiry, as Redis does on access
    map_.erase(it);
    return nullptr;
  }
  return &it->second;
}

const Entry* Store::Find(std::string_view key, int64_t now_ms) { return Live(key, now_ms); }

bool Store::Erase(const std::string& key, int64_t now_ms) {
  auto it = map_.find(key);
  if (it == map_.end()) return false;
  const bool live = !Expired(it->second, now_ms);
  map_.erase(it);
  return live;
}

void Store::Apply(const std::string& key, const std::optional<Entry>& e) {
  if (e) {
    map_.insert_or_assign(key, *e);
    if (e->expire_at_ms != -1) NoteTtl(key);
  } else {
    map_.erase(key);
  }
}

// Raw state, expired or not: the replica judges expiry by its own clock, like the master did.
std::optional<Entry> Store::Snapshot(const std::string& key) const {
  auto it = map_.find(key);
  if (it == map_.end()) return std::nullopt;
  return it->second;
}

bool Store::IsLiveRaw(const std::string& key, int64_t now_ms) const {
  auto it = map_.find(key);
  return it != map_.end() && !Expired(it->second, now_ms);
}

Reply Store::Execute(const Command& cmd, int64_t now_ms, std::vector<std::string>* touched, BlockRequest* block) {
  if (cmd.script != Script::kNone) {
    const ScriptDef& def = GetScript(cmd.script);
    const size_t argc = cmd.argv.size();
    // EVALSHA's own checks, then ours: a call whose shape differs from the script's is a caller
    // bug (Lua would quietly read nil for a missing ARGV), so say so loudly.
    if (cmd.num_keys < 0) return Reply::Error("ERR Number of keys can't be negative");
    if (static_cast<size_t>(cmd.num_keys) > argc)
      return Reply::Error("ERR Number of keys can't be greater than number of args");
    if (cmd.num_keys != def.num_keys || argc != static_cast<size_t>(def.num_keys + def.num_args))
      return Reply::Error("ERR wrong number of keys or args for script '" +
                          std::string(ScriptName(cmd.script)) + "'");
    Reply r = def.body(*this, now_ms, cmd, touched);
    if (r.type == Reply::Type::kInteger) r.integer = ThroughLuaNumber(r.integer);
    return r;
  }
  // View the words in place; a small stack array covers the usual commands.
  constexpr size_t kInlineWords = 8;
  if (cmd.argv.size() <= kInlineWords) {
    std::array<std::string_view, kInlineWords> words;
    std::copy(cmd.argv.begin(), cmd.argv.end(), words.begin());
    return CallImpl(std::span<const std::string_view>(words.data(), cmd.argv.size()), now_ms, touched, block);
  }
  const std::vector<std::string_view> words(cmd.argv.begin(), cmd.argv.end());
  return CallImpl(words, now_ms, touched, block);
}

std::optional<Reply> Store::CheckNameAndArity(const Command& cmd) {
  if (cmd.script != Script::kNone) return std::nullopt;
  const std::vector<std::string_view> argv(cmd.argv.begin(), cmd.argv.end());
  const CommandInfo* info = argv.empty() ? nullptr : Lookup(argv[0]);
  if (info == nullptr) return UnknownCommand(argv);
  const auto argc = static_cast<int>(argv.size());
  if (info->arity > 0 ? argc != info->arity : argc < -info->arity) return ArityError(info->name);
  return std::nullopt;
}

Reply Store::Call(std::span<const std::string_view> argv, int64_t now_ms, std::vector<std::string>* touched) {
  return CallImpl(argv, now_ms, touched, nullptr);
}

Reply Store::Get(Argv argv, int64_t now_ms) {
  const Entry* e = Live(argv[1], now_ms);
  if (e && !e->is_string()) return Reply::Error(kWrongType);
  return e ? Reply::Str(e->value) : Reply::Nil();
}

Reply Store::Setnx(Argv argv, int64_t now_ms, Touched touched) {
  if (Live(argv[1], now_ms)) return Reply::Int(0);
  map_.emplace(std::string(argv[1]), Entry{std::string(argv[2]), -1});
  Touch(touched, argv[1]);
  return Reply::Int(1);
}

// Like SET without options: the old TTL goes too.
Reply Store::Getset(Argv argv, int64_t now_ms, Touched touched) {
  Entry* e = Live(argv[1], now_ms);
  if (e && !e->is_string()) return Reply::Error(kWrongType);
  Reply old = Reply::Nil();
  if (e) {
    old = Reply::Str(std::move(e->value));
    e->value.assign(argv[2]);
    e->expire_at_ms = -1;
  } else {
    map_.emplace(std::string(argv[1]), Entry{std::string(argv[2]), -1});
  }
  Touch(touched, argv[1]);
  return old;
}

Reply Store::Del(Argv argv, int64_t now_ms, Touched touched) {
  int64_t removed = 0;
  for (size_t i = 1; i < argv.size(); ++i) {
    if (Live(argv[i], now_ms) == nullptr) continue;
    map_.erase(map_.find(argv[i]));
    Touch(touched, argv[i]);
    ++removed;
  }
  return Reply::Int(removed);
}

// Counts a key named twice twice, as Redis does.
Reply Store::Exists(Argv argv, int64_t now_ms) {
  int64_t found = 0;
  for (size_t i = 1; i < argv.size(); ++i) found += Live(argv[i], now_ms) != nullptr;
  return Reply::Int(found);
}

Reply Store::Ttl(Argv argv, int64_t now_ms, bool in_ms) {
  const Entry* e = Live(argv[1], now_ms);
  if (e == nullptr) return Reply::Int(-2);
  if (e->expire_at_ms == -1) return Reply::Int(-1);
  const int64_t ttl_ms = std::max<int64_t>(0, e->expire_at_ms - now_ms);
  if (in_ms) return Reply::Int(ttl_ms);
  // Rounded to the nearest second, as Redis does with (ttl+500)/1000 (wrapping like C would
  // rather than overflowing, for a deadline near INT64_MAX).
  return Reply::Int(static_cast<int64_t>(static_cast<uint64_t>(ttl_ms) + 500) / 1000);
}

Reply Store::Ping(Argv argv) {
  if (argv.size() > 2) return ArityError("ping");
  return argv.size() == 2 ? Reply::Str(std::string(argv[1])) : Reply::Status("PONG");
}

Reply Store::Llen(Argv argv, int64_t now_ms) {
  const Entry* e = Live(argv[1], now_ms);
  if (e == nullptr) return Reply::Int(0);
  if (!e->is_list()) return Reply::Error(kWrongType);
  return Reply::Int(static_cast<int64_t>(e->list.size()));
}

// A flat switch: one command each.
Reply Store::CallImpl(std::span<const std::string_view> argv, int64_t now_ms, std::vector<std::string>* touched,
                      BlockRequest* block) {
  // Redis checks the name before the arity.
  const CommandInfo* info = argv.empty() ? nullptr : Lookup(argv[0]);
  if (info == nullptr) return UnknownCommand(argv);
  const auto argc = static_cast<int>(argv.size());
  if (info->arity > 0 ? argc != info->arity : argc < -info->arity) return ArityError(info->name);
  switch (info->cmd) {
    case Cmd::kSet: return Set(argv, now_ms, touched);
    case Cmd::kGet: return Get(argv, now_ms);
    case Cmd::kSetnx: return Setnx(argv, now_ms, touched);
    case Cmd::kGetset: return Getset(argv, now_ms, touched);
    case Cmd::kDel: return Del(argv, now_ms, touched);
    case Cmd::kExists: return Exists(argv, now_ms);
    case Cmd::kExpire: return Expire(argv, 1000, now_ms, touched);
    case Cmd::kPexpire: return Expire(argv, 1, now_ms, touched);
    case Cmd::kPttl: return Ttl(argv, now_ms, /*in_ms=*/true);
    case Cmd::kTtl: return Ttl(argv, now_ms, /*in_ms=*/false);
    case Cmd::kIncr: return Incr(argv[1], now_ms, touched);
    case Cmd::kPing: return Ping(argv);
    case Cmd::kFlushall: return Flushall(argv, touched);
    case Cmd::kLpush: return Push(argv, /*head=*/true, now_ms, touched);
    case Cmd::kRpush: return Push(argv, /*head=*/false, now_ms, touched);
    case Cmd::kLpop: return Lpop(argv, now_ms, touched);
    case Cmd::kLlen: return Llen(argv, now_ms);
    case Cmd::kLtrim: return Ltrim(argv, now_ms, touched);
    case Cmd::kLrange: return Lrange(argv, now_ms);
    case Cmd::kLrem: return Lrem(argv, now_ms, touched);
    case Cmd::kBlpop: return Blpop(argv, now_ms, touched, block);
    case Cmd::kPublish: return Reply::Int(publish_ ? publish_(argv[1], argv[2]) : 0);
    case Cmd::kIncrby: return IncrBy(argv, 1, now_ms, touched);
    case Cmd::kDecr: return IncrBy(argv, -1, now_ms, touched);
    case Cmd::kDecrby: return IncrBy(argv, -1, now_ms, touched);
    case Cmd::kHset: return Hset(argv, now_ms, touched);
    case Cmd::kHget: return Hget(argv, now_ms);
    case Cmd::kHdel: return Hdel(argv, now_ms, touched);
    case Cmd::kHexists: return Hexists(argv, now_ms);
    case Cmd::kHincrby: return Hincrby(argv, now_ms, touched);
    case Cmd::kHlen: return Hlen(argv, now_ms);
    case Cmd::kZadd: return Zadd(argv, now_ms, touched);
    case Cmd::kZcard: return Zcard(argv, now_ms);
    case Cmd::kZscore: return Zscore(argv, now_ms);
    case Cmd::kZrem: return Zrem(argv, now_ms, touched);
    case Cmd::kZremrangebyscore: return Zremrangebyscore(argv, now_ms, touched);
    case Cmd::kWait: return Wait(argv, now_ms, block);
  }
  return UnknownCommand(argv);  // not reached
}

// SET key value [NX|XX] [GET] [EX s|PX ms|EXAT s|PXAT ms|KEEPTTL], after t_string.c.
Reply Store::Set(std::span<const std::string_view> argv, int64_t now_ms, std::vector<std::string>* touched) {
  enum : unsigned { kNx = 1, kXx = 2, kGet = 4, kKeepTtl = 8, kEx = 16, kPx = 32, kExat = 64, kPxat = 128 };
  constexpr unsigned kAnyExpire = kEx | kPx | kExat | kPxat;
  auto expire_option = [](std::string_view w) -> unsigned {
    if (EqNoCase(w, "ex")) return kEx;
    if (EqNoCase(w, "px")) return kPx;
    if (EqNoCase(w, "exat")) return kExat;
    if (EqNoCase(w, "pxat")) return kPxat;
    return 0;
  };

  // An option that conflicts with one already given is a syntax error; repeating the same one
  // is accepted and the last value wins (SET k v EX 1 EX 2 is fine, EX 1 PX 2 is not).
  unsigned flags = 0;
  std::string_view expire;
  for (size_t j = 3; j < argv.size(); ++j) {
    const std::string_view opt = argv[j];
    const bool has_value = j + 1 < argv.size();
    if (EqNoCase(opt, "nx") && !(flags & kXx)) {
      flags |= kNx;
    } else if (EqNoCase(opt, "xx") && !(flags & kNx)) {
      flags |= kXx;
    } else if (EqNoCase(opt, "get")) {
      flags |= kGet;
    } else if (EqNoCase(opt, "keepttl") && !(flags & kAnyExpire)) {
      flags |= kKeepTtl;
    } else if (const unsigned f = expire_option(opt);
               f != 0 && !(flags & (kKeepTtl | (kAnyExpire & ~f))) && has_value) {
      flags |= f;
      expire = argv[++j];
    } else {
      return Reply::Error(kSyntaxError);
    }
  }

  // The expiry is checked before the key is even looked at, so a bad one fails an NX that
  // would have been refused anyway.
  int64_t expire_at_ms = -1;
  if (flags & kAnyExpire) {
    int64_t v;
    if (!ParseInt(expire, &v)) return Reply::Error(kNotInteger);
    const bool seconds = flags & (kEx | kExat);
    if (v <= 0 || (seconds && v > kMaxInt / 1000)) return InvalidExpire("set");
    if (seconds) v *= 1000;
    if ((flags & (kEx | kPx)) && __builtin_add_overflow(v, now_ms, &v)) return InvalidExpire("set");
    if (v <= 0) return InvalidExpire("set");
    expire_at_ms = v;  // EXAT/PXAT in the past is accepted: the key is simply born expired
  }

  Entry* e = Live(argv[1], now_ms);
  // GET is answered before NX/XX are judged, so a list fails even a SET that NX would refuse.
  if ((flags & kGet) && e && !e->is_string()) return Reply::Error(kWrongType);
  Reply old = (flags & kGet) && e ? Reply::Str(e->value) : Reply::Nil();
  if (((flags & kNx) && e) || ((flags & kXx) && !e)) return old;  // nil unless GET found a value
  if (e) {
    if (!e->is_string()) e->Reset(Entry::Kind::kString);  // SET replaces a key of any type
    e->value.assign(argv[2]);
    if (!(flags & kKeepTtl)) e->expire_at_ms = expire_at_ms;
  } else {
    map_.emplace(std::string(argv[1]), Entry{std::string(argv[2]), expire_at_ms});
  }
  if (expire_at_ms != -1) NoteTtl(argv[1]);
  Touch(touched, argv[1]);
  return (flags & kGet) ? old : Reply::Status("OK");
}

// EXPIRE/PEXPIRE key amount [NX|XX|GT|LT], after expire.c expireGenericCommand.
Reply Store::Expire(std::span<const std::string_view> argv, int64_t unit_ms, int64_t now_ms,
                    std::vector<std::string>* touched) {
  const std::string_view name = unit_ms == 1000 ? "expire" : "pexpire";
  bool nx = false, xx = false, gt = false, lt = false;
  for (size_t j = 3; j < argv.size(); ++j) {
    if (EqNoCase(argv[j], "nx")) {
      nx = true;
    } else if (EqNoCase(argv[j], "xx")) {
      xx = true;
    } else if (EqNoCase(argv[j], "gt")) {
      gt = true;
    } else if (EqNoCase(argv[j], "lt")) {
      lt = true;
    } else {
      return Reply::Error("ERR Unsupported option " + std::string(argv[j]));
    }
  }
  if (nx && (xx || gt || lt))
    return Reply::Error("ERR NX and XX, GT or LT options at the same time are not compatible");
  if (gt && lt) return Reply::Error("ERR GT and LT options at the same time are not compatible");

  // Negative amounts are allowed (they delete the key); only overflow is refused.
  int64_t when_ms;
  if (!ParseInt(argv[2], &when_ms)) return Reply::Error(kNotInteger);
  if (unit_ms == 1000) {
    if (when_ms > kMaxInt / 1000 || when_ms < kMinInt / 1000) return InvalidExpire(name);
    when_ms *= 1000;
  }
  if (__builtin_add_overflow(when_ms, now_ms, &when_ms)) return InvalidExpire(name);

  Entry* e = Live(argv[1], now_ms);
  if (e == nullptr) return Reply::Int(0);
  const int64_t current_ms = e->expire_at_ms;  // -1 (no TTL) counts as infinite for GT and LT
  if ((nx && current_ms != -1) || (xx && current_ms == -1) ||
      (gt && (current_ms == -1 || when_ms <= current_ms)) || (lt && current_ms != -1 && when_ms >= current_ms))
    return Reply::Int(0);

  // expire.c checkAlreadyExpired: a deadline <= now deletes the key at once (on a master; this
  // store always acts as one, replicas get state through Apply).
  if (when_ms <= now_ms) {
    map_.erase(map_.find(argv[1]));
  } else {
    e->expire_at_ms = when_ms;
    NoteTtl(argv[1]);
  }
  Touch(touched, argv[1]);
  return Reply::Int(1);
}

// INCR keeps the key's TTL; a missing key counts as 0.
Reply Store::Incr(std::string_view key, int64_t now_ms, std::vector<std::string>* touched) {
  Entry* e = Live(key, now_ms);
  if (e && !e->is_string()) return Reply::Error(kWrongType);
  int64_t v = 0;
  if (e && !ParseInt(e->value, &v)) return Reply::Error(kNotInteger);
  if (v == kMaxInt) return Reply::Error("ERR increment or decrement would overflow");
  ++v;
  std::array<char, 24> buf;
  const auto end = std::to_chars(buf.data(), buf.data() + buf.size(), v).ptr;
  if (e) {
    e->value.assign(buf.data(), end);
  } else {
    map_.emplace(std::string(key), Entry{std::string(buf.data(), end), -1});
  }
  Touch(touched, key);
  return Reply::Int(v);
}

// FLUSHALL [SYNC|ASYNC]: both mean the same to a client.
Reply Store::Flushall(std::span<const std::string_view> argv, std::vector<std::string>* touched) {
  if (argv.size() > 2 || (argv.size() == 2 && !EqNoCase(argv[1], "sync") && !EqNoCase(argv[1], "async")))
    return Reply::Error(kSyntaxError);
  if (touched != nullptr) {
    // Every key, sorted so that a run's replication order does not depend on hash order.
    const size_t first = touched->size();
    for (const auto& [key, entry] : map_) touched->push_back(key);
    std::sort(touched->begin() + static_cast<std::ptrdiff_t>(first), touched->end());
  }
  map_.clear();
  return Reply::Status("OK");
}

// LPUSH/RPUSH key element [element ...]: each element in turn at the head (LPUSH k a b c leaves
// c b a) or the tail; -> the new length. A push that creates the list makes its key ready.
Reply Store::Push(std::span<const std::string_view> argv, bool head, int64_t now_ms,
                  std::vector<std::string>* touched) {
  Entry* e = Live(argv[1], now_ms);
  if (e && !e->is_list()) return Reply::Error(kWrongType);
  const size_t n = argv.size() - 2;
  if ((e ? e->list.size() : 0) + n > kMaxListLength)
    return Reply::Error("ERR locklab: a list may hold at most " + std::to_string(kMaxListLength) + " elements");
  if (e == nullptr) {
    auto [it, inserted] = map_.emplace(std::string(argv[1]), Entry{});
    e = &it->second;
    e->kind = Entry::Kind::kList;
    if (std::find(ready_.begin(), ready_.end(), argv[1]) == ready_.end()) ready_.emplace_back(argv[1]);
  }
  for (size_t i = 2; i < argv.size(); ++i) {
    if (head) {
      e->list.emplace_front(argv[i]);
    } else {
      e->list.emplace_back(argv[i]);
    }
  }
  Touch(touched, argv[1]);
  return Reply::Int(static_cast<int64_t>(e->list.size()));
}

// LPOP key [count], after t_list.c popGenericCommand: the count is checked first; a missing
// key is nil (a null array with a count); count 0 is an empty array.
Reply Store::Lpop(std::span<const std::string_view> argv, int64_t now_ms, std::vector<std::string>* touched) {
  if (argv.size() > 3) return ArityError("lpop");
  const bool has_count = argv.size() == 3;
  int64_t count = 1;
  if (has_count && (!ParseInt(argv[2], &count) || count < 0)) return Reply::Error(kNotPositive);
  Entry* e = Live(argv[1], now_ms);
  if (e == nullptr) return Reply::Nil();
  if (!e->is_list()) return Reply::Error(kWrongType);
  if (has_count && count == 0) return Reply::Array();
  Reply out = Reply::Array();
  while (count-- > 0 && !e->list.empty()) {
    out.elements.push_back(Reply::Str(std::move(e->list.front())));
    e->list.pop_front();
  }
  if (e->list.empty()) map_.erase(map_.find(argv[1]));
  Touch(touched, argv[1]);
  if (!has_count) return std::move(out.elements.front());
  return out;
}

// BLPOP key [key ...] timeout, after t_list.c blockingPopGenericCommand: the timeout first,
// then the keys in order: a key of another type is an error, the first non-empty list is
// popped at once -> [key, element]. Nothing to pop: *block (the caller parks the call) + nil.
Reply Store::Blpop(std::span<const std::string_view> argv, int64_t now_ms, std::vector<std::string>* touched,
                   BlockRequest* block) {
  int64_t timeout_ms = 0;
  if (const char* error = ParseBlockTimeout(argv.back(), &timeout_ms)) return Reply::Error(error);
  if (timeout_ms == 0) return Reply::Error(kBlockForeverError);
  for (size_t i = 1; i + 1 < argv.size(); ++i) {
    Entry* e = Live(argv[i], now_ms);
    if (e == nullptr) continue;
    if (!e->is_list()) return Reply::Error(kWrongType);
    Reply out = Reply::Array({Reply::Str(std::string(argv[i])), Reply::Str(std::move(e->list.front()))});
    e->list.pop_front();
    if (e->list.empty()) map_.erase(map_.find(argv[i]));
    Touch(touched, argv[i]);
    return out;
  }
  if (block != nullptr) {
    block->blocked = true;
    block->timeout_ms = timeout_ms;
  }
  return Reply::Nil();
}

namespace {

// LTRIM's and LRANGE's start/stop over a list of `len` elements (t_list.c): negative counts
// from the end; false when the range is empty.
bool ListRange(int64_t start, int64_t end, int64_t len, int64_t* from, int64_t* to) {
  if (start < 0) start = len + start;
  if (end < 0) end = len + end;
  if (start < 0) start = 0;
  if (start > end || start >= len) return false;
  if (end >= len) end = len - 1;
  *from = start;
  *to = end;
  return true;
}

}  // namespace

// LTRIM key start stop: the integers first, then the key (missing: OK).
Reply Store::Ltrim(std::span<const std::string_view> argv, int64_t now_ms, std::vector<std::string>* touched) {
  int64_t start, end;
  if (!ParseInt(argv[2], &start) || !ParseInt(argv[3], &end)) return Reply::Error(kNotInteger);
  Entry* e = Live(argv[1], now_ms);
  if (e == nullptr) return Reply::Status("OK");
  if (!e->is_list()) return Reply::Error(kWrongType);
  int64_t from = 0, to = -1;
  const auto len = static_cast<int64_t>(e->list.size());
  if (ListRange(start, end, len, &from, &to)) {
    auto first = e->list.begin();
    std::advance(first, from);
    e->list.erase(e->list.begin(), first);
    auto last = e->list.begin();
    std::advance(last, to - from + 1);
    e->list.erase(last, e->list.end());
  } else {
    e->list.clear();
  }
  if (e->list.empty()) map_.erase(map_.find(argv[1]));
  Touch(touched, argv[1]);
  return Reply::Status("OK");
}

// LREM key count element (t_list.c): count > 0 removes the first `count` equal elements from
// the head, count < 0 from the tail, 0 all of them; the integer is read before the key.
Reply Store::Lrem(std::span<const std::string_view> argv, int64_t now_ms, std::vector<std::string>* touched) {
  int64_t count = 0;
  if (!ParseInt(argv[2], &count)) return Reply::Error(kNotInteger);
  Entry* e = Live(argv[1], now_ms);
  if (e == nullptr) return Reply::Int(0);
  if (!e->is_list()) return Reply::Error(kWrongType);
  const std::string_view value = argv[3];
  const uint64_t limit = count == 0 ? UINT64_MAX : static_cast<uint64_t>(count < 0 ? -(count + 1) + 1 : count);
  int64_t removed = 0;
  if (count >= 0) {
    for (auto it = e->list.begin(); it != e->list.end() && static_cast<uint64_t>(removed) < limit;) {
      if (*it == value) {
        it = e->list.erase(it);
        ++removed;
      } else {
        ++it;
      }
    }
  } else {
    for (auto it = e->list.end(); it != e->list.begin() && static_cast<uint64_t>(removed) < limit;) {
      --it;
      if (*it == value) {
        it = e->list.erase(it);
        ++removed;
      }
    }
  }
  if (e->list.empty()) map_.erase(map_.find(argv[1]));
  if (removed > 0) Touch(touched, argv[1]);
  return Reply::Int(removed);
}

// LRANGE key start stop: the integers first, then the key (missing: empty array).
Reply Store::Lrange(std::span<const std::string_view> argv, int64_t now_ms) {
  int64_t start, end;
  if (!ParseInt(argv[2], &start) || !ParseInt(argv[3], &end)) return Reply::Error(kNotInteger);
  Reply out = Reply::Array();
  const Entry* e = Live(argv[1], now_ms);
  if (e == nullptr) return out;
  if (!e->is_list()) return Reply::Error(kWrongType);
  int64_t from = 0, to = -1;
  if (!ListRange(start, end, static_cast<int64_t>(e->list.size()), &from, &to)) return out;
  auto it = e->list.begin();
  std::advance(it, from);
  for (int64_t i = from; i <= to; ++i, ++it) out.elements.push_back(Reply::Str(*it));
  return out;
}

std::optional<std::string> Store::PopHead(const std::string& key, int64_t now_ms, std::vector<std::string>* touched) {
  Entry* e = Live(key, now_ms);
  if (e == nullptr || !e->is_list()) return std::nullopt;
  std::string v = std::move(e->list.front());
  e->list.pop_front();
  if (e->list.empty()) map_.erase(map_.find(key));
  Touch(touched, key);
  return v;
}

const char* ParseBlockTimeout(std::string_view word, int64_t* ms) {
  static constexpr char kNotFloat[] = "ERR timeout is not a float or out of range";
  // util.c string2ld: at most 5 KiB, no leading space, the whole word (up to a NUL byte, as
  // C reads it), no overflow or underflow to 0, not NaN.
  constexpr size_t kMaxLongDoubleChars = 5 * 1024;
  if (word.empty() || word.size() >= kMaxLongDoubleChars) return kNotFloat;
  const std::string buf(word);  // NUL-terminated
  if (std::isspace(static_cast<unsigned char>(buf[0]))) return kNotFloat;
  errno = 0;
  char* end = nullptr;
  const long double v = std::strtold(buf.c_str(), &end);
  if (*end != '\0' || std::isnan(v) ||
      (errno == ERANGE && (v == HUGE_VALL || v == -HUGE_VALL || std::fpclassify(v) == FP_ZERO)))
    return kNotFloat;
  // tval = ceill(ftval * 1000); the conversion of a value beyond int64 gives INT64_MIN on
  // x86-64 (so +inf and 1e30 are "negative", as redis-server 7.0.15 says).
  const long double t = std::ceil(v * 1000.0L);
  const int64_t tval = (t >= -9223372036854775808.0L && t < 9223372036854775808.0L) ? static_cast<int64_t>(t) : kMinInt;
  if (tval < 0) return "ERR timeout is negative";
  *ms = tval;
  return nullptr;
}

namespace {

// replication.c waitCommand's arguments: numreplicas (a long), then the timeout in ms
// (getTimeoutFromObjectOrReply; 7.0.15 has no upper bound); the error text or nullptr.
const char* ParseWaitArgs(std::string_view replicas_word, std::string_view timeout_word, int64_t* replicas,
                          int64_t* timeout_ms) {
  if (!ParseInt(replicas_word, replicas)) return kNotInteger;
  if (!ParseInt(timeout_word, timeout_ms)) return "ERR timeout is not an integer or out of range";
  if (*timeout_ms < 0) return "ERR timeout is negative";
  return nullptr;
}

}  // namespace

Reply Store::Wait(Argv argv, int64_t now_ms, BlockRequest* block) {
  int64_t replicas = 0, timeout_ms = 0;
  if (const char* error = ParseWaitArgs(argv[1], argv[2], &replicas, &timeout_ms)) return Reply::Error(error);
  if (replicas <= 0 || block == nullptr) return Reply::Int(0);  // enough already, or inside MULTI
  // 0 blocks forever; so, in effect, does a deadline past INT64_MAX ms (Redis's overflows).
  if (timeout_ms == 0 || timeout_ms > kMaxInt - now_ms) return Reply::Error(kWaitForeverError);
  block->blocked = true;
  block->timeout_ms = timeout_ms;
  block->wait = true;
  block->replicas = replicas;
  return Reply::Int(0);
}

bool WaitTimeoutMs(const Command& cmd, int64_t* ms) {
  if (cmd.script != Script::kNone || cmd.argv.size() != 3 || !EqNoCase(cmd.argv[0], "wait")) return false;
  int64_t replicas = 0;
  return ParseWaitArgs(cmd.argv[1], cmd.argv[2], &replicas, ms) == nullptr;
}

bool BlpopTimeoutMs(const Command& cmd, int64_t* ms) {
  if (cmd.script != Script::kNone || cmd.argv.size() < 3 || !EqNoCase(cmd.argv[0], "blpop")) return false;
  return ParseBlockTimeout(cmd.argv.back(), ms) == nullptr;
}

}  // namespace locklab::sim
