// providers/provider_select.hpp — which provider module serves a request, and which modules
// the local devices will be served (prefetch).
//
// Contract (docs/providers.md "Selection"; pure, any thread):
//  * `choose_providers` ranks every (provider, module) that can serve `query`: the provider
//    is active, its full version equals the query's byte for byte (`+cu130` never serves
//    `+cu134`, `0.6.1` never `0.6.10`), its variant (if any) is accepted by the query's
//    system (if given; variants.md), and it has a usable module of that name whose target is
//    compatible with the device (arch.md). Order, best first: the module target's preference
//    on the device (exact > arch > family > baseline; AMD exact > any-feature > generic;
//    then closeness), then the variant order of resolve_variants (providers without a variant
//    after those with one; without a system variants do not order), then the provider path.
//    So when the best provider lacks the module, the next one that has it comes first.
//  * With `explain`, `reasons` gets one line per provider that cannot serve, saying why.
//  * `prefetch_set` is, per device, for each (version, module name) among active providers,
//    every usable module with the best compatible target — those a request would get.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "arch/target.hpp"
#include "providers/provider_load.hpp"
#include "variant/system.hpp"

namespace kcache::providers {

struct SelectQuery {
  std::string_view name;
  std::string_view version;
  const Device* device = nullptr;
  const SystemInfo* system = nullptr;  // optional
  bool explain = false;
};

struct Pick {
  std::size_t provider = 0;  // index into the providers span
  std::size_t module = 0;    // index into its manifest's modules
  friend bool operator==(const Pick&, const Pick&) = default;
};

struct ProviderChoice {
  std::vector<Pick> ranked;          // best first
  std::vector<std::string> reasons;  // with explain: why each other provider cannot serve
};

ProviderChoice choose_providers(std::span<const LoadedProvider> providers, const SelectQuery& query);

std::vector<Pick> prefetch_set(std::span<const LoadedProvider> providers,
                               std::span<const Device> devices);

}  // namespace kcache::providers
