// Private to the store's source files (store.cc, store_types.cc, transactions.cc): how Redis reads the words of
// a command (names, integers) and the error texts several commands share.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/reply.h"

namespace locklab::sim::words {

inline constexpr int64_t kMaxInt = std::numeric_limits<int64_t>::max();
inline constexpr int64_t kMinInt = std::numeric_limits<int64_t>::min();

inline constexpr char kNotInteger[] = "ERR value is not an integer or out of range";
inline constexpr char kSyntaxError[] = "ERR syntax error";
inline constexpr char kWrongType[] = "WRONGTYPE Operation against a key holding the wrong kind of value";
// LPOP's count: Redis (getPositiveLongFromObjectOrReply) gives this one text for every bad count.
inline constexpr char kNotPositive[] = "ERR value is out of range, must be positive";

// Redis matches command and option names case-insensitively. `lower` holds only lower-case
// letters (every name here does), and for those OR-ing 0x20 folds exactly their capitals.
inline bool EqNoCase(std::string_view word, std::string_view lower) {
  if (word.size() != lower.size()) return false;
  for (size_t i = 0; i < word.size(); ++i)
    if ((word[i] | 0x20) != lower[i]) return false;
  return true;
}

// Redis's string2ll (util.c), the only integer syntax Redis accepts for values and arguments:
// no sign but '-', no spaces, no leading zeros, no "-0", at most 20 characters, no overflow.
inline bool ParseInt(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() >= 21) return false;
  const size_t first = s[0] == '-' ? 1 : 0;
  if (first == s.size()) return false;
  if (s[first] == '0') {  // "0" alone: no leading zeros, no "-0"
    if (s.size() != 1) return false;
    *out = 0;
    return true;
  }
  // The first 19 digits stay below 2^64: no overflow to check per digit. Only a 20th (a word of
  // 20 digits, no sign) can take v * 10 + digit past 2^64 - 1.
  uint64_t v = 0;
  size_t i = first;
  for (const size_t unchecked_end = std::min(s.size(), first + 19); i < unchecked_end; ++i) {
    const unsigned digit = static_cast<unsigned char>(s[i]) - unsigned{'0'};
    if (digit > 9) return false;
    v = v * 10 + digit;
  }
  if (i < s.size()) {
    const unsigned digit = static_cast<unsigned char>(s[i]) - unsigned{'0'};
    if (digit > 9 || __builtin_mul_overflow(v, uint64_t{10}, &v) || __builtin_add_overflow(v, uint64_t{digit}, &v))
      return false;
  }
  if (first == 1) {
    if (v > static_cast<uint64_t>(kMaxInt) + 1) return false;
    *out = static_cast<int64_t>(0 - v);  // wraps to kMinInt for 2^63, as intended
  } else {
    if (v > static_cast<uint64_t>(kMaxInt)) return false;
    *out = static_cast<int64_t>(v);
  }
  return true;
}

inline Reply ArityError(std::string_view command_lower) {
  return Reply::Error("ERR wrong number of arguments for '" + std::string(command_lower) + "' command");
}

inline void Touch(std::vector<std::string>* touched, std::string_view key) {
  if (touched != nullptr) touched->emplace_back(key);
}

}  // namespace locklab::sim::words
