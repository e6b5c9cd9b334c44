// providers/system_json.hpp — the `system` field of a get request: the worker's variant facts.
//
// Grammar (docs/providers.md "The system field"): a JSON object whose values are strings, with
// exactly the keys of variant/system.hpp's spec form:
//   {"cpu": "x86_64", "os": "linux", "torch": "2.10", "cxx": "cxx11", "backend": "cuda-12.8",
//    "python": "gil" | "free-threaded", "tvm-ffi": "0.1", "macos": "26.0"}
// `cpu`, `os` and `backend` are required. Contract: `parse_system_json` maps it onto
// SystemInfo through parse_system_spec (one set of rules for both spellings); anything else —
// not JSON, not an object, a non-string value, an unknown key — is Errc::invalid_argument
// naming the problem.
#pragma once

#include <string_view>

#include "kcache/result.hpp"
#include "variant/system.hpp"

namespace kcache::providers {

Result<SystemInfo> parse_system_json(std::string_view text);

}  // namespace kcache::providers
