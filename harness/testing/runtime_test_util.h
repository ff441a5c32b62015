// Test helpers for the tests that drive a Runtime directly (simulator or real Redis): run it to
// the end under a time cap, and record what a client saw and when.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/env.h"
#include "harness/run/runtime.h"

namespace locklab {

// EXPECT_TRUE(IsOk(status)): a failure prints the status's message.
inline ::testing::AssertionResult IsOk(const Status& s) {
  if (s.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << s.message();
}

// "SET k v PX 100" -> {"SET", "k", "v", "PX", "100"}: commands typed as text in tests.
inline std::vector<std::string> Words(const std::string& s) {
  std::vector<std::string> w;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t end = s.find(' ', pos);
    if (end == std::string::npos) end = s.size();
    if (end > pos) w.push_back(s.substr(pos, end - pos));
    pos = end + 1;
  }
  return w;
}
inline Command P(const std::string& words) { return Command::Plain(Words(words)); }

// Runs to the end; a failure (or more than max_ms of true time) fails the test.
inline void MustRun(Runtime& rt, int64_t max_ms = 30'000) {
  RuntimeLimits limits;
  limits.max_duration_us = max_ms * 1000;
  ASSERT_TRUE(IsOk(rt.Run(limits)));
}

// What a client saw: replies in order and flags (e.g. WaitMessage's result), each with the
// client's monotonic time (true time when it has no drift).
struct Seen {
  std::vector<Reply> replies;
  std::vector<int64_t> at_ms;
  std::vector<bool> flags;
  std::vector<int64_t> flag_at_ms;
  void Add(Env& env, Reply r) {
    replies.push_back(std::move(r));
    at_ms.push_back(env.MonotonicMs());
  }
  void Flag(Env& env, bool b) {
    flags.push_back(b);
    flag_at_ms.push_back(env.MonotonicMs());
  }
};

}  // namespace locklab
