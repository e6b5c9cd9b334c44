// Binary inspection over hand-crafted images: decoding rules, and every malformed shape
// rejected with a reason and without reading past the buffer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "arch/binary_check.hpp"
#include "arch/elf_inspect.hpp"
#include "arch/gpu_containers.hpp"
#include "elf_builder.hpp"

namespace kcache {
namespace {

using testing::Bytes;

Target target(const char* s) {
  return *parse_target(s);
}

std::string inspect_error(const Bytes& b) {
  auto r = inspect_binary(b);
  EXPECT_FALSE(r.ok()) << "accepted: " << r->describe();
  if (r.ok()) return {};
  EXPECT_EQ(r.error().code, Errc::corrupt);
  return r.error().message;
}

template <class T>
void poke(Bytes* b, std::size_t at, T v) {
  std::memcpy(b->data() + at, &v, sizeof v);
}

TEST(ElfCrafted, CubinSuffixComesFromThePtxasNoteElseCompatElseFlags) {
  const struct {
    int sm;
    bool compat_arch;
    const char* options;
    const char* target;
    SuffixEvidence evidence;
  } cases[] = {
      {90, true, "-arch sm_90a ", "sm_90a", SuffixEvidence::toolkit_note},
      {90, false, "-arch sm_90 ", "sm_90", SuffixEvidence::toolkit_note},
      {100, false, "-arch sm_100f ", "sm_100f", SuffixEvidence::toolkit_note},
      {120, false, "-arch=sm_120f -O3", "sm_120f", SuffixEvidence::toolkit_note},
      {121, true, "", "sm_121a", SuffixEvidence::compat_attribute},
      {100, false, "", "sm_100", SuffixEvidence::compat_attribute},
      {80, false, "--opt 3", "sm_80", SuffixEvidence::compat_attribute},
  };
  for (const auto& c : cases) {
    const Bytes cubin = testing::craft_cubin(c.sm, c.compat_arch, c.options);
    auto info = inspect_binary(cubin);
    ASSERT_TRUE(info.ok()) << info.error().message;
    EXPECT_EQ(info->kind, BinaryKind::cubin);
    ASSERT_TRUE(info->target.has_value());
    EXPECT_EQ(info->target->str(), c.target);
    EXPECT_EQ(info->suffix_evidence, c.evidence) << c.target;
    EXPECT_TRUE(info->has_native);
    EXPECT_FALSE(info->has_ptx);
  }
}

TEST(ElfCrafted, OldAbiCubinsKeepTheSmInTheLowByteAndAccelBit0x800) {
  testing::CraftElf e;
  e.os_abi = 0x33;
  e.abi_version = 7;
  e.machine = 190;
  e.flags = 0x005a0000u | 0x800u | 0x400u | 90u;  // virtual sm_90, 64-bit, accelerators, sm_90
  e.sections.push_back({".text.k", 1, 0x6, Bytes(16, std::byte{1})});
  auto info = inspect_binary(testing::build_elf(e));
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_EQ(info->target->str(), "sm_90a");
  EXPECT_EQ(info->suffix_evidence, SuffixEvidence::e_flags);
  e.flags = 0x00500000u | 0x400u | 80u;
  info = inspect_binary(testing::build_elf(e));
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->target->str(), "sm_80");
}

TEST(ElfCrafted, ANoteThatContradictsTheHeaderIsCorrupt) {
  const std::string why = inspect_error(testing::craft_cubin(90, true, "-arch sm_100a "));
  EXPECT_NE(why.find("ptxas note says sm_100a"), std::string::npos) << why;
}

TEST(ElfCrafted, AmdFlagsDecodeProcessorAndFeatures) {
  const struct {
    std::uint32_t flags;
    std::uint8_t abi;
    const char* target;
    int generic_version;
  } cases[] = {
      {0x53f, 2, "gfx90a", 0},                  // measured hiprtc output
      {0x63f, 2, "gfx90a:xnack-", 0},           // measured
      {0x73f, 2, "gfx90a:xnack+", 0},           // measured
      {0xe3f, 2, "gfx90a:sramecc+:xnack-", 0},  // measured
      {0x530, 2, "gfx908", 0},                  // measured
      {0x036, 2, "gfx1030", 0},                 // measured
      {0xe4c, 3, "gfx942:sramecc+:xnack-", 0},
      {0xb4c, 3, "gfx942:sramecc-:xnack+", 0},
      {0x54c, 3, "gfx942", 0},
      {0x01000051, 4, "gfx9-generic", 1},  // code object v6 generic, version 1
      {0x0100065f, 4, "gfx9-4-generic:xnack-", 1},
      {0x01000052, 4, "gfx10-1-generic", 1},
      {0x01000053, 4, "gfx10-3-generic", 1},
      {0x01000054, 4, "gfx11-generic", 1},
      {0x01000059, 4, "gfx12-generic", 1},
  };
  for (const auto& c : cases) {
    auto info = inspect_binary(testing::craft_amd(c.flags, c.abi));
    ASSERT_TRUE(info.ok()) << c.target << ": " << info.error().message;
    EXPECT_EQ(info->kind, BinaryKind::amd_code_object);
    EXPECT_EQ(info->target->str(), c.target);
    EXPECT_EQ(info->amd_generic_version, c.generic_version) << c.target;
    EXPECT_TRUE(info->has_native);
  }
}

TEST(ElfCrafted, RejectsOldCodeObjectsAndUnknownMachs) {
  EXPECT_NE(inspect_error(testing::craft_amd(0x3f, 1)).find("code object v3"), std::string::npos);
  EXPECT_NE(inspect_error(testing::craft_amd(0x3f, 0)).find("code object v2"), std::string::npos);
  EXPECT_NE(inspect_error(testing::craft_amd(0xfe, 2)).find("unknown AMDGPU mach 0xfe"),
            std::string::npos);
  testing::CraftElf pal;
  pal.os_abi = 65;  // ELFOSABI_AMDGPU_PAL
  pal.abi_version = 2;
  pal.machine = 224;
  pal.flags = 0x3f;
  EXPECT_NE(inspect_error(testing::build_elf(pal)).find("not amdhsa"), std::string::npos);
}

TEST(ElfCrafted, RejectsNonElfTruncatedWrongClassAndWrongMachineWithReasons) {
  const Bytes good = testing::craft_cubin(90, true, "-arch sm_90a ");
  Bytes elf32 = good;
  elf32[4] = std::byte{1};
  Bytes big_endian = good;
  big_endian[5] = std::byte{2};
  Bytes x86 = good;
  poke<std::uint16_t>(&x86, 18, 62);
  Bytes no_sm = testing::craft_cubin(0, false, "");
  const struct {
    Bytes bytes;
    const char* reason;
  } cases[] = {
      {Bytes{}, "not a GPU binary"},
      {testing::bytes_of("hello, world"), "not a GPU binary"},
      {testing::bytes_of("\x7f"
                         "EL"),
       "not a GPU binary"},
      {Bytes(good.begin(), good.begin() + 4), "truncated ELF header"},
      {Bytes(good.begin(), good.begin() + 63), "truncated ELF header"},
      {elf32, "not ELF64"},
      {big_endian, "big-endian"},
      {x86, "EM_X86_64 (62)"},
      {no_sm, "no valid SM"},
  };
  for (const auto& c : cases) {
    const std::string why = inspect_error(c.bytes);
    EXPECT_NE(why.find(c.reason), std::string::npos) << why;
  }
}

TEST(ElfCrafted, EveryTruncationOfARealShapedCubinFailsCleanly) {
  // Each prefix is either rejected or (never) read past: ASan/UBSan builds make overreads loud.
  const Bytes good = testing::craft_cubin(100, false, "-arch sm_100f ");
  ASSERT_TRUE(inspect_binary(good).ok());
  for (std::size_t n = 0; n < good.size(); ++n) {
    const Bytes prefix(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n));
    auto r = inspect_binary(prefix);
    EXPECT_FALSE(r.ok()) << "prefix of " << n << " bytes accepted";
  }
}

TEST(ElfCrafted, CorruptSectionTablesAreRejected) {
  const Bytes good = testing::craft_cubin(90, true, "-arch sm_90a ");
  const std::uint64_t shoff = [&] {
    std::uint64_t v;
    std::memcpy(&v, good.data() + 40, 8);
    return v;
  }();
  const struct {
    std::size_t at;
    std::uint64_t value;
    int width;
    const char* reason;
  } cases[] = {
      {40, ~std::uint64_t{0} - 8, 8, "section header table"},            // e_shoff overflows
      {40, good.size(), 8, "section header table"},                      // e_shoff at the end
      {58, 40, 2, "section header size 40"},                             // e_shentsize
      {60, 0xfff0, 2, "section header table"},                           // e_shnum too big
      {62, 0xffff, 2, "extended section numbering"},                     // SHN_XINDEX
      {62, 200, 2, "section-name table index"},                          // e_shstrndx out of range
      {shoff + 64 + 24, ~std::uint64_t{0} - 4, 8, "runs past the end"},  // sh_offset overflow
      {shoff + 64 + 32, 1u << 30, 8, "runs past the end"},               // sh_size too big
      {shoff + 64, 1u << 20, 4, "outside the section-name table"},       // sh_name
  };
  for (const auto& c : cases) {
    Bytes b = good;
    if (c.width == 8)
      poke<std::uint64_t>(&b, c.at, c.value);
    else if (c.width == 4)
      poke<std::uint32_t>(&b, c.at, static_cast<std::uint32_t>(c.value));
    else
      poke<std::uint16_t>(&b, c.at, static_cast<std::uint16_t>(c.value));
    const std::string why = inspect_error(b);
    EXPECT_NE(why.find(c.reason), std::string::npos) << c.reason << " vs " << why;
  }
}

TEST(ElfCrafted, CorruptProgramHeadersAreRejected) {
  const Bytes good = testing::craft_cubin(90, true, "-arch sm_90a ");
  std::uint64_t phoff;
  std::memcpy(&phoff, good.data() + 32, 8);
  ASSERT_EQ(phoff + 2 * 56, good.size()) << "the builder puts the program headers last";
  const struct {
    std::size_t at;
    std::uint64_t value;
    int width;
    const char* reason;
  } cases[] = {
      {32, ~std::uint64_t{0} - 16, 8, "program header table"},  // e_phoff overflows
      {54, 64, 2, "program header size 64"},                    // e_phentsize
      {56, 3, 2, "program header table"},                       // e_phnum past the end
      {phoff + 56 + 8, good.size(), 8, "segment 1"},            // p_offset at the end
      {phoff + 32, ~std::uint64_t{0}, 8, "segment 0"},          // p_filesz overflows
  };
  for (const auto& c : cases) {
    Bytes b = good;
    if (c.width == 8)
      poke<std::uint64_t>(&b, c.at, c.value);
    else
      poke<std::uint16_t>(&b, c.at, static_cast<std::uint16_t>(c.value));
    const std::string why = inspect_error(b);
    EXPECT_NE(why.find(c.reason), std::string::npos) << c.reason << " vs " << why;
  }
}

TEST(ElfCrafted, UnterminatedSectionNameIsRejected) {
  Bytes b = testing::craft_cubin(90, true, "");
  // Overwrite the trailing NUL of ".shstrtab" (the last name in the table) and what follows.
  const std::string name = ".shstrtab";
  auto it = std::search(b.begin(), b.end(), reinterpret_cast<const std::byte*>(name.data()),
                        reinterpret_cast<const std::byte*>(name.data()) + name.size());
  ASSERT_NE(it, b.end());
  *(it + static_cast<std::ptrdiff_t>(name.size())) = std::byte{'x'};
  const std::string why = inspect_error(b);
  EXPECT_NE(why.find("not NUL-terminated"), std::string::npos) << why;
}

TEST(ElfCrafted, DamagedNotesOnlyLoseEvidence) {
  testing::CraftElf e;
  e.os_abi = 0x41;
  e.abi_version = 8;
  e.machine = 190;
  e.flags = 0x06005a04;
  Bytes note = testing::nv_tkinfo("-arch sm_90a ");
  poke<std::uint32_t>(&note, 4, 0xffffff00u);  // descsz far past the section
  e.sections.push_back({".note.nv.tkinfo", 7, 0, note});
  e.sections.push_back({".text.k", 1, 0x6, Bytes(16, std::byte{1})});
  auto info = inspect_binary(testing::build_elf(e));
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_EQ(info->target->str(), "sm_90");
  EXPECT_EQ(info->suffix_evidence, SuffixEvidence::none);
}

TEST(ElfCrafted, PtxTextIsRecognisedAsPtxOnly) {
  const Bytes ptx = testing::bytes_of(
      "//\n// Generated by NVIDIA NVVM Compiler\n//\n\n.version 9.0\n.target sm_90a\n"
      ".address_size 64\n\n.visible .entry k(\n");
  auto info = inspect_binary(ptx);
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_EQ(info->kind, BinaryKind::ptx);
  EXPECT_TRUE(info->has_ptx);
  EXPECT_FALSE(info->has_native);
  EXPECT_EQ(info->target->str(), "sm_90a");
  const Status s = check_binary_matches(ptx, target("sm_90a"));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("PTX text only"), std::string::npos) << s.error().message;
}

TEST(ElfCrafted, CubinWithPtxButNoSassIsRejected) {
  testing::CraftElf e;
  e.os_abi = 0x41;
  e.abi_version = 8;
  e.machine = 190;
  e.flags = 0x06005a04;
  e.sections.push_back({".nv_debug_ptx_txt", 1, 0, testing::bytes_of(".version 9.0\n")});
  const Bytes b = testing::build_elf(e);
  auto info = inspect_binary(b);
  ASSERT_TRUE(info.ok());
  EXPECT_TRUE(info->has_ptx);
  EXPECT_FALSE(info->has_native);
  const Status s = check_binary_matches(b, target("sm_90"));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("PTX but no native code"), std::string::npos);
}

TEST(ElfCrafted, RandomCorruptionNeverCrashesOrOverreads) {
  // A poor man's fuzzer over every recognised shape; the ASan/UBSan build makes any out-of-bounds
  // read fail loudly. Results only need to be errors or consistent values.
  const Bytes seeds[] = {testing::craft_cubin(90, true, "-arch sm_90a "), testing::craft_amd(0xe3f),
                         testing::craft_amd(0x01000051, 4)};
  std::mt19937 rng(20240605);
  for (const Bytes& seed : seeds) {
    for (int round = 0; round < 3000; ++round) {
      Bytes b = seed;
      const int flips = 1 + static_cast<int>(rng() % 8);
      for (int i = 0; i < flips; ++i) b[rng() % b.size()] = static_cast<std::byte>(rng() & 0xff);
      if (rng() % 4 == 0) b.resize(rng() % b.size());
      auto info = inspect_binary(b);
      if (info.ok()) {
        EXPECT_FALSE(info->describe().empty());
      }
      (void)check_binary_matches(b, target("sm_90a"));
      (void)check_binary_matches(b, target("gfx90a:sramecc+:xnack-"));
    }
  }
}

}  // namespace
}  // namespace kcache
