// arch/amd_processors.hpp — the AMDGPU processor table (LLVM AMDGPUUsage, ELF.h AMDGPU_MACH).
//
// Contract:
//  * `find_amd_processor(name)` / `find_amd_processor_by_mach(mach)` return the row of a known
//    processor or generic target, or nullptr. Names are canonical lowercase (`gfx90a`).
//  * `gfx_name_from_kfd_version(v)` turns the kfd topology `gfx_target_version`
//    (major*10000 + minor*100 + stepping) into a processor name: 90010 → gfx90a,
//    90402 → gfx942, 100300 → gfx1030, 110000 → gfx1100. nullopt for malformed values.
//  * `generic_covers(generic, processor)`: whether a generic target's code objects load on
//    that processor (reference/arch.md family lists).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kcache {

struct AmdProcessorInfo {
  std::string_view name;      // "gfx90a", "gfx9-generic"
  std::uint8_t mach;          // EF_AMDGPU_MACH_* (e_flags & 0xff)
  std::uint32_t kfd_version;  // gfx_target_version; 0 for generic targets
  bool xnack;                 // the processor has an xnack setting
  bool sramecc;               // the processor has an sramecc setting
  std::string_view generic;   // generic target covering it ("" if none, or if generic)
  bool is_generic() const noexcept { return kfd_version == 0; }
};

const AmdProcessorInfo* find_amd_processor(std::string_view name) noexcept;
const AmdProcessorInfo* find_amd_processor_by_mach(unsigned mach) noexcept;

std::optional<std::string> gfx_name_from_kfd_version(std::uint32_t gfx_target_version);

bool generic_covers(std::string_view generic, std::string_view processor) noexcept;

}  // namespace kcache
