// The store's counters (INCRBY, DECR, DECRBY), hashes and sorted sets, after Redis 7.0's
// t_string.c, t_hash.c and t_zset.c: the same order of checks (arguments first, then the key's
// type), the same error texts and the same replies.
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "sim/store.h"
#include "sim/store_words.h"

namespace locklab::sim {
using namespace words;  // NOLINT: the store's own helpers
namespace {

constexpr char kOverflow[] = "ERR increment or decrement would overflow";
constexpr char kNotFloat[] = "ERR value is not a valid float";
constexpr char kTooMany[] = "ERR locklab: a hash or sorted set may hold at most 1000000 members";

std::string IntText(int64_t v) {
  std::array<char, 24> buf;
  const auto end = std::to_chars(buf.data(), buf.data() + buf.size(), v).ptr;
  return std::string(buf.data(), end);
}

// object.c getDoubleFromObject: not empty, no leading space, strtod reads the whole word, no
// overflow (or underflow to 0), not NaN. "inf" and "-inf" are scores.
bool ParseScore(std::string_view w, double* out) {
  if (w.empty() || std::isspace(static_cast<unsigned char>(w[0]))) return false;
  const std::string buf(w);
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(buf.c_str(), &end);
  if (*end != '\0' || std::isnan(v) ||
      (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || std::fpclassify(v) == FP_ZERO)))
    return false;
  *out = v;
  return true;
}

// t_zset.c zslParseRange's reading of one end: "(" makes it exclusive; strtod must reach the
// end of the word (so "" reads as 0, as in Redis), and NaN is refused.
bool ParseRangeEnd(std::string_view w, double* v, bool* exclusive) {
  *exclusive = !w.empty() && w[0] == '(';
  if (*exclusive) w.remove_prefix(1);
  const std::string buf(w);
  char* end = nullptr;
  *v = std::strtod(buf.c_str(), &end);
  return *end == '\0' && !std::isnan(*v);
}

// networking.c addReplyDouble (7.0): "%.17g", and inf / -inf.
Reply ScoreReply(double d) {
  if (std::isinf(d)) return Reply::Str(d > 0 ? "inf" : "-inf");
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  return Reply::Str(buf);
}

void ZsetPut(Entry& e, const std::string& member, double score) {
  auto it = e.zscore.find(member);
  if (it != e.zscore.end()) {
    e.zorder.erase({it->second, member});
    it->second = score;
  } else {
    e.zscore.emplace(member, score);
  }
  e.zorder.emplace(score, member);
}

}  // namespace

Entry* Store::Of(std::string_view key, Entry::Kind k, int64_t now_ms, bool create, bool* wrong_type) {
  *wrong_type = false;
  if (Entry* e = Live(key, now_ms)) {
    if (e->kind == k) return e;
    *wrong_type = true;
    return nullptr;
  }
  if (!create) return nullptr;
  Entry& e = map_.emplace(std::string(key), Entry{}).first->second;
  e.kind = k;
  return &e;
}

void Store::DropIfEmpty(std::string_view key, const Entry& e) {
  if ((e.is_hash() && e.hash.empty()) || (e.is_zset() && e.zscore.empty())) map_.erase(map_.find(key));
}

// INCRBY key n, DECR key, DECRBY key n (sign -1): the amount first, then the key; the TTL stays.
Reply Store::IncrBy(Argv argv, int64_t sign, int64_t now_ms, Touched touched) {
  int64_t amount = 1;
  if (argv.size() == 3 && !ParseInt(argv[2], &amount)) return Reply::Error(kNotInteger);
  if (sign < 0 && argv.size() == 3 && amount == kMinInt) return Reply::Error("ERR decrement would overflow");
  const int64_t delta = sign * amount;
  Entry* e = Live(argv[1], now_ms);
  if (e && !e->is_string()) return Reply::Error(kWrongType);
  int64_t v = 0;
  if (e && !ParseInt(e->value, &v)) return Reply::Error(kNotInteger);
  if (__builtin_add_overflow(v, delta, &v)) return Reply::Error(kOverflow);
  if (e) {
    e->value = IntText(v);
  } else {
    map_.emplace(std::string(argv[1]), Entry{IntText(v), -1});
  }
  Touch(touched, argv[1]);
  return Reply::Int(v);
}

// HSET key field value [field value ...] -> fields created.
Reply Store::Hset(Argv argv, int64_t now_ms, Touched touched) {
  if (argv.size() % 2 == 1) return ArityError("hset");
  bool wrong = false;
  Entry* e = Of(argv[1], Entry::Kind::kHash, now_ms, /*create=*/true, &wrong);
  if (wrong) return Reply::Error(kWrongType);
  int64_t created = 0;
  for (size_t i = 2; i + 1 < argv.size(); i += 2) {
    auto it = e->hash.find(argv[i]);
    if (it != e->hash.end()) {
      it->second.assign(argv[i + 1]);
      continue;
    }
    if (e->hash.size() >= kMaxMembers) return Reply::Error(kTooMany);
    e->hash.emplace(std::string(argv[i]), std::string(argv[i + 1]));
    ++created;
  }
  Touch(touched, argv[1]);
  return Reply::Int(created);
}

Reply Store::Hget(Argv argv, int64_t now_ms) {
  bool wrong = false;
  const Entry* e = Of(argv[1], Entry::Kind::kHash, now_ms, false, &wrong);
  if (wrong) return Reply::Error(kWrongType);
  if (e == nullptr) return Reply::Nil();
  auto it = e->hash.find(argv[2]);
  return it == e->hash.end() ? Reply::Nil() : Reply::Str(it->second);
}

Reply Store::Hdel(Argv argv, int64_t now_ms, Touched touched) {
  bool wrong = false;
  Entry* e = Of(argv[1], Entry::Kind::kHash, now_ms, false, &wrong);
  if (wrong) return Reply::Error(kWrongType);
  if (e == nullptr) return Reply::Int(0);
  int64_t removed = 0;
  for (size_t i = 2; i < argv.size() && !e->hash.empty(); ++i) {
    auto it = e->hash.find(argv[i]);
    if (it == e->hash.end()) continue;
    e->hash.erase(it);
    ++removed;
  }
  if (removed > 0) Touch(touched, argv[1]);
  DropIfEmpty(argv[1], *e);
  return Reply::Int(removed);
}

Reply Store::Hexists(Argv argv, int64_t now_ms) {
  bool wrong = false;
  const Entry* e = Of(argv[1], Entry::Kind::kHash, now_ms, false, &wrong);
  if (wrong) return Reply::Error(kWrongType);
  return Reply::Int(e != nullptr && e->hash.count(argv[2]) > 0 ? 1 : 0);
}

// HINCRBY key field n: the amount first; a missing key is created (even when the field's value
// then turns out not to be an integer: it cannot, a missing key has no fields).
Reply Store::Hincrby(Argv argv, int64_t now_ms, Touched touched) {
  int64_t amount = 0;
  if (!ParseInt(argv[3], &amount)) return Reply::Error(kNotInteger);
  bool wrong = false;
  Entry* e = Of(argv[1], Entry::Kind::kHash, now_ms, /*create=*/true, &wrong);
  if (wrong) return Reply::Error(kWrongType);
  auto it = e->hash.find(argv[2]);
  int64_t v = 0;
  if (it != e->hash.end() && !ParseInt(it->second, &v)) return Reply::Error("ERR hash value is not an integer");
  if (__builtin_add_overflow(v, amount, &v)) {
    DropIfEmpty(argv[1], *e);
    return Reply::Error(kOverflow);
  }
  if (it != e->hash.end()) {
    it->second = IntText(v);
  } else {
    e->hash.emplace(std::string(argv[2]), IntText(v));
  }
  Touch(touched, argv[1]);
  return Reply::Int(v);
}

Reply Store::Hlen(Argv argv, int64_t now_ms) {
  bool wrong = false;
  const Entry* e = Of(argv[1], Entry::Kind::kHash, now_ms, false, &wrong);
  if (wrong) return Reply::Error(kWrongType);
  return Reply::Int(e == nullptr ? 0 : static_cast<int64_t>(e->hash.size()));
}

// ZADD key [NX|XX] [GT|LT] [CH] score member [score member ...], after zaddGenericCommand:
// options, then the pairs' count, the options' conflicts, every score, then the key.
Reply Store::Zadd(Argv argv, int64_t now_ms, Touched touched) {
  bool nx = false, xx = false, gt = false, lt = false, ch = false, incr = false;
  size_t i = 2;
  for (; i < argv.size(); ++i) {
    const std::string_view w = argv[i];
    if (EqNoCase(w, "nx")) nx = true;
    else if (EqNoCase(w, "xx")) xx = true;
    else if (EqNoCase(w, "gt")) gt = true;
    else if (EqNoCase(w, "lt")) lt = true;
    else if (EqNoCase(w, "ch")) ch = true;
    else if (EqNoCase(w, "incr")) incr = true;
    else break;
  }
  const size_t words = argv.size() - i;
  if (words == 0 || words % 2 != 0) return Reply::Error(kSyntaxError);
  if (nx && xx) return Reply::Error("ERR XX and NX options at the same time are not compatible");
  if ((gt && nx) || (lt && nx) || (gt && lt))
    return Reply::Error("ERR GT, LT, and/or NX options at the same time are not compatible");
  if (incr) return Reply::Error("ERR locklab: ZADD INCR is not simulated");
  std::vector<double> scores;
  for (size_t j = i; j < argv.size(); j += 2) {
    double s = 0;
    if (!ParseScore(argv[j], &s)) return Reply::Error(kNotFloat);
    scores.push_back(s);
  }
  bool wrong = false;
  Entry* e = Of(argv[1], Entry::Kind::kZset, now_ms, /*create=*/!xx, &wrong);
  if (wrong) return Reply::Error(kWrongType);
  if (e == nullptr) return Reply::Int(0);  // XX on a missing key
  int64_t added = 0, changed = 0;
  for (size_t k = 0; k < scores.size(); ++k) {
    const std::string member(argv[i + 2 * k + 1]);
    auto it = e->zscore.find(member);
    if (it == e->zscore.end()) {
      if (xx) continue;
      if (e->zscore.size() >= kMaxMembers) return Reply::Error(kTooMany);
      ZsetPut(*e, member, scores[k]);
      ++added;
      continue;
    }
    const double old = it->second;
    if (nx || (gt && scores[k] <= old) || (lt && scores[k] >= old) || old == scores[k]) continue;
    ZsetPut(*e, member, scores[k]);
    ++changed;
  }
  if (added + changed > 0) Touch(touched, argv[1]);
  return Reply::Int(ch ? added + changed : added);
}

Reply Store::Zcard(Argv argv, int64_t now_ms) {
  bool wrong = false;
  const Entry* e = Of(argv[1], Entry::Kind::kZset, now_ms, false, &wrong);
  if (wrong) return Reply::Error(kWrongType);
  return Reply::Int(e == nullptr ? 0 : static_cast<int64_t>(e->zscore.size()));
}

Reply Store::Zscore(Argv argv, int64_t now_ms) {
  bool wrong = false;
  const Entry* e = Of(argv[1], Entry::Kind::kZset, now_ms, false, &wrong);
  if (wrong) return Reply::Error(kWrongType);
  if (e == nullptr) return Reply::Nil();
  auto it = e->zscore.find(argv[2]);
  return it == e->zscore.end() ? Reply::Nil() : ScoreReply(it->second);
}

Reply Store::Zrem(Argv argv, int64_t now_ms, Touched touched) {
  bool wrong = false;
  Entry* e = Of(argv[1], Entry::Kind::kZset, now_ms, false, &wrong);
  if (wrong) return Reply::Error(kWrongType);
  if (e == nullptr) return Reply::Int(0);
  int64_t removed = 0;
  for (size_t i = 2; i < argv.size() && !e->zscore.empty(); ++i) {
    auto it = e->zscore.find(argv[i]);
    if (it == e->zscore.end()) continue;
    e->zorder.erase({it->second, it->first});
    e->zscore.erase(it);
    ++removed;
  }
  if (removed > 0) Touch(touched, argv[1]);
  DropIfEmpty(argv[1], *e);
  return Reply::Int(removed);
}

// ZREMRANGEBYSCORE key min max: the range first ("(" = exclusive, -inf/+inf), then the key.
Reply Store::Zremrangebyscore(Argv argv, int64_t now_ms, Touched touched) {
  double min = 0, max = 0;
  bool min_ex = false, max_ex = false;
  if (!ParseRangeEnd(argv[2], &min, &min_ex) || !ParseRangeEnd(argv[3], &max, &max_ex))
    return Reply::Error("ERR min or max is not a float");
  bool wrong = false;
  Entry* e = Of(argv[1], Entry::Kind::kZset, now_ms, false, &wrong);
  if (wrong) return Reply::Error(kWrongType);
  if (e == nullptr) return Reply::Int(0);
  int64_t removed = 0;
  for (auto it = e->zorder.begin(); it != e->zorder.end();) {
    const double s = it->first;
    if (s > max || (max_ex && s == max)) break;
    if (s < min || (min_ex && s == min)) {
      ++it;
      continue;
    }
    e->zscore.erase(it->second);
    it = e->zorder.erase(it);
    ++removed;
  }
  if (removed > 0) Touch(touched, argv[1]);
  DropIfEmpty(argv[1], *e);
  return Reply::Int(removed);
}

}  // namespace locklab::sim
