// providers/variant_stage.hpp — a kernels build variant into a staged store tree.
//
// Contract (docs/providers.md "Serving a kernels repo"; any thread, one call per job):
//  * `stage_variant` lists the variant's files again (kernels_variant.hpp rules, all through
//    ProviderDir(repo): a symlink may land in the repo's own blobs/, nowhere else) and refuses
//    with Errc::not_found ("changed since it was scanned") when the variant no longer has the
//    identity it was checked with, so a hub update or a half-finished download is rescanned,
//    never served. Each file is opened again and must still be the file listed.
//  * The tree served is the variant directory as kernels imports it: metadata.json (and its
//    .sigstore) and every file kernels hashes; `__pycache__` and `.pyc` are left out.
//  * Every file is judged on the bytes copied into the store (what will be served): with a
//    metadata.json `digest`, each file must be listed with that hash (kernels' words: "Unknown
//    file", "File hash mismatch for p: expected: e, got: g"; "Missing file" for a listed one
//    absent); a host object's device code (`.nv_fatbin`, `.hip_fatbin`) must hold code that runs
//    on each device in `devices` — SASS or a code object compatible with it, or PTX it can JIT —
//    else Errc::corrupt "<file>: no device code for sm_86 (it holds sm_90a, compute_90a)".
//  * Errors are Errc::corrupt naming the file (the variant is refused), Errc::not_found (look
//    again), or Errc::io.
#pragma once

#include <string>
#include <vector>

#include "arch/target.hpp"
#include "store/store.hpp"

namespace kcache::providers {

struct VariantJob {
  std::string repo_dir;  // everything must resolve into it
  std::string rel;       // the variant directory, relative to repo_dir
  std::string name;      // the directory name, for messages
  Digest128 identity;    // what the scan checked (kernels_variant.hpp variant_identity)
  std::uint64_t bytes = 0;  // the files' sizes at scan
  std::vector<Device> devices;  // the device code must run on each
};

Result<daemon::StagedObject> stage_variant(daemon::Store& store, const VariantJob& job);

// The check of one file's device code against `device` (empty: runs there, or has none).
Status check_device_code(const std::string& path, std::string_view bytes, const Device& device);

}  // namespace kcache::providers
