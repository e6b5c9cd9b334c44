// FlashInfer JIT-cache provider wheels, laid out exactly as pip installs them (dist-info with
// entry_points.txt and RECORD, the package with manifest.json and jit_cache/<mod>/<mod>.so),
// served by the real kcached. The modules are real host objects built at test time with nvcc
// (`-shared -Xfatbin=-compress-all -gencode …`), as FlashInfer builds them; skipped, with the
// reason printed, where nvcc is absent.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "nvcc_build.hpp"
#include "providers/sha2.hpp"
#include "test_providers_support.hpp"

namespace kcache::test {
namespace {

namespace fs = std::filesystem;
constexpr const char* kVersion = "0.6.18+cu130";
constexpr const char* kModule = "batch_decode_with_kv_cache_fp16";

using FlashInferWheels = ProviderFixture;

std::string host_object(const std::vector<std::string>& gencodes, bool compress = true) {
  const auto& so = kcache::testing::nvcc_host_object(gencodes, compress);
  if (!so.ok) return {};
  return std::string(reinterpret_cast<const char*>(so.bytes.data()), so.bytes.size());
}

#define KC_HOST_OBJECT_OR_SKIP(var, ...)                                         \
  const std::string var = host_object(__VA_ARGS__);                              \
  if (var.empty()) {                                                             \
    const auto& why = kcache::testing::nvcc_host_object(__VA_ARGS__);           \
    if (!why.available) GTEST_SKIP() << why.message;                             \
    FAIL() << why.message;                                                       \
  }


void put(const std::string& path, const std::string& bytes) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

class Wheels {
 public:
  explicit Wheels(std::string site_packages) : sp_(std::move(site_packages)) {}

  // Installs flashinfer-jit-cache-<tag> <version> holding `modules`, each the given .so.
  void install(const std::string& tag, const std::string& version,
               const std::vector<std::pair<std::string, std::string>>& modules,
               const std::string& manifest_override = {}, bool record = true) {
    const std::string pkg = sp_ + "/flashinfer_jit_cache/providers/" + tag;
    put(sp_ + "/flashinfer_jit_cache/__init__.py", "");
    put(pkg + "/__init__.py", "def get_provider():\n    ...\n");
    put(pkg + "/_build_meta.py", "CUDA_ARCHITECTURES = ['" + tag + "']\n");
    json names = json::array();
    for (const auto& [name, bytes] : modules) {
      put(pkg + "/jit_cache/" + name + "/" + name + ".so", bytes);
      names.push_back(name);
    }
    const json manifest{{"cuda_architectures", {tag}},
                        {"distribution", "flashinfer-jit-cache-" + tag},
                        {"modules", names},
                        {"provider_id", tag},
                        {"schema_version", 1},
                        {"version", version}};
    put(pkg + "/manifest.json",
                  manifest_override.empty() ? manifest.dump(2) + "\n" : manifest_override);
    const std::string info = dist_info(tag, version);
    put(info + "/METADATA", "Metadata-Version: 2.1\nName: flashinfer-jit-cache-" + tag +
                                          "\nVersion: " + version + "\n");
    put(info + "/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp39-abi3-manylinux_2_28_x86_64\n");
    put(info + "/entry_points.txt", "[flashinfer.jit_cache.providers]\n" + tag +
                                                  " = flashinfer_jit_cache.providers." + tag +
                                                  ":get_provider\n");
    put(info + "/INSTALLER", "pip\n");
    modules_[tag] = modules;
    if (record) write_record(tag, version);
  }
  // As pip writes it: `path,sha256=<urlsafe base64, unpadded>,size`, the RECORD itself last.
  void write_record(const std::string& tag, const std::string& version) {
    const std::string pkg = "flashinfer_jit_cache/providers/" + tag;
    std::string text = pkg + "/__init__.py,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0\n";
    for (const auto& [name, bytes] : modules_[tag]) {
      std::string hash = *providers::sha_base64_of_bytes(bytes, providers::ShaAlgorithm::sha256);
      for (char& c : hash) c = c == '+' ? '-' : c == '/' ? '_' : c;
      while (!hash.empty() && hash.back() == '=') hash.pop_back();
      text += pkg + "/jit_cache/" + name + "/" + name + ".so,sha256=" + hash + "," +
              std::to_string(bytes.size()) + "\n";
    }
    text += "flashinfer_jit_cache_" + tag + "-" + version + ".dist-info/RECORD,,\n";
    put(dist_info(tag, version) + "/RECORD", text);
  }
  std::string dist_info(const std::string& tag, const std::string& version) const {
    return sp_ + "/flashinfer_jit_cache_" + tag + "-" + version + ".dist-info";
  }
  std::string package(const std::string& tag) const {
    return sp_ + "/flashinfer_jit_cache/providers/" + tag;
  }
  std::string module_file(const std::string& tag, const std::string& name) const {
    return package(tag) + "/jit_cache/" + name + "/" + name + ".so";
  }
  // Packages that have nothing to do with FlashInfer: a console script, a plugin group.
  void install_unrelated(int count) {
    for (int i = 0; i < count; ++i) {
      const std::string name = "unrelated_pkg" + std::to_string(i);
      put(sp_ + "/" + name + "/__init__.py", "");
      put(sp_ + "/" + name + "/lib.so", "not a provider");
      const std::string info = sp_ + "/" + name + "-1.0.dist-info";
      put(info + "/METADATA", "Name: " + name + "\n");
      put(info + "/RECORD", "");
      if (i % 3 == 0)
        put(info + "/entry_points.txt",
                      "[console_scripts]\n" + name + " = " + name + ":main\n");
    }
  }

 private:
  std::string sp_;
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> modules_;
};

Result<Module> get(Client& c, const std::string& name, const std::string& version, int device) {
  Request r;
  r.name = name;
  r.version = version;
  r.device = device;
  return c.get(r);
}

TEST_F(FlashInferWheels, ServeEachDeviceOfAMixedHostItsWheelsModuleByteForByte) {
  KC_HOST_OBJECT_OR_SKIP(so90a, {"arch=compute_90a,code=sm_90a"});
  KC_HOST_OBJECT_OR_SKIP(so100f, {"arch=compute_100f,code=sm_100f"});
  KC_HOST_OBJECT_OR_SKIP(so80, {"arch=compute_80,code=sm_80"});
  KC_HOST_OBJECT_OR_SKIP(so90a_134, {"arch=compute_90a,code=sm_90a"}, false);
  // A directory of virtualenvs: one with the +cu130 wheels among dozens of unrelated
  // packages, one with a +cu134 build.
  const std::string venv_a = root_ + "/venv-a", venv_b = root_ + "/venv-b";
  write_file(venv_a + "/pyvenv.cfg", "home = /usr/bin\n");
  write_file(venv_b + "/pyvenv.cfg", "home = /usr/bin\n");
  Wheels a(venv_a + "/lib/python3.11/site-packages");
  Wheels b(venv_b + "/lib/python3.12/site-packages");
  a.install("sm90a", kVersion, {{kModule, so90a}});
  a.install("sm100f", kVersion, {{kModule, so100f}});
  a.install("sm80", kVersion, {{kModule, so80}});
  a.install_unrelated(40);
  b.install("sm90a", "0.6.18+cu134", {{kModule, so90a_134}});
  start_with_devices("sm_90a,sm_103a,sm_86");
  for (const char* tag : {"sm90a", "sm100f", "sm80"}) wait_state(a.package(tag), "active");
  wait_state(b.package("sm90a"), "active");

  const json doc = providers();
  EXPECT_EQ(doc["providers_total"], 4) << "unrelated packages make no entries: " << doc.dump();
  for (const json& p : doc["providers"]) {
    EXPECT_EQ(p["kind"], "flashinfer") << p.dump();
    EXPECT_EQ(p["reason"], "") << p.dump();
  }
  Client c = client();
  const std::pair<int, std::string> expect[] = {{0, so90a}, {1, so100f}, {2, so80}};
  const char* targets[] = {"sm_90a", "sm_100f", "sm_80"};
  for (const auto& [device, bytes] : expect) {
    auto m = get(c, kModule, kVersion, device);
    ASSERT_TRUE(m.ok()) << device << ": " << m.error().message;
    EXPECT_EQ(m->origin, Origin::provider);
    EXPECT_EQ(m->target, targets[device]);
    EXPECT_EQ(read_file(m->path), bytes) << "device " << device;
    EXPECT_EQ(m->path.rfind(cache_dir_ + "/objects/", 0), 0u) << m->path;
    EXPECT_TRUE(m->path.ends_with(".so")) << m->path;
  }
  // The operator's view: kcachectl get prints the served path.
  const CommandResult cli =
      kcachectl({"get", "--name", kModule, "--version", kVersion, "--device", "1"});
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  std::string printed = cli.out;
  while (!printed.empty() && printed.back() == '\n') printed.pop_back();
  EXPECT_EQ(read_file(printed), so100f) << printed;
  // +cu134 serves only +cu134 requests, and never a +cu130 one.
  auto m134 = get(c, kModule, "0.6.18+cu134", 0);
  ASSERT_TRUE(m134.ok()) << m134.error().message;
  EXPECT_EQ(read_file(m134->path), so90a_134);
  auto m134_on_sm103 = get(c, kModule, "0.6.18+cu134", 1);
  EXPECT_FALSE(m134_on_sm103.ok());
  auto bare = get(c, kModule, "0.6.18", 0);
  EXPECT_FALSE(bare.ok()) << "a public version alone matches no local build";
  // No version at all: the error says which versions would have served.
  const CommandResult unversioned = kcachectl({"get", "--name", kModule, "--device", "0"});
  EXPECT_NE(unversioned.exit_code, 0);
  EXPECT_NE(unversioned.err.find("the request gives no version, and providers serve '" + std::string(kModule) +
                                 "' only to a consumer's exact version: 0.6.18+cu130, 0.6.18+cu134"),
            std::string::npos) << unversioned.err;

  // The modules are ordinary entries: ls lists them, verify re-hashes them clean.
  const CommandResult verify = kcachectl({"verify"});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
}

TEST_F(FlashInferWheels, UninstallingAWheelChangesNothingAWorkerWasGiven) {
  KC_HOST_OBJECT_OR_SKIP(so90a, {"arch=compute_90a,code=sm_90a"});
  const std::string sp = root_ + "/site-packages";
  Wheels w(sp);
  w.install("sm90a", kVersion, {{kModule, so90a}});
  start_with_devices("9.0");
  wait_state(w.package("sm90a"), "active");
  Client c = client();
  auto m = get(c, kModule, kVersion, 0);
  ASSERT_TRUE(m.ok()) << m.error().message;
  // pip uninstall: the package and its dist-info go.
  fs::remove_all(w.package("sm90a"));
  fs::remove_all(w.dist_info("sm90a", kVersion));
  wait_state(w.package("sm90a"), "removed");
  EXPECT_EQ(read_file(m->path), so90a) << "the served copy is the cache's, not the wheel's";
  EXPECT_FALSE(get(c, kModule, kVersion, 0).ok()) << "an uninstalled wheel serves nothing new";
  const CommandResult verify = kcachectl({"verify"});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
}

// A module rewritten in place after pip installed it (same size) no longer has the sha256 the
// wheel's RECORD lists: it is refused with both hashes, never served.
TEST_F(FlashInferWheels, AModuleThatDiffersFromTheWheelsRecordIsRefused) {
  KC_HOST_OBJECT_OR_SKIP(so90a, {"arch=compute_90a,code=sm_90a"});
  KC_HOST_OBJECT_OR_SKIP(other, {"arch=compute_90a,code=sm_90a"}, false);
  const std::string sp = root_ + "/site-packages";
  Wheels w(sp);
  w.install("sm90a", kVersion, {{kModule, so90a}, {"resized", so90a}});
  std::string tampered = so90a;
  tampered[tampered.size() - 1] ^= 0x01;  // a byte of the section table's tail: still an ELF
  put(w.module_file("sm90a", kModule), tampered);
  put(w.module_file("sm90a", "resized"), other);
  start_with_devices("9.0");
  const json p = wait_for(w.package("sm90a"), [](const json& prov) {
    return prov.value("refused_total", 0) == 2 || prov.value("state", "") == "rejected";
  });
  const std::string all = p.dump();
  EXPECT_NE(all.find("differs from the wheel's RECORD"), std::string::npos) << all;
  EXPECT_NE(all.find("the wheel's RECORD says " + std::to_string(so90a.size())), std::string::npos)
      << all;
  Client c = client();
  EXPECT_FALSE(get(c, kModule, kVersion, 0).ok());
}

TEST_F(FlashInferWheels, AWheelBeingInstalledIsUsedOnlyOnceItsRecordIsWritten) {
  KC_HOST_OBJECT_OR_SKIP(so90a, {"arch=compute_90a,code=sm_90a"});
  const std::string sp = root_ + "/site-packages";
  Wheels w(sp);
  w.install("sm90a", kVersion, {{kModule, so90a}}, {}, /*record=*/false);
  start_with_devices("9.0");
  const json p = wait_state(w.package("sm90a"), "incomplete");
  EXPECT_NE(p["reason"].get<std::string>().find("RECORD"), std::string::npos) << p.dump();
  Client c = client();
  EXPECT_FALSE(get(c, kModule, kVersion, 0).ok());
  w.write_record("sm90a", kVersion);
  wait_state(w.package("sm90a"), "active");
  auto m = get(c, kModule, kVersion, 0);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(read_file(m->path), so90a);
}

TEST_F(FlashInferWheels, InvalidProvidersAreRejectedWithTheShimsReasons) {
  KC_HOST_OBJECT_OR_SKIP(so90a, {"arch=compute_90a,code=sm_90a"});
  KC_HOST_OBJECT_OR_SKIP(so80, {"arch=compute_80,code=sm_80"});
  const std::string sp = root_ + "/site-packages";
  Wheels w(sp);
  w.install("sm90a", kVersion, {{kModule, so90a}, {"wrong_arch", so80}});
  w.install("sm100a", kVersion, {{kModule, so90a}},
            R"({"schema_version": 2, "distribution": "d", "version": "v", "modules": ["m"], "cuda_architectures": ["sm100a"]})");
  w.install("sm120a", kVersion, {{kModule, so90a}}, R"({"schema_version": 1, "modules": []})");
  w.install("sm121a", kVersion, {{kModule, so90a}},
            R"({"schema_version": 1, "distribution": "d", "version": "v", "modules": ["m"], "cuda_architectures": ["sm_9x"]})");
  // An entry point that needs provider code run is not followed.
  write_file(sp + "/evil-1.0.dist-info/RECORD", "");
  write_file(sp + "/evil-1.0.dist-info/entry_points.txt",
             "[flashinfer.jit_cache.providers]\nevil = evil.providers:make_provider\n"
             "dots = ..etc:get_provider\n");
  // A listed module whose file is missing.
  fs::remove_all(w.package("sm90a") + "/jit_cache/" + std::string("wrong_arch"));
  w.install("sm89", kVersion, {{"escape", "x"}});
  fs::remove(w.module_file("sm89", "escape"));
  fs::create_symlink("/etc/passwd", w.module_file("sm89", "escape"));
  start_with_devices("9.0");

  const json ok = wait_state(w.package("sm90a"), "active");
  EXPECT_NE(ok["reason"].get<std::string>().find("jit_cache/wrong_arch/wrong_arch.so is missing"),
            std::string::npos) << ok.dump();
  const struct {
    std::string path;
    const char* reason;
  } cases[] = {
      {w.package("sm100a"), "unsupported schema_version 2"},
      {w.package("sm120a"), "is missing fields: distribution, version, cuda_architectures"},
      {w.package("sm121a"), "\"sm_9x\" is not of the form"},
      {sp + "/evil/providers", "kcache runs no provider code"},
      {sp + "/evil-1.0.dist-info#dots", "does not name a module by dotted identifiers"},
      {w.package("sm89"), "resolves outside the provider directory"},
  };
  for (const auto& c : cases) {
    const json p = wait_state(c.path, "rejected");
    EXPECT_NE(p.value("reason", "").find(c.reason), std::string::npos) << c.path << ": " << p.dump();
  }
}

TEST_F(FlashInferWheels, AModuleWhoseDeviceCodeDoesNotMatchTheWheelIsRefusedWithTheEntryNamed) {
  KC_HOST_OBJECT_OR_SKIP(so80, {"arch=compute_80,code=sm_80"});
  KC_HOST_OBJECT_OR_SKIP(so_ptx, {"arch=compute_90a,code=[sm_90a,compute_90a]"});
  const std::string sp = root_ + "/site-packages";
  Wheels w(sp);
  w.install("sm90a", kVersion, {{"old_code", so80}, {"with_ptx", so_ptx}});
  start_with_devices("9.0");
  // Prefetch opens both modules for the sm_90 device and refuses them: nothing usable is left.
  const json p = wait_state(w.package("sm90a"), "rejected");
  ASSERT_EQ(p["refused_modules"].size(), 2u) << p.dump();
  EXPECT_NE(p["refused_modules"][0]["reason"].get<std::string>().find(
                "its sass sm_80 entry does not load"), std::string::npos) << p.dump();
  EXPECT_NE(p["refused_modules"][1]["reason"].get<std::string>().find(
                "it carries PTX (ptx sm_90a) but the provider is SASS-only"), std::string::npos)
      << p.dump();
  Client c = client();
  auto old = get(c, "old_code", kVersion, 0);
  ASSERT_FALSE(old.ok());
  EXPECT_NE(old.error().message.find("sm_80"), std::string::npos) << old.error().message;
  EXPECT_EQ(stat("provider_hits"), 0u);
}

}  // namespace
}  // namespace kcache::test
