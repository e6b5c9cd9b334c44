// Choosing the best binary for a device: arch.md's examples, tie-breaks, order independence.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "arch/select.hpp"

namespace kcache {
namespace {

std::vector<Target> targets(std::initializer_list<const char*> names) {
  std::vector<Target> out;
  for (const char* n : names) {
    auto t = parse_target(n);
    EXPECT_TRUE(t.ok()) << n;
    if (t.ok()) out.push_back(*t);
  }
  return out;
}

// The chosen target's string ("" for none), checked to be the same for every input order.
std::string best(std::initializer_list<const char*> names, const char* device) {
  auto dev = parse_device(device);
  EXPECT_TRUE(dev.ok()) << device;
  std::vector<Target> cands = targets(names);
  std::vector<std::size_t> order(cands.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::string first;
  bool have_first = false;
  do {
    std::vector<Target> permuted;
    for (std::size_t i : order) permuted.push_back(cands[i]);
    const Selection s = select_best(permuted, *dev);
    EXPECT_EQ(s.verdicts.size(), permuted.size());
    const std::string got = s.found() ? permuted[*s.chosen].str() : "";
    if (!have_first) {
      first = got;
      have_first = true;
    }
    EXPECT_EQ(got, first) << "selection depends on input order";
  } while (std::next_permutation(order.begin(), order.end()));
  return first;
}

TEST(Select, ExamplesOfArchMd) {
  EXPECT_EQ(best({"sm_100a", "sm_100f", "sm_103a"}, "10.3"), "sm_103a");
  EXPECT_EQ(best({"sm_100a", "sm_100f"}, "10.3"), "sm_100f");
  EXPECT_EQ(best({"sm_80", "sm_86"}, "8.9"), "sm_86");
  EXPECT_EQ(best({"sm_80", "sm_120f"}, "9.0"), "");  // none: fall back to compile
  // AMD: the one pinning more of the device's features wins.
  EXPECT_EQ(best({"gfx90a", "gfx90a:xnack-", "gfx90a:sramecc+:xnack-"}, "gfx90a:sramecc+:xnack-"),
            "gfx90a:sramecc+:xnack-");
  EXPECT_EQ(best({"gfx90a", "gfx90a:xnack-"}, "gfx90a:sramecc+:xnack-"), "gfx90a:xnack-");
}

TEST(Select, ClassOrderExactArchFamilyBaseline) {
  EXPECT_EQ(best({"sm_90", "sm_90a"}, "9.0"), "sm_90a");
  EXPECT_EQ(best({"sm_120a", "sm_120f", "sm_120"}, "12.0"), "sm_120f");  // exact
  EXPECT_EQ(best({"sm_120a", "sm_120"}, "12.0"), "sm_120a");             // arch > baseline
  EXPECT_EQ(best({"sm_100f", "sm_103"}, "10.3"), "sm_100f");             // family > baseline
  EXPECT_EQ(best({"sm_100", "sm_100f", "sm_103f"}, "10.3"), "sm_103f");  // closer family
  EXPECT_EQ(best({"sm_120f", "sm_121f", "sm_120"}, "12.1"), "sm_121f");
  EXPECT_EQ(best({"sm_120f", "sm_121a"}, "12.1"), "sm_121a");
}

TEST(Select, HigherMinorWinsInsideAClass) {
  EXPECT_EQ(best({"sm_80", "sm_86", "sm_89"}, "8.9"), "sm_89");
  EXPECT_EQ(best({"sm_80", "sm_86", "sm_87"}, "8.9"), "sm_87");
  EXPECT_EQ(best({"sm_100", "sm_103"}, "10.3"), "sm_103");
}

TEST(Select, NativeBeatsGenericAndPinnedBeatsAny) {
  EXPECT_EQ(best({"gfx9-4-generic", "gfx942"}, "gfx942:sramecc+:xnack-"), "gfx942");
  EXPECT_EQ(best({"gfx9-4-generic:sramecc+:xnack-", "gfx9-4-generic"}, "gfx942:sramecc+:xnack-"),
            "gfx9-4-generic:sramecc+:xnack-");
  EXPECT_EQ(best({"gfx11-generic", "gfx1100"}, "gfx1101"), "gfx11-generic");
  EXPECT_EQ(best({"gfx90a:sramecc+", "gfx90a:xnack-"}, "gfx90a:sramecc+:xnack-"),
            "gfx90a:sramecc+");  // equal class and closeness: the target string decides
}

TEST(Select, DuplicatesAndEmptyInput) {
  auto dev = parse_device("9.0");
  const Selection none = select_best({}, *dev);
  EXPECT_FALSE(none.found());
  EXPECT_TRUE(none.verdicts.empty());
  const std::vector<Target> dup = targets({"sm_90", "sm_90a", "sm_90a"});
  const Selection s = select_best(dup, *dev);
  ASSERT_TRUE(s.found());
  EXPECT_EQ(*s.chosen, 1u);  // the first of equal candidates
}

TEST(Select, ReportsEachCandidatesClassOrReason) {
  auto dev = parse_device("10.3");
  const std::vector<Target> c = targets({"sm_100a", "sm_100f", "sm_90a", "gfx942", "sm_103a"});
  const Selection s = select_best(c, *dev);
  ASSERT_TRUE(s.found());
  EXPECT_EQ(*s.chosen, 4u);
  ASSERT_EQ(s.verdicts.size(), 5u);
  EXPECT_FALSE(s.verdicts[0].compatible);
  EXPECT_NE(s.verdicts[0].reason.find("arch-specific"), std::string::npos);
  EXPECT_TRUE(s.verdicts[1].compatible);
  EXPECT_EQ(s.verdicts[1].match, MatchClass::family);
  EXPECT_FALSE(s.verdicts[2].compatible);
  EXPECT_FALSE(s.verdicts[3].compatible);
  EXPECT_NE(s.verdicts[3].reason.find("hip binary"), std::string::npos);
  EXPECT_EQ(s.verdicts[4].match, MatchClass::exact);
}

TEST(Select, MixedBackendsOnlyConsiderTheDevicesBackend) {
  EXPECT_EQ(best({"gfx942", "sm_90a", "gfx942:sramecc+:xnack-"}, "gfx942:sramecc+:xnack-"),
            "gfx942:sramecc+:xnack-");
  EXPECT_EQ(best({"gfx942", "sm_90", "sm_90a"}, "sm_90a"), "sm_90a");
}

}  // namespace
}  // namespace kcache
