// `kcachectl arch check` and `arch select` against every example of reference/arch.md, plus
// bad input and the JSON forms (docs/kcachectl.md). Each case is exact stdout + exit code.
#include <algorithm>

#include "golden.hpp"

namespace kcache::cli_test {
namespace {

constexpr int kOk = 0, kFailure = 1, kUsage = 2;
const std::string kUsageHint = "Run 'kcachectl --help' for usage.\n";

struct CheckRow {
  const char* target;
  const char* device;
  const char* out;
};

void expect_checks(const std::vector<CheckRow>& rows) {
  for (const CheckRow& r : rows) {
    const std::string out = r.out;
    expect_golden({"arch", "check", r.target, r.device}, out + "\n",
                  out.starts_with("compatible") ? kOk : kFailure, "");
  }
}

std::string check_json(const std::string& target, const std::string& device,
                       const std::string& cls) {
  return "{\n  \"class\": \"" + cls + "\",\n  \"compatible\": true,\n  \"device\": \"" + device +
         "\",\n  \"reason\": null,\n  \"target\": \"" + target + "\"\n}\n";
}

TEST(ArchCheckCli, FollowsEveryRowOfTheArchMdTable) {
  expect_checks({
      {"sm_90a", "9.0", "compatible (exact)"},
      {"sm_80", "8.6", "compatible (baseline)"},
      {"sm_86", "8.0", "incompatible: sm_86 needs 8.6 or a newer minor of major 8; device is 8.0"},
      {"sm_80", "9.0",
       "incompatible: sm_80 does not run on 9.0: a cubin never runs across major versions"},
      {"sm_90", "9.0", "compatible (baseline)"},
      {"sm_100a", "10.3",
       "incompatible: sm_100a is arch-specific and runs only on 10.0; device is 10.3"},
      {"sm_100f", "10.3", "compatible (family)"},
      {"sm_103f", "10.0",
       "incompatible: sm_103f needs 10.3 or a newer minor of major 10; device is 10.0"},
      {"sm_120f", "12.1", "compatible (family)"},
      {"sm_120a", "12.1",
       "incompatible: sm_120a is arch-specific and runs only on 12.0; device is 12.1"},
  });
}

TEST(ArchCheckCli, NormalizesEverySpellingOfArchMd) {
  for (const char* spelling : {"sm_90a", "sm90a", "9.0a", "compute_90a", "90a", "SM_90A"})
    expect_golden({"arch", "check", spelling, "9.0", "--json"},
                  check_json("sm_90a", "9.0", "exact"), kOk);
  for (const char* spelling : {"sm_120f", "12.0f"})
    expect_golden({"--json", "arch", "check", spelling, "12.0"},
                  check_json("sm_120f", "12.0", "exact"), kOk);
  for (const char* spelling : {"sm_80", "8.0"})
    expect_golden({"arch", "check", "--json", spelling, "8.0"}, check_json("sm_80", "8.0", "exact"),
                  kOk);
}

TEST(ArchCheckCli, CompactFormsPutTheLastDigitInTheMinor) {
  expect_checks({
      {"sm_121", "12.1", "compatible (baseline)"},
      {"sm_121", "12.0",
       "incompatible: sm_121 needs 12.1 or a newer minor of major 12; device is 12.0"},
      {"sm_100", "10.0", "compatible (baseline)"},
      {"sm_100", "9.0",
       "incompatible: sm_100 does not run on 9.0: a cubin never runs across major versions"},
  });
}

TEST(ArchCheckCli, RejectsBadSpellingsAsFailuresNamingTheInput) {
  const std::string cuda_forms = "expected sm_XY[a|f], XY[a|f], compute_XY[a|f] or X.Y[a|f]\n";
  expect_golden({"arch", "check", "sm1200", "12.0"}, "", kFailure,
                "kcachectl: invalid CUDA target 'sm1200': " + cuda_forms);
  expect_golden({"arch", "check", "", "9.0"}, "", kFailure,
                "kcachectl: invalid CUDA target '': empty\n");
  expect_golden({"arch", "check", "sm_90", "9.0b"}, "", kFailure,
                "kcachectl: invalid compute capability '9.0b': expected P.Q such as 9.0 or 12.1\n");
  expect_golden({"arch", "check", "--json", "sm_90", ""}, "", kFailure,
                "kcachectl: invalid device '': expected a compute capability (9.0), a CUDA target "
                "(sm_90a) or an AMD target ID (gfx942:sramecc+:xnack-)\n");
}

TEST(ArchCheckCli, MissingArgumentsAreUsageErrors) {
  expect_golden({"arch", "check", "sm_90"}, "", kUsage,
                "kcachectl: DEVICE is required\n" + kUsageHint);
  expect_golden({"arch", "check", "sm_90", "9.0", "10.0"}, "", kUsage);
  expect_golden({"arch"}, "", kUsage, "kcachectl: A subcommand is required\n" + kUsageHint);
}

TEST(ArchCheckCli, EachDevicesOwnTargetIsExact) {
  expect_checks({
      {"sm_90a", "9.0", "compatible (exact)"},
      {"sm_103a", "10.3", "compatible (exact)"},
      {"sm_110a", "11.0", "compatible (exact)"},
      {"sm_120f", "12.0", "compatible (exact)"},
      {"sm_121a", "12.1", "compatible (exact)"},
      {"sm_86", "8.6", "compatible (exact)"},
      {"sm_120a", "12.0", "compatible (arch)"},
      {"sm_90", "9.0", "compatible (baseline)"},
  });
}

TEST(ArchCheckCli, DeviceIsACapabilityACudaTargetOrAnAmdTargetId) {
  expect_checks({
      {"sm_100f", "10.3", "compatible (family)"},
      {"sm_100f", "sm_103a", "compatible (family)"},
      {"sm_103a", "sm_103", "compatible (exact)"},
      {"gfx942", "gfx942:sramecc+:xnack-", "compatible (any-feature)"},
      {"sm_90a", "gfx90a", "incompatible: sm_90a is a cuda binary; device gfx90a is a hip device"},
      {"gfx942", "sm_90", "incompatible: gfx942 is a hip binary; device 9.0 is a cuda device"},
  });
}

TEST(ArchCheckCli, AmdFeaturesLeftOutMeanAnyAndPinnedOnesMustEqualTheDevice) {
  expect_checks({
      {"gfx90a:sramecc+:xnack-", "gfx90a:sramecc+:xnack-", "compatible (exact)"},
      {"gfx90a:xnack-:sramecc+", "gfx90a:sramecc+:xnack-", "compatible (exact)"},
      {"gfx90a:xnack-", "gfx90a:sramecc+:xnack-", "compatible (any-feature)"},
      {"gfx90a", "gfx90a:sramecc+:xnack-", "compatible (any-feature)"},
      {"gfx90a:xnack+", "gfx90a:sramecc+:xnack-",
       "incompatible: gfx90a:xnack+ needs xnack on; device gfx90a:sramecc+:xnack- has it off"},
      {"gfx908", "gfx90a:sramecc+:xnack-",
       "incompatible: gfx908 does not run on gfx90a:sramecc+:xnack-: different processor"},
  });
}

TEST(ArchCheckCli, GenericTargetsLoadOnTheProcessorsOfTheirFamilyOnly) {
  std::vector<CheckRow> rows;
  const struct {
    const char* generic;
    std::vector<const char*> covered;
    std::vector<const char*> not_covered;
  } families[] = {
      {"gfx9-generic",
       {"gfx900", "gfx902", "gfx904", "gfx906", "gfx909", "gfx90c"},
       {"gfx908", "gfx90a"}},
      {"gfx9-4-generic", {"gfx940", "gfx941", "gfx942", "gfx950"}, {"gfx90a"}},
      {"gfx10-1-generic", {"gfx1010", "gfx1011", "gfx1012", "gfx1013"}, {"gfx1030"}},
      {"gfx10-3-generic",
       {"gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036"},
       {"gfx1013"}},
      {"gfx11-generic",
       {"gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153"},
       {"gfx1200"}},
      {"gfx12-generic", {"gfx1200", "gfx1201"}, {"gfx1100"}},
  };
  std::vector<std::string> reasons;  // owns the strings the rows point to
  reasons.reserve(64);
  for (const auto& f : families) {
    for (const char* p : f.covered) rows.push_back({f.generic, p, "compatible (generic)"});
    for (const char* p : f.not_covered) {
      reasons.push_back(std::string("incompatible: ") + f.generic + " does not run on " + p + ": " +
                        f.generic + " does not cover " + p);
      rows.push_back({f.generic, p, reasons.back().c_str()});
    }
  }
  expect_checks(rows);
}

TEST(ArchCheckCli, JsonCarriesTheReasonWhenIncompatible) {
  expect_golden({"arch", "check", "sm_100a", "sm_103a", "--json"}, R"json({
  "class": null,
  "compatible": false,
  "device": "10.3",
  "reason": "sm_100a is arch-specific and runs only on 10.0; device is 10.3",
  "target": "sm_100a"
}
)json",
                kFailure, "");
}

TEST(ArchSelectCli, FollowsTheSelectionExamplesOfArchMd) {
  expect_golden({"arch", "select", "10.3", "sm_100a", "sm_100f", "sm_103a"}, "sm_103a\n", kOk);
  expect_golden({"arch", "select", "10.3", "sm_100a", "sm_100f"}, "sm_100f\n", kOk);
  expect_golden({"arch", "select", "8.9", "sm_80", "sm_86"}, "sm_86\n", kOk);
  expect_golden({"arch", "select", "9.0", "sm_80", "sm_120f"}, "none\n", kFailure, "");
}

TEST(ArchSelectCli, PrefersTheAmdCodeObjectPinningMoreDeviceFeaturesAndNativeOverGeneric) {
  expect_golden({"arch", "select", "gfx90a:sramecc+:xnack-", "gfx90a", "gfx90a:xnack-",
                 "gfx90a:sramecc+:xnack-"},
                "gfx90a:sramecc+:xnack-\n", kOk);
  expect_golden({"arch", "select", "gfx90a:sramecc+:xnack-", "gfx90a", "gfx90a:xnack-"},
                "gfx90a:xnack-\n", kOk);
  expect_golden({"arch", "select", "gfx942", "gfx9-4-generic", "gfx942"}, "gfx942\n", kOk);
  expect_golden({"arch", "select", "gfx942", "gfx9-4-generic", "gfx90a"}, "gfx9-4-generic\n", kOk);
}

TEST(ArchSelectCli, ChoiceNeverDependsOnTheOrderOfCandidates) {
  std::vector<std::string> targets = {"sm_100a", "sm_100f", "sm_103a", "sm_100"};
  std::sort(targets.begin(), targets.end());
  do {
    std::vector<std::string> args = {"arch", "select", "10.3"};
    args.insert(args.end(), targets.begin(), targets.end());
    expect_golden(args, "sm_103a\n", kOk);
  } while (std::next_permutation(targets.begin(), targets.end()));
}

TEST(ArchSelectCli, PrintsTheChosenTargetExactlyAsGiven) {
  expect_golden({"arch", "select", "sm_90a", "8.0", "9.0a", "compute_90"}, "9.0a\n", kOk);
}

TEST(ArchSelectCli, InvalidCandidateIsIneligibleAndReportedOnStderr) {
  expect_golden({"arch", "select", "9.0", "sm_90a", "bogus"}, "sm_90a\n", kOk,
                "kcachectl: warning: invalid CUDA target 'bogus': expected sm_XY[a|f], XY[a|f], "
                "compute_XY[a|f] or X.Y[a|f]\n");
  expect_golden({"arch", "select", "9.0b", "sm_90a"}, "", kFailure,
                "kcachectl: invalid compute capability '9.0b': expected P.Q such as 9.0 or 12.1\n");
  expect_golden({"arch", "select", "9.0"}, "", kUsage,
                "kcachectl: TARGET is required\n" + kUsageHint);
}

TEST(ArchSelectCli, JsonListsEveryCandidateWithItsClassOrReason) {
  expect_golden({"--json", "arch", "select", "10.3", "sm_100a", "sm_100f", "sm1200"}, R"json({
  "candidates": [
    {
      "class": null,
      "compatible": false,
      "reason": "sm_100a is arch-specific and runs only on 10.0; device is 10.3",
      "target": "sm_100a"
    },
    {
      "class": "family",
      "compatible": true,
      "reason": null,
      "target": "sm_100f"
    },
    {
      "class": null,
      "compatible": false,
      "reason": "invalid CUDA target 'sm1200': expected sm_XY[a|f], XY[a|f], compute_XY[a|f] or X.Y[a|f]",
      "target": "sm1200"
    }
  ],
  "device": "10.3",
  "selected": "sm_100f"
}
)json",
                kOk, "");
  expect_golden({"arch", "select", "9.0", "sm_80", "--json"}, R"json({
  "candidates": [
    {
      "class": null,
      "compatible": false,
      "reason": "sm_80 does not run on 9.0: a cubin never runs across major versions",
      "target": "sm_80"
    }
  ],
  "device": "9.0",
  "selected": null
}
)json",
                kFailure, "");
}

}  // namespace
}  // namespace kcache::cli_test
