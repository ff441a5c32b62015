// How the store reads a command's integers (words::ParseInt), against a reference written the
// slow way: Redis's string2ll accepts exactly the canonical decimal form of an int64_t, so a
// word is an integer when std::from_chars reads all of it and printing the value gives the word
// back (no '+', no spaces, no leading zeros, no "-0", no overflow).
#include "sim/store_words.h"

#include <gtest/gtest.h>

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/rng.h"

namespace locklab::sim {
namespace {

bool ReferenceParse(std::string_view s, int64_t* out) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || std::to_string(v) != s) return false;
  *out = v;
  return true;
}

void ExpectAsReference(const std::string& s) {
  int64_t want = 0, got = 0;
  const bool ok = ReferenceParse(s, &want);
  ASSERT_EQ(words::ParseInt(s, &got), ok) << "'" << s << "'";
  if (ok) EXPECT_EQ(got, want) << "'" << s << "'";
}

TEST(StoreWords, ParseIntReadsWhatRedisReadsAtTheLimits) {
  const std::vector<std::string> words = {
      "", "-", "0", "-0", "00", "01", "-01", "+1", " 1", "1 ", "1.5", "1e3", "7", "-7", "3000",
      "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
      "999999999999999999", "9999999999999999999", "-9999999999999999999",          // 18 and 19 digits
      "18446744073709551615", "18446744073709551616", "99999999999999999999",      // 20 digits
      "-18446744073709551616", "100000000000000000000", "-100000000000000000000",  // 21 characters
  };
  for (const std::string& s : words) ExpectAsReference(s);
  int64_t v = 0;
  ASSERT_TRUE(words::ParseInt("-9223372036854775808", &v));
  EXPECT_EQ(v, words::kMinInt);
}

// Random words of digits, signs and other bytes, 0 to 22 characters long, and every power of ten
// from 1 to 10^20 with the numbers either side of it, each signed and not: the same answer and
// value as the reference.
TEST(StoreWords, ParseIntAgreesWithTheReferenceOnRandomWords) {
  const std::string alphabet = "0123456789999999-+ ax";
  Rng rng(20261207);
  for (int i = 0; i < 200000; ++i) {
    std::string s(static_cast<size_t>(rng.Next() % 23), '0');
    for (char& c : s) c = alphabet[rng.Next() % alphabet.size()];
    if (rng.Next() % 4 == 0 && !s.empty()) s[0] = '-';
    ExpectAsReference(s);
  }
  std::string power = "1";
  for (int digits = 1; digits <= 21; ++digits, power += '0') {
    std::string above = power;  // 10^k + 1 (2 for k = 0)
    above.back() = power.size() == 1 ? '2' : '1';
    const std::string below(static_cast<size_t>(digits - 1), '9');  // 10^k - 1 ("" for k = 0)
    for (const std::string& s : {power, above, below}) {
      ExpectAsReference(s);
      ExpectAsReference("-" + s);
    }
  }
}

}  // namespace
}  // namespace locklab::sim
