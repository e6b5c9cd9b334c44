// fuzz_tree_manifest.cpp — a tree's manifest (store/tree_manifest.hpp), read back from the
// cache by verify, the scrubber and GC: whatever a damaged or planted file holds.
//
// Input: the manifest's text. Checked: a refusal is corrupt and names its line; an accepted
// one is canonical (encoding it again gives the input byte for byte) and every path is plain.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "store/tree_manifest.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = kcache::daemon::parse_tree_manifest(text);
  if (!parsed.ok()) {
    if (parsed.error().message.empty()) __builtin_trap();
    if (parsed.error().code != kcache::Errc::corrupt) __builtin_trap();
    return 0;
  }
  if (kcache::daemon::encode_tree_manifest(*parsed) != text) __builtin_trap();
  for (const auto& f : parsed->files)
    if (!kcache::daemon::check_tree_path(f.path).ok()) __builtin_trap();
  return 0;
}
