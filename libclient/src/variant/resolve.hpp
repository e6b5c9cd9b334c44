// variant/resolve.hpp — which build variants a system can use, best first, and why not the rest.
//
// Contract (reference/variants.md "Resolution"):
//  * `variant_rejection` returns the FIRST failing rule as a one-line reason, or "" when the
//    variant is accepted. Rules, in order, for arch variants: (1) cpu and os; (2) Python ABI
//    (GIL accepts abi3 and abi3t, free-threaded only abi3t); (3) framework: Torch version
//    equal and cxx tag equal to the system's (untagged matches any), stable ABI <= system
//    Torch, tvm-ffi version equal; (4) backend: CUDA same major and minor <= system's; ROCm,
//    XPU, CANN exact; others by name; Metal also needs macOS >= 26. Noarch: backend equals the
//    system's. `torch-universal`: always.
//  * `resolve_variants` orders the accepted ones: stable-ABI arch (newest ABI, then highest
//    backend version) › Torch arch (untagged before tagged, abi3 before abi3t, then highest
//    backend version) › tvm-ffi arch (highest backend version) › noarch › universal; ties
//    break on the printed name, so the result never depends on input order. Equal variants
//    (a legacy name and its dotted twin) appear once in `accepted`, but each has its trace entry.
//  * The trace has one entry per candidate in input order: "accepted, preferred" for the best,
//    "accepted" for the other accepted ones, else the rejection reason.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "variant/system.hpp"
#include "variant/variant.hpp"

namespace kcache {

struct TraceEntry {
  Variant variant;
  bool accepted = false;
  bool preferred = false;
  std::string reason;  // empty when accepted

  std::string verdict() const;  // "accepted, preferred" / "accepted" / reason
  std::string line() const;     // "<dotted name>: <verdict>"
};

struct Resolution {
  std::vector<Variant> accepted;  // best first
  std::vector<TraceEntry> trace;  // input order

  std::string trace_text() const;  // trace lines joined with '\n'
};

std::string variant_rejection(const Variant& v, const SystemInfo& sys);

Resolution resolve_variants(std::span<const Variant> candidates, const SystemInfo& sys);

}  // namespace kcache
