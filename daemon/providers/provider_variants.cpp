// ProviderService: serving kernels build variants as trees (provider_service.hpp).
#include <spdlog/spdlog.h>

#include <algorithm>

#include "providers/provider_key.hpp"
#include "providers/provider_service.hpp"

namespace kcache::daemon {

using providers::KernelsPick;
using providers::LoadedProvider;

namespace {

// "sm_86,sm_90a": the devices a variant's device code was checked against, in order.
std::string device_targets(std::span<const Device> devices) {
  std::string out;
  for (const Device& d : devices) out += (out.empty() ? "" : ",") + d.compile_target().str();
  return out;
}

}  // namespace

Digest128 ProviderService::variant_key(const KernelsPick& pick, std::span<const Device> devices) const {
  const LoadedProvider& p = table_[pick.provider];
  const providers::KernelsVariantState& v = p.kernel_variants[pick.variant];
  const std::string targets = device_targets(devices);
  // The revision is the commit (a checkout: none); the identity pins the exact files checked.
  return providers::compute_provider_key({p.repo_id, p.repo_id, p.revision, v.dotted, v.name, targets, v.identity});
}

std::string ProviderService::variant_refusal(const Digest128& key) const {
  const auto it = refused_variants_.find(key);
  return it == refused_variants_.end() ? std::string() : it->second;
}

void ProviderService::materialize_variant(const KernelsPick& pick, const Digest128& key,
                                          std::vector<Device> devices, Materializer::Done done) {
  const LoadedProvider& p = table_[pick.provider];
  const providers::KernelsVariantState& v = p.kernel_variants[pick.variant];
  const std::string targets = device_targets(devices);
  MaterializeJob job{key, p.repo_dir, std::nullopt,
                     PublishMeta{p.repo_id, targets.empty() ? v.dotted : v.dotted + " for " + targets,
                                 ObjectKind::tree, EntryOrigin::provider},
                     providers::VariantJob{p.repo_dir, v.rel, v.name, v.identity, v.bytes, std::move(devices)}};
  materializer_.submit(std::move(job), /*urgent=*/true,
                       [this, key, path = p.path, done = std::move(done)](const Result<Entry>& outcome) {
                         if (!outcome.ok()) {
                           const Error& e = outcome.error();
                           if (e.code == Errc::corrupt) refused_variants_[key] = e.message;
                           else if (e.code == Errc::not_found) schedule_scan();  // changed: look again
                           else if (e.code != Errc::unavailable) spdlog::warn("provider {}: {}", path, e.message);
                         }
                         done(outcome);
                       });
}

}  // namespace kcache::daemon
