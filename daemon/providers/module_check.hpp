// providers/module_check.hpp — the checks of one provider module against its manifest entry.
//
// Contract (docs/providers.md "Validation"):
//  * `check_module_file` is the cheap check done whenever a provider is (re)scanned, without
//    decompressing: the file is inside the provider directory and regular (provider_files.hpp);
//    an uncompressed file has exactly the declared size; a zstd file is no larger than the
//    largest zstd encoding of the declared size and starts with a zstd frame whose recorded
//    content size, when present, does not exceed the declared size. Errc::not_found when the
//    file is missing (the provider is incomplete), Errc::corrupt with the reason otherwise.
//  * `materialize_module` does the full check and returns the module's bytes: the file is
//    streamed through per-thread 128 KiB chunks (read, decode, hash), and output past the
//    declared size is refused at the chunk that crosses it, so a frame that would produce
//    more never costs more memory (no decompression bombs); a frame cut short is refused; the
//    byte count and the XXH3-128 digest must equal the manifest's; the binary must pass
//    check_binary_matches for the declared target (one native module, right ELF machine and
//    target, no PTX where SASS is declared), or check_host_object_matches for a host object;
//    a module with a RECORD sha256 (FlashInfer wheels) must have it. A module whose digest is
//    its file identity is read only from that unchanged file (else Errc::not_found: rescan).
//    Failures are Errc::corrupt naming the module.
//  * Both are pure (no daemon state): any thread, one ZstdDCtx per thread.
#pragma once

#include <sys/stat.h>

#include <string>

#include "kcache/result.hpp"
#include "providers/manifest.hpp"
#include "providers/provider_files.hpp"
#include "providers/zstd_ctx.hpp"

namespace kcache::providers {

// On success `st` (if given) holds the file's stat, for change detection.
Status check_module_file(const ProviderDir& dir, const ModuleSpec& module, struct stat* st);

Result<std::string> materialize_module(const ProviderDir& dir, const ModuleSpec& module,
                                       ZstdDCtx& dctx);

// "'axpy' (sm_90a, file sm_90a/axpy.cubin.zst)": how reasons name a module.
std::string describe_module(const ModuleSpec& module);

}  // namespace kcache::providers
