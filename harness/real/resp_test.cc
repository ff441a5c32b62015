// RESP encoding: the bytes match hiredis's own formatter for random words (binary ones included).
#include "harness/real/resp.h"

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <random>
#include <string>
#include <vector>

namespace locklab {
namespace {

std::string Hiredis(const std::vector<std::string>& words) {
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  for (const auto& w : words) {
    argv.push_back(w.data());
    lens.push_back(w.size());
  }
  char* out = nullptr;
  const int n = redisFormatCommandArgv(&out, static_cast<int>(words.size()), argv.data(), lens.data());
  EXPECT_GT(n, 0);
  std::string s(out, static_cast<size_t>(n));
  redisFreeCommand(out);
  return s;
}

std::string Ours(const std::vector<std::string>& words, std::string buf = {}) {
  buf.clear();
  AppendRespArrayHeader(&buf, words.size());
  for (const auto& w : words) AppendRespWord(&buf, w);
  return buf;
}

TEST(Resp, AKnownCommand) {
  EXPECT_EQ(Ours({"SET", "k", "v", "NX", "PX", "1000"}),
            "*6\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n$2\r\nNX\r\n$2\r\nPX\r\n$4\r\n1000\r\n");
  EXPECT_EQ(Ours({"PING", ""}), "*2\r\n$4\r\nPING\r\n$0\r\n\r\n");
}

TEST(Resp, SameBytesAsHiredisForRandomWords) {
  std::mt19937_64 rng(7);
  std::string reused = "left over from an earlier command";
  for (int round = 0; round < 2000; ++round) {
    std::vector<std::string> words(1 + rng() % 12);
    for (auto& w : words) {
      const size_t len = rng() % 4 == 0 ? rng() % 3000 : rng() % 40;  // now and then a long one
      for (size_t i = 0; i < len; ++i) w.push_back(static_cast<char>(rng() % 256));  // NUL, \r, \n too
    }
    reused = Ours(words, std::move(reused));
    ASSERT_EQ(reused, Hiredis(words)) << "round " << round;
  }
}

}  // namespace
}  // namespace locklab
