// providers/kernels_variant.hpp — one `build/<variant>/` directory of a Hugging Face
// `kernels` repo: its metadata.json and the digest kernels verifies it against.
//
// Contract (docs/providers.md "kernels repos"; pure, any thread):
//  * `parse_kernels_metadata(doc)` reads metadata.json as kernels' serde structs do (kebab-case
//    keys; unknown keys ignored): `name`, `id` and `backend.type` when present must be strings;
//    `digest`, when present, is `{"algorithm": "sha256"|"sha512", "files": {relpath: base64}}`
//    with relative paths (check_relative_path) and string values. Errc::invalid_argument
//    naming the field otherwise.
//  * `list_variant_files(repo, variant_rel)` lists the files kernels hashes (its hash_variant):
//    every regular file under the variant directory, symlinked files followed, symlinked
//    directories not, except the top-level `metadata.json` and `metadata.json.sigstore` and
//    anything under `__pycache__` or ending in `.pyc`; keys are paths relative to the variant,
//    sorted. Every file is opened through ProviderDir(repo), so a symlink may land anywhere in
//    the repo's own directory (a hub cache's `blobs/`), never outside it: such a file is an
//    error naming it (Errc::corrupt).
//  * `check_variant_digest(files, digest)` returns kernels' outcomes, in its order and words:
//    "Missing file: p", "File hash mismatch for p: expected: e, got: g" (reference paths in
//    order), then "Unknown file: p"; empty when the variant matches. Hashes are SHA-2 by
//    libcrypto (sha2.hpp), remembered per file identity, so an unchanged file is hashed once
//    per process however often its repo is rescanned.
#pragma once

#include <sys/stat.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "kcache/result.hpp"
#include "providers/provider_files.hpp"
#include "providers/sha2.hpp"

namespace kcache::providers {

inline constexpr std::string_view kKernelsMetadataName = "metadata.json";

struct KernelsDigest {
  ShaAlgorithm algorithm = ShaAlgorithm::sha256;
  std::map<std::string, std::string> files;  // relpath -> standard base64
};

struct KernelsMetadata {
  std::string name;
  std::string id;
  std::string backend_type;  // "cuda", "rocm", ... or empty
  std::optional<KernelsDigest> digest;
};

struct VariantFile {
  std::string relpath;  // relative to the variant directory
  std::string repo_relpath;  // relative to the repo directory (what ProviderDir opens)
  struct stat st {};
};

Result<KernelsMetadata> parse_kernels_metadata(const nlohmann::json& doc);

// Feeds each file's relpath and file identity (provider_files.hpp) to `h`, in order.
void hash_variant_files(Hasher& h, const std::vector<VariantFile>& files);
// What a variant was checked as: metadata.json's text and its files' identities. A variant is
// served only from files that still have the identity it was checked with.
Digest128 variant_identity(std::string_view metadata_text, const std::vector<VariantFile>& files);

Result<std::vector<VariantFile>> list_variant_files(const ProviderDir& repo,
                                                    const std::string& variant_rel);

Result<std::vector<std::string>> check_variant_digest(const ProviderDir& repo,
                                                      const std::vector<VariantFile>& files,
                                                      const KernelsDigest& digest);

}  // namespace kcache::providers
