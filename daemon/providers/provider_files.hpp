// providers/provider_files.hpp — confined access to the files of one provider directory.
//
// Contract:
//  * `ProviderDir::open(path)` opens the directory and records its resolved real path.
//  * `open_file(relative)` opens a file named by the manifest, read-only, and succeeds only
//    when the file it lands on lies inside the provider directory: a symlink may point
//    elsewhere inside it, never outside (no `..` tricks either: the resolved path is checked,
//    not the spelling). The file is resolved with O_PATH first, so nothing outside is ever
//    opened for reading (no device or FIFO side effects). It must be a regular file, and one
//    the directory's owner could read by its mode: kcached reads provider files with no more
//    rights than the provider's owner, so a hard link to a file the owner may not read
//    (`/etc/shadow`, another user's module) is refused before a byte of it is read or hashed.
//    Errors: Errc::not_found when missing (a provider still being copied), Errc::corrupt
//    with the reason when it escapes or is not a regular file, Errc::io otherwise.
#pragma once

#include <sys/stat.h>

#include <string>
#include <string_view>

#include "common/digest.hpp"
#include "common/fd.hpp"
#include "kcache/result.hpp"

namespace kcache::providers {

struct OpenedFile {
  Fd fd;
  struct stat st {};
};

class ProviderDir {
 public:
  static Result<ProviderDir> open(const std::string& path);

  const std::string& path() const noexcept { return path_; }
  const std::string& real_path() const noexcept { return real_path_; }
  uid_t owner() const noexcept { return owner_; }
  int fd() const noexcept { return fd_.get(); }

  Result<OpenedFile> open_file(std::string_view relative) const;

 private:
  bool owner_may_read(const struct stat& st) const noexcept;

  std::string path_;
  std::string real_path_;
  uid_t owner_ = 0;
  gid_t owner_group_ = 0;
  Fd fd_;
};

// A file's identity: device, inode, size, modification and change times. Any rewrite,
// replacement or truncation changes it (ctime cannot be set back by a user).
Digest128 file_identity(const struct stat& st);

// Where an fd really points (readlink of /proc/self/fd/N).
Result<std::string> resolved_path(int fd);

}  // namespace kcache::providers
