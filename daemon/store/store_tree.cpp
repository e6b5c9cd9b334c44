// Store: the parts that differ for directory trees (store.hpp, tree_store.hpp): staging a
// tree, replacing a damaged object, freeing a removed entry, the served path.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>

#include <spdlog/spdlog.h>

#include "store/store.hpp"

namespace kcache::daemon {

std::string Store::served_path(const Digest128& digest, ObjectKind kind) const {
  std::string path = object_path(digest, kind);
  if (kind == ObjectKind::tree) path += "/" + std::string(kTreeRootName);
  return path;
}

Result<StagedObject> Store::stage_tree(std::vector<std::string> dirs, std::vector<TreeFileSource>& files,
                                       const TreeFileCheck& check) {
  static std::atomic<std::uint64_t> counter{0};
  StagedObject staged;
  staged.kind = ObjectKind::tree;
  staged.staging_name = "tree." + std::to_string(::getpid()) + "." +
                        std::to_string(counter.fetch_add(1, std::memory_order_relaxed)) + ".tmp";
  KC_TRY_ASSIGN(const BuiltTree built,
                build_tree(tmp_fd_.get(), staged.staging_name, std::move(dirs), files, check, shard_fds_));
  staged.digest = built.digest;
  staged.size = built.manifest.total_size();
  staged.disk_size = built.disk_size;
  judge_existing(staged);
  return staged;
}

// commit() found `name` taken by something nobody verified: the staged object replaces it in
// one step. A file is renamed over it; a tree (rename cannot replace a non-empty directory)
// is exchanged with it, and the old one, now at the staging name, removed.
Result<bool> Store::replace_existing(const StagedObject& staged, int shard, const std::string& name) {
  const char* staging = staged.staging_name.c_str();
  const bool tree = staged.kind == ObjectKind::tree;
  struct stat st {};
  const bool existing_is_dir =
      ::fstatat(shard, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
  const bool swapped = tree || existing_is_dir
                           ? ::renameat2(tmp_fd_.get(), staging, shard, name.c_str(), RENAME_EXCHANGE) == 0
                           : ::renameat(tmp_fd_.get(), staging, shard, name.c_str()) == 0;
  if (!swapped) {
    const int err = errno;
    discard(staged);
    return errno_error(Errc::io, "cannot replace " + object_path(staged.digest, staged.kind), err);
  }
  if (tree || existing_is_dir) discard(staged);  // the old entry, now in tmp/
  remember_published(shard, name);
  return true;
}

// Frees one entry moved into a trash directory: a file, or a tree and then each blob it was
// the last to link.
void Store::free_entry(int dir_fd, const std::string& name) {
  const std::vector<Digest128> blobs = tree_blobs(dir_fd, name);
  if (auto removed = remove_recursive(dir_fd, name); !removed.ok())
    spdlog::warn("store: cannot free {}: {}", name, removed.error().message);
  for (const Digest128& b : blobs) drop_unlinked_blob(shard_fds_[shard_of(b)].get(), b);
}

}  // namespace kcache::daemon

namespace kcache::daemon {

// A damaged tree leaves objects/ in one rename (into tmp/) and is freed there.
Status Store::remove_damaged_tree(const Digest128& digest) {
  static std::atomic<std::uint64_t> counter{0};
  const std::string name = object_name(digest, ObjectKind::tree);
  const std::string aside = "damaged." + std::to_string(::getpid()) + "." + std::to_string(counter++) + ".tmp";
  if (::renameat(shard_fds_[shard_of(digest)].get(), name.c_str(), tmp_fd_.get(), aside.c_str()) != 0) {
    if (errno == ENOENT) return {};
    return errno_error(Errc::io, "cannot remove " + object_path(digest, ObjectKind::tree));
  }
  free_entry(tmp_fd_.get(), aside);
  return {};
}

}  // namespace kcache::daemon
