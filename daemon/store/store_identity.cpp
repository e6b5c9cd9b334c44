// Store: is it still the store that was opened, and which file is an object now
// (store.hpp: still_in_place, fingerprint).
#include <fcntl.h>
#include <sys/stat.h>
#include <xxhash.h>

#include <cstdio>

#include "store/store.hpp"

namespace kcache::daemon {

Status Store::still_in_place() const {
  KC_TRY(same_file(root_fd_.get(), root_));
  KC_TRY(same_file(objects_fd_.get(), objects_path_));
  KC_TRY(same_file(tmp_fd_.get(), root_ + "/tmp"));
  for (int i = 0; i < 256; ++i) {
    char shard[3];
    std::snprintf(shard, sizeof shard, "%02x", i);
    KC_TRY(same_file(shard_fds_[static_cast<std::size_t>(i)].get(), objects_path_ + "/" + shard));
  }
  return {};
}

Result<std::uint64_t> Store::fingerprint(const Digest128& digest, ObjectKind kind) const {
  const std::string name = object_name(digest, kind);
  struct stat st {};
  if (::fstatat(shard_fds_[shard_of(digest)].get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    const int err = errno;
    if (err == ENOENT) return make_error(Errc::not_found, object_path(digest, kind) + " is gone");
    return errno_error(Errc::io, "cannot stat " + object_path(digest, kind), err);
  }
  if (kind == ObjectKind::tree ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
    return make_error(Errc::corrupt, object_path(digest, kind) + " is not a " +
                                         (kind == ObjectKind::tree ? "directory" : "regular file"));
  const FileStamp identity = file_stamp_of(st);
  const std::uint64_t stamp = XXH3_64bits(&identity, sizeof identity);
  return stamp == 0 ? 1 : stamp;  // 0 means "not known yet"
}

}  // namespace kcache::daemon
