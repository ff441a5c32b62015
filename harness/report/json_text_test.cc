#include "harness/report/json_text.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace locklab {
namespace {

using nlohmann::ordered_json;

// Every kind of string and number a written object can hold, each written by CompactObject and
// by the library: the same bytes.
TEST(JsonText, CompactObjectHasTheBytesTheLibraryPrints) {
  const std::vector<std::string> strings = {"", "plain text", "a \"quote\" and a \\ backslash", "tab\there\n",
                                            "\x01\x1f\x7f", "caf\xc3\xa9 \xe2\x86\x92 ok", "/ { } [ ] :"};
  const std::vector<double> doubles = {0.0,   -0.0,  1.0,    22.556, -3.5,  1e-7, 1e21, 123456789.125,
                                       0.1,   1e308, -1e-308, std::numeric_limits<double>::quiet_NaN(),
                                       std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
  const std::vector<int64_t> ints = {0, -1, 42, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
  json_text::CompactObject o;
  ordered_json want = ordered_json::object();
  int k = 0;
  for (const std::string& s : strings) {
    const std::string key = "s" + std::to_string(k++);
    o.String(key.c_str(), s);
    want[key] = s;
  }
  for (double d : doubles) {
    const std::string key = "d" + std::to_string(k++);
    o.Double(key.c_str(), d);
    want[key] = d;
  }
  for (int64_t i : ints) {
    const std::string key = "i" + std::to_string(k++);
    o.Integer(key.c_str(), i);
    want[key] = i;
  }
  o.Integer("u", std::numeric_limits<uint64_t>::max());
  want["u"] = std::numeric_limits<uint64_t>::max();
  o.Integer("z", size_t{7});
  want["z"] = size_t{7};
  o.Bool("t", true);
  want["t"] = true;
  o.Bool("f", false);
  want["f"] = false;
  o.Null("n");
  want["n"] = nullptr;
  EXPECT_EQ(o.Close(), want.dump());
  EXPECT_EQ(json_text::CompactObject().Close(), ordered_json::object().dump());
}

TEST(JsonText, BadUtf8IsRefusedAsTheLibraryRefusesIt) {
  json_text::CompactObject o;
  EXPECT_THROW(o.String("k", "GET \xff"), nlohmann::json::type_error);
}

}  // namespace
}  // namespace locklab
