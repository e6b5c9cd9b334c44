#include "common/units.hpp"

#include <gtest/gtest.h>

namespace kcache {
namespace {

TEST(Units, ParsesSizesWithBinarySuffixes) {
  EXPECT_EQ(*parse_size("4096"), 4096u);
  EXPECT_EQ(*parse_size("10G"), 10ull << 30);
  EXPECT_EQ(*parse_size("512M"), 512ull << 20);
  EXPECT_EQ(*parse_size("1k"), 1024u);
  EXPECT_EQ(*parse_size("2GiB"), 2ull << 30);
  EXPECT_EQ(*parse_size("3 TB"), 3ull << 40);
}

TEST(Units, RejectsBadSizesQuotingThem) {
  for (const char* bad : {"", "G", "10X", "-1G", "ten"}) {
    auto r = parse_size(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().message.find(std::string("'") + bad + "'"), std::string::npos);
  }
  EXPECT_FALSE(parse_size("99999999999999999999").ok());
  EXPECT_FALSE(parse_size("20000000000T").ok());  // overflows 64 bits
}

TEST(Units, ParsesDurations) {
  using std::chrono::milliseconds;
  EXPECT_EQ(*parse_duration("30d"), milliseconds(30ll * 86'400'000));
  EXPECT_EQ(*parse_duration("12h"), milliseconds(12ll * 3'600'000));
  EXPECT_EQ(*parse_duration("500ms"), milliseconds(500));
  EXPECT_EQ(*parse_duration("90"), milliseconds(90'000));
  EXPECT_EQ(*parse_duration("2m"), milliseconds(120'000));
  EXPECT_FALSE(parse_duration("2 fortnights").ok());
  EXPECT_FALSE(parse_duration("").ok());
}

TEST(Units, FormatsSizesForHumans) {
  EXPECT_EQ(format_size(512), "512 B");
  EXPECT_EQ(format_size(1536), "1.5 KiB");
  EXPECT_EQ(format_size(10ull << 30), "10.0 GiB");
}

}  // namespace
}  // namespace kcache

namespace kcache {
namespace {

TEST(FormatDuration, UsesTheLargestExactUnitAndReadsBack) {
  using std::chrono::milliseconds;
  EXPECT_EQ(format_duration(milliseconds(900'000)), "15m");
  EXPECT_EQ(format_duration(milliseconds(10'000)), "10s");
  EXPECT_EQ(format_duration(milliseconds(1'500)), "1500ms");
  EXPECT_EQ(format_duration(milliseconds(86'400'000)), "1d");
  EXPECT_EQ(format_duration(milliseconds(0)), "0ms");
  for (const auto ms : {1, 999, 61'000, 3'600'000, 604'800'000 * 2})
    EXPECT_EQ(*parse_duration(format_duration(milliseconds(ms))), milliseconds(ms));
}

TEST(FormatMode, WritesFourOctalDigitsAsChmodTakesThem) {
  EXPECT_EQ(format_mode(0660), "0660");
  EXPECT_EQ(format_mode(0711), "0711");
  EXPECT_EQ(format_mode(0), "0000");
  EXPECT_EQ(format_mode(04755), "4755");
  EXPECT_EQ(format_mode(0140660), "0660");  // the file type bits of st_mode are not shown
}

}  // namespace
}  // namespace kcache
