// Choosing provider modules per device, version and variant (providers/provider_select.hpp).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "providers/provider_key.hpp"
#include "providers/provider_select.hpp"
#include "variant/system.hpp"

namespace kcache::providers {
namespace {

struct Mod {
  std::string name;
  std::string target;
};

// An active provider as load_provider would leave it, built from a manifest in memory.
LoadedProvider provider(const std::string& path, const std::string& version,
                        const std::vector<Mod>& modules, const std::string& variant = "") {
  nlohmann::json doc{{"format", 1},        {"name", path},         {"package", "pkg"},
                     {"version", version}, {"backend", "cuda-13.0"}, {"targets", nlohmann::json::array()},
                     {"modules", nlohmann::json::array()}};
  if (!variant.empty()) doc["variant"] = variant;
  for (const Mod& m : modules) {
    const std::string target = parse_target(m.target).value().str();
    if (std::find(doc["targets"].begin(), doc["targets"].end(), target) == doc["targets"].end())
      doc["targets"].push_back(target);
    doc["modules"].push_back({{"name", m.name},
                              {"file", target + "/" + m.name + ".cubin"},
                              {"target", target},
                              {"size", 100},
                              {"digest", digest_of(std::string_view(path + m.name + target)).hex()},
                              {"compression", "none"}});
  }
  auto manifest = parse_manifest(doc);
  EXPECT_TRUE(manifest.ok()) << manifest.error().message;
  LoadedProvider p;
  p.path = "/providers/" + path;
  p.state = ProviderState::active;
  p.manifest = std::move(manifest).value();
  p.variant = p.manifest->variant;
  for (std::size_t i = 0; i < p.manifest->modules.size(); ++i) {
    const ModuleSpec& m = p.manifest->modules[i];
    p.modules_by_name[m.name].push_back(i);
    p.keys.push_back(compute_provider_key({path, "pkg", version, variant, m.name, m.target.str(), m.digest}));
    p.module_errors.emplace_back();
  }
  return p;
}

Device device(const char* text) { return parse_device(text).value(); }

// (provider path, module target) of each ranked pick, best first.
std::vector<std::string> ranked(const std::vector<LoadedProvider>& ps, const char* name,
                                const char* version, const char* dev,
                                const SystemInfo* system = nullptr) {
  const Device d = device(dev);
  const ProviderChoice c = choose_providers(ps, {name, version, &d, system, false});
  std::vector<std::string> out;
  for (const Pick& p : c.ranked)
    out.push_back(ps[p.provider].path.substr(11) + ":" +
                  ps[p.provider].manifest->modules[p.module].target.str());
  return out;
}

std::vector<LoadedProvider> one_provider_per_target() {
  std::vector<LoadedProvider> ps;
  for (const char* t : {"sm_80", "sm_86", "sm_90a", "sm_100a", "sm_100f", "sm_103a", "sm_120f"})
    ps.push_back(provider(std::string("p-") + t, "0.6.18+cu130", {{"gemm", t}}));
  return ps;
}

TEST(ProviderSelect, PicksTheClosestTargetPerDevice) {
  const auto ps = one_provider_per_target();
  EXPECT_EQ(ranked(ps, "gemm", "0.6.18+cu130", "8.9").front(), "p-sm_86:sm_86");
  EXPECT_EQ(ranked(ps, "gemm", "0.6.18+cu130", "8.9").size(), 2u);  // sm_86, then sm_80
  EXPECT_EQ(ranked(ps, "gemm", "0.6.18+cu130", "9.0"), std::vector<std::string>{"p-sm_90a:sm_90a"});
  EXPECT_EQ(ranked(ps, "gemm", "0.6.18+cu130", "10.3"),
            (std::vector<std::string>{"p-sm_103a:sm_103a", "p-sm_100f:sm_100f"}));
  EXPECT_EQ(ranked(ps, "gemm", "0.6.18+cu130", "12.1"), std::vector<std::string>{"p-sm_120f:sm_120f"});
  EXPECT_TRUE(ranked(ps, "gemm", "0.6.18+cu130", "7.5").empty());
}

TEST(ProviderSelect, VersionMustMatchExactlyIncludingTheLocalPart) {
  std::vector<LoadedProvider> ps{provider("cu130", "0.6.18+cu130", {{"gemm", "sm_90a"}}),
                                 provider("short", "0.6.1", {{"gemm", "sm_90a"}})};
  EXPECT_TRUE(ranked(ps, "gemm", "0.6.18+cu134", "9.0").empty());
  EXPECT_TRUE(ranked(ps, "gemm", "0.6.18", "9.0").empty());
  EXPECT_TRUE(ranked(ps, "gemm", "0.6.10", "9.0").empty());
  EXPECT_EQ(ranked(ps, "gemm", "0.6.1", "9.0"), std::vector<std::string>{"short:sm_90a"});
  const Device d = device("9.0");
  const ProviderChoice c = choose_providers(ps, {"gemm", "0.6.18+cu134", &d, nullptr, true});
  ASSERT_EQ(c.reasons.size(), 2u);
  EXPECT_NE(c.reasons[0].find("version 0.6.18+cu130 is not the requested 0.6.18+cu134"),
            std::string::npos);
}

TEST(ProviderSelect, FallsThroughToTheNextProviderThatHasTheModule) {
  std::vector<LoadedProvider> ps{provider("exact", "1.0", {{"alpha", "sm_90a"}}),
                                 provider("baseline", "1.0", {{"alpha", "sm_90"}, {"beta", "sm_90"}})};
  EXPECT_EQ(ranked(ps, "alpha", "1.0", "9.0").front(), "exact:sm_90a");
  EXPECT_EQ(ranked(ps, "beta", "1.0", "9.0"), std::vector<std::string>{"baseline:sm_90"});
  EXPECT_TRUE(ranked(ps, "gamma", "1.0", "9.0").empty());
}

TEST(ProviderSelect, RefusedModulesAndInactiveProvidersNeverServe) {
  std::vector<LoadedProvider> ps{provider("a", "1.0", {{"alpha", "sm_90a"}}),
                                 provider("b", "1.0", {{"alpha", "sm_90"}}),
                                 provider("c", "1.0", {{"alpha", "sm_90a"}})};
  ps[0].module_errors[0] = "module 'alpha': digest mismatch";
  ps[2].state = ProviderState::rejected;
  ps[2].reason = "bad manifest";
  EXPECT_EQ(ranked(ps, "alpha", "1.0", "9.0"), std::vector<std::string>{"b:sm_90"});
  ps[1].state = ProviderState::incomplete;
  const Device d = device("9.0");
  const ProviderChoice c = choose_providers(ps, {"alpha", "1.0", &d, nullptr, true});
  EXPECT_TRUE(c.ranked.empty());
  ASSERT_EQ(c.reasons.size(), 3u);
  EXPECT_NE(c.reasons[0].find("digest mismatch"), std::string::npos);
  EXPECT_NE(c.reasons[1].find("incomplete"), std::string::npos);
  EXPECT_NE(c.reasons[2].find("rejected: bad manifest"), std::string::npos);
}

TEST(ProviderSelect, VariantsOrderAfterTargetsWhenTheSystemIsGiven) {
  std::vector<LoadedProvider> ps{
      provider("cu126", "1.0", {{"gemm", "sm_90a"}}, "torch210-cxx11-cu126-x86_64-linux"),
      provider("cu128", "1.0", {{"gemm", "sm_90a"}}, "torch210-cxx11-cu128-x86_64-linux"),
      provider("cu130", "1.0", {{"gemm", "sm_90a"}}, "torch210-cxx11-cu130-x86_64-linux"),
      provider("noarch", "1.0", {{"gemm", "sm_90a"}}, "torch-cuda"),
      provider("plain", "1.0", {{"gemm", "sm_90a"}}),
      provider("baseline", "1.0", {{"gemm", "sm_90"}}, "torch210-cxx11-cu128-x86_64-linux")};
  const SystemInfo sys =
      parse_system_spec("cpu=x86_64,os=linux,torch=2.10,cxx=cxx11,backend=cuda-12.8").value();
  EXPECT_EQ(ranked(ps, "gemm", "1.0", "9.0", &sys),
            (std::vector<std::string>{"cu128:sm_90a", "cu126:sm_90a", "noarch:sm_90a",
                                      "plain:sm_90a", "baseline:sm_90"}));
  // Without a system every variant may serve; the path breaks ties.
  EXPECT_EQ(ranked(ps, "gemm", "1.0", "9.0").front(), "cu126:sm_90a");
  const Device d = device("9.0");
  const ProviderChoice c = choose_providers(ps, {"gemm", "1.0", &d, &sys, true});
  ASSERT_EQ(c.reasons.size(), 1u);
  EXPECT_NE(c.reasons[0].find("CUDA version (13.0) is not compatible"), std::string::npos);
}

TEST(ProviderSelect, PrefetchTakesWhatEachLocalDeviceWouldBeServed) {
  auto ps = one_provider_per_target();
  ps.push_back(provider("other-version", "0.7.0", {{"gemm", "sm_80"}}));
  const std::vector<Device> devices{device("8.9"), device("10.3"), device("12.1")};
  std::vector<std::string> picked;
  for (const Pick& p : prefetch_set(ps, devices))
    picked.push_back(ps[p.provider].path.substr(11));
  std::sort(picked.begin(), picked.end());
  // 8.9: sm_86 (and sm_80 of the other version); 10.3: sm_103a; 12.1: sm_120f. Never sm_80 of
  // 0.6.18, sm_90a, sm_100a or sm_100f: no local device would be served them.
  EXPECT_EQ(picked, (std::vector<std::string>{"other-version", "p-sm_103a", "p-sm_120f", "p-sm_86"}));
}

}  // namespace
}  // namespace kcache::providers
