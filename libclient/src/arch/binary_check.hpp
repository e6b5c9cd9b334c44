// arch/binary_check.hpp — the publishing gate: may these bytes be served for this target?
//
// Contract:
//  * `check_binary_matches(bytes, declared)` is the gate before publishing any provider or compiled binary
//    (rule in docs/targets.md): a single native module for the declared backend (ELF machine
//    matches), with native code (PTX-only, fatbins and bundles are rejected), whose inspected
//    target equals the declared one — CUDA: same SM; suffix equal where the binary records it,
//    and at least "arch-specific or not" equal where only that is recorded; AMD: the same
//    canonical target ID. Mismatches are `Errc::corrupt` naming both sides.
//    docs/targets.md "Publishing gate" is the prose version; keep them in step.
#pragma once

#include <cstddef>
#include <span>

#include "arch/target.hpp"
#include "kcache/result.hpp"

namespace kcache {

Status check_binary_matches(std::span<const std::byte> bytes, const Target& declared);

}  // namespace kcache
