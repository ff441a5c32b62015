// Env::RandomToken: a token's text is its Random() words' bytes in hex, lowest byte first, one
// word per 8 bytes; every algorithm's tokens (and so every report that shows one) depend on it.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/env.h"

namespace locklab {
namespace {

// An Env whose Random() returns the given words in turn; nothing else is used.
class WordsEnv : public Env {
 public:
  explicit WordsEnv(std::vector<uint64_t> words) : words_(std::move(words)) {}
  void StartCall(PendingCall*) override {}
  void StartSleep(int64_t, std::coroutine_handle<>) override {}
  int node_count() const override { return 1; }
  int client_id() const override { return 0; }
  int64_t MonotonicUs() override { return 0; }
  int64_t WallUs() override { return 0; }
  uint64_t Random() override { return words_.at(next_++); }
  void Spawn(Task<void>) override {}
  size_t used() const { return next_; }

 private:
  std::vector<uint64_t> words_;
  size_t next_ = 0;
};

TEST(RandomToken, IsEachWordsBytesInHexLowestFirst) {
  WordsEnv env({0x0123456789abcdefULL, 0xfedcba9876543210ULL});
  EXPECT_EQ(env.RandomToken(), "efcdab8967452301" "1032547698badcfe");
  EXPECT_EQ(env.used(), 2u);
}

TEST(RandomToken, APartWordTakesAWholeWordAndUsesItsLowBytes) {
  WordsEnv env({0x1111111111111111ULL, 0x00000000a0b0c0d0ULL});
  EXPECT_EQ(env.RandomToken(11), "1111111111111111" "d0c0b0");
  EXPECT_EQ(env.used(), 2u);
  WordsEnv none({});
  EXPECT_EQ(none.RandomToken(0), "");
  EXPECT_EQ(none.RandomToken(-3), "");
  EXPECT_EQ(none.used(), 0u);
}

}  // namespace
}  // namespace locklab
