// variant/variant.hpp — build variants: the `build/<variant>/` names of kernel providers.
//
// Contract (reference/variants.md; docs/targets.md "Build variants"):
//  * `parse_variant` reads the legacy forms (`torch210-cxx11-cu128-x86_64-linux`,
//    `torch-stable-abi211-cu128-x86_64-linux`, `tvm-ffi01-cu128-x86_64-linux`), the dotted
//    forms (`torch-2.14-cuda-13.0-abi3-x86_64-linux`, and kcache's dotted spellings of the other
//    two: `torch-stable-abi-2.11-cuda-12.8-abi3-x86_64-linux`,
//    `tvm-ffi-0.1-cuda-12.8-abi3-x86_64-linux`), noarch (`torch-cuda`) and `torch-universal`.
//    Legacy backend versions put the last digit in the minor (`cu128` = 12.8), except
//    `rocm714` = ROCm 7.14. Legacy names carry Python ABI abi3.
//  * Errors are `Errc::invalid_argument` quoting the whole name and the bad part (`cuda128`,
//    a missing os, `cxx03`, an unknown framework); `torch-npu` is refused with the rename to
//    `torch-cann`. Nothing is silently reinterpreted.
//  * Equality is field-wise, so a legacy name equals its dotted twin; `VariantHash` agrees
//    with equality. `str()` prints the dotted form, which parses back to an equal variant.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kcache/result.hpp"

namespace kcache {

struct VersionMM {
  int major = 0;
  int minor = 0;
  std::string str() const;  // "12.8", "7.14", "2025.2"
  friend bool operator==(const VersionMM&, const VersionMM&) = default;
  friend auto operator<=>(const VersionMM&, const VersionMM&) = default;
};

// "2.10", "12.8", "2025.2": decimal digits without leading zeros on each side of one dot;
// nullopt for anything else, so every accepted text is the one the version prints as.
std::optional<VersionMM> parse_version_mm(std::string_view text) noexcept;

enum class VariantKind : std::uint8_t {
  torch,       // a Torch arch build for one Torch major.minor
  stable_abi,  // a Torch stable-ABI arch build: any Torch >= its version
  tvm_ffi,     // a tvm-ffi arch build
  noarch,      // `torch-<backend>`: no compiled code, backend-specific
  universal,   // `torch-universal`: deprecated, ranked last
};

enum class CxxAbi : std::uint8_t { none, cxx11, cxx98 };
enum class PythonAbi : std::uint8_t { abi3, abi3t };
enum class VariantBackend : std::uint8_t { cuda, rocm, xpu, cann, cpu, metal, neuron, tpu };

std::string_view variant_backend_name(VariantBackend b) noexcept;     // "cuda", "rocm"…
std::string_view variant_backend_display(VariantBackend b) noexcept;  // "CUDA", "ROCm"…
std::optional<VariantBackend> parse_variant_backend(std::string_view full_name) noexcept;
bool backend_is_versioned(VariantBackend b) noexcept;  // cuda, rocm, xpu, cann
std::string_view cxx_abi_name(CxxAbi abi) noexcept;    // "", "cxx11", "cxx98"
std::string_view python_abi_name(PythonAbi abi) noexcept;

struct Variant {
  VariantKind kind = VariantKind::universal;
  VersionMM framework_version;  // Torch / stable-ABI / tvm-ffi version (arch kinds only)
  CxxAbi cxx = CxxAbi::none;    // Torch arch builds only
  VariantBackend backend = VariantBackend::cpu;  // not meaningful for universal
  std::optional<VersionMM> backend_version;      // versioned backends of arch kinds
  PythonAbi python_abi = PythonAbi::abi3;        // arch kinds only
  std::string cpu;                               // arch kinds only: "x86_64"
  std::string os;                                // arch kinds only: "linux"

  bool is_arch() const noexcept {
    return kind == VariantKind::torch || kind == VariantKind::stable_abi ||
           kind == VariantKind::tvm_ffi;
  }
  std::string str() const;

  friend bool operator==(const Variant&, const Variant&) = default;
};

struct VariantHash {
  std::size_t operator()(const Variant& v) const noexcept;
};

Result<Variant> parse_variant(std::string_view name);

}  // namespace kcache
