// arch/amd_processors.cpp — the processor table. Values from LLVM's
// llvm/include/llvm/BinaryFormat/ELF.h (EF_AMDGPU_MACH_*) and AMDGPUUsage's processor and
// generic-processor tables; hiprtc output checked for gfx908 (0x30), gfx90a (0x3f) and gfx1030
// (0x36) — see elf_inspect.cpp.
#include "arch/amd_processors.hpp"

#include <array>
#include <cstdio>

namespace kcache {
namespace {

constexpr std::array kProcessors = {
    // name, mach, kfd version, xnack, sramecc, generic family
    AmdProcessorInfo{"gfx600", 0x20, 60000, false, false, ""},
    AmdProcessorInfo{"gfx601", 0x21, 60001, false, false, ""},
    AmdProcessorInfo{"gfx602", 0x3a, 60002, false, false, ""},
    AmdProcessorInfo{"gfx700", 0x22, 70000, false, false, ""},
    AmdProcessorInfo{"gfx701", 0x23, 70001, false, false, ""},
    AmdProcessorInfo{"gfx702", 0x24, 70002, false, false, ""},
    AmdProcessorInfo{"gfx703", 0x25, 70003, false, false, ""},
    AmdProcessorInfo{"gfx704", 0x26, 70004, false, false, ""},
    AmdProcessorInfo{"gfx705", 0x3b, 70005, false, false, ""},
    AmdProcessorInfo{"gfx801", 0x28, 80001, true, false, ""},
    AmdProcessorInfo{"gfx802", 0x29, 80002, false, false, ""},
    AmdProcessorInfo{"gfx803", 0x2a, 80003, false, false, ""},
    AmdProcessorInfo{"gfx805", 0x3c, 80005, false, false, ""},
    AmdProcessorInfo{"gfx810", 0x2b, 80100, true, false, ""},
    AmdProcessorInfo{"gfx900", 0x2c, 90000, true, false, "gfx9-generic"},
    AmdProcessorInfo{"gfx902", 0x2d, 90002, true, false, "gfx9-generic"},
    AmdProcessorInfo{"gfx904", 0x2e, 90004, true, false, "gfx9-generic"},
    AmdProcessorInfo{"gfx906", 0x2f, 90006, true, true, "gfx9-generic"},
    // gfx908 and gfx90a are not in gfx9-generic (their MFMA and register files differ).
    AmdProcessorInfo{"gfx908", 0x30, 90008, true, true, ""},
    AmdProcessorInfo{"gfx909", 0x31, 90009, true, false, "gfx9-generic"},
    AmdProcessorInfo{"gfx90a", 0x3f, 90010, true, true, ""},
    AmdProcessorInfo{"gfx90c", 0x32, 90012, true, false, "gfx9-generic"},
    AmdProcessorInfo{"gfx940", 0x40, 90400, true, true, "gfx9-4-generic"},
    AmdProcessorInfo{"gfx941", 0x4b, 90401, true, true, "gfx9-4-generic"},
    AmdProcessorInfo{"gfx942", 0x4c, 90402, true, true, "gfx9-4-generic"},
    AmdProcessorInfo{"gfx950", 0x4f, 90500, true, true, "gfx9-4-generic"},
    AmdProcessorInfo{"gfx1010", 0x33, 100100, true, false, "gfx10-1-generic"},
    AmdProcessorInfo{"gfx1011", 0x34, 100101, true, false, "gfx10-1-generic"},
    AmdProcessorInfo{"gfx1012", 0x35, 100102, true, false, "gfx10-1-generic"},
    AmdProcessorInfo{"gfx1013", 0x42, 100103, true, false, "gfx10-1-generic"},
    AmdProcessorInfo{"gfx1030", 0x36, 100300, false, false, "gfx10-3-generic"},
    AmdProcessorInfo{"gfx1031", 0x37, 100301, false, false, "gfx10-3-generic"},
    AmdProcessorInfo{"gfx1032", 0x38, 100302, false, false, "gfx10-3-generic"},
    AmdProcessorInfo{"gfx1033", 0x39, 100303, false, false, "gfx10-3-generic"},
    AmdProcessorInfo{"gfx1034", 0x3e, 100304, false, false, "gfx10-3-generic"},
    AmdProcessorInfo{"gfx1035", 0x3d, 100305, false, false, "gfx10-3-generic"},
    AmdProcessorInfo{"gfx1036", 0x45, 100306, false, false, "gfx10-3-generic"},
    AmdProcessorInfo{"gfx1100", 0x41, 110000, false, false, "gfx11-generic"},
    AmdProcessorInfo{"gfx1101", 0x46, 110001, false, false, "gfx11-generic"},
    AmdProcessorInfo{"gfx1102", 0x47, 110002, false, false, "gfx11-generic"},
    AmdProcessorInfo{"gfx1103", 0x44, 110003, false, false, "gfx11-generic"},
    AmdProcessorInfo{"gfx1150", 0x43, 110500, false, false, "gfx11-generic"},
    AmdProcessorInfo{"gfx1151", 0x4a, 110501, false, false, "gfx11-generic"},
    AmdProcessorInfo{"gfx1152", 0x55, 110502, false, false, "gfx11-generic"},
    AmdProcessorInfo{"gfx1153", 0x58, 110503, false, false, "gfx11-generic"},
    AmdProcessorInfo{"gfx1200", 0x48, 120000, false, false, "gfx12-generic"},
    AmdProcessorInfo{"gfx1201", 0x4e, 120001, false, false, "gfx12-generic"},
    // Generic targets (code object v6+); their feature support is the family's.
    AmdProcessorInfo{"gfx9-generic", 0x51, 0, true, false, ""},
    AmdProcessorInfo{"gfx9-4-generic", 0x5f, 0, true, true, ""},
    AmdProcessorInfo{"gfx10-1-generic", 0x52, 0, true, false, ""},
    AmdProcessorInfo{"gfx10-3-generic", 0x53, 0, false, false, ""},
    AmdProcessorInfo{"gfx11-generic", 0x54, 0, false, false, ""},
    AmdProcessorInfo{"gfx12-generic", 0x59, 0, false, false, ""},
};

}  // namespace

const AmdProcessorInfo* find_amd_processor(std::string_view name) noexcept {
  for (const auto& p : kProcessors)
    if (p.name == name) return &p;
  return nullptr;
}

const AmdProcessorInfo* find_amd_processor_by_mach(unsigned mach) noexcept {
  for (const auto& p : kProcessors)
    if (p.mach == mach) return &p;
  return nullptr;
}

std::optional<std::string> gfx_name_from_kfd_version(std::uint32_t v) {
  // kfd packs major*10000 + minor*100 + stepping; the name spells the stepping in hex
  // (90010 → "gfx90a", 90012 → "gfx90c").
  const std::uint32_t major = v / 10000;
  const std::uint32_t minor = (v / 100) % 100;
  const std::uint32_t stepping = v % 100;
  if (major == 0 || major > 99 || minor > 9 || stepping > 15) return std::nullopt;
  char buf[16];
  std::snprintf(buf, sizeof buf, "gfx%u%u%x", major, minor, stepping);
  return std::string(buf);
}

bool generic_covers(std::string_view generic, std::string_view processor) noexcept {
  const AmdProcessorInfo* p = find_amd_processor(processor);
  return p != nullptr && !p->generic.empty() && p->generic == generic;
}

}  // namespace kcache
