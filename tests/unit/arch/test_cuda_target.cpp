// CUDA target spellings, normalization, rejection and the device's own compile target.
#include <gtest/gtest.h>

#include "arch/cuda_target.hpp"

namespace kcache {
namespace {

struct Spelling {
  const char* input;
  const char* canonical;
};

TEST(CudaTarget, AcceptsEverySpellingOfArchMdAndNormalizes) {
  const Spelling cases[] = {
      // The list in reference/arch.md.
      {"sm_90a", "sm_90a"},
      {"sm90a", "sm_90a"},
      {"9.0a", "sm_90a"},
      {"compute_90a", "sm_90a"},
      {"90a", "sm_90a"},
      {"sm_120f", "sm_120f"},
      {"12.0f", "sm_120f"},
      {"sm_80", "sm_80"},
      {"8.0", "sm_80"},
      // Case-insensitive.
      {"SM_90A", "sm_90a"},
      {"Sm_100F", "sm_100f"},
      {"COMPUTE_80", "sm_80"},
      {"12.1A", "sm_121a"},
      // Compact forms: the last digit is the minor.
      {"sm_121", "sm_121"},
      {"sm_100", "sm_100"},
      {"sm_103a", "sm_103a"},
      {"sm75", "sm_75"},
      {"110f", "sm_110f"},
      {"compute_121f", "sm_121f"},
      {"86", "sm_86"},
      // Dotted two-digit majors.
      {"10.3", "sm_103"},
      {"10.3f", "sm_103f"},
      {"11.0a", "sm_110a"},
      {"12.1", "sm_121"},
  };
  for (const Spelling& c : cases) {
    auto t = parse_cuda_target(c.input);
    ASSERT_TRUE(t.ok()) << c.input << ": " << t.error().message;
    EXPECT_EQ(t->str(), c.canonical) << c.input;
    // The canonical form is a fixed point.
    auto again = parse_cuda_target(t->str());
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, *t);
  }
}

TEST(CudaTarget, CompactFormsPutTheLastDigitInTheMinor) {
  auto t = parse_cuda_target("sm_121");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->major, 12);
  EXPECT_EQ(t->minor, 1);
  EXPECT_EQ(t->sm(), 121);
  auto h = parse_cuda_target("sm_100a");
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->major, 10);
  EXPECT_EQ(h->minor, 0);
  EXPECT_EQ(h->suffix, CudaSuffix::arch);
}

TEST(CudaTarget, RejectsMalformedSpellingsQuotingTheInput) {
  const char* bad[] = {
      "sm1200",
      "9.0b",
      "",
      "sm_",
      "sm",
      "compute_",
      "a",
      "f",
      "sm_9",
      "9",
      "sm_1200",
      "12.10",
      "1.2.3",
      "sm_9.0",
      "compute_9.0a",
      "sm_90x",
      "sm_90af",
      "sm_090",
      "09.0",
      "0.9",
      "sm_-90",
      " sm_90",
      "sm_90 ",
      "gfx90a",
      "sm_90aa",
      "9.a",
      ".0",
      "9.",
      "sm_8.0",
      // The suffixes exist only from Hopper (a) and Blackwell (f).
      "sm_86a",
      "8.9a",
      "sm_90f",
      "9.0f",
      "sm_80f",
  };
  for (const char* input : bad) {
    auto t = parse_cuda_target(input);
    ASSERT_FALSE(t.ok()) << "accepted '" << input << "' as " << t->str();
    EXPECT_EQ(t.error().code, Errc::invalid_argument) << input;
    EXPECT_NE(t.error().message.find("'" + std::string(input) + "'"), std::string::npos)
        << t.error().message;
  }
}

TEST(CudaTarget, SuffixRejectionSaysWhy) {
  auto t = parse_cuda_target("sm_86a");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("sm_90 and newer"), std::string::npos) << t.error().message;
  auto f = parse_cuda_target("sm_90f");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.error().message.find("sm_100 and newer"), std::string::npos) << f.error().message;
}

TEST(CudaCapability, ParsesDottedCapabilitiesOnly) {
  const struct {
    const char* input;
    int major, minor;
  } good[] = {{"9.0", 9, 0}, {"12.1", 12, 1}, {"8.6", 8, 6}, {"10.3", 10, 3}, {"7.5", 7, 5}};
  for (const auto& c : good) {
    auto cap = parse_cuda_capability(c.input);
    ASSERT_TRUE(cap.ok()) << c.input;
    EXPECT_EQ(cap->major, c.major);
    EXPECT_EQ(cap->minor, c.minor);
    EXPECT_EQ(cap->str(), c.input);
  }
  for (const char* input : {"90", "sm_90", "9.0a", "9", "", "12.10", "x.y", "9.0.1"}) {
    auto cap = parse_cuda_capability(input);
    EXPECT_FALSE(cap.ok()) << input;
    if (!cap.ok()) {
      EXPECT_NE(cap.error().message.find(input), std::string::npos);
    }
  }
}

TEST(CudaTarget, DeviceOwnTargetFollowsArchMd) {
  const struct {
    CudaCapability device;
    const char* target;
  } cases[] = {
      {{9, 0}, "sm_90a"},   {{10, 0}, "sm_100a"}, {{10, 3}, "sm_103a"}, {{11, 0}, "sm_110a"},
      {{12, 0}, "sm_120f"}, {{12, 1}, "sm_121a"}, {{8, 9}, "sm_89"},    {{8, 6}, "sm_86"},
      {{8, 0}, "sm_80"},    {{7, 5}, "sm_75"},
  };
  for (const auto& c : cases)
    EXPECT_EQ(device_compile_target(c.device).str(), c.target) << c.device.str();
}

TEST(CudaTarget, OrdersByCapabilityThenSuffix) {
  EXPECT_LT(*parse_cuda_target("sm_80"), *parse_cuda_target("sm_86"));
  EXPECT_LT(*parse_cuda_target("sm_90"), *parse_cuda_target("sm_90a"));
  EXPECT_NE(*parse_cuda_target("sm_100a"), *parse_cuda_target("sm_100f"));
}

}  // namespace
}  // namespace kcache
