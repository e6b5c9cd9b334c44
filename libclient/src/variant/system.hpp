// variant/system.hpp — the worker's system facts that build variants are resolved against.
//
// Contract:
//  * `SystemInfo` holds what reference/variants.md "Resolution" names: cpu, os, Torch version
//    (or none), Torch C++ ABI (linux only; `none` elsewhere), backend + version, Python ABI
//    (GIL build or free-threaded), optional tvm-ffi and macOS versions.
//  * `parse_system_spec` reads the comma-separated `key=value` form used by
//    `kcachectl variant resolve --system` and tests:
//      cpu=x86_64,os=linux,torch=2.10,cxx=cxx11,backend=cuda-12.8,python=gil|free-threaded,
//      tvm-ffi=0.1,macos=26.0
//    `cpu`, `os` and `backend` are required; unknown keys, duplicate keys, a version on an
//    unversioned backend or none on a versioned one are `Errc::invalid_argument` naming them.
//    `str()` prints the same form (keys present only), which parses back equal.
//  * `parse_backend_spec` reads one backend as the system names it: a full backend name, with
//    `-X.Y` exactly when the backend is versioned (`cuda-12.8`, `rocm-7.0`, `cpu`); errors are
//    `Errc::invalid_argument` quoting the text.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kcache/result.hpp"
#include "variant/variant.hpp"

namespace kcache {

struct SystemInfo {
  std::string cpu;  // "x86_64"
  std::string os;   // "linux"
  std::optional<VersionMM> torch;
  CxxAbi torch_cxx = CxxAbi::none;  // the Torch build's C++ ABI on linux
  VariantBackend backend = VariantBackend::cpu;
  std::optional<VersionMM> backend_version;  // set exactly when the backend is versioned
  bool free_threaded = false;                // Python ABI: abi3t-only when true
  std::optional<VersionMM> tvm_ffi;
  std::optional<VersionMM> macos;

  std::string str() const;
  friend bool operator==(const SystemInfo&, const SystemInfo&) = default;
};

struct BackendSpec {
  VariantBackend backend = VariantBackend::cpu;
  std::optional<VersionMM> version;  // set exactly when the backend is versioned
};

Result<BackendSpec> parse_backend_spec(std::string_view text);

Result<SystemInfo> parse_system_spec(std::string_view spec);

}  // namespace kcache
