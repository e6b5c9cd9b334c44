// scratch_dir.hpp — a private directory that is removed with everything in it when its
// owner is destroyed: the daemon's parent of worker scratch directories, and each compile
// worker's own (its TMPDIR, where hiprtc/comgr leave files when a compile is killed).
//
// Contract: `create(parent, prefix, mode, owner)` makes parent/prefixXXXXXX with `mode`,
// chowned to `owner` when given (a root daemon's workers run as another user). Destruction
// removes the tree without following symbolic links (std::filesystem::remove_all), logging
// what it could not remove. Move-only; a moved-from or default object removes nothing.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>

#include "kcache/result.hpp"

namespace kcache::daemon {

class ScratchDir {
 public:
  ScratchDir() = default;
  static Result<ScratchDir> create(const std::string& parent, const std::string& prefix,
                                   mode_t mode, std::optional<std::pair<uid_t, gid_t>> owner = {});
  ~ScratchDir();
  ScratchDir(ScratchDir&& o) noexcept : path_(std::exchange(o.path_, {})) {}
  ScratchDir& operator=(ScratchDir&& o) noexcept;
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const noexcept { return path_; }

 private:
  void remove() noexcept;
  std::string path_;
};

// $TMPDIR when it is an absolute path, else /tmp.
std::string temp_root();

}  // namespace kcache::daemon
