#include "algorithms/env.h"

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
  std::string s;
  s.reserve(static_cast<size_t>(bytes) * 2);
  uint64_t r = 0;
  for (int i = 0; i < bytes; ++i) {
    if (i % 8 == 0) r = Random();
    uint8_t b = static_cast<uint8_t>(r & 0xff);
    r >>= 8;
    s.push_back(kHex[b >> 4]);
    s.push_back(kHex[b & 15]);
  }
  return s;
}

}  // namespace locklab
