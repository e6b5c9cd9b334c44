// arch/select.cpp — the deterministic preference order among compatible binaries.
#include "arch/select.hpp"

#include <string>
#include <tuple>

namespace kcache {
namespace {

// Smaller is closer: CUDA prefers the higher binary minor, AMD the more pinned features.
int closeness(const Target& t) {
  if (const CudaTarget* c = t.cuda()) return -c->minor;
  return -t.amd()->pinned_features();
}

}  // namespace

bool preferred_over(const Target& a, const Compatibility& ca, const Target& b,
                    const Compatibility& cb) {
  const auto key = [](const Target& t, const Compatibility& c) {
    return std::make_tuple(match_class_rank(c.match), closeness(t), t.str());
  };
  return key(a, ca) < key(b, cb);
}

Selection select_best(std::span<const Target> candidates, const Device& device) {
  Selection out;
  out.verdicts.reserve(candidates.size());
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    out.verdicts.push_back(check_compatible(candidates[i], device));
    if (!out.verdicts[i].compatible) continue;
    // Strictly-better only: an equal later candidate (a duplicate target) keeps the first.
    if (!out.chosen || preferred_over(candidates[i], out.verdicts[i], candidates[*out.chosen],
                                      out.verdicts[*out.chosen]))
      out.chosen = i;
  }
  return out;
}

}  // namespace kcache
