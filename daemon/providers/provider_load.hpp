// providers/provider_load.hpp — finding provider directories under a root and loading one.
//
// Layout (docs/providers.md): a root holds provider directories, and may hold a `build/`
// directory of `build/<variant>/` trees; a variant directory is either a provider itself (it
// holds kcache-provider.json) or holds provider directories. Names starting with '.' are
// ignored everywhere, so writers can stage a provider under `.name` and rename it in.
// A root that is a site-packages or a Python environment, and each Python environment a root
// holds, is searched for FlashInfer providers only (site_packages.hpp): nothing else there is
// a provider, so unrelated packages make no entries. A Hugging Face hub cache (root or child
// holding `<type>s--<org>--<name>/snapshots/`) gives one kernels provider per snapshot, and a
// directory whose `build/<variant>/` holds metadata.json is a kernels repo checkout
// (kernels_repo.hpp).
//
// Contract (pure: no daemon state; any thread):
//  * `list_root` returns the provider directories of a root and the directories to watch.
//  * `load_provider` reads and checks the manifest and the module files (module_check.hpp's
//    cheap check; digests are verified when a module is materialized) and returns the result
//    with a state: `active` (at least one module usable), `rejected` (the manifest is invalid,
//    its variant contradicts its build/ directory, or no module is usable), `incomplete`
//    (manifest or a module file missing, or the manifest is cut short: it is being written).
//    An incomplete provider is never partly loaded. Each unusable module keeps its reason
//    in `module_errors`; one bad module never hides the others.
//  * `fingerprint` changes whenever the manifest bytes or any module file's identity (inode,
//    size, times) change, so a caller can tell an unchanged provider from a rewritten one.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/digest.hpp"
#include "providers/manifest.hpp"

namespace kcache::providers {

enum class ProviderState : std::uint8_t { active, rejected, incomplete, removed };
std::string_view provider_state_name(ProviderState state) noexcept;

// Where a provider comes from (docs/providers.md "Provider kinds"): kcache's own format
// (kcache-provider.json), a FlashInfer JIT-cache provider wheel installed by pip, or one
// revision of a Hugging Face `kernels` repo (a checkout, or a hub-cache snapshot).
enum class ProviderKind : std::uint8_t { kcache, flashinfer, kernels };
std::string_view provider_kind_name(ProviderKind kind) noexcept;  // "kcache"/"flashinfer"/"kernels"

// One `build/<variant>/` of a kernels repo, as checked at scan (kernels_repo.hpp).
struct KernelsVariantState {
  std::string name;      // the directory name
  std::string dotted;    // the parsed variant's dotted form, or empty when the name is invalid
  bool usable = false;
  std::string reason;    // why not usable
  bool has_digest = false;
  // Usable ones: the parsed variant, the directory relative to the repo's (what ProviderDir
  // opens) and the identity of what was checked (names, file identities, metadata.json): a
  // variant is served only from files that still have it.
  std::optional<Variant> variant;
  std::string rel;
  Digest128 identity;
  std::uint64_t bytes = 0;  // the files' sizes at scan
};

struct LoadedProvider {
  ProviderKind kind = ProviderKind::kcache;
  std::string path;           // the directory, as found under its root
  std::string build_variant;  // the <variant> of build/<variant>/, or empty
  ProviderState state = ProviderState::incomplete;
  std::string reason;                   // why not active; for active ones, the modules refused
  std::optional<Manifest> manifest;     // set once the manifest parsed
  std::optional<Variant> variant;       // effective: the manifest's, else build/<variant>/'s
  std::vector<Digest128> keys;          // provider key of each module (manifest order)
  std::vector<std::string> module_errors;  // per module: empty when usable
  std::unordered_map<std::string, std::vector<std::size_t>> modules_by_name;
  Digest128 fingerprint;
  std::vector<std::string> watch_dirs;  // the directory and its module subdirectories
  // kernels repos: the repo id (org/name), its commit (hub cache) and the refs naming it.
  std::string repo_id;
  std::string revision;
  std::vector<std::string> refs;
  std::vector<KernelsVariantState> kernel_variants;
  std::string repo_dir;  // kernels: the directory every file must resolve into
};

LoadedProvider load_provider(const std::string& path, std::string_view build_variant);

struct FoundProvider {
  std::string path;
  std::string build_variant;
  ProviderKind kind = ProviderKind::kcache;
  // FlashInfer: the entry point that names the provider, the dist-info that declares it and
  // the site-packages it lies in; `problem` says why the entry point is unusable, and
  // `installing` that the dist-info has no RECORD yet (pip writes it last).
  std::string entry_point;
  std::string dist_info;
  std::string site_packages;
  std::string problem;
  bool installing = false;
  // kernels: the repo id, the repo's directory (nothing outside it is read), the variants'
  // directory relative to it ("build" or "snapshots/<commit>/build"), the commit and its refs.
  std::string repo_id;
  std::string repo_dir;
  std::string build_rel;
  std::string revision;
  std::vector<std::string> refs;
};

struct RootListing {
  bool exists = false;
  std::vector<FoundProvider> providers;
  std::vector<std::string> watch_dirs;  // the root, build/ and each build/<variant>/
};

RootListing list_root(const std::string& root);

// The subdirectories of `dir` (symlinks to directories included), sorted; names starting
// with '.' are skipped. And whether `path` is a directory (following symlinks), never throwing.
std::vector<std::filesystem::path> subdirectories(const std::filesystem::path& dir);
bool is_directory_path(const std::filesystem::path& path);

// Any kind: dispatches to load_provider or load_flashinfer_provider (flashinfer_provider.hpp).
LoadedProvider load_found(const FoundProvider& found);

// "N of M modules refused: <first reason>" or "" when every module is usable.
std::string summarize_module_errors(const std::vector<std::string>& module_errors);

}  // namespace kcache::providers
