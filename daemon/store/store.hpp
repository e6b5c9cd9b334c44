// store.hpp — the content-addressed object store under <cache>/objects/.
//
// Layout: objects/<first two hex digits>/<32-hex digest>.<cubin|hsaco|so>, files mode 0444;
// directory trees (<digest>.tree) and the blobs they share (<digest>.blob): tree_store.hpp;
// objects/ and shard directories 0711 (open by path, no listing), staging in tmp/ (0700);
// who may pass the cache directory itself is cache_access.hpp's. Contract:
//  * `stage(bytes, kind)` (any thread) writes a new file in tmp/, fsyncs it and returns its
//    digest and allocated size. Nothing under objects/ changes. When an object of that name
//    already exists, it also reads it back (check_object) and records whether it holds the
//    staged bytes, so that commit() decides on the loop without reading a byte.
//  * `commit(staged)` (loop thread) publishes it with renameat2(RENAME_NOREPLACE): readers see
//    the whole file or none. If an object with that digest already exists, it is kept — the
//    staged copy dropped (identical bytes are stored once) and `false` returned — only when it
//    is still the same, unchanged file (inode, size, times) as one whose bytes were verified:
//    the file stage() hashed and found right, or one this store itself renamed into place
//    lately (a concurrent publish of the same bytes, staged before it landed). Otherwise
//    (damaged: same size, other bytes; a planted symlink; replaced behind the daemon's back)
//    it is replaced atomically with the staged, verified bytes and `true` is returned: a
//    publish never leaves in place bytes nobody verified.
//  * `check_object` (any thread) streams an object through the XXH3-128 Hasher in 128 KiB
//    chunks and reports what it holds; the scrubber and `verify` judge objects with it.
//  * Object paths are resolved under directory fds with O_NOFOLLOW: a symlink planted in
//    objects/ is never followed. The shard directory fsync that makes a rename durable is
//    `sync_shards`, called by the index worker before it commits rows naming new objects.
//  * `stage_tree` (any thread) is stage() for a directory tree (tree_store.hpp build_tree):
//    commit() publishes it the same way, with one rename of the whole directory, so a reader
//    sees the complete tree or none and a crash leaves at most a staging tree in tmp/.
//  * `sweep_staging()` empties tmp/ (start-up: anything there is from a dead process).
//  * Removing an object (or any shard entry) only schedules it, under a sequence number: a
//    background thread later moves it into a trash directory under tmp/ (`trash-*`) and frees
//    it (process_removals), because on a busy disk a rename can stall for milliseconds and an
//    unlink that frees blocks takes milliseconds; the loop never waits for either. A pass
//    frees only what was scheduled up to a given number, so the caller can free exactly the
//    objects whose index rows it has already deleted durably (cache.hpp). A publish of the
//    same object before the removal ran cancels it (commit). Open fds keep reading after a
//    removal.
#pragma once

#include <sys/stat.h>

#include <array>
#include <atomic>
#include <bitset>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "common/digest.hpp"
#include "common/fd.hpp"
#include "cache/entry.hpp"
#include "store/tree_store.hpp"

namespace kcache::daemon {

// Which file a name pointed to and whether it changed since: inode and metadata, not bytes.
struct FileStamp {
  std::uint64_t dev = 0;
  std::uint64_t ino = 0;
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
  friend bool operator==(const FileStamp&, const FileStamp&) = default;
};

// The stamp of the file `st` describes.
FileStamp file_stamp_of(const struct stat& st);

// What check_object read back.
struct ObjectCheck {
  Digest128 expected;      // the digest the object is named by
  Digest128 digest;        // XXH3-128 of the bytes read
  std::uint64_t size = 0;  // bytes read
  FileStamp stamp;         // the file they were read from
  std::string problem;     // trees: what does not belong, when something does not
  bool intact() const noexcept { return digest == expected; }
};

struct StagedObject {
  std::string staging_name;  // under tmp/
  Digest128 digest;
  std::uint64_t size = 0;
  std::uint64_t disk_size = 0;  // allocated bytes after fsync
  ObjectKind kind = ObjectKind::cubin;
  // The object already under this name when staging looked: none, one holding exactly the
  // staged bytes (`existing_stamp` says which file), or anything else (damaged).
  enum class Existing { none, intact, damaged } existing = Existing::none;
  FileStamp existing_stamp;
};

struct ShardFile {
  std::string name;
  bool regular = false;    // a regular file
  bool directory = false;  // a directory (only trees may be)
  std::uint64_t links = 0;  // blobs only: the link count (1: no tree links it)
  // What the name may be: a tree a directory, anything else a regular file.
  bool well_typed(ObjectKind kind) const noexcept { return kind == ObjectKind::tree ? directory : regular; }
};

class Store {
 public:
  static Result<Store> open(const std::string& cache_dir);

  const std::string& root() const noexcept { return root_; }
  std::string object_path(const Digest128& digest, ObjectKind kind) const;
  // The path a client is handed: the object itself, or a tree's tree/ directory.
  std::string served_path(const Digest128& digest, ObjectKind kind) const;
  // The file name inside its shard: <digest>.<ext>.
  static std::string object_name(const Digest128& digest, ObjectKind kind);
  static std::uint8_t shard_of(const Digest128& digest) noexcept {
    return static_cast<std::uint8_t>(digest.high >> 56);
  }

  Result<StagedObject> stage(std::string_view bytes, ObjectKind kind);
  Result<StagedObject> stage_tree(std::vector<std::string> dirs, std::vector<TreeFileSource>& files,
                                  const TreeFileCheck& check);
  Result<bool> commit(const StagedObject& staged);
  void discard(const StagedObject& staged);

  Result<Fd> open_object(const Digest128& digest, ObjectKind kind) const;
  // Any thread: reads the object through a reused 128 KiB per-thread buffer (never whole in
  // memory) and hashes it. Errors: Errc::not_found when it is gone, Errc::corrupt when it is
  // not a regular file, Errc::io when it cannot be read. Judging a size is the caller's.
  Result<ObjectCheck> check_object(const Digest128& digest, ObjectKind kind) const;
  Result<bool> object_exists(const Digest128& digest, ObjectKind kind) const;
  Status remove_object(const Digest128& digest, ObjectKind kind);
  // Schedules the removal of any directory entry of a shard by name (an object, an orphan, a
  // planted symlink) under the next sequence number. Cheap: nothing touches the disk until
  // process_removals(). Scheduling an entry already scheduled keeps its first number.
  Status remove_shard_entry(std::uint8_t shard, const std::string& name);
  bool removal_scheduled(std::uint8_t shard, const std::string& name) const;
  // Any thread: unlinks a damaged object now, not through the schedule (a publish of the same
  // digest would cancel a scheduled removal and keep the damaged bytes).
  Status unlink_damaged(const Digest128& digest, ObjectKind kind);
  // Sizes the schedule for `n` more removals up front, so a GC step never pays a rehash.
  void reserve_removals(std::size_t n);
  // Background thread: moves every entry scheduled under a number <= `upto` (and not cancelled)
  // into a trash directory and frees it. Returns how many entries it removed.
  Result<std::size_t> process_removals(std::uint64_t upto = UINT64_MAX);
  // The number of the latest removal scheduled (0 before the first), and whether any is still
  // waiting for a pass.
  std::uint64_t last_removal_seq() const noexcept;
  bool removals_waiting() const noexcept;
  static bool is_trash_name(std::string_view name) noexcept { return name.starts_with("trash-"); }
  Result<std::vector<ShardFile>> list_shard(std::uint8_t shard) const;
  Result<std::vector<std::string>> list_staging() const;
  // Removes a staging file; false if it was already gone.
  Result<bool> remove_staging(const std::string& name);
  // Parses an object file name "<32 hex>.<cubin|hsaco>".
  static std::optional<std::pair<Digest128, ObjectKind>> parse_object_name(std::string_view name);

  Status sync_shards(const std::bitset<256>& shards) const;
  // Any thread (~260 stat calls): whether the cache directory, objects/, tmp/ and every shard
  // directory are still the directories this store opened — not removed, renamed or replaced.
  // Paths handed to clients name files in them; a replaced one holds files nobody verified.
  Status still_in_place() const;
  // Any thread, one fstatat: a 64-bit fingerprint of the object's file as it is now (device,
  // inode, size, mtime, ctime — any write, chmod, link or replacement changes the ctime or
  // inode).
  // Errc::not_found when it is gone, Errc::corrupt when it is not a regular file.
  Result<std::uint64_t> fingerprint(const Digest128& digest, ObjectKind kind) const;
  Status sweep_staging();

 private:
  Result<Fd> open_object_with(const Digest128& digest, ObjectKind kind, int extra_flags) const;
  void judge_existing(StagedObject& staged) const;
  Result<bool> replace_existing(const StagedObject& staged, int shard, const std::string& name);
  void free_entry(int dir_fd, const std::string& name);
  Status remove_damaged_tree(const Digest128& digest);

  std::string root_;  // the cache directory
  std::string objects_path_;
  Fd root_fd_;
  Fd objects_fd_;
  Fd tmp_fd_;
  std::vector<Fd> shard_fds_;  // 256, index = first byte of the digest
  // One file of a shard directory: what a removal names.
  struct ShardEntry {
    std::uint8_t shard = 0;
    std::string name;
    bool operator==(const ShardEntry&) const = default;
  };
  struct ShardEntryHash {
    std::size_t operator()(const ShardEntry& e) const noexcept {
      return std::hash<std::string>{}(e.name) ^ (std::size_t{e.shard} * 0x9e3779b97f4a7c15ull);
    }
  };
  // Removals scheduled by the loop (entry -> its number), done in the background; commit()
  // cancels one for an object published again (erased from `scheduled`; its entry in `order`
  // goes stale and is skipped). Heap-held so a Store stays movable.
  struct Removals {
    std::mutex mu;
    std::condition_variable moved;  // signalled when an item leaves `moving`
    std::unordered_map<ShardEntry, std::uint64_t, ShardEntryHash> scheduled;
    std::deque<std::pair<std::uint64_t, ShardEntry>> order;  // by number, oldest first
    std::unordered_set<ShardEntry, ShardEntryHash> moving;  // being renamed, lock not held
    std::uint64_t last_seq = 0;
  };
  std::unique_ptr<Removals> removals_ = std::make_unique<Removals>();
  // The last objects commit() put in place and their stamps: a publish of the same bytes that
  // was staged before one of them landed trusts it without a read (see commit()).
  struct Recent {
    std::mutex mu;
    std::deque<std::pair<std::string, FileStamp>> items;  // newest last, bounded
  };
  std::unique_ptr<Recent> recent_ = std::make_unique<Recent>();
  void remember_published(int shard_fd, const std::string& name);
  bool published_here(const std::string& name, const FileStamp& stamp) const;
};

}  // namespace kcache::daemon
