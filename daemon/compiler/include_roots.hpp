// include_roots.hpp — directories of headers a compile may #include from the daemon's
// filesystem (config `include_roots`, `--include-root`), for libraries too large to send
// with every request (CUTLASS, CUB…). Off by default: headers come only from the request.
//
// Contract:
//  * scan(roots) resolves each root (realpath; it must be a readable directory) and takes one
//    XXH3-128 digest over every regular file under them (relative path and bytes, in sorted
//    order; symlinks are not followed out of a root). The digest joins the compiler identity
//    in every cache key, so entries compiled against other header contents are never served:
//    after changing headers under a root, restart kcached (or reload). Bounded: at most
//    kMaxFiles files and kMaxBytes bytes, else an error naming the root.
//  * allows(dir) is true when `dir` resolves (realpath) to a root or a directory under one.
//  * Empty (no roots): allows nothing and adds nothing to keys.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kcache/result.hpp"

namespace kcache::daemon {

class IncludeRoots {
 public:
  static constexpr std::size_t kMaxFiles = 200'000;
  static constexpr std::uint64_t kMaxBytes = 4ull << 30;

  static Result<IncludeRoots> scan(const std::vector<std::string>& roots);

  bool empty() const noexcept { return roots_.empty(); }
  bool allows(std::string_view dir) const;
  // " +include-roots <32 hex>" to append to a compiler identity in keys, or "" when empty.
  const std::string& key_suffix() const noexcept { return key_suffix_; }
  const std::vector<std::string>& roots() const noexcept { return roots_; }
  std::size_t files() const noexcept { return files_; }
  std::uint64_t bytes() const noexcept { return bytes_; }

 private:
  std::vector<std::string> roots_;  // resolved
  std::string key_suffix_;
  std::size_t files_ = 0;
  std::uint64_t bytes_ = 0;
};

}  // namespace kcache::daemon
