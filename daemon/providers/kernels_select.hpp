// providers/kernels_select.hpp — which build variant of a kernels repo serves a request.
//
// Contract (docs/providers.md "Serving a kernels repo"; pure, any thread):
//  * A request names the repo (`name` = "org/name", as kernels' get_kernel does) and may name
//    a revision (`version`): a ref of the hub cache (`main`, `v1`, …) or the full commit.
//    Without one it means `main`, as kernels defaults; a checkout (no hub refs) serves only
//    requests without a revision. Among the active providers of that repo and revision the
//    first by path is used.
//  * Its usable variants are ordered by resolve_variants for the request's system; the best
//    is the pick. Every variant that is not picked (unusable at scan, or rejected for this
//    system) gets one reason in `reasons`, "<dir name>: <why>", in build/ order.
//  * `repo_known` says whether any provider (any state) is that repo, so a request for an
//    unknown repo goes on to the other provider kinds and the compile step untouched.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "providers/provider_load.hpp"
#include "variant/system.hpp"

namespace kcache::providers {

struct KernelsQuery {
  std::string_view repo;
  std::string_view revision;  // empty: "main"
  const SystemInfo* system = nullptr;
};

struct KernelsPick {
  std::size_t provider = 0;  // index into the providers span
  std::size_t variant = 0;   // index into its kernel_variants
};

struct KernelsChoice {
  bool repo_known = false;
  std::optional<KernelsPick> pick;
  std::vector<std::string> reasons;  // why nothing (or nothing else) serves
};

// The revision a request means: its own, or "main" when it gives none.
std::string_view kernels_revision_name(std::string_view revision) noexcept;

// Whether the provider is `repo` at `revision` (kernels_select.hpp rules).
bool kernels_revision_matches(const LoadedProvider& p, std::string_view repo, std::string_view revision);

KernelsChoice choose_kernels_variant(std::span<const LoadedProvider> providers, const KernelsQuery& query);

}  // namespace kcache::providers
