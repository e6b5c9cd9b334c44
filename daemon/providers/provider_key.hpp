// providers/provider_key.hpp — the catalog key of a provider module (docs/providers.md).
//
// provider key = XXH3-128 over a canonical, length-prefixed encoding of, in this order:
//   key-format tag ("kcache-provider-key-v1"), provider name, package, full version,
//   variant (printed dotted form; "" when none), module name, module target (canonical),
//   module digest (32 lowercase hex).
// Each string is a u64 little-endian length + its bytes (as common/cache_key.hpp does), and
// the tag differs from the cache key's, so a provider key never equals a compile key. The
// digest is part of the key: a rebuilt module is a new entry, never a silent replacement.
#pragma once

#include <string_view>

#include "common/digest.hpp"

namespace kcache::providers {

inline constexpr std::string_view kProviderKeyFormat = "kcache-provider-key-v1";

struct ProviderKeyInput {
  std::string_view provider;
  std::string_view package;
  std::string_view version;
  std::string_view variant;  // dotted form, or empty
  std::string_view module;
  std::string_view target;  // canonical
  Digest128 digest;
};

Digest128 compute_provider_key(const ProviderKeyInput& input);

}  // namespace kcache::providers
