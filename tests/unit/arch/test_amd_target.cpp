// AMD target IDs, the processor table and the kfd gfx_target_version mapping.
#include <gtest/gtest.h>

#include "arch/amd_processors.hpp"
#include "arch/amd_target.hpp"

namespace kcache {
namespace {

TEST(AmdTarget, ParsesTargetIdsAndPrintsCanonicalAlphabeticalOrder) {
  const struct {
    const char* input;
    const char* canonical;
    AmdFeature sramecc, xnack;
  } cases[] = {
      {"gfx90a", "gfx90a", AmdFeature::any, AmdFeature::any},
      {"gfx90a:xnack-", "gfx90a:xnack-", AmdFeature::any, AmdFeature::off},
      {"gfx942:sramecc+:xnack-", "gfx942:sramecc+:xnack-", AmdFeature::on, AmdFeature::off},
      {"gfx942:xnack-:sramecc+", "gfx942:sramecc+:xnack-", AmdFeature::on, AmdFeature::off},
      {"gfx90a:sramecc-", "gfx90a:sramecc-", AmdFeature::off, AmdFeature::any},
      {"gfx90a:xnack+", "gfx90a:xnack+", AmdFeature::any, AmdFeature::on},
      {"GFX90A:XNACK-", "gfx90a:xnack-", AmdFeature::any, AmdFeature::off},
      {"gfx1030", "gfx1030", AmdFeature::any, AmdFeature::any},
      {"gfx1100", "gfx1100", AmdFeature::any, AmdFeature::any},
      {"gfx9-generic", "gfx9-generic", AmdFeature::any, AmdFeature::any},
      {"gfx9-generic:xnack+", "gfx9-generic:xnack+", AmdFeature::any, AmdFeature::on},
      {"gfx9-4-generic:sramecc+:xnack-", "gfx9-4-generic:sramecc+:xnack-", AmdFeature::on,
       AmdFeature::off},
      {"gfx10-1-generic", "gfx10-1-generic", AmdFeature::any, AmdFeature::any},
      {"gfx10-3-generic", "gfx10-3-generic", AmdFeature::any, AmdFeature::any},
      {"gfx11-generic", "gfx11-generic", AmdFeature::any, AmdFeature::any},
      {"gfx12-generic", "gfx12-generic", AmdFeature::any, AmdFeature::any},
      // A well-formed processor missing from the table (a newer GPU) stays usable.
      {"gfx1250:xnack-", "gfx1250:xnack-", AmdFeature::any, AmdFeature::off},
  };
  for (const auto& c : cases) {
    auto t = parse_amd_target(c.input);
    ASSERT_TRUE(t.ok()) << c.input << ": " << t.error().message;
    EXPECT_EQ(t->str(), c.canonical) << c.input;
    EXPECT_EQ(t->sramecc, c.sramecc) << c.input;
    EXPECT_EQ(t->xnack, c.xnack) << c.input;
    EXPECT_EQ(*parse_amd_target(t->str()), *t) << c.input;
  }
}

TEST(AmdTarget, RejectsBadTargetIdsNamingTheBadPart) {
  const struct {
    const char* input;
    const char* names;
  } cases[] = {
      {"", "empty"},
      {"gfx", "unknown processor"},
      {"gfx90a:xnack", "'xnack'"},
      {"gfx90a:xnack+:xnack-", "given twice"},
      {"gfx90a:wavefrontsize64+", "'wavefrontsize64'"},
      {"gfx90a:", "must end in"},
      {"gfx90a::xnack-", "must end in"},
      {"gfx1030:xnack+", "gfx1030 has no xnack"},
      {"gfx1100:sramecc+", "gfx1100 has no sramecc"},
      {"gfx900:sramecc-", "gfx900 has no sramecc"},
      {"gfx13-generic", "unknown generic target"},
      {"gfx9-generic:sramecc+", "gfx9-generic has no sramecc"},
      {"gfxzzz", "unknown processor 'gfxzzz'"},
      {"gfx90g", "unknown processor"},
      {"radeon", "unknown processor"},
  };
  for (const auto& c : cases) {
    auto t = parse_amd_target(c.input);
    ASSERT_FALSE(t.ok()) << c.input;
    EXPECT_EQ(t.error().code, Errc::invalid_argument);
    EXPECT_NE(t.error().message.find(c.names), std::string::npos) << t.error().message;
    EXPECT_NE(t.error().message.find("'" + std::string(c.input) + "'"), std::string::npos)
        << t.error().message;
  }
}

TEST(AmdTarget, CountsPinnedFeaturesAndKnowsGenerics) {
  EXPECT_EQ(parse_amd_target("gfx90a")->pinned_features(), 0);
  EXPECT_EQ(parse_amd_target("gfx90a:xnack-")->pinned_features(), 1);
  EXPECT_EQ(parse_amd_target("gfx90a:sramecc+:xnack-")->pinned_features(), 2);
  EXPECT_TRUE(parse_amd_target("gfx11-generic")->is_generic());
  EXPECT_FALSE(parse_amd_target("gfx1100")->is_generic());
}

TEST(AmdProcessors, MapsKfdGfxTargetVersionToProcessorNames) {
  const struct {
    std::uint32_t version;
    const char* name;
  } cases[] = {
      {90010, "gfx90a"},   {90402, "gfx942"},   {100300, "gfx1030"}, {110000, "gfx1100"},
      {90000, "gfx900"},   {90012, "gfx90c"},   {90008, "gfx908"},   {90500, "gfx950"},
      {100101, "gfx1011"}, {110501, "gfx1151"}, {120001, "gfx1201"}, {80003, "gfx803"},
  };
  for (const auto& c : cases) {
    const auto name = gfx_name_from_kfd_version(c.version);
    ASSERT_TRUE(name.has_value()) << c.version;
    EXPECT_EQ(*name, c.name);
    // Every known processor's table row agrees with the formula.
    if (const AmdProcessorInfo* p = find_amd_processor(c.name)) {
      EXPECT_EQ(p->kfd_version, c.version);
    }
  }
  for (std::uint32_t bad : {0u, 16u, 91000u, 90016u, 1000000u})
    EXPECT_FALSE(gfx_name_from_kfd_version(bad).has_value()) << bad;
}

TEST(AmdProcessors, TableRoundTripsNamesMachsAndKfdVersions) {
  const struct {
    const char* name;
    unsigned mach;
  } cases[] = {{"gfx90a", 0x3f},          {"gfx942", 0x4c},        {"gfx908", 0x30},
               {"gfx1030", 0x36},         {"gfx9-generic", 0x51},  {"gfx10-1-generic", 0x52},
               {"gfx10-3-generic", 0x53}, {"gfx11-generic", 0x54}, {"gfx12-generic", 0x59},
               {"gfx9-4-generic", 0x5f},  {"gfx950", 0x4f},        {"gfx1201", 0x4e}};
  for (const auto& c : cases) {
    const AmdProcessorInfo* p = find_amd_processor(c.name);
    ASSERT_NE(p, nullptr) << c.name;
    EXPECT_EQ(p->mach, c.mach) << c.name;
    EXPECT_EQ(find_amd_processor_by_mach(c.mach), p) << c.name;
    if (!p->is_generic()) {
      EXPECT_EQ(gfx_name_from_kfd_version(p->kfd_version), p->name);
    }
  }
  EXPECT_EQ(find_amd_processor_by_mach(0x00), nullptr);
  EXPECT_EQ(find_amd_processor("gfx9999"), nullptr);
}

TEST(AmdProcessors, GenericFamiliesCoverExactlyTheirProcessors) {
  const struct {
    const char* generic;
    std::vector<const char*> covered;
    std::vector<const char*> not_covered;
  } cases[] = {
      {"gfx9-generic",
       {"gfx900", "gfx902", "gfx904", "gfx906", "gfx909", "gfx90c"},
       {"gfx908", "gfx90a", "gfx942", "gfx1030"}},
      {"gfx9-4-generic", {"gfx940", "gfx941", "gfx942", "gfx950"}, {"gfx90a", "gfx900"}},
      {"gfx10-1-generic", {"gfx1010", "gfx1011", "gfx1012", "gfx1013"}, {"gfx1030"}},
      {"gfx10-3-generic",
       {"gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036"},
       {"gfx1010", "gfx1100"}},
      {"gfx11-generic",
       {"gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153"},
       {"gfx1030", "gfx1200"}},
      {"gfx12-generic", {"gfx1200", "gfx1201"}, {"gfx1100", "gfx12-generic"}},
  };
  for (const auto& c : cases) {
    for (const char* p : c.covered)
      EXPECT_TRUE(generic_covers(c.generic, p)) << c.generic << " " << p;
    for (const char* p : c.not_covered)
      EXPECT_FALSE(generic_covers(c.generic, p)) << c.generic << " " << p;
  }
}

}  // namespace
}  // namespace kcache
