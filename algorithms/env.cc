#include "algorithms/env.h"

#include <algorithm>

namespace locklab {

void Env::StartSubscribe(SubscribeCall* call) {
  call->ok = false;
  StartSleep(0, call->waiter);
}

void Env::StartWaitMessage(MessageWait* wait) {
  wait->got = false;
  StartSleep(wait->timeout_us < 0 ? 0 : wait->timeout_us, wait->waiter);
}

std::string Env::RandomToken(int bytes) {
  static const char kHex[] = "0123456789abcdef";
  std::string s(static_cast<size_t>(std::max(bytes, 0)) * 2, '0');
  char* out = s.data();
  uint64_t r = 0;
  for (int i = 0; i < bytes; ++i) {
    if (i % 8 == 0) r = Random();
    const auto b = static_cast<uint8_t>(r & 0xff);
    r >>= 8;
    *out++ = kHex[b >> 4];
    *out++ = kHex[b & 15];
  }
  return s;
}

}  // namespace locklab
