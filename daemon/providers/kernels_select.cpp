// Which build variant of a kernels repo serves a request (kernels_select.hpp).
#include "providers/kernels_select.hpp"

#include <algorithm>

#include "variant/resolve.hpp"

namespace kcache::providers {

std::string_view kernels_revision_name(std::string_view revision) noexcept {
  return revision.empty() ? std::string_view("main") : revision;
}

bool kernels_revision_matches(const LoadedProvider& p, std::string_view repo, std::string_view revision) {
  if (p.kind != ProviderKind::kernels || p.repo_id != repo) return false;
  const std::string_view wanted = kernels_revision_name(revision);
  if (p.revision.empty()) return revision.empty();  // a checkout: no refs, no commit
  return p.revision == wanted || std::find(p.refs.begin(), p.refs.end(), wanted) != p.refs.end();
}

KernelsChoice choose_kernels_variant(std::span<const LoadedProvider> providers, const KernelsQuery& query) {
  KernelsChoice out;
  const LoadedProvider* chosen = nullptr;
  for (std::size_t i = 0; i < providers.size(); ++i) {
    const LoadedProvider& p = providers[i];
    if (p.kind != ProviderKind::kernels || p.repo_id != query.repo) continue;
    out.repo_known = true;
    if (chosen == nullptr && p.state == ProviderState::active &&
        kernels_revision_matches(p, query.repo, query.revision)) {
      chosen = &p;
      out.pick = KernelsPick{i, 0};
    }
  }
  if (chosen == nullptr) {
    if (out.repo_known)
      out.reasons.push_back("no active snapshot or checkout of " + std::string(query.repo) +
                            " is at revision " + std::string(kernels_revision_name(query.revision)));
    return out;
  }
  if (query.system == nullptr) {
    out.pick.reset();
    out.reasons.push_back(std::string(query.repo) + " is a kernels repo: the request must give the "
                          "worker's system (torch, cxx, backend, python, cpu, os) to pick a build variant");
    return out;
  }
  std::vector<Variant> candidates;
  std::vector<std::size_t> index_of;  // candidate -> variant index
  for (std::size_t v = 0; v < chosen->kernel_variants.size(); ++v) {
    const KernelsVariantState& state = chosen->kernel_variants[v];
    if (!state.usable || !state.variant) continue;
    candidates.push_back(*state.variant);
    index_of.push_back(v);
  }
  const Resolution r = resolve_variants(candidates, *query.system);
  std::optional<std::size_t> best;
  for (std::size_t c = 0; c < r.trace.size() && c < index_of.size(); ++c)
    if (r.trace[c].preferred) best = index_of[c];
  std::size_t next_candidate = 0;
  for (std::size_t v = 0; v < chosen->kernel_variants.size(); ++v) {
    const KernelsVariantState& state = chosen->kernel_variants[v];
    if (!state.usable || !state.variant) {
      out.reasons.push_back(state.name + ": " + state.reason);
      continue;
    }
    const TraceEntry& t = r.trace[next_candidate++];
    if (best && *best == v) continue;
    out.reasons.push_back(state.name + ": " + (t.accepted ? "accepted, not preferred" : t.reason));
  }
  if (best) out.pick->variant = *best;
  else out.pick.reset();
  return out;
}

}  // namespace kcache::providers
