// Confinement by resolved path: open with O_PATH, ask the kernel where it landed, then reopen.
#include "providers/provider_files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <climits>

#include "common/units.hpp"

namespace kcache::providers {

Digest128 file_identity(const struct stat& st) {
  const std::int64_t fields[] = {static_cast<std::int64_t>(st.st_dev),
                                 static_cast<std::int64_t>(st.st_ino),
                                 st.st_size,
                                 st.st_mtim.tv_sec,
                                 st.st_mtim.tv_nsec,
                                 st.st_ctim.tv_sec,
                                 st.st_ctim.tv_nsec};
  Hasher h;
  h.update(fields, sizeof fields);
  return h.finish();
}

Result<std::string> resolved_path(int fd) {
  const std::string link = "/proc/self/fd/" + std::to_string(fd);
  char buf[PATH_MAX];
  const ssize_t n = ::readlink(link.c_str(), buf, sizeof buf);
  if (n < 0) return errno_error(Errc::io, "readlink " + link);
  if (static_cast<std::size_t>(n) >= sizeof buf) return make_error(Errc::io, "path too long");
  return std::string(buf, static_cast<std::size_t>(n));
}

// By mode bits, as the kernel would judge the owner (its supplementary groups aside: a file
// shared through one of them is refused, the safe side).
bool ProviderDir::owner_may_read(const struct stat& st) const noexcept {
  if (owner_ == 0) return true;  // root could read it anyway
  if (st.st_uid == owner_) return (st.st_mode & S_IRUSR) != 0;
  if (st.st_gid == owner_group_ && (st.st_mode & S_IRGRP) != 0) return true;
  return (st.st_mode & S_IROTH) != 0;
}

Result<ProviderDir> ProviderDir::open(const std::string& path) {
  ProviderDir d;
  d.path_ = path;
  d.fd_.reset(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!d.fd_) {
    const int err = errno;
    return errno_error(err == ENOENT ? Errc::not_found : Errc::io,
                       "cannot open provider directory '" + path + "'", err);
  }
  KC_TRY_ASSIGN(d.real_path_, resolved_path(d.fd_.get()));
  struct stat st {};
  if (::fstat(d.fd_.get(), &st) != 0) return errno_error(Errc::io, "fstat '" + path + "'");
  d.owner_ = st.st_uid;
  d.owner_group_ = st.st_gid;
  return d;
}

Result<OpenedFile> ProviderDir::open_file(std::string_view relative) const {
  const std::string rel(relative);
  Fd where(::openat(fd_.get(), rel.c_str(), O_PATH | O_CLOEXEC));
  if (!where) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR)
      return make_error(Errc::not_found, "file '" + rel + "' is missing");
    if (err == ELOOP) return make_error(Errc::corrupt, "file '" + rel + "' is a symlink loop");
    return errno_error(Errc::io, "cannot open '" + rel + "'", err);
  }
  KC_TRY_ASSIGN(const std::string real, resolved_path(where.get()));
  // A deleted target reads "… (deleted)": it is not inside the directory either way.
  if (real.size() <= real_path_.size() || real.compare(0, real_path_.size(), real_path_) != 0 ||
      real[real_path_.size()] != '/')
    return make_error(Errc::corrupt,
                      "file '" + rel + "' resolves outside the provider directory (" + real + ")");
  OpenedFile out;
  if (::fstat(where.get(), &out.st) != 0) return errno_error(Errc::io, "fstat '" + rel + "'");
  if (!S_ISREG(out.st.st_mode))
    return make_error(Errc::corrupt, "file '" + rel + "' is not a regular file");
  if (!owner_may_read(out.st))
    return make_error(Errc::corrupt,
                      "file '" + rel + "' (owner uid " + std::to_string(out.st.st_uid) + ", mode " +
                          format_mode(out.st.st_mode) + (out.st.st_nlink > 1 ? ", hard-linked" : "") +
                          ") is not readable by the provider directory's owner (uid " +
                          std::to_string(owner_) + "): not read");
  // Reopen the very inode the O_PATH handle names, for reading.
  const std::string self = "/proc/self/fd/" + std::to_string(where.get());
  out.fd.reset(::open(self.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
  if (!out.fd) return errno_error(Errc::io, "cannot open '" + rel + "'");
  return out;
}

}  // namespace kcache::providers
