// providers/flashinfer_provider.hpp — a FlashInfer JIT-cache provider wheel as pip installs
// it: `<site-packages>/flashinfer_jit_cache/providers/<tag>/{__init__.py,manifest.json,
// jit_cache/<mod>/<mod>.so}`, named by an entry point (site_packages.hpp).
//
// Contract (docs/providers.md "FlashInfer provider wheels"; pure, any thread):
//  * `normalize_flashinfer_arch` is the shim's `_normalize_cuda_architecture`: trim, lower
//    case, drop one leading `compute_`, `sm_` or `sm`, remove `.` and `_`, then require
//    `\d{2,3}[af]?`; the result is read as a CUDA target (`9.0a` → sm_90a, `compute_120f` →
//    sm_120f). Errc::invalid_argument quoting the input otherwise.
//  * `parse_flashinfer_manifest(doc)` applies the shim's validation of manifest.json:
//    `schema_version` is the integer 1; `distribution`, `version`, `cuda_architectures` and
//    `modules` are present (all missing ones named at once); the two lists are non-empty
//    lists of strings; architectures normalize; module names are single path components
//    (they name `jit_cache/<mod>/<mod>.so`). Duplicates collapse, as the shim's sets do.
//    Other keys (`provider_id`, `jit_cache_dir`) are ignored: the provider id is the entry
//    point's name and the modules lie in the package's `jit_cache/`, as get_provider() says.
//  * `load_flashinfer_provider(found)` gives a LoadedProvider of kind flashinfer: `incomplete`
//    while its dist-info has no RECORD (pip writes it last, after every package file);
//    `rejected` for an unusable entry point, a package outside its site-packages, a missing
//    or invalid manifest.json, or no usable module; else `active`. One ModuleSpec per
//    (module, architecture), each a host object (`<mod>.so`, checked by
//    check_host_object_matches when materialized) whose digest is the file's identity; a
//    listed module whose file is missing or empty is refused alone, with the reason. When the
//    dist-info's RECORD lists a module file, its size must match at scan and its sha256 when
//    the module is materialized (module_check.hpp).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "arch/target.hpp"
#include "kcache/result.hpp"
#include "providers/provider_load.hpp"

namespace kcache::providers {

inline constexpr std::string_view kFlashInferManifestName = "manifest.json";
inline constexpr int kFlashInferSchemaVersion = 1;

struct FlashInferManifest {
  std::string distribution;
  std::string version;  // full, local part included: "0.6.18+cu130"
  std::vector<Target> architectures;  // normalized, sorted, unique
  std::vector<std::string> modules;   // sorted, unique
};

Result<Target> normalize_flashinfer_arch(std::string_view text);
Result<FlashInferManifest> parse_flashinfer_manifest(const nlohmann::json& doc);
LoadedProvider load_flashinfer_provider(const FoundProvider& found);

}  // namespace kcache::providers
