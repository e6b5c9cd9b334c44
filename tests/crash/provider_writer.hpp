// provider_writer.hpp — writes a provider directory (docs/providers.md, manifest format 1) the
// way a packager would, for the crash harness to drop into and pull out of a watched root.
//
// Contract: write_provider() creates `dir` (it must not exist) with one file per module under
// `sm_90a/` — the bytes as they are (`none`) or one zstd frame (`zstd`) — and writes the
// manifest last, through a temporary name and a rename, so a scan never sees a manifest
// naming files that are not there yet. Each module's manifest digest is the XXH3-128 of its
// bytes (what `xxhsum -H2` prints). Returns "" on success, else what failed.
#pragma once

#include <string>
#include <vector>

namespace kcache::crash {

// The consumer version every harness provider is published for: requests name it.
inline constexpr const char* kProviderVersion = "1.0+crash";

struct ProviderModule {
  std::string name;
  std::string bytes;  // an sm_90a cubin: the daemon's ELF checks must accept it
  bool zstd = false;
};

struct ProviderSpec {
  std::string name;  // the manifest's provider name
  std::vector<ProviderModule> modules;
};

std::string write_provider(const std::string& dir, const ProviderSpec& spec);

}  // namespace kcache::crash
