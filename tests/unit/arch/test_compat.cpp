// Which binary runs on which device, with its class or the reason it does not.
#include <gtest/gtest.h>

#include <optional>

#include "arch/compat.hpp"

namespace kcache {
namespace {

struct Case {
  const char* binary;
  const char* device;
  std::optional<MatchClass> match;  // nullopt: incompatible
  const char* reason_part = "";     // for incompatible pairs: a fragment the reason must hold
};

void check(const Case& c) {
  auto bin = parse_target(c.binary);
  auto dev = parse_device(c.device);
  ASSERT_TRUE(bin.ok()) << c.binary;
  ASSERT_TRUE(dev.ok()) << c.device;
  const Compatibility got = check_compatible(*bin, *dev);
  SCOPED_TRACE(std::string(c.binary) + " on " + c.device);
  if (c.match) {
    EXPECT_TRUE(got.compatible) << got.reason;
    if (got.compatible) {
      EXPECT_EQ(match_class_name(got.match), match_class_name(*c.match));
    }
    EXPECT_TRUE(got.reason.empty());
  } else {
    EXPECT_FALSE(got.compatible) << "class " << match_class_name(got.match);
    EXPECT_FALSE(got.reason.empty());
    EXPECT_NE(got.reason.find(c.reason_part), std::string::npos) << got.reason;
    // Every reason names the binary it is about.
    EXPECT_NE(got.reason.find(bin->str()), std::string::npos) << got.reason;
  }
}

TEST(Compat, CudaExamplesOfArchMd) {
  const Case cases[] = {
      {"sm_90a", "9.0", MatchClass::exact},
      {"sm_80", "8.6", MatchClass::baseline},
      {"sm_86", "8.0", std::nullopt, "8.6 or a newer minor"},
      {"sm_80", "9.0", std::nullopt, "across major"},
      {"sm_90", "9.0", MatchClass::baseline},
      {"sm_100a", "10.3", std::nullopt, "arch-specific"},
      {"sm_100f", "10.3", MatchClass::family},
      {"sm_103f", "10.0", std::nullopt, "10.3 or a newer minor"},
      {"sm_120f", "12.1", MatchClass::family},
      {"sm_120a", "12.1", std::nullopt, "runs only on 12.0"},
      // From the rules: sm_80 runs on 8.6/8.9, not 9.0; sm_100f covers 10.0 and 10.3.
      {"sm_80", "8.9", MatchClass::baseline},
      {"sm_100f", "10.0", MatchClass::family},
      {"sm_120f", "12.0", MatchClass::exact},  // 12.0's own target is sm_120f
  };
  for (const Case& c : cases) check(c);
}

TEST(Compat, CudaClassesAndEdgeCases) {
  const Case cases[] = {
      // exact = the device's own target.
      {"sm_103a", "10.3", MatchClass::exact},
      {"sm_121a", "12.1", MatchClass::exact},
      {"sm_86", "8.6", MatchClass::exact},
      {"sm_75", "7.5", MatchClass::exact},
      // arch = an `a` of the device's capability that is not its own target (12.0 → sm_120f).
      {"sm_120a", "12.0", MatchClass::arch},
      // family / baseline of the same major.
      {"sm_100f", "10.3", MatchClass::family},
      {"sm_103f", "10.3", MatchClass::family},
      {"sm_100", "10.3", MatchClass::baseline},
      {"sm_103", "10.3", MatchClass::baseline},
      {"sm_120", "12.1", MatchClass::baseline},
      {"sm_90", "9.0", MatchClass::baseline},
      {"sm_80", "8.0", MatchClass::exact},
      // Never across majors, whatever the suffix.
      {"sm_100f", "11.0", std::nullopt, "across major"},
      {"sm_110f", "12.0", std::nullopt, "across major"},
      {"sm_90a", "10.0", std::nullopt, "across major"},
      {"sm_121f", "12.0", std::nullopt, "12.1 or a newer minor"},
      {"sm_90", "8.9", std::nullopt, "across major"},
      // a vs f on the same capability mismatch.
      {"sm_103a", "10.0", std::nullopt, "runs only on 10.3"},
      {"sm_121a", "12.0", std::nullopt, "runs only on 12.1"},
  };
  for (const Case& c : cases) check(c);
}

TEST(Compat, AmdFeaturesAnyOnOff) {
  const Case cases[] = {
      // The preference example's three binaries all run on a fully specified device.
      {"gfx90a:sramecc+:xnack-", "gfx90a:sramecc+:xnack-", MatchClass::exact},
      {"gfx90a:xnack-", "gfx90a:sramecc+:xnack-", MatchClass::any_feature},
      {"gfx90a", "gfx90a:sramecc+:xnack-", MatchClass::any_feature},
      {"gfx90a:sramecc+", "gfx90a:sramecc+:xnack-", MatchClass::any_feature},
      // + / - must equal the device's setting.
      {"gfx90a:xnack+", "gfx90a:sramecc+:xnack-", std::nullopt, "needs xnack on"},
      {"gfx90a:sramecc-", "gfx90a:sramecc+:xnack-", std::nullopt, "has it on"},
      {"gfx942:xnack-", "gfx942:sramecc+:xnack+", std::nullopt, "needs xnack off"},
      // A device whose setting is unknown matches only `any`.
      {"gfx90a:xnack-", "gfx90a", std::nullopt, "does not state its xnack setting"},
      {"gfx90a", "gfx90a", MatchClass::exact},
      {"gfx90a:xnack-", "gfx90a:xnack-", MatchClass::exact},
      {"gfx1030", "gfx1030", MatchClass::exact},
      // Different processors never mix.
      {"gfx90a", "gfx942", std::nullopt, "different processor"},
      {"gfx942", "gfx940:sramecc+:xnack-", std::nullopt, "different processor"},
      {"gfx1100", "gfx1101", std::nullopt, "different processor"},
  };
  for (const Case& c : cases) check(c);
}

TEST(Compat, AmdGenericTargetsLoadOnTheirFamilyOnly) {
  const Case cases[] = {
      {"gfx9-generic", "gfx900", MatchClass::generic},
      {"gfx9-generic", "gfx906:sramecc+:xnack-", MatchClass::generic},
      {"gfx9-generic", "gfx90c", MatchClass::generic},
      {"gfx9-generic", "gfx908", std::nullopt, "does not cover gfx908"},
      {"gfx9-generic", "gfx90a", std::nullopt, "does not cover gfx90a"},
      {"gfx9-4-generic", "gfx942:sramecc+:xnack-", MatchClass::generic},
      {"gfx9-4-generic", "gfx950", MatchClass::generic},
      {"gfx9-4-generic:xnack-", "gfx942:sramecc+:xnack-", MatchClass::generic},
      {"gfx9-4-generic:xnack+", "gfx942:sramecc+:xnack-", std::nullopt, "needs xnack on"},
      {"gfx10-1-generic", "gfx1012", MatchClass::generic},
      {"gfx10-3-generic", "gfx1036", MatchClass::generic},
      {"gfx10-3-generic", "gfx1012", std::nullopt, "does not cover"},
      {"gfx11-generic", "gfx1151", MatchClass::generic},
      {"gfx11-generic", "gfx1030", std::nullopt, "does not cover"},
      {"gfx12-generic", "gfx1201", MatchClass::generic},
      {"gfx12-generic", "gfx1100", std::nullopt, "does not cover"},
  };
  for (const Case& c : cases) check(c);
}

TEST(Compat, CrossBackendIsNeverCompatible) {
  check({"sm_90a", "gfx942", std::nullopt, "cuda binary"});
  check({"gfx942", "9.0", std::nullopt, "hip binary"});
}

TEST(Compat, ClassNamesAndRanks) {
  EXPECT_EQ(match_class_name(MatchClass::exact), "exact");
  EXPECT_EQ(match_class_name(MatchClass::arch), "arch");
  EXPECT_EQ(match_class_name(MatchClass::family), "family");
  EXPECT_EQ(match_class_name(MatchClass::baseline), "baseline");
  EXPECT_EQ(match_class_name(MatchClass::generic), "generic");
  EXPECT_EQ(match_class_name(MatchClass::any_feature), "any-feature");
  EXPECT_LT(match_class_rank(MatchClass::exact), match_class_rank(MatchClass::arch));
  EXPECT_LT(match_class_rank(MatchClass::arch), match_class_rank(MatchClass::family));
  EXPECT_LT(match_class_rank(MatchClass::family), match_class_rank(MatchClass::baseline));
  EXPECT_LT(match_class_rank(MatchClass::exact), match_class_rank(MatchClass::any_feature));
  EXPECT_LT(match_class_rank(MatchClass::any_feature), match_class_rank(MatchClass::generic));
}

}  // namespace
}  // namespace kcache
