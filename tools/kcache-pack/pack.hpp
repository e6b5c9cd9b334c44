// kcache-pack/pack.hpp — building a provider directory from compiled modules.
//
// Contract:
//  * `pack_provider(options)` checks every input binary with check_binary_matches against its
//    declared target (refusing PTX, fatbins, bundles, wrong ELF machines and mismatched
//    targets, naming the file), compresses it (zstd at `level`, or stores it as is), and writes
//    `<out>/<target>/<name>.<cubin|hsaco>[.zst]` and then, last and atomically (temporary file
//    + rename), `kcache-provider.json`: a daemon watching the root never sees half a provider.
//  * The module name is the file name without its last extension (`axpy.cubin` → `axpy`);
//    two inputs with the same name and target are refused.
//  * `out` must not exist or be empty. The manifest goes through the daemon's parser before it
//    is written, and the finished directory through verify_provider, so a provider this writes
//    is one kcached accepts. Errors are values naming the input.
#pragma once

#include <string>
#include <vector>

#include "kcache/result.hpp"
#include "providers/manifest.hpp"

namespace kcache::pack {

struct Input {
  std::string target;  // as given; normalized by the packer
  std::string file;
};

struct PackOptions {
  std::string name;
  std::string package;
  std::string version;
  std::string backend;
  std::string variant;  // optional
  std::string out;
  bool compress = true;  // zstd; false: "none"
  int level = 3;  // zstd's default; decompression speed hardly depends on it
  std::vector<Input> inputs;
};

Result<providers::Manifest> pack_provider(const PackOptions& options);

}  // namespace kcache::pack
