// providers/provider_verify.hpp — the offline check of a whole provider (`kcache-pack verify`).
//
// Contract: `verify_provider(dir)` applies exactly the daemon's rules: load_provider (manifest,
// variant, confinement, cheap file checks), then materialize_module on every module — so every
// digest, size, zstd bound and binary is checked, not only those a daemon would prefetch. A
// directory inside `build/<variant>/` gets that variant as the daemon would. `ok()` holds
// when the provider is active and every module passed.
#pragma once

#include <string>
#include <vector>

#include "providers/provider_load.hpp"

namespace kcache::providers {

struct ModuleVerdict {
  std::string name;
  std::string target;
  std::string reason;  // empty: the module passed
};

struct VerifyReport {
  LoadedProvider provider;
  std::vector<ModuleVerdict> modules;
  bool ok() const;
};

VerifyReport verify_provider(const std::string& dir);

// The <variant> a provider directory gets from a build/<variant>/ tree, or "".
std::string build_variant_of(const std::string& dir);

}  // namespace kcache::providers
