// The plain-text table and its number cells (harness/report/text_table.h).
#include "harness/report/text_table.h"

#include <gtest/gtest.h>

namespace locklab {
namespace {

TEST(ShortRate, ThreeSignificantDigitsAndExponentsBelowOneThousandth) {
  EXPECT_EQ(ShortRate(0), "0");
  EXPECT_EQ(ShortRate(0.0684), "0.0684");
  EXPECT_EQ(ShortRate(0.12345), "0.123");
  EXPECT_EQ(ShortRate(1), "1");
  EXPECT_EQ(ShortRate(0.001), "0.001");        // the boundary keeps %.3g
  EXPECT_EQ(ShortRate(0.00099), "9.9e-04");    // below it, one decimal of an exponent
  EXPECT_EQ(ShortRate(1.9e-5), "1.9e-05");
  for (double x : {0.0, 0.0684, 0.00478, 1.9e-5, 0.999}) EXPECT_LE(ShortRate(x).size(), 7u) << x;
}

TEST(TextTable, RightAlignsNumbersAndPadsToTheWidestCell) {
  TextTable t({"lock", "rate"});
  t.AddRow({"token", "0.0684"});
  t.AddRow({"fifo", "1"});
  const std::string s = t.ToString();
  EXPECT_NE(s.find("token  0.0684"), std::string::npos) << s;
  EXPECT_NE(s.find("fifo        1"), std::string::npos) << s;
}

}  // namespace
}  // namespace locklab
