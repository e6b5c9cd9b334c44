// Backend dispatch of target and device spellings.
#include <gtest/gtest.h>

#include "arch/target.hpp"

namespace kcache {
namespace {

TEST(Target, ParsesEitherBackendIntoCanonicalForm) {
  const struct {
    const char* input;
    const char* canonical;
    Backend backend;
  } cases[] = {
      {"sm_90a", "sm_90a", Backend::cuda},
      {"9.0a", "sm_90a", Backend::cuda},
      {"compute_100f", "sm_100f", Backend::cuda},
      {"8.6", "sm_86", Backend::cuda},
      {"gfx942", "gfx942", Backend::hip},
      {"gfx90a:xnack-:sramecc+", "gfx90a:sramecc+:xnack-", Backend::hip},
      {"GFX1100", "gfx1100", Backend::hip},
      {"gfx11-generic", "gfx11-generic", Backend::hip},
  };
  for (const auto& c : cases) {
    auto t = parse_target(c.input);
    ASSERT_TRUE(t.ok()) << c.input << ": " << t.error().message;
    EXPECT_EQ(t->str(), c.canonical);
    EXPECT_EQ(t->backend(), c.backend);
    EXPECT_EQ((t->cuda() != nullptr), c.backend == Backend::cuda);
    EXPECT_EQ((t->amd() != nullptr), c.backend == Backend::hip);
    EXPECT_EQ(*parse_target(t->str()), *t);
  }
}

TEST(Target, RejectsGarbageQuotingIt) {
  for (const char* input :
       {"", "sm1200", "9.0b", "gfx90a:xnack", "nvidia", "gfx", "sm_90a,gfx942"}) {
    auto t = parse_target(input);
    ASSERT_FALSE(t.ok()) << input;
    EXPECT_EQ(t.error().code, Errc::invalid_argument);
    EXPECT_NE(t.error().message.find("'" + std::string(input) + "'"), std::string::npos)
        << t.error().message;
  }
}

TEST(Target, OrdersCudaBeforeAmdAndWithinABackendByValue) {
  EXPECT_LT(*parse_target("sm_90a"), *parse_target("gfx90a"));
  EXPECT_LT(*parse_target("sm_80"), *parse_target("sm_90"));
  EXPECT_LT(*parse_target("gfx90a"), *parse_target("gfx90a:xnack-"));
  EXPECT_EQ(*parse_target("9.0a"), *parse_target("sm_90a"));
}

TEST(Target, BackendNames) {
  EXPECT_EQ(backend_name(Backend::cuda), "cuda");
  EXPECT_EQ(backend_name(Backend::hip), "hip");
}

TEST(Device, AcceptsCapabilityCudaTargetOrAmdTargetId) {
  const struct {
    const char* input;
    const char* str;
    const char* own_target;
  } cases[] = {
      {"10.3", "10.3", "sm_103a"},
      {"sm_103a", "10.3", "sm_103a"},
      {"sm_103", "10.3", "sm_103a"},
      {"9.0", "9.0", "sm_90a"},
      {"sm_90", "9.0", "sm_90a"},
      {"12.0", "12.0", "sm_120f"},
      {"sm_120f", "12.0", "sm_120f"},
      {"12.1", "12.1", "sm_121a"},
      {"8.9", "8.9", "sm_89"},
      {"8.0", "8.0", "sm_80"},
      {"compute_86", "8.6", "sm_86"},
      {"90a", "9.0", "sm_90a"},
      {"gfx942:sramecc+:xnack-", "gfx942:sramecc+:xnack-", "gfx942:sramecc+:xnack-"},
      {"gfx90a", "gfx90a", "gfx90a"},
  };
  for (const auto& c : cases) {
    auto d = parse_device(c.input);
    ASSERT_TRUE(d.ok()) << c.input << ": " << d.error().message;
    EXPECT_EQ(d->str(), c.str) << c.input;
    EXPECT_EQ(d->compile_target().str(), c.own_target) << c.input;
  }
}

TEST(Device, RejectsWhatIsNeitherCapabilityNorTarget) {
  for (const char* input : {"", "9", "12.10", "sm1200", "gpu0", "gfx1030:xnack+", "9.0.0"}) {
    auto d = parse_device(input);
    ASSERT_FALSE(d.ok()) << input;
    EXPECT_EQ(d.error().code, Errc::invalid_argument);
    EXPECT_NE(d.error().message.find("'" + std::string(input) + "'"), std::string::npos)
        << d.error().message;
  }
}

}  // namespace
}  // namespace kcache
