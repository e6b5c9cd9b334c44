// providers/kernels_repo.hpp — Hugging Face `kernels` repos as they sit on disk: a checkout
// (`<repo>/build/<variant>/…`) or the hub cache (`<type>s--<org>--<name>/{refs/<ref>,
// snapshots/<commit>/build/<variant>/…, blobs/}`, the snapshot files being relative symlinks
// into that repo's own blobs/).
//
// Contract (docs/providers.md "kernels repos"; pure, any thread):
//  * `is_hub_repo_dir(dir)`: named `models--<org>--<name>` or `kernels--<org>--<name>` and
//    holding `snapshots/`. `is_hub_cache(dir)`: a child is one. `is_kernels_checkout(dir)`: a
//    `build/<variant>/metadata.json` exists (a kcache build tree has kcache-provider.json).
//  * `list_hub_repo(dir, out)` adds one FoundProvider per snapshot (its commit, the refs whose
//    file names that commit, id `org/name`) and the directories to watch; `checkout_found`
//    makes the FoundProvider of a checkout with the given id.
//  * `load_kernels_repo(found)` checks every `build/<variant>/` (kernels_variant.hpp): the name
//    parses as a variant (variant/variant.hpp); metadata.json is there and valid (kernels'
//    loader requires it); every file lies inside the repo's directory; the variant is
//    importable (a flat `__init__.py`, or one in a package subdirectory); and when metadata
//    carries a digest, every file matches it. Each variant is usable or has one reason; the
//    provider is `active` when one is usable, else `rejected` naming each variant's reason.
#pragma once

#include <string>

#include "providers/provider_load.hpp"

namespace kcache::providers {

bool is_hub_repo_dir(const std::string& dir);
bool is_hub_cache(const std::string& dir);
bool is_kernels_checkout(const std::string& dir);

void list_hub_repo(const std::string& dir, RootListing& out);
FoundProvider checkout_found(const std::string& dir, std::string repo_id);

LoadedProvider load_kernels_repo(const FoundProvider& found);

}  // namespace kcache::providers
