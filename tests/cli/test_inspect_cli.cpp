// `kcachectl inspect` over binaries compiled now by NVRTC and hiprtc (skipped, with the
// reason, where a compiler is missing), hand-crafted images and files that are no module.
#include <nlohmann/json.hpp>

#include <set>

#include "elf_builder.hpp"
#include "golden.hpp"
#include "gpu_compilers.hpp"
#include "nvcc_build.hpp"

namespace kcache::cli_test {
namespace {

constexpr int kOk = 0, kFailure = 1;

std::string text_of(const std::vector<std::byte>& bytes) {
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

// Skips the test (with the paths tried) when the compiler library is missing.
#define REQUIRE_COMPILED(outcome)                                                          \
  do {                                                                                     \
    if ((outcome).status == testing::CompileOutcome::Status::unavailable) {                \
      GTEST_SKIP() << "compiler not available: " << (outcome).message;                     \
    }                                                                                      \
    ASSERT_EQ((outcome).status, testing::CompileOutcome::Status::ok) << (outcome).message; \
  } while (false)

TEST(InspectCli, ReportsTargetMachineAndPtxOfNvrtcCubins) {
  const TempDir dir;
  std::vector<std::string> args = {"inspect"};
  std::string expected;
  const struct {
    const char* arch;
    const char* line;
  } cases[] = {
      {"sm_90a", "sm_90a cubin (EM_CUDA 190, e_flags 0x6005a04)"},
      {"sm_90", "sm_90 cubin (EM_CUDA 190, e_flags 0x6005a04)"},
      {"sm_100f", "sm_100f cubin (EM_CUDA 190, e_flags 0x6006402)"},
      {"sm_120a", "sm_120a cubin (EM_CUDA 190, e_flags 0x6007802)"},
  };
  for (const auto& c : cases) {
    const auto& out = testing::nvrtc_compile(c.arch);
    REQUIRE_COMPILED(out);
    args.push_back(dir.write(std::string(c.arch) + ".cubin", text_of(out.code)));
    expected += args.back() + ": " + c.line + ": native code, no PTX, suffix from ptxas-note\n";
  }
  expect_golden(args, expected, kOk, "");
}

TEST(InspectCli, PtxTextIsNotAValidModule) {
  const auto& out = testing::nvrtc_compile("sm_90a");
  REQUIRE_COMPILED(out);
  const TempDir dir;
  const std::string ptx = dir.write("k.ptx", text_of(out.ptx));
  expect_golden({"inspect", ptx}, ptx + ": invalid: PTX text for sm_90a, not a native module\n",
                kFailure, "");
}

TEST(InspectCli, ReportsHiprtcCodeObjectsWithTheirFeatures) {
  const TempDir dir;
  std::vector<std::string> args = {"inspect"};
  std::string expected;
  const struct {
    const char* arch;
    const char* line;
  } cases[] = {
      {"gfx90a", "gfx90a amd-code-object (EM_AMDGPU 224, e_flags 0x53f)"},
      {"gfx90a:xnack-", "gfx90a:xnack- amd-code-object (EM_AMDGPU 224, e_flags 0x63f)"},
      {"gfx90a:sramecc+:xnack-",
       "gfx90a:sramecc+:xnack- amd-code-object (EM_AMDGPU 224, e_flags 0xe3f)"},
      {"gfx1030", "gfx1030 amd-code-object (EM_AMDGPU 224, e_flags 0x36)"},
  };
  for (const auto& c : cases) {
    const auto& out = testing::hiprtc_compile(c.arch);
    REQUIRE_COMPILED(out);
    args.push_back(dir.write("k" + std::to_string(args.size()) + ".hsaco", text_of(out.code)));
    expected += args.back() + ": " + c.line + ": native code, no PTX\n";
  }
  expect_golden(args, expected, kOk, "");
}

TEST(InspectCli, CraftedModulesAreDescribedWithoutACompiler) {
  const TempDir dir;
  const std::string a = dir.write("a.cubin", text_of(testing::craft_cubin(100, false, "")));
  const std::string b = dir.write("b.cubin", text_of(testing::craft_cubin(90, true, "")));
  const std::string c = dir.write("c.hsaco", text_of(testing::craft_amd(0x63f)));
  expect_golden(
      {"inspect", a, b, c},
      a +
          ": sm_100 cubin (EM_CUDA 190, e_flags 0x6006402): native code, no PTX, suffix from "
          "nv-compat\n" +  // the crafted cubin carries a not-arch-specific .nv.compat
          b +
          ": sm_90a cubin (EM_CUDA 190, e_flags 0x6005a04): native code, no PTX, suffix from "
          "nv-compat\n" +
          c +
          ": gfx90a:xnack- amd-code-object (EM_AMDGPU 224, e_flags 0x63f): native code, no PTX\n",
      kOk, "");
}

TEST(InspectCli, SaysWhyEachFileIsNotAModuleAndFails) {
  const TempDir dir;
  testing::CraftElf ptx_only;
  ptx_only.machine = 190;
  ptx_only.os_abi = 0x41;
  ptx_only.abi_version = 8;
  ptx_only.flags = 0x06005a04;
  ptx_only.sections.push_back({".nv_debug_ptx_txt", 1, 0, testing::bytes_of(".version 9.0\n")});
  const std::string files[] = {
      dir.write("junk.bin", "hello\n"),
      dir.path() + "/absent.cubin",
      KCACHECTL_PATH,
      dir.write("ptx-only.cubin", text_of(testing::build_elf(ptx_only))),
      dir.write("k.fatbin",
                text_of(testing::craft_fatbin({{1, testing::bytes_of(".version 9.0\n")}}, 90))),
      dir.write("k.bundle", text_of(testing::craft_bundle(
                                {{"hipv4-amdgcn-amd-amdhsa--gfx90a", testing::craft_amd(0x53f)}}))),
      dir.write("ok.hsaco", text_of(testing::craft_amd(0x53f))),
  };
  expect_golden(
      {"inspect", files[0], files[1], files[2], files[3], files[4], files[5], files[6]},
      files[0] +
          ": invalid: not a GPU binary: no ELF magic, and not a fatbin, offload bundle or PTX "
          "text\n" +
          files[1] + ": invalid: cannot read '" + files[1] + "': No such file or directory\n" +
          files[2] +
          ": invalid: a host object with no embedded device code (.nv_fatbin, .hip_fatbin)\n" +
          files[3] + ": invalid: a cubin for sm_90 with PTX but no native code\n" + files[4] +
          ": invalid: a CUDA fatbin [compute_90 ptx], not a single native module\n" + files[5] +
          ": invalid: a clang offload bundle [hipv4-amdgcn-amd-amdhsa--gfx90a], not a single "
          "native module\n" +
          files[6] +
          ": gfx90a amd-code-object (EM_AMDGPU 224, e_flags 0x53f): native code, no PTX\n",
      kFailure, "");
}

TEST(InspectCli, JsonDescribesEachFile) {
  const TempDir dir;
  const std::string ok =
      dir.write("k.cubin", text_of(testing::craft_cubin(90, true, "-arch sm_90a ")));
  const std::string junk = dir.write("junk.bin", "hello\n");
  expect_golden({"inspect", "--json", ok, junk}, R"json([
  {
    "contents": [],
    "e_flags": 100686340,
    "file": ")json" + ok + R"json(",
    "has_native": true,
    "has_ptx": false,
    "kind": "cubin",
    "machine": 190,
    "relocatable": false,
    "suffix_evidence": "ptxas-note",
    "target": "sm_90a",
    "tool_options": "-arch sm_90a ",
    "toolkit": "Cuda compilation tools, release 13.0, V13.0.88",
    "valid": true
  },
  {
    "error": "not a GPU binary: no ELF magic, and not a fatbin, offload bundle or PTX text",
    "file": ")json" + junk + R"json(",
    "valid": false
  }
]
)json",
                kFailure, "");
}

TEST(InspectCli, JsonOfARealCubinCarriesTheToolkitNote) {
  const auto& out = testing::nvrtc_compile("sm_100f");
  REQUIRE_COMPILED(out);
  const TempDir dir;
  const std::string path = dir.write("k.cubin", text_of(out.code));
  const CliResult r = kcachectl({"--json", "inspect", path});
  ASSERT_EQ(r.exit_code, kOk) << r.err;
  const auto doc = nlohmann::json::parse(r.out).at(0);
  EXPECT_EQ(doc["target"], "sm_100f");
  EXPECT_EQ(doc["suffix_evidence"], "ptxas-note");
  EXPECT_EQ(doc["tool_options"].get<std::string>().find("-arch sm_100f"), 0u) << doc;
  EXPECT_EQ(doc["toolkit"].get<std::string>().rfind("Cuda compilation tools", 0), 0u) << doc;
}

// A FlashInfer-style module: an x86-64 .so whose .nv_fatbin holds compressed SASS.
TEST(InspectCli, ListsTheDeviceCodeEntriesOfAHostObject) {
  const auto& so = testing::nvcc_host_object({"arch=compute_90a,code=sm_90a", "arch=compute_80,code=sm_80"});
  if (!so.available) GTEST_SKIP() << so.message;
  ASSERT_TRUE(so.ok) << so.message;
  const TempDir dir;
  const std::string path = dir.write("mod.so", text_of(so.bytes));
  const CliResult human = kcachectl({"inspect", path});
  ASSERT_EQ(human.exit_code, kOk) << human.err;
  EXPECT_EQ(human.out.rfind(path + ": host shared object, ELF machine EM_X86_64 (62), ", 0), 0u)
      << human.out;
  EXPECT_NE(human.out.find("] sass sm_90a, zstd, "), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("] sass sm_80, zstd, "), std::string::npos) << human.out;
  const CliResult r = kcachectl({"--json", "inspect", path});
  ASSERT_EQ(r.exit_code, kOk) << r.err;
  const auto doc = nlohmann::json::parse(r.out).at(0);
  EXPECT_EQ(doc["kind"], "host-object");
  EXPECT_EQ(doc["valid"], true);
  std::set<std::string> targets;
  for (const auto& e : doc["entries"]) {
    EXPECT_EQ(e["section"], ".nv_fatbin");
    EXPECT_EQ(e["kind"], "sass");
    EXPECT_EQ(e["compression"], "zstd");
    EXPECT_LT(e["stored_size"].get<int>(), e["size"].get<int>());
    targets.insert(e["target"].get<std::string>());
  }
  EXPECT_EQ(targets, (std::set<std::string>{"sm_80", "sm_90a"}));
}

}  // namespace
}  // namespace kcache::cli_test
