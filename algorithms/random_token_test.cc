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

// The token written a digit at a time, as the definition says.
std::string SlowToken(const std::vector<uint64_t>& words, int bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < bytes; ++i) {
    const uint64_t byte = (words[static_cast<size_t>(i / 8)] >> (8 * (i % 8))) & 0xff;
    s += kHex[byte >> 4];
    s += kHex[byte & 15];
  }
  return s;
}

TEST(RandomToken, EveryLengthAndWordGivesTheDigitAtATimeText) {
  uint64_t x = 0x9e3779b97f4a7c15ULL;
  const auto next = [&x] {  // splitmix64: words with every nibble value in every place
    uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  std::vector<std::vector<uint64_t>> cases = {{0, 0, 0}, {~uint64_t{0}, ~uint64_t{0}, ~uint64_t{0}},
                                              {0x0a0b0c0d0e0f0910ULL, 0x9999aaaa0000ffffULL, 0xa9a9a9a9a9a9a9a9ULL}};
  for (int k = 0; k < 20000; ++k) cases.push_back({next(), next(), next()});
  for (const std::vector<uint64_t>& words : cases) {
    for (int bytes = 0; bytes <= 24; ++bytes) {
      WordsEnv env(words);
      ASSERT_EQ(env.RandomToken(bytes), SlowToken(words, bytes)) << std::hex << words[0] << " " << words[1] << " "
                                                                 << words[2] << std::dec << " bytes " << bytes;
      ASSERT_EQ(env.used(), static_cast<size_t>((bytes + 7) / 8));
    }
  }
}

// The token held in place (the token, Redlock and fencing locks' acquire) is RandomToken()'s
// text from the same two draws.
TEST(RandomToken, TheTokenHeldInPlaceIsRandomTokensText) {
  uint64_t x = 0x51ed270b2a3f1c37ULL;
  for (int k = 0; k < 5000; ++k) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const std::vector<uint64_t> words = {x, x ^ (x >> 29) ^ (x << 17)};
    WordsEnv text(words), held(words);
    const std::string want = text.RandomToken();
    ASSERT_EQ(held.RandomTokenText().view(), want) << std::hex << words[0] << " " << words[1];
    ASSERT_EQ(held.used(), text.used());
  }
}

}  // namespace
}  // namespace locklab
