// fuzz_kernels_metadata.cpp — a kernels variant's metadata.json (providers/kernels_variant.hpp).
//
// Input: the bytes of a metadata.json. Checked: every refusal names a reason; an accepted
// digest lists only relative paths that pass check_relative_path.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "providers/kernels_variant.hpp"
#include "providers/manifest.hpp"

namespace kp = kcache::providers;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > kp::kMaxManifestBytes) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return 0;
  auto m = kp::parse_kernels_metadata(doc);
  if (!m.ok()) {
    if (m.error().message.empty()) __builtin_trap();
    return 0;
  }
  if (m->digest)
    for (const auto& [path, hash] : m->digest->files)
      if (!kp::check_relative_path(path).empty()) __builtin_trap();
  return 0;
}
