// arch/select.hpp — pick the best binary for a device among candidate targets.
//
// Contract (reference/arch.md "Preference"):
//  * Only compatible candidates (compat.hpp) are eligible.
//  * Order: class first (CUDA exact > arch > family > baseline; AMD exact > any-feature >
//    generic), then closeness (CUDA: higher binary minor; AMD: more pinned features), then the
//    canonical target string ascending. The chosen target therefore never depends on the
//    order of `candidates`; with duplicate targets the lowest index among them is reported.
//  * `verdicts[i]` is the compatibility of `candidates[i]` (class or reason), in input order.
//  * No compatible candidate: `chosen` is empty (the caller falls back to compiling).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "arch/compat.hpp"
#include "arch/target.hpp"

namespace kcache {

struct Selection {
  std::optional<std::size_t> chosen;  // index into the candidates
  std::vector<Compatibility> verdicts;

  bool found() const noexcept { return chosen.has_value(); }
};

Selection select_best(std::span<const Target> candidates, const Device& device);

// True when `a` is strictly preferred to `b` on `device` (both must be compatible with it).
// Exposed so callers ranking richer records (provider modules) use the same order.
bool preferred_over(const Target& a, const Compatibility& ca, const Target& b,
                    const Compatibility& cb);

}  // namespace kcache
