// Providers that appear, change and disappear while kcached runs, half-written ones, a root
// created after start, and `kcachectl prefetch`.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "test_providers_support.hpp"

namespace kcache::test {
namespace {

namespace fs = std::filesystem;
using LiveProviders = ProviderFixture;
using Clock = std::chrono::steady_clock;

Result<Module> get(Client& c, const char* name, const char* version) {
  Request r;
  r.name = name;
  r.version = version;
  r.device = 0;
  return c.get(r);
}

TEST_F(LiveProviders, AProviderAddedModifiedAndRemovedWhileRunningIsPickedUp) {
  start_with_devices("9.0");
  ASSERT_TRUE(providers()["providers"].empty());
  Client c = client();
  ASSERT_FALSE(get(c, "attn", "1.0").ok());

  // Appears: picked up within 2 seconds, modules prefetched.
  const auto added = Clock::now();
  pack_provider("fa", "flash", "1.0", {"sm_90a=" + cubin_file("sm_90a", "attn")});
  wait_for(root_ + "/fa", [](const json& prov) { return prov.value("materialized", 0) == 1; });
  EXPECT_LT(Clock::now() - added, std::chrono::seconds(2));
  auto m = get(c, "attn", "1.0");
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->origin, Origin::provider);

  // Changes: the manifest is replaced (atomically) by one with another version.
  json manifest = json::parse(read_file(root_ + "/fa/kcache-provider.json"));
  manifest["version"] = "2.0";
  write_file(root_ + "/fa/.next.json", manifest.dump());
  fs::rename(root_ + "/fa/.next.json", root_ + "/fa/kcache-provider.json");
  wait_for(root_ + "/fa", [](const json& prov) { return prov.value("version", "") == "2.0"; });
  EXPECT_FALSE(get(c, "attn", "1.0").ok());
  auto v2 = get(c, "attn", "2.0");
  ASSERT_TRUE(v2.ok()) << v2.error().message;
  EXPECT_NE(v2->key, m->key);  // the version is part of the provider key

  // Disappears: listed as removed, serves nothing.
  fs::remove_all(root_ + "/fa");
  wait_state(root_ + "/fa", "removed");
  auto gone = get(c, "attn", "2.0");
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code, Errc::not_found);
  EXPECT_EQ(stat("provider_hits"), 2u);
}

TEST_F(LiveProviders, AHalfWrittenProviderIsRetriedAndNeverHalfLoaded) {
  start_with_devices("9.0");
  const std::string dir = root_ + "/fa";
  fs::create_directories(dir);
  wait_state(dir, "incomplete");  // no manifest yet
  const std::string cubin = cubin_bytes("sm_90a");
  json manifest{{"format", 1},       {"name", "fa"},          {"package", "pkg"},
                {"version", "1.0"},  {"backend", "cuda-13.0"}, {"targets", {"sm_90a"}},
                {"modules", {{{"name", "attn"}, {"file", "attn.cubin"}, {"target", "sm_90a"},
                              {"size", cubin.size()},
                              {"digest", digest_of(std::string_view(cubin)).hex()},
                              {"compression", "none"}}}}};
  // The manifest first (as `cp -r` may do it), cut short, and no module file yet.
  const std::string text = manifest.dump(2);
  write_file(dir + "/kcache-provider.json", text.substr(0, text.size() / 2));
  wait_for(dir, [](const json& p) {
    return p.value("state", "") == "incomplete" && p.value("reason", "").find("truncated") != std::string::npos;
  });
  write_file(dir + "/kcache-provider.json", text);
  wait_for(dir, [](const json& p) {
    return p.value("state", "") == "incomplete" && p.value("reason", "").find("missing") != std::string::npos;
  });
  Client c = client();
  EXPECT_FALSE(get(c, "attn", "1.0").ok());
  write_file(dir + "/attn.cubin", cubin);
  wait_for(dir, [](const json& prov) { return prov.value("materialized", 0) == 1; });
  auto m = get(c, "attn", "1.0");
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->origin, Origin::provider);
}

TEST_F(LiveProviders, ARootCreatedAfterStartIsWatchedOnceItExists) {
  const std::string late = dir_ + "/late-root";
  start({"--devices", "9.0", "--provider-root", late});
  EXPECT_TRUE(providers()["providers"].empty());
  EXPECT_EQ(providers()["roots"][0], late);
  root_ = late;
  pack_provider("fa", "flash", "1.0", {"sm_90a=" + cubin_file("sm_90a", "attn")});
  wait_for(late + "/fa", [](const json& prov) { return prov.value("materialized", 0) == 1; });
}

TEST_F(LiveProviders, PrefetchCommandRescansAndReportsWhatItDid) {
  pack_provider("fa", "flash", "1.0", {"sm_90a=" + cubin_file("sm_90a", "attn")});
  start_with_devices("9.0");
  wait_for(root_ + "/fa", [](const json& prov) { return prov.value("materialized", 0) == 1; });
  pack_provider("fb", "flash-b", "1.0", {"sm_90a=" + cubin_file("sm_90a", "norm")});
  // prefetch answers once its rescan is applied and what it queued is done.
  const CommandResult r = kcachectl({"prefetch", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json doc = json::parse(r.out);
  EXPECT_EQ(doc["failed"], 0);
  bool found = false;
  for (const json& p : doc["providers"])
    if (p["path"] == root_ + "/fb") {
      found = true;
      EXPECT_EQ(p["state"], "active");
      EXPECT_EQ(p["materialized"], 1);
    }
  EXPECT_TRUE(found) << doc.dump();
  const CommandResult human = kcachectl({"prefetch"});
  EXPECT_EQ(human.exit_code, 0) << human.err;
  EXPECT_NE(human.out.find("2 active providers"), std::string::npos) << human.out;
}

TEST_F(LiveProviders, PrefetchIsForAdminsOnlyWhileAnyoneMayListProviders) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run a client as another uid";
  ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);  // nobody must reach the socket
  pack_provider("fa", "flash", "1.0", {"sm_90a=" + cubin_file("sm_90a", "attn")});
  start_with_devices("9.0", {"--socket-mode", "0666"});
  wait_state(root_ + "/fa", "active");
  const auto as_nobody = [&](const std::vector<std::string>& args) {
    return run_command(kcachectl_as_nobody(socket_, args));
  };
  const CommandResult refused = as_nobody({"prefetch"});
  EXPECT_EQ(refused.exit_code, 1) << refused.out;
  EXPECT_NE(refused.err.find("permission denied: prefetch requires"), std::string::npos) << refused.err;
  const CommandResult listed = as_nobody({"providers", "--json"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_EQ(json::parse(listed.out)["providers"][0]["state"], "active");
  EXPECT_EQ(as_nobody({"status"}).exit_code, 0);
  EXPECT_NE(read_file(log_path_).find("refused prefetch from uid 65534"), std::string::npos);
  EXPECT_EQ(kcachectl({"prefetch"}).exit_code, 0);  // root may
}

TEST_F(LiveProviders, ProviderRootsComeFromTheConfigFileToo) {
  pack_provider("fa", "flash", "1.0", {"sm_90a=" + cubin_file("sm_90a", "attn")});
  const std::string config = dir_ + "/kcached.toml";
  write_file(config, "provider_roots = [\"" + root_ + "\"]\n");
  start({"--devices", "9.0", "--config", config});
  wait_for(root_ + "/fa", [](const json& prov) { return prov.value("materialized", 0) == 1; });
}

}  // namespace
}  // namespace kcache::test
