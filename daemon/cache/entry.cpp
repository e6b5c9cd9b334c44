#include "cache/entry.hpp"

namespace kcache::daemon {

std::optional<ObjectKind> parse_kind(std::string_view s) noexcept {
  if (s == "cubin") return ObjectKind::cubin;
  if (s == "hsaco") return ObjectKind::hsaco;
  if (s == "so") return ObjectKind::so;
  if (s == "tree") return ObjectKind::tree;
  if (s == "blob") return ObjectKind::blob;
  return std::nullopt;
}

std::optional<ObjectKind> kind_for_backend(std::string_view backend) noexcept {
  if (backend == "cuda") return ObjectKind::cubin;
  if (backend == "hip") return ObjectKind::hsaco;
  return std::nullopt;
}

std::optional<EntryOrigin> parse_entry_origin(std::string_view s) noexcept {
  if (s == "compiled") return EntryOrigin::compiled;
  if (s == "provider") return EntryOrigin::provider;
  return std::nullopt;
}

}  // namespace kcache::daemon
