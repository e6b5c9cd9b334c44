// arch/cuda_target.hpp — CUDA SASS targets (`sm_90a`) and device compute capabilities (`9.0`).
//
// Contract (reference/arch.md, docs/targets.md):
//  * `parse_cuda_target` accepts, case-insensitively, `sm_90a`, `sm90a`, `compute_90a`, `90a`
//    (compact: the LAST digit is the minor, so `sm_121` = 12.1) and `9.0a` (dotted), each with
//    an optional `a` (arch-specific) or `f` (family) suffix, and normalizes to
//    `sm_<maj><min>[a|f]`. Anything else (`sm1200`, `9.0b`, `12.10`, empty, `sm_86a`: `a` exists
//    from 9.0, `f` from 10.0) is `Errc::invalid_argument` with a message quoting the input.
//  * `parse_cuda_capability` accepts a device capability `P.Q` (`9.0`, `12.1`), nothing else.
//  * `device_compile_target` is the device's own target: 9.x → `sm_9xa`; 10.x/11.x → `a`;
//    12.0 → `sm_120f`; 12.x (x>0) → `sm_12xa`; below 9 → unsuffixed.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "kcache/result.hpp"

namespace kcache {

enum class CudaSuffix : std::uint8_t {
  none,    // `sm_80`: runs on the same major, same or newer minor
  arch,    // `sm_90a`: arch-specific, runs only on exactly that capability
  family,  // `sm_100f`: family-specific (CUDA >= 12.9), same major, same or newer minor
};

// "" / "a" / "f".
std::string_view cuda_suffix_text(CudaSuffix suffix) noexcept;

struct CudaCapability {
  int major = 0;
  int minor = 0;

  std::string str() const;  // "9.0"
  friend bool operator==(const CudaCapability&, const CudaCapability&) = default;
  friend auto operator<=>(const CudaCapability&, const CudaCapability&) = default;
};

struct CudaTarget {
  int major = 0;
  int minor = 0;
  CudaSuffix suffix = CudaSuffix::none;

  int sm() const noexcept { return major * 10 + minor; }  // 90 for sm_90a
  CudaCapability capability() const noexcept { return {major, minor}; }
  std::string str() const;  // canonical "sm_90a"

  friend bool operator==(const CudaTarget&, const CudaTarget&) = default;
  friend auto operator<=>(const CudaTarget&, const CudaTarget&) = default;
};

Result<CudaTarget> parse_cuda_target(std::string_view text);
Result<CudaCapability> parse_cuda_capability(std::string_view text);

// The target kcache compiles for on a device of this capability (see the contract above).
CudaTarget device_compile_target(CudaCapability device) noexcept;

}  // namespace kcache
