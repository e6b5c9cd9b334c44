// fuzz_flashinfer.cpp — what a FlashInfer provider wheel feeds kcached: entry_points.txt
// (providers/site_packages.hpp) and manifest.json (providers/flashinfer_provider.hpp).
//
// Input: bytes read both as an entry_points.txt and as a manifest.json. Checked: entry points
// come back with non-empty names; an accepted manifest has the contract's shape (non-empty,
// sorted, unique architectures and modules, each module one path component, every
// architecture a CUDA target that round-trips through the shim's normalization).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "providers/flashinfer_provider.hpp"
#include "providers/site_packages.hpp"

namespace kp = kcache::providers;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const kp::EntryPoint& ep : kp::parse_entry_points(text, kp::kFlashInferGroup))
    if (ep.name.empty()) __builtin_trap();
  if (size > kp::kMaxManifestBytes) return 0;
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return 0;
  auto m = kp::parse_flashinfer_manifest(doc);
  if (!m.ok()) {
    if (m.error().message.empty()) __builtin_trap();
    return 0;
  }
  if (m->architectures.empty() || m->modules.empty() || m->distribution.empty() ||
      m->version.empty())
    __builtin_trap();
  if (!std::is_sorted(m->modules.begin(), m->modules.end()) ||
      std::adjacent_find(m->modules.begin(), m->modules.end()) != m->modules.end())
    __builtin_trap();
  for (const std::string& mod : m->modules)
    if (mod.empty() || mod == "." || mod == ".." || mod.find('/') != std::string::npos)
      __builtin_trap();
  for (const kcache::Target& t : m->architectures) {
    if (t.cuda() == nullptr) __builtin_trap();
    auto again = kp::normalize_flashinfer_arch(t.str());
    if (!again.ok() || !(*again == t)) __builtin_trap();
  }
  return 0;
}
