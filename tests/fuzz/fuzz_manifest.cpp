// fuzz_manifest.cpp — the provider manifest, kcache-provider.json (providers/manifest.hpp).
//
// Input: the bytes of a manifest file. As provider_load.cpp does, they are parsed as JSON
// (inputs over kMaxManifestBytes are skipped, as the loader refuses them) and handed to
// parse_manifest. Checked for an accepted manifest: the documented contract holds (module
// paths pass check_relative_path, sizes are 1..kMaxModuleSize, every module target is one of
// `targets`, (name, target) pairs are unique), and what manifest_to_json writes parses back
// to a manifest that writes the same text. Any outcome is fine but a crash, UB, a broken
// contract or an escaping exception.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "providers/manifest.hpp"

namespace kp = kcache::providers;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > kp::kMaxManifestBytes) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return 0;
  auto manifest = kp::parse_manifest(doc);
  if (!manifest.ok()) {
    if (manifest.error().message.empty()) __builtin_trap();  // every refusal names a reason
    return 0;
  }
  const kp::Manifest& m = *manifest;
  if (m.format != kp::kManifestFormat || m.targets.empty() || m.modules.empty() ||
      m.modules.size() > kp::kMaxModules)
    __builtin_trap();
  std::set<std::pair<std::string, std::string>> seen;
  for (const kp::ModuleSpec& mod : m.modules) {
    if (!kp::check_relative_path(mod.file).empty()) __builtin_trap();
    if (mod.size == 0 || mod.size > kp::kMaxModuleSize) __builtin_trap();
    if (mod.target.backend() != m.backend_kind) __builtin_trap();
    bool declared = false;
    for (const kcache::Target& t : m.targets) declared |= t == mod.target;
    if (!declared) __builtin_trap();
    if (!seen.emplace(mod.name, mod.target.str()).second) __builtin_trap();
  }
  // The writer's output is a valid manifest, and a fixed point.
  const std::string written = kp::manifest_to_json(m);
  const nlohmann::json doc2 = nlohmann::json::parse(written, nullptr, /*allow_exceptions=*/false);
  if (doc2.is_discarded()) __builtin_trap();
  auto again = kp::parse_manifest(doc2);
  if (!again.ok() || kp::manifest_to_json(*again) != written) __builtin_trap();
  return 0;
}
