// Every invalid provider shows its reason, and none hides the good ones; kcache-pack refuses
// what the daemon would refuse and `kcache-pack verify` applies the daemon's rules.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "test_providers_support.hpp"

namespace kcache::test {
namespace {

namespace fs = std::filesystem;
using ProviderValidation = ProviderFixture;

json module_entry(const std::string& name, const std::string& file, const std::string& bytes,
                  const std::string& compression = "none") {
  return {{"name", name},
          {"file", file},
          {"target", "sm_90a"},
          {"size", bytes.size()},
          {"digest", digest_of(std::string_view(bytes)).hex()},
          {"compression", compression}};
}

json manifest(const std::string& name, std::vector<json> modules) {
  return {{"format", 1},        {"name", name},          {"package", "pkg"},
          {"version", "1.0"},   {"backend", "cuda-13.0"}, {"targets", {"sm_90a"}},
          {"modules", modules}};
}

TEST_F(ProviderValidation, EveryInvalidProviderShowsItsReasonAndNoneHidesTheOthers) {
  const std::string cubin = cubin_bytes("sm_90a");
  const auto put = [&](const std::string& dir, const json& m) {
    write_file(root_ + "/" + dir + "/kcache-provider.json", m.dump());
  };
  // ../ in a path: refused by the manifest grammar.
  put("traversal", manifest("traversal", {module_entry("k", "../outside.cubin", cubin)}));
  // A symlink to a file outside the provider.
  write_file(dir_ + "/outside.cubin", cubin);
  fs::create_directories(root_ + "/symlink/sm_90a");
  fs::create_symlink(dir_ + "/outside.cubin", root_ + "/symlink/sm_90a/k.cubin");
  put("symlink", manifest("symlink", {module_entry("k", "sm_90a/k.cubin", cubin)}));
  // Bytes that do not hash to the manifest's digest.
  write_file(root_ + "/digest/k.cubin", cubin);
  json wrong = module_entry("k", "k.cubin", cubin);
  wrong["digest"] = digest_of(std::string_view("not these bytes")).hex();
  put("digest", manifest("digest", {wrong}));
  // A zstd frame of 16 MiB declared as 4 KiB.
  const std::string small(4096, 'k');
  write_file(root_ + "/bomb/k.cubin.zst", zstd(std::string(16u << 20, '\0')));
  put("bomb", manifest("bomb", {module_entry("k", "k.cubin.zst", small, "zstd")}));
  // PTX text where SASS is declared.
  const std::string ptx = ptx_bytes("sm_90a");
  write_file(root_ + "/ptx/k.cubin", ptx);
  put("ptx", manifest("ptx", {module_entry("k", "k.cubin", ptx)}));
  // An ELF for another machine.
  std::string x86 = cubin;
  x86[18] = 62;
  x86[19] = 0;
  write_file(root_ + "/machine/k.cubin", x86);
  put("machine", manifest("machine", {module_entry("k", "k.cubin", x86)}));
  // A manifest cut short.
  write_file(root_ + "/truncated/k.cubin", cubin);
  const std::string text = manifest("truncated", {module_entry("k", "k.cubin", cubin)}).dump();
  write_file(root_ + "/truncated/kcache-provider.json", text.substr(0, text.size() - 20));
  // A newer manifest format.
  json newer = manifest("newer", {module_entry("k", "k.cubin", cubin)});
  newer["format"] = 2;
  write_file(root_ + "/newer/k.cubin", cubin);
  put("newer", newer);
  // One good and one bad module: the provider stays active for the good one.
  write_file(root_ + "/mixed/good.cubin", cubin);
  write_file(root_ + "/mixed/bad.cubin", ptx);
  put("mixed", manifest("mixed", {module_entry("good", "good.cubin", cubin),
                                  module_entry("bad", "bad.cubin", ptx)}));
  // And a provider with nothing wrong.
  write_file(root_ + "/fine/k.cubin", cubin);
  put("fine", manifest("fine", {module_entry("k", "k.cubin", cubin)}));

  start_with_devices("9.0");
  const std::vector<std::tuple<std::string, std::string, std::string>> expected{
      {"traversal", "rejected", "leaves the provider directory"},
      {"symlink", "rejected", "resolves outside the provider directory"},
      {"digest", "rejected", "digest mismatch"},
      {"bomb", "rejected", "decompression bomb"},
      {"ptx", "rejected", "PTX"},
      {"machine", "rejected", "machine"},
      {"truncated", "incomplete", "truncated"},
      {"newer", "rejected", "unsupported manifest format 2"},
      {"mixed", "active", "1 of 2 modules refused"},
      {"fine", "active", ""},
  };
  for (const auto& [dir, state, reason] : expected) {
    const json p = wait_for(root_ + "/" + dir, [&, &state = state, &reason = reason](const json& prov) {
      return prov.value("state", "") == state &&
             prov.value("reason", "").find(reason) != std::string::npos;
    });
    if (reason.empty()) {
      EXPECT_EQ(p.value("reason", "?"), "") << dir;
    }
  }
  const json mixed = wait_state(root_ + "/mixed", "active");
  ASSERT_EQ(mixed["refused_modules"].size(), 1u);
  EXPECT_EQ(mixed["refused_modules"][0]["name"], "bad");

  // The human form lists every reason too.
  const CommandResult human = kcachectl({"providers"});
  ASSERT_EQ(human.exit_code, 0) << human.err;
  EXPECT_NE(human.out.find("digest mismatch"), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("rejected"), std::string::npos) << human.out;

  Client c = client();
  Request r;
  r.name = "k";
  r.version = "1.0";
  r.device = 0;
  auto m = c.get(r);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->origin, Origin::provider);
  EXPECT_EQ(m->key, provider_key("fine", "pkg", "1.0", "", "k", "sm_90a", cubin));
  r.name = "good";
  auto good = c.get(r);
  ASSERT_TRUE(good.ok()) << good.error().message;
  r.name = "bad";
  auto bad = c.get(r);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, Errc::not_found);
  EXPECT_NE(bad.error().message.find("PTX"), std::string::npos) << bad.error().message;
  // Nothing refused was ever published.
  const CommandResult ls = kcachectl({"ls", "--json"});
  EXPECT_EQ(json::parse(ls.out)["total"], 2) << ls.out;
}

TEST_F(ProviderValidation, HostileNamesAndNumbersInARootAreReportedNeverFatal) {
  const std::string cubin = cubin_bytes("sm_90a");
  // A number no double holds: refused as invalid JSON, at every start (no crash loop).
  std::string huge = manifest("huge", {module_entry("k", "k.cubin", cubin)}).dump();
  huge.replace(huge.find("\"format\":1"), 10, "\"format\":1e400");
  write_file(root_ + "/huge/k.cubin", cubin);
  write_file(root_ + "/huge/kcache-provider.json", huge);
  // A directory whose name is not UTF-8, holding a good provider.
  const std::string odd = root_ + "/odd\xff\ndir";
  write_file(odd + "/k.cubin", cubin);
  write_file(odd + "/kcache-provider.json", manifest("odd", {module_entry("k", "k.cubin", cubin)}).dump());

  start_with_devices("9.0");
  for (int round = 0; round < 2; ++round) {
    wait_for(root_ + "/huge", [](const json& p) {
      return p.value("state", "") == "rejected" &&
             p.value("reason", "").find("number overflow") != std::string::npos;
    });
    // The odd directory is listed with its name escaped (common/text.hpp), and it serves.
    wait_for(root_ + "/odd\\xff\\x0adir", [](const json& p) { return p.value("state", "") == "active"; });
    const CommandResult human = kcachectl({"providers"});
    EXPECT_EQ(human.exit_code, 0) << human.err;
    EXPECT_NE(human.out.find("odd\\xff\\x0adir"), std::string::npos) << human.out;
    EXPECT_EQ(status()["internal_errors"], 0) << "status after round " << round;
    EXPECT_EQ(read_file(log_path_).find("\ndir"), std::string::npos) << "a name forged a log line";
    restart();
  }
}

// kcached reads provider files with no more rights than the provider's owner: a hard link
// to a file that owner may not read is refused before a byte is read, and its digest is
// never printed. The owner's own files in the same kind of directory serve.
TEST_F(ProviderValidation, AHardLinkToAFileTheProvidersOwnerMayNotReadIsRefusedUnread) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a provider directory to another uid";
  constexpr uid_t kOwner = 65534;
  const std::string cubin = cubin_bytes("sm_90a");
  const std::string secret = dir_ + "/root-only.cubin";  // stands in for /etc/shadow
  const std::string secret_bytes = "root's secret " + std::string(4096, 's');
  write_file(secret, secret_bytes);
  ASSERT_EQ(::chmod(secret.c_str(), 0600), 0);
  fs::create_directories(root_ + "/linked");
  ASSERT_EQ(::link(secret.c_str(), (root_ + "/linked/k.cubin").c_str()), 0);
  json guessed = module_entry("k", "k.cubin", secret_bytes);
  guessed["digest"] = digest_of(std::string_view("a guess")).hex();
  write_file(root_ + "/linked/kcache-provider.json", manifest("linked", {guessed}).dump());
  write_file(root_ + "/own/mine.cubin", cubin);
  write_file(root_ + "/own/kcache-provider.json", manifest("own", {module_entry("mine", "mine.cubin", cubin)}).dump());
  for (const char* dir : {"/linked", "/own", "/own/mine.cubin", "/own/kcache-provider.json"})
    ASSERT_EQ(::chown((root_ + dir).c_str(), kOwner, kOwner), 0);

  start_with_devices("9.0");
  const json linked = wait_for(root_ + "/linked", [](const json& p) {
    return p.value("state", "") == "rejected" &&
           p.value("reason", "").find("is not readable by the provider directory's owner (uid 65534)") !=
               std::string::npos;
  });
  EXPECT_NE(linked.dump().find("hard-linked"), std::string::npos) << linked.dump();
  const std::string real_digest = digest_of(std::string_view(secret_bytes)).hex();
  EXPECT_EQ(kcachectl({"providers", "--json"}).out.find(real_digest), std::string::npos)
      << "the linked file's digest was printed";
  EXPECT_EQ(read_file(log_path_).find(real_digest), std::string::npos);
  wait_state(root_ + "/own", "active");
}

TEST_F(ProviderValidation, AProviderOfManyRefusedModulesListsAFewAndCountsThemAll) {
  const std::string cubin = cubin_bytes("sm_90a");
  std::string x86 = cubin;  // an ELF for another machine: each such module is refused
  x86[18] = 62;
  x86[19] = 0;
  std::vector<json> modules{module_entry("good", "good.cubin", cubin)};
  write_file(root_ + "/many/good.cubin", cubin);
  for (int i = 0; i < 40; ++i) {
    const std::string file = "bad" + std::to_string(i) + ".cubin";
    write_file(root_ + "/many/" + file, x86);
    modules.push_back(module_entry("bad" + std::to_string(i), file, x86));
  }
  write_file(root_ + "/many/kcache-provider.json", manifest("many", modules).dump());
  start_with_devices("9.0");
  // Modules are checked as they are prefetched: wait for all 41.
  const json p = wait_for(root_ + "/many", [](const json& prov) {
    return prov.value("state", "") == "active" && prov.value("refused_total", 0) == 40;
  });
  EXPECT_EQ(p["refused_modules"].size(), 32u);
  EXPECT_EQ(p["refused_total"], 40);
  EXPECT_EQ(p["refused_truncated"], true);
  EXPECT_LT(status().dump().size(), 64u << 10) << "status carries every refused module";
}

// A root of many provider directories: status and providers list the first 256 and count
// them all, so anyone's 12-byte request cannot make the daemon build megabytes on its loop.
TEST_F(ProviderValidation, ARootOfManyProvidersListsTheFirstFewAndCountsThemAll) {
  for (int i = 0; i < 300; ++i) fs::create_directories(root_ + "/p" + std::to_string(1000 + i));
  start_with_devices("9.0");
  json doc;
  for (int i = 0; i < 100; ++i) {
    doc = providers();
    if (doc.value("providers_total", 0) == 300) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(doc.value("providers_total", 0), 300) << doc.dump().substr(0, 400);
  EXPECT_EQ(doc["providers"].size(), 256u);
  EXPECT_TRUE(doc.value("providers_truncated", false));
  const json s = status();
  EXPECT_EQ(s["providers"].size(), 256u);
  EXPECT_EQ(s.value("providers_total", 0), 300);
  const CommandResult human = kcachectl({"providers"});
  EXPECT_NE(human.out.find("(256 of 300 providers shown)"), std::string::npos) << human.out.substr(0, 300);
}

TEST_F(ProviderValidation, PackRefusesPtxAndMismatchedTargets) {
  const std::string ptx = dir_ + "/k.ptx";
  write_file(ptx, ptx_bytes("sm_90a"));
  const std::vector<std::string> common{"--name", "n", "--package", "p", "--version", "1.0",
                                        "--backend", "cuda-13.0", "--out", dir_ + "/out"};
  auto args = common;
  args.push_back("sm_90a=" + ptx);
  CommandResult r = pack(args);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("PTX"), std::string::npos) << r.err;
  args = common;
  args.insert(args.end(), {"--target", "sm_86", cubin_file("sm_80", "k")});
  r = pack(args);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("sm_86"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ + "/out/kcache-provider.json"));
  args = common;
  args.push_back(cubin_file("sm_90a", "k"));  // no target
  EXPECT_EQ(pack(args).exit_code, 2);
}

TEST_F(ProviderValidation, PackRefusesCodeObjectsForAnotherAmdTargetOrMachine) {
  const std::string gfx90a = hsaco_bytes("gfx90a");
  if (gfx90a.empty()) GTEST_SKIP() << "hiprtc cannot build a gfx90a code object";
  const std::vector<std::string> common{"--name", "n", "--package", "p", "--version", "1.0",
                                        "--backend", "rocm-5.2", "--out", dir_ + "/out"};
  auto args = common;
  args.push_back("gfx1030=" + hsaco_file("gfx90a", "k"));  // another processor
  CommandResult r = pack(args);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("gfx1030"), std::string::npos) << r.err;
  args = common;
  args.push_back("gfx90a:xnack-=" + hsaco_file("gfx90a", "k"));  // built for any xnack
  r = pack(args);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("xnack"), std::string::npos) << r.err;
  args = common;
  args.push_back("gfx90a=" + cubin_file("sm_90a", "k"));  // an NVIDIA ELF
  r = pack(args);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_FALSE(r.err.empty());
  EXPECT_FALSE(fs::exists(dir_ + "/out/kcache-provider.json"));
  // The right one packs, and verifies offline.
  args = common;
  args.push_back("gfx90a=" + hsaco_file("gfx90a", "k"));
  r = pack(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir_ + "/out/gfx90a/k.hsaco.zst"));
  r = pack({"verify", dir_ + "/out"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST_F(ProviderValidation, VerifyAppliesTheDaemonsRules) {
  const std::string out = dir_ + "/out";
  CommandResult r = pack({"--name", "n", "--package", "p", "--version", "1.0", "--backend",
                          "cuda-13.0", "--out", out, "--compress", "none", "--target", "sm_90a",
                          cubin_file("sm_90a", "alpha"), cubin_file("sm_90a", "beta")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = pack({"verify", out, "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  json doc = json::parse(r.out);
  EXPECT_TRUE(doc["ok"].get<bool>());
  EXPECT_EQ(doc["modules"].size(), 2u);

  // Flip one byte of one module: only that module fails, with the reason.
  const std::string victim = out + "/sm_90a/beta.cubin";
  std::string bytes = read_file(victim);
  bytes[bytes.size() / 2] ^= 0x55;
  fs::remove(victim);
  write_file(victim, bytes);
  r = pack({"verify", out, "--json"});
  EXPECT_EQ(r.exit_code, 1);
  doc = json::parse(r.out);
  EXPECT_FALSE(doc["ok"].get<bool>());
  EXPECT_EQ(doc["state"], "active");
  EXPECT_TRUE(doc["modules"][0]["ok"].get<bool>());
  EXPECT_NE(doc["modules"][1]["reason"].get<std::string>().find("digest mismatch"), std::string::npos);
}

}  // namespace
}  // namespace kcache::test
