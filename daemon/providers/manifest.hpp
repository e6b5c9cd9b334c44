// providers/manifest.hpp — the provider manifest, `kcache-provider.json` (format 1).
//
// Grammar (schema/provider-manifest.schema.json; docs/providers.md):
//   { "format": 1, "name": str, "package": str, "version": str, "backend": "cuda-X.Y"|"rocm-X.Y",
//     "variant": str (optional, a build variant), "targets": [target, ...],
//     "modules": [ { "name": str, "file": relative path, "target": target,
//                    "size": decompressed bytes, "digest": 32 lowercase hex (XXH3-128),
//                    "compression": "none"|"zstd" }, ... ] }
// Contract:
//  * `parse_manifest` checks the whole grammar and returns the first violation as
//    `Errc::invalid_argument` with a one-line reason naming the field (and the module, by
//    index and name). `format` is checked first, so a newer format is reported as such.
//  * Unknown keys are refused (a misspelt key must not silently change what is served).
//  * Targets are normalized (`9.0a` → `sm_90a`); every module target is one of `targets`, and
//    all of them belong to the backend (`cuda-*` → CUDA targets, `rocm-*` → AMD target IDs).
//  * Module paths pass `check_relative_path`: relative, no `..`, `.` or empty components, no
//    NUL or backslash. (Symlinks are checked when the file is opened: provider_files.hpp.)
//  * Sizes are 1..kMaxModuleSize; (name, target) pairs are unique.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "arch/target.hpp"
#include "common/digest.hpp"
#include "kcache/result.hpp"
#include "variant/variant.hpp"

namespace kcache::providers {

inline constexpr std::string_view kManifestName = "kcache-provider.json";
inline constexpr int kManifestFormat = 1;
inline constexpr std::uint64_t kMaxModuleSize = 1ull << 30;  // 1 GiB decompressed
inline constexpr std::size_t kMaxManifestBytes = 16u << 20;
inline constexpr std::size_t kMaxModules = 65536;

enum class Compression : std::uint8_t { none, zstd };
std::string_view compression_name(Compression c) noexcept;  // "none" / "zstd"

// What a module file is: a device binary (cubin, code object) or a host shared object with
// the device code embedded (a FlashInfer `<mod>.so`: arch/host_object.hpp).
enum class ModuleFormat : std::uint8_t { device_binary, host_object };

struct ModuleSpec {
  std::string name;
  std::string file;  // relative to the provider directory
  Target target;     // canonical
  std::uint64_t size = 0;
  Digest128 digest;  // of the decompressed bytes
  Compression compression = Compression::none;
  ModuleFormat format = ModuleFormat::device_binary;
  // Providers that publish no digests (FlashInfer wheels): `digest` is the file's identity
  // when scanned (provider_files.hpp file_identity), and only bytes read from that same,
  // unchanged file are served.
  bool digest_is_identity = false;
  std::vector<Target> provided;  // host objects: every target the provider declares
  // FlashInfer: the sha256 the wheel's RECORD gives the file (standard base64), or empty.
  std::string record_sha256;
};

struct Manifest {
  int format = kManifestFormat;
  std::string name;
  std::string package;
  std::string version;  // full, local part included: "0.6.18+cu130"
  std::string backend;  // "cuda-13.0", "rocm-6.3"
  Backend backend_kind = Backend::cuda;
  std::optional<Variant> variant;
  std::vector<Target> targets;
  std::vector<ModuleSpec> modules;
};

Result<Manifest> parse_manifest(const nlohmann::json& document);

// The manifest as kcache-pack writes it (stable key order, two-space indent).
std::string manifest_to_json(const Manifest& manifest);

// Empty when `path` is an acceptable module path, else the reason.
std::string check_relative_path(std::string_view path);

}  // namespace kcache::providers
