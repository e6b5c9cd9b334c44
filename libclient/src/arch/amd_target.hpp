// arch/amd_target.hpp — AMD target IDs: `<processor>(:<feature>(+|-))*` (LLVM AMDGPUUsage).
//
// Contract:
//  * Features are only `sramecc` and `xnack`; each may appear once; `+` = on, `-` = off,
//    omitted = any. Input order is free; `str()` prints the canonical alphabetical order
//    (`gfx90a:sramecc+:xnack-`).
//  * The processor is a known processor or generic target from amd_processors.hpp, or a
//    well-formed unknown processor (`gfx` + digits + one hex digit, e.g. a future `gfx1250`).
//    A feature the (known) processor does not have (`gfx1030:xnack+`) is rejected.
//  * Errors are `Errc::invalid_argument` naming the input and the bad part.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "kcache/result.hpp"

namespace kcache {

enum class AmdFeature : std::uint8_t {
  any,  // omitted: the code object loads whatever the device's setting is
  off,  // `-`
  on,   // `+`
};

// "any" / "off" / "on" (for messages).
std::string_view amd_feature_name(AmdFeature f) noexcept;

struct AmdTarget {
  std::string processor;  // "gfx90a", "gfx9-generic"
  AmdFeature sramecc = AmdFeature::any;
  AmdFeature xnack = AmdFeature::any;

  std::string str() const;  // canonical target ID
  bool is_generic() const noexcept;
  // How many features are pinned (+/-): more pinned = closer to one concrete device.
  int pinned_features() const noexcept;

  friend bool operator==(const AmdTarget&, const AmdTarget&) = default;
  friend auto operator<=>(const AmdTarget&, const AmdTarget&) = default;
};

Result<AmdTarget> parse_amd_target(std::string_view text);

}  // namespace kcache
