// arch/compat.hpp — does a binary built for target T load on device D, and how well does it fit?
//
// Contract (reference/arch.md; docs/targets.md has the full tables):
//  * CUDA, binary X.Y on device P.Q: unsuffixed → P == X and Q >= Y; `a` → P.Q == X.Y;
//    `f` → P == X and Q >= Y. Never across majors.
//  * AMD: same processor (or a generic target whose family holds the device's processor) and
//    every feature compatible: `any` always; `+`/`-` only when equal to the device's setting.
//    A device whose setting is unknown (feature omitted in the device spec) or absent matches
//    only `any`.
//  * A binary of the other backend is never compatible.
//  * Every compatible pair gets a `MatchClass`; every incompatible pair gets a one-line,
//    human-readable reason naming both sides.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "arch/target.hpp"

namespace kcache {

// Best first. CUDA uses exact/arch/family/baseline; AMD uses exact/any-feature/generic.
enum class MatchClass : std::uint8_t {
  exact,        // the device's own target (CUDA) / every device feature pinned equal (AMD)
  arch,         // CUDA `a` of the device's capability that is not its own target (12.0)
  family,       // CUDA `f` of the same major, older or equal minor
  baseline,     // CUDA unsuffixed of the same major, older or equal minor
  any_feature,  // AMD native processor with at least one feature left as any
  generic,      // AMD generic target covering the device's processor
};

// "exact", "arch", "family", "baseline", "any-feature", "generic".
std::string_view match_class_name(MatchClass c) noexcept;

// A rank where a smaller value is a better fit (exact < arch < family < baseline and
// exact < any-feature < generic); comparable across classes of one backend.
int match_class_rank(MatchClass c) noexcept;

struct Compatibility {
  bool compatible = false;
  MatchClass match = MatchClass::exact;  // meaningful only when compatible
  std::string reason;                    // why not, when !compatible; empty otherwise
};

Compatibility check_compatible(const Target& binary, const Device& device);

}  // namespace kcache
