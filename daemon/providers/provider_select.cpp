// Ranking provider modules for one device: target preference, then variant order, then path.
#include "providers/provider_select.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "arch/select.hpp"
#include "variant/resolve.hpp"

namespace kcache::providers {

namespace {

struct Ranked {
  Pick pick;
  const Target* target;
  Compatibility compat;
  std::size_t variant_rank = 0;
};

std::string who(const LoadedProvider& p) {
  return (p.manifest ? p.manifest->name + " " : std::string()) + "(" + p.path + ")";
}

// The best usable module named `name` of provider p on the device, or why there is none.
std::optional<Ranked> best_module(const LoadedProvider& p, std::size_t index, std::string_view name,
                                  const Device& device, std::string* why) {
  const auto found = p.modules_by_name.find(std::string(name));
  if (found == p.modules_by_name.end()) {
    if (why) *why = "has no module '" + std::string(name) + "'";
    return std::nullopt;
  }
  std::optional<Ranked> best;
  std::string refusals;
  for (const std::size_t m : found->second) {
    const ModuleSpec& spec = p.manifest->modules[m];
    Compatibility c = check_compatible(spec.target, device);
    if (!p.module_errors[m].empty()) {
      if (c.compatible) refusals += (refusals.empty() ? "" : "; ") + p.module_errors[m];
      continue;
    }
    if (!c.compatible) continue;
    if (!best || preferred_over(spec.target, c, *best->target, best->compat))
      best = Ranked{{index, m}, &spec.target, std::move(c)};
  }
  if (!best && why) {
    *why = refusals.empty() ? "has no module '" + std::string(name) + "' for device " +
                                  device.str()
                            : refusals;
  }
  return best;
}

}  // namespace

ProviderChoice choose_providers(std::span<const LoadedProvider> providers, const SelectQuery& q) {
  ProviderChoice out;
  std::vector<Ranked> ranked;
  const auto refuse = [&](const LoadedProvider& p, const std::string& why) {
    if (q.explain) out.reasons.push_back(who(p) + ": " + why);
  };
  for (std::size_t i = 0; i < providers.size(); ++i) {
    const LoadedProvider& p = providers[i];
    if (p.state != ProviderState::active) {
      if (p.state != ProviderState::removed)
        refuse(p, std::string(provider_state_name(p.state)) + ": " + p.reason);
      continue;
    }
    if (p.manifest->version != q.version) {
      refuse(p, "version " + p.manifest->version + " is not the requested " + std::string(q.version));
      continue;
    }
    if (q.system != nullptr && p.variant) {
      if (std::string why = variant_rejection(*p.variant, *q.system); !why.empty()) {
        refuse(p, "variant " + p.variant->str() + ": " + why);
        continue;
      }
    }
    std::string why;
    if (auto r = best_module(p, i, q.name, *q.device, q.explain ? &why : nullptr))
      ranked.push_back(std::move(*r));
    else
      refuse(p, why);
  }
  // Variants order only when the worker said what its system is.
  if (q.system != nullptr && ranked.size() > 1) {
    std::vector<Variant> variants;
    for (const Ranked& r : ranked)
      if (const auto& v = providers[r.pick.provider].variant) variants.push_back(*v);
    const Resolution resolution = resolve_variants(variants, *q.system);
    for (Ranked& r : ranked) {
      const auto& v = providers[r.pick.provider].variant;
      r.variant_rank = resolution.accepted.size();  // no variant: after every variant
      if (!v) continue;
      const auto at = std::find(resolution.accepted.begin(), resolution.accepted.end(), *v);
      r.variant_rank = static_cast<std::size_t>(at - resolution.accepted.begin());
    }
  }
  std::sort(ranked.begin(), ranked.end(), [&](const Ranked& a, const Ranked& b) {
    if (preferred_over(*a.target, a.compat, *b.target, b.compat)) return true;
    if (preferred_over(*b.target, b.compat, *a.target, a.compat)) return false;
    if (a.variant_rank != b.variant_rank) return a.variant_rank < b.variant_rank;
    const std::string& pa = providers[a.pick.provider].path;
    const std::string& pb = providers[b.pick.provider].path;
    if (pa != pb) return pa < pb;
    return a.pick.module < b.pick.module;
  });
  out.ranked.reserve(ranked.size());
  for (const Ranked& r : ranked) out.ranked.push_back(r.pick);
  return out;
}

std::vector<Pick> prefetch_set(std::span<const LoadedProvider> providers,
                               std::span<const Device> devices) {
  std::vector<Pick> out;
  std::set<std::pair<std::size_t, std::size_t>> seen;
  for (const Device& device : devices) {
    // (version, module name) → the best target seen and every module with it.
    std::map<std::pair<std::string, std::string>, std::vector<Ranked>> groups;
    for (std::size_t i = 0; i < providers.size(); ++i) {
      const LoadedProvider& p = providers[i];
      if (p.state != ProviderState::active) continue;
      for (std::size_t m = 0; m < p.manifest->modules.size(); ++m) {
        if (!p.module_errors[m].empty()) continue;
        const ModuleSpec& spec = p.manifest->modules[m];
        Compatibility c = check_compatible(spec.target, device);
        if (!c.compatible) continue;
        auto& group = groups[{p.manifest->version, spec.name}];
        Ranked r{{i, m}, &spec.target, std::move(c)};
        if (!group.empty()) {
          const Ranked& best = group.front();
          if (preferred_over(*best.target, best.compat, spec.target, r.compat)) continue;
          if (preferred_over(spec.target, r.compat, *best.target, best.compat)) group.clear();
        }
        group.push_back(std::move(r));
      }
    }
    for (const auto& [key, group] : groups)
      for (const Ranked& r : group)
        if (seen.emplace(r.pick.provider, r.pick.module).second) out.push_back(r.pick);
  }
  return out;
}

}  // namespace kcache::providers
