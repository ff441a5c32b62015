#include "algorithms/env.h"

#include <algorithm>
#include <array>
#include <cstring>

namespace locklab {

void Env::StartSubscribe(SubscribeCall* call) {
  call->ok = false;
  StartSleep(0, call->waiter);
}

void Env::StartWaitMessage(MessageWait* wait) {
  wait->got = false;
  StartSleep(wait->timeout_us < 0 ? 0 : wait->timeout_us, wait->waiter);
}

namespace {

// Each byte's two lower-case hex digits, high nibble first, as one 16-bit store writes them.
struct HexPairs {
  std::array<std::array<char, 2>, 256> pair{};
  constexpr HexPairs() {
    constexpr char kHex[] = "0123456789abcdef";
    for (size_t b = 0; b < 256; ++b) pair[b] = {kHex[b >> 4], kHex[b & 15]};
  }
};
constexpr HexPairs kHexPairs;

// Byte j of r (the lowest first) as two hex digits at out + 2 * j.
inline void PutHexPair(char* out, uint64_t r, size_t j) {
  std::memcpy(out + 2 * j, kHexPairs.pair[(r >> (8 * j)) & 0xff].data(), 2);
}

// n random bytes as 2n hex digits at out: a Random() per 8 bytes, its lowest byte first. Inlined
// into both callers: RandomTokenText's constant n unrolls it.
[[gnu::always_inline]] inline void WriteRandomHex(Env& env, size_t n, char* out) {
  for (size_t i = 0; i < n; i += 8) {
    const uint64_t r = env.Random();
    if (n - i >= 8) {  // a whole word: a loop of fixed length, unrolled
      for (size_t j = 0; j < 8; ++j) PutHexPair(out, r, j);
      out += 16;
      continue;
    }
    for (size_t j = 0; j < n - i; ++j) PutHexPair(out, r, j);
  }
}

}  // namespace

std::string Env::RandomToken(int bytes) {
  const size_t n = static_cast<size_t>(std::max(bytes, 0));
  std::string s(n * 2, '0');
  WriteRandomHex(*this, n, s.data());
  return s;
}

Env::TokenText Env::RandomTokenText() {
  TokenText t;
  WriteRandomHex(*this, sizeof t.digits / 2, t.digits);
  return t;
}

}  // namespace locklab
