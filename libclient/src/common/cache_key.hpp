// common/cache_key.hpp — the cache key of a compiled module (DESIGN §3, a contract).
//
// key = XXH3-128 over a canonical, length-prefixed encoding of, in this order:
//   key-format version ("kcache-key-v1"), backend, target, compiler identity,
//   options (count, then each in request order), module name, source bytes,
//   headers sorted by name (count, then name and bytes of each).
// Every string is encoded as u64 little-endian length + bytes, so no two different inputs
// encode alike. Client and daemon compute the same key from the same request.
#pragma once

#include <iterator>
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

// What a get request asks for, besides its options and headers.
struct KeySubject {
  std::string_view backend;
  std::string_view target;    // canonical
  std::string_view compiler;  // the identity the daemon announces (with its include roots)
  std::string_view name;
  std::string_view source;
};

// The key input of a get request: the one assembly the client's key-only lookup, the client's
// fallback compile and the daemon share, whatever form each holds the request in. Options are
// strings, string_views or C strings; headers have `name` and `data` (a C header: `data` and
// `data_size`). The input views the request: it must outlive the result.
template <class Options, class Headers>
KeyInput key_input_of(const KeySubject& subject, const Options& options, const Headers& headers) {
  KeyInput in{subject.backend, subject.target, subject.compiler, {}, subject.name, subject.source, {}};
  in.options.reserve(std::size(options));
  for (const auto& option : options) in.options.emplace_back(option);
  in.headers.reserve(std::size(headers));
  for (const auto& h : headers) {
    if constexpr (requires { h.data_size; })
      in.headers.push_back({h.name, std::string_view(h.data, h.data_size)});
    else
      in.headers.push_back({h.name, h.data});
  }
  return in;
}

}  // namespace kcache
