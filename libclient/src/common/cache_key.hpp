// common/cache_key.hpp — the cache key of a compiled module (DESIGN §3, a contract).
//
// key = XXH3-128 over a canonical, length-prefixed encoding of, in this order:
//   key-format version ("kcache-key-v1"), backend, target, compiler identity,
//   options (count, then each in request order), module name, source bytes,
//   headers sorted by name (count, then name and bytes of each).
// Every string is encoded as u64 little-endian length + bytes, so no two different inputs
// encode alike. Client and daemon compute the same key from the same request.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/digest.hpp"

namespace kcache {

inline constexpr std::string_view kKeyFormat = "kcache-key-v1";

struct KeyHeader {
  std::string_view name;
  std::string_view data;
};

struct KeyInput {
  std::string_view backend;   // "cuda" | "hip"
  std::string_view target;    // normalized, e.g. "sm_90a"
  std::string_view compiler;  // identity, e.g. "nvrtc 13.0 (libnvrtc.so.13.0.88)"
  std::vector<std::string_view> options;
  std::string_view name;
  std::string_view source;
  std::vector<KeyHeader> headers;  // any order; the key sorts them by name
};

Digest128 compute_cache_key(const KeyInput& input);

}  // namespace kcache
