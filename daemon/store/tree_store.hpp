// store/tree_store.hpp — directory trees on disk: staging, checking and removing them
// (the Store's tree half; store.hpp states the publish contract both halves follow).
//
// Layout (docs/layout.md "Trees"): a tree object is objects/<shard>/<tree digest>.tree/, a
// directory 0711 (traverse-only, like the shards) holding `manifest` (tree_manifest.hpp, 0444) and `tree/`, the served
// directory: files 0444, directories 0555, nothing else (no symlinks, devices, other modes).
// Every file is a hard link of a blob, objects/<shard>/<file digest>.blob (0444), so a file
// shared by trees (or published again) is stored once; a blob no tree links (link count 1)
// is garbage (removed after a tree removal, and by reconcile).
//
// Contract (any thread; fds are the Store's):
//  * `build_tree` fills tmp/<staging>/ from the sources: each file streamed in 128 KiB chunks
//    into a new 0444 file while hashing, fsynced, handed to `check` as mapped bytes (what will
//    be served, so a check here cannot be raced by a change at the source), then deduplicated
//    against its blob (an existing blob is trusted only after it is read back and matches;
//    a damaged one is replaced). Directories are made 0555 and fsynced once filled. On error
//    the staging directory is removed. Nothing under objects/ but blobs changes.
//  * `check_tree` reads a published tree back: the manifest must parse, the directory must
//    hold exactly its entries with the store's modes, and each file is hashed; the digest
//    reported is that of the manifest rebuilt from what is on disk.
//  * `remove_recursive` removes a file or a tree under `dir_fd` (never following symlinks;
//    restoring write permission on the directories it empties).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/fd.hpp"
#include "store/tree_manifest.hpp"

namespace kcache::daemon {

struct ObjectCheck;

inline constexpr std::string_view kTreeManifestName = "manifest";
inline constexpr std::string_view kTreeRootName = "tree";

struct TreeFileSource {
  std::string path;  // relative to the tree (check_tree_path)
  Fd fd;             // open for reading, at offset 0
};

// Judges a file's bytes before it joins the tree (a provider's digest, a binary check).
using TreeFileCheck = std::function<Status(const std::string& path, std::string_view bytes)>;

struct BuiltTree {
  TreeManifest manifest;
  Digest128 digest;
  std::uint64_t disk_size = 0;  // allocated bytes of every file (shared ones included)
};

Result<BuiltTree> build_tree(int tmp_fd, const std::string& staging, std::vector<std::string> dirs,
                             std::vector<TreeFileSource>& files, const TreeFileCheck& check,
                             std::span<const Fd> shard_fds);

Result<ObjectCheck> check_tree(int shard_fd, const std::string& name, const Digest128& expected,
                               const std::string& shown);

// The blob digests a tree's manifest names (empty when it cannot be read).
std::vector<Digest128> tree_blobs(int dir_fd, const std::string& name);

Status remove_recursive(int dir_fd, const std::string& name);

// Streams an open file through XXH3-128 in 128 KiB chunks of a per-thread buffer (never whole
// in memory): its digest and byte count. Errc::io when it cannot be read.
struct FdHash {
  Digest128 digest;
  std::uint64_t size = 0;
};
Result<FdHash> hash_fd(int fd);

// Removes the blob of `digest` when no tree links it any more.
void drop_unlinked_blob(int shard_fd, const Digest128& digest);

}  // namespace kcache::daemon
