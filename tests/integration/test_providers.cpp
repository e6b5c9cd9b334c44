// Serving from providers through the real kcached: prefetch, selection per device, exact
// versions, fall-through to the next provider and to compile, key-only lookups, variants.
#include <filesystem>

#include "test_providers_support.hpp"

namespace kcache::test {
namespace {

namespace fs = std::filesystem;
constexpr const char* kVersion = "0.6.18+cu130";

using Providers = ProviderFixture;

Result<Module> get(Client& c, const char* name, const char* version, std::optional<int> device,
                   const char* target = "", std::string_view source = {},
                   std::string_view system = {}) {
  Request r;
  r.name = name;
  r.version = version;
  r.device = device;
  r.target = target;
  r.source = source;
  r.system_json = system;
  return c.get(r);
}

TEST_F(Providers, PrefetchMakesTheFirstRequestAHit) {
  pack_provider("fa", "flash", kVersion, {"sm_90a=" + cubin_file("sm_90a", "attn")});
  start_with_devices("9.0");
  const json p = wait_for(root_ + "/fa", [](const json& prov) { return prov.value("materialized", 0) == 1; });
  EXPECT_EQ(p["state"], "active");
  EXPECT_EQ(p["modules"], 1);

  Client c = client();
  auto m = get(c, "attn", kVersion, 0);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->origin, Origin::provider);
  EXPECT_EQ(m->target, "sm_90a");
  EXPECT_EQ(m->key, provider_key("flash", "pkg", kVersion, "", "attn", "sm_90a", cubin_bytes("sm_90a")));
  EXPECT_EQ(read_file(m->path), cubin_bytes("sm_90a"));
  EXPECT_EQ(m->path.rfind(cache_dir_ + "/objects/", 0), 0u);
  EXPECT_EQ(stat("provider_hits"), 1u);
  EXPECT_EQ(stat("hits"), 0u);
  EXPECT_EQ(stat("misses"), 0u);
  const json s = status();
  EXPECT_EQ(s["prefetch"]["done"], 1);
  ASSERT_EQ(s["providers"].size(), 1u);
  EXPECT_EQ(s["providers"][0]["name"], "flash");
  EXPECT_EQ(s["providers"][0]["version"], kVersion);
  EXPECT_EQ(s["providers"][0]["state"], "active");
  EXPECT_EQ(s["providers"][0]["reason"], "");
  const CommandResult human = kcachectl({"status"});
  ASSERT_EQ(human.exit_code, 0) << human.err;
  EXPECT_NE(human.out.find("Prefetch:   1 done"), std::string::npos) << human.out;
  EXPECT_NE(human.out.find(root_ + "/fa"), std::string::npos) << human.out;
  // An ordinary cache entry: ls lists it with origin provider.
  const CommandResult ls = kcachectl({"ls", "--json"});
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  const json entries = json::parse(ls.out)["entries"];
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0]["origin"], "provider");
  EXPECT_EQ(entries[0]["name"], "attn");
  EXPECT_EQ(entries[0]["key"], m->key);
}

TEST_F(Providers, SelectsTheBestProviderPerDeviceOnAHeterogeneousHost) {
  const std::vector<std::string> targets{"sm_80",   "sm_86",   "sm_90a", "sm_100a",
                                         "sm_100f", "sm_103a", "sm_120f"};
  for (const std::string& t : targets)
    pack_provider("p-" + t, "p-" + t, kVersion, {t + "=" + cubin_file(t, "gemm")});
  start_with_devices("8.9,9.0,10.3,12.1");
  // Prefetch takes only what a local device would be served: 4 of the 7.
  for (const std::string& t : targets) wait_state(root_ + "/p-" + t, "active");
  wait_prefetched(4);
  EXPECT_EQ(status()["prefetch"]["done"], 4);
  for (const char* t : {"sm_80", "sm_90a", "sm_100a"})
    EXPECT_EQ(wait_state(root_ + "/p-" + t, "active")["materialized"], t == std::string("sm_90a") ? 1 : 0) << t;

  Client c = client();
  const std::vector<std::pair<int, std::string>> expected{
      {0, "sm_86"}, {1, "sm_90a"}, {2, "sm_103a"}, {3, "sm_120f"}};
  for (const auto& [device, target] : expected) {
    auto m = get(c, "gemm", kVersion, device);
    ASSERT_TRUE(m.ok()) << device << ": " << m.error().message;
    EXPECT_EQ(m->origin, Origin::provider) << device;
    EXPECT_EQ(m->target, target) << device;
    EXPECT_EQ(m->key, provider_key("p-" + target, "pkg", kVersion, "", "gemm", target, cubin_bytes(target)));
  }
  // An explicit target means the local device whose own compile target it is.
  auto by_target = get(c, "gemm", kVersion, std::nullopt, "sm_103a");
  ASSERT_TRUE(by_target.ok()) << by_target.error().message;
  EXPECT_EQ(by_target->target, "sm_103a");
  auto by_own_target = get(c, "gemm", kVersion, std::nullopt, "sm_89");
  ASSERT_TRUE(by_own_target.ok()) << by_own_target.error().message;
  EXPECT_EQ(by_own_target->target, "sm_86");
  EXPECT_EQ(stat("provider_hits"), 6u);
  EXPECT_EQ(stat("compiles"), 0u);
}

TEST_F(Providers, ServesAmdCodeObjectsPerDeviceNextToCuda) {
  for (const char* arch : {"gfx90a", "gfx90a:xnack-", "gfx1030"})
    if (hsaco_bytes(arch).empty()) GTEST_SKIP() << "hiprtc cannot build a code object for " << arch;
  pack_provider("amd-any", "amd-any", kVersion, {"gfx90a=" + hsaco_file("gfx90a", "gemm")});
  pack_provider("amd-xnack-off", "amd-xnack-off", kVersion,
                {"gfx90a:xnack-=" + hsaco_file("gfx90a:xnack-", "gemm")});
  pack_provider("amd-rdna", "amd-rdna", kVersion, {"gfx1030=" + hsaco_file("gfx1030", "gemm")});
  pack_provider("cuda", "cuda", kVersion, {"sm_90a=" + cubin_file("sm_90a", "gemm")});
  start_with_devices("9.0,gfx90a:xnack-,gfx90a:xnack+,gfx1030");
  for (const char* p : {"amd-any", "amd-xnack-off", "amd-rdna", "cuda"})
    EXPECT_EQ(wait_state(root_ + "/" + p, "active")["backend"],
              p == std::string("cuda") ? "cuda-13.0" : "rocm-5.2");
  // Each device's best module is prefetched, one per device.
  wait_prefetched(4);
  EXPECT_EQ(status()["prefetch"]["done"], 4);

  Client c = client();
  // exact > any-feature: the xnack- device gets the xnack- object, the xnack+ one the generic.
  const std::vector<std::tuple<int, std::string, std::string>> expected{
      {0, "sm_90a", "cuda"},
      {1, "gfx90a:xnack-", "amd-xnack-off"},
      {2, "gfx90a", "amd-any"},
      {3, "gfx1030", "amd-rdna"}};
  for (const auto& [device, target, provider] : expected) {
    auto m = get(c, "gemm", kVersion, device);
    ASSERT_TRUE(m.ok()) << device << ": " << m.error().message;
    EXPECT_EQ(m->origin, Origin::provider) << device;
    EXPECT_EQ(m->target, target) << device;
    const std::string bytes = target == "sm_90a" ? cubin_bytes(target) : hsaco_bytes(target);
    EXPECT_EQ(m->key, provider_key(provider, "pkg", kVersion, "", "gemm", target, bytes)) << device;
    EXPECT_EQ(read_file(m->path), bytes) << device;
    EXPECT_TRUE(m->path.ends_with(target == "sm_90a" ? ".cubin" : ".hsaco")) << m->path;
  }
  EXPECT_EQ(stat("provider_hits"), 4u);
  EXPECT_EQ(stat("compiles"), 0u);
}

TEST_F(Providers, ModulesForTargetsNoLocalDeviceUsesAreMaterializedOnDemand) {
  pack_provider("old", "old", kVersion, {"sm_80=" + cubin_file("sm_80", "gemm")});
  start_with_devices("9.0");
  EXPECT_EQ(wait_state(root_ + "/old", "active")["materialized"], 0);
  wait_prefetched(0);
  EXPECT_EQ(status()["prefetch"]["done"], 0);
  Client c = client();
  // No device 8.x here: sm_80 names a device of capability 8.0 (docs/providers.md).
  auto m = get(c, "gemm", kVersion, std::nullopt, "sm_80");
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->origin, Origin::provider);
  EXPECT_EQ(m->target, "sm_80");
  EXPECT_EQ(read_file(m->path), cubin_bytes("sm_80"));
  EXPECT_EQ(wait_state(root_ + "/old", "active")["materialized"], 1);
  // Device 0 (9.0) cannot run sm_80: nothing serves it, and there is no source.
  auto none = get(c, "gemm", kVersion, 0);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, Errc::not_found);
  EXPECT_NE(none.error().message.find("has no module 'gemm' for device 9.0"), std::string::npos)
      << none.error().message;
}

TEST_F(Providers, TheVersionMustMatchExactly) {
  pack_provider("cu130", "cu130", "0.6.18+cu130", {"sm_90a=" + cubin_file("sm_90a", "gemm")});
  pack_provider("short", "short", "0.6.1", {"sm_90a=" + cubin_file("sm_90a", "gemm")});
  start_with_devices("9.0");
  wait_state(root_ + "/cu130", "active");
  wait_state(root_ + "/short", "active");
  Client c = client();
  for (const char* version : {"0.6.18+cu134", "0.6.18", "0.6.10"}) {
    auto m = get(c, "gemm", version, 0);
    ASSERT_FALSE(m.ok()) << version;
    EXPECT_EQ(m.error().code, Errc::not_found) << version;
    // The not-found message names each provider's reason.
    EXPECT_NE(m.error().message.find("version 0.6.18+cu130 is not the requested " + std::string(version)),
              std::string::npos)
        << m.error().message;
    EXPECT_NE(m.error().message.find("version 0.6.1 is not the requested"), std::string::npos)
        << m.error().message;
  }
  auto exact = get(c, "gemm", "0.6.1", 0);
  ASSERT_TRUE(exact.ok()) << exact.error().message;
  EXPECT_EQ(exact->origin, Origin::provider);
  EXPECT_EQ(stat("provider_hits"), 1u);
}

TEST_F(Providers, AMissingModuleFallsThroughToTheNextProviderThenToCompile) {
  pack_provider("exact", "exact", kVersion, {"sm_90a=" + cubin_file("sm_90a", "alpha")});
  pack_provider("base", "base", kVersion,
                {"sm_90=" + cubin_file("sm_90", "alpha"), "sm_90=" + cubin_file("sm_90", "beta")});
  start_with_devices("9.0");
  wait_state(root_ + "/exact", "active");
  wait_state(root_ + "/base", "active");
  Client c = client();
  auto alpha = get(c, "alpha", kVersion, 0);
  ASSERT_TRUE(alpha.ok()) << alpha.error().message;
  EXPECT_EQ(alpha->target, "sm_90a");  // exact beats baseline
  auto beta = get(c, "beta", kVersion, 0);
  ASSERT_TRUE(beta.ok()) << beta.error().message;
  EXPECT_EQ(beta->origin, Origin::provider);
  EXPECT_EQ(beta->target, "sm_90");
  EXPECT_EQ(beta->key, provider_key("base", "pkg", kVersion, "", "beta", "sm_90", cubin_bytes("sm_90")));
  const std::string source = cuda_source(3);
  auto gamma = get(c, "gamma", kVersion, 0, "", source);
  ASSERT_TRUE(gamma.ok()) << gamma.error().message;
  EXPECT_EQ(gamma->origin, Origin::compiled);
  EXPECT_EQ(gamma->target, "sm_90a");
  EXPECT_EQ(stat("provider_hits"), 2u);
  EXPECT_EQ(stat("compiles"), 1u);
}

TEST_F(Providers, KeyOnlyLookupsAskTheProvidersFirst) {
  pack_provider("fa", "flash", kVersion, {"sm_90a=" + cubin_file("sm_90a", "attn")});
  start_with_devices("9.0");
  wait_for(root_ + "/fa", [](const json& prov) { return prov.value("materialized", 0) == 1; });
  Client c = client();
  const std::string source = cuda_source(11);
  // With a source libkcache sends a key-only lookup first (name, version, target, key).
  auto m = get(c, "attn", kVersion, 0, "", source);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->origin, Origin::provider);
  EXPECT_EQ(c.stats().key_lookups, 1u);
  EXPECT_EQ(c.stats().need_source, 0u);
  EXPECT_EQ(stat("provider_hits"), 1u);
  EXPECT_EQ(stat("compiles"), 0u);
  // Without a version the providers are not consulted: the source is compiled.
  auto compiled = get(c, "attn", "", 0, "", source);
  ASSERT_TRUE(compiled.ok()) << compiled.error().message;
  EXPECT_EQ(compiled->origin, Origin::compiled);
}

TEST_F(Providers, VariantsFollowTheWorkersSystem) {
  const std::string file = cubin_file("sm_90a", "gemm");
  pack_provider("build/torch210-cxx11-cu126-x86_64-linux/fi", "fi", kVersion, {"sm_90a=" + file});
  pack_provider("build/torch210-cxx11-cu128-x86_64-linux/fi", "fi", kVersion, {"sm_90a=" + file},
                {"--variant", "torch-2.10-cxx11-cuda-12.8-abi3-x86_64-linux"});
  start_with_devices("9.0");
  const std::string cu126 = "torch-2.10-cxx11-cuda-12.6-abi3-x86_64-linux";
  const std::string cu128 = "torch-2.10-cxx11-cuda-12.8-abi3-x86_64-linux";
  EXPECT_EQ(wait_state(root_ + "/build/torch210-cxx11-cu126-x86_64-linux/fi", "active")["variant"], cu126);
  EXPECT_EQ(wait_state(root_ + "/build/torch210-cxx11-cu128-x86_64-linux/fi", "active")["variant"], cu128);
  Client c = client();
  const std::string bytes = cubin_bytes("sm_90a");
  const auto system = [](const char* cuda) {
    return std::string(R"({"cpu":"x86_64","os":"linux","torch":"2.10","cxx":"cxx11","backend":"cuda-)") +
           cuda + R"(","python":"gil"})";
  };
  auto on128 = get(c, "gemm", kVersion, 0, "", {}, system("12.8"));
  ASSERT_TRUE(on128.ok()) << on128.error().message;
  EXPECT_EQ(on128->key, provider_key("fi", "pkg", kVersion, cu128, "gemm", "sm_90a", bytes));
  auto on127 = get(c, "gemm", kVersion, 0, "", {}, system("12.7"));
  ASSERT_TRUE(on127.ok()) << on127.error().message;
  EXPECT_EQ(on127->key, provider_key("fi", "pkg", kVersion, cu126, "gemm", "sm_90a", bytes));
  auto on125 = get(c, "gemm", kVersion, 0, "", {}, system("12.5"));
  ASSERT_FALSE(on125.ok());
  EXPECT_NE(on125.error().message.find("CUDA version (12.8) is not compatible with system CUDA version (12.5)"),
            std::string::npos)
      << on125.error().message;
  auto bad = get(c, "gemm", kVersion, 0, "", {}, R"({"cpu":"x86_64"})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, Errc::invalid_argument);
  EXPECT_NE(bad.error().message.find("system:"), std::string::npos) << bad.error().message;
}

}  // namespace
}  // namespace kcache::test
