#include "store/store.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <utility>

namespace kcache::daemon {

namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

// objects/ and its shards: traverse-only, so a socket user opens the paths it is handed and
// lists nothing; tmp/: the daemon's alone. Set on directories already there too (a cache
// from before this rule was 0755).
constexpr mode_t kObjectsDirMode = 0711;
constexpr mode_t kPrivateDirMode = 0700;

Result<Fd> open_or_make_dir(int parent, const std::string& name, const std::string& shown,
                            mode_t mode) {
  if (::mkdirat(parent, name.c_str(), mode) != 0 && errno != EEXIST)
    return errno_error(Errc::io, "cannot create " + shown);
  const int fd = ::openat(parent, name.c_str(), kDirFlags);
  if (fd < 0) return errno_error(Errc::io, "cannot open directory " + shown);
  Fd dir(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return errno_error(Errc::io, "fstat " + shown);
  if ((st.st_mode & 07777) != mode && ::fchmod(fd, mode) != 0)
    return errno_error(Errc::io, "cannot chmod " + shown);
  return dir;
}

std::string shard_name(std::uint8_t shard) {
  char buf[3];
  std::snprintf(buf, sizeof buf, "%02x", shard);
  return buf;
}

// A unique staging name: pid + a process-wide counter.
std::string next_staging_name(const Digest128& digest) {
  static std::atomic<std::uint64_t> counter{0};
  return digest.hex() + "." + std::to_string(::getpid()) + "." +
         std::to_string(counter.fetch_add(1, std::memory_order_relaxed)) + ".tmp";
}

struct DirCloser {
  void operator()(DIR* d) const { ::closedir(d); }
};

// Lists a directory given an fd (the fd is duplicated: closedir closes its own).
template <class F>
Status for_each_dirent(int dir_fd, const std::string& shown, F&& fn) {
  const int dup = ::fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);
  if (dup < 0) return errno_error(Errc::io, "dup " + shown);
  std::unique_ptr<DIR, DirCloser> dir(::fdopendir(dup));
  if (!dir) {
    ::close(dup);
    return errno_error(Errc::io, "cannot list " + shown);
  }
  ::rewinddir(dir.get());
  while (true) {
    errno = 0;
    const dirent* e = ::readdir(dir.get());
    if (e == nullptr) {
      if (errno != 0) return errno_error(Errc::io, "cannot list " + shown);
      return {};
    }
    const std::string_view name = e->d_name;
    if (name == "." || name == "..") continue;
    fn(*e);
  }
}

}  // namespace

FileStamp file_stamp_of(const struct stat& st) {
  return {static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino),
          static_cast<std::uint64_t>(st.st_size),
          static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
          static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec};
}

Result<Store> Store::open(const std::string& cache_dir) {
  Store s;
  s.root_ = cache_dir;
  s.objects_path_ = cache_dir + "/objects";
  const int root = ::open(cache_dir.c_str(), kDirFlags);
  if (root < 0) return errno_error(Errc::io, "cannot open cache directory " + cache_dir);
  s.root_fd_.reset(root);
  KC_TRY_ASSIGN(s.objects_fd_, open_or_make_dir(root, "objects", s.objects_path_, kObjectsDirMode));
  KC_TRY_ASSIGN(s.tmp_fd_, open_or_make_dir(root, "tmp", cache_dir + "/tmp", kPrivateDirMode));
  s.shard_fds_.reserve(256);
  for (int i = 0; i < 256; ++i) {
    const std::string name = shard_name(static_cast<std::uint8_t>(i));
    KC_TRY_ASSIGN(Fd fd, open_or_make_dir(s.objects_fd_.get(), name, s.objects_path_ + "/" + name, kObjectsDirMode));
    s.shard_fds_.push_back(std::move(fd));
  }
  return s;
}

std::string Store::object_name(const Digest128& digest, ObjectKind kind) {
  std::string name(32, '0');
  digest.hex_to(name.data());
  name += '.';
  name += kind_extension(kind);
  return name;
}

std::string Store::object_path(const Digest128& digest, ObjectKind kind) const {
  std::string path;
  path.reserve(objects_path_.size() + 48);
  path += objects_path_;
  path += '/';
  char hex[32];
  digest.hex_to(hex);
  path.append(hex, 2);
  path += '/';
  path.append(hex, 32);
  path += '.';
  path += kind_extension(kind);
  return path;
}

Result<StagedObject> Store::stage(std::string_view bytes, ObjectKind kind) {
  StagedObject staged;
  staged.digest = digest_of(bytes);
  staged.size = bytes.size();
  staged.kind = kind;
  staged.staging_name = next_staging_name(staged.digest);
  // 0444 from creation: the file is never writable through any other path.
  Fd fd(::openat(tmp_fd_.get(), staged.staging_name.c_str(),
                 O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0444));
  if (!fd) return errno_error(Errc::io, "cannot create staging file in " + root_ + "/tmp");
  auto written = write_all(fd.get(), bytes.data(), bytes.size());
  if (written.ok() && ::fsync(fd.get()) != 0) written = errno_error(Errc::io, "fsync staging file");
  struct stat st {};
  if (written.ok() && ::fstat(fd.get(), &st) != 0) written = errno_error(Errc::io, "fstat staging file");
  staged.disk_size = static_cast<std::uint64_t>(st.st_blocks) * 512;
  if (!written.ok()) {
    ::unlinkat(tmp_fd_.get(), staged.staging_name.c_str(), 0);
    return make_error(written.error().code, "staging " + staged.digest.hex() + ": " +
                                                written.error().message);
  }
  judge_existing(staged);
  return staged;
}

// Whatever already has the staged object's name is judged here, on the pool, so commit()
// decides on the loop without reading a byte.
void Store::judge_existing(StagedObject& staged) const {
  if (auto existing = check_object(staged.digest, staged.kind); existing.ok()) {
    const bool same = existing->intact() && existing->size == staged.size;
    staged.existing = same ? StagedObject::Existing::intact : StagedObject::Existing::damaged;
    staged.existing_stamp = existing->stamp;
  } else if (existing.error().code != Errc::not_found) {
    staged.existing = StagedObject::Existing::damaged;  // a planted non-file, unreadable bytes
  }
}

Result<bool> Store::commit(const StagedObject& staged) {
  const int shard = shard_fds_[shard_of(staged.digest)].get();
  const std::string name = object_name(staged.digest, staged.kind);
  {
    // The object is wanted again: a removal still pending for it is cancelled; one the pool is
    // moving right now is waited for (rare, and a rename is short). Only the loop schedules
    // removals, so none can start between here and the rename below.
    const ShardEntry item{shard_of(staged.digest), name};
    std::unique_lock lock(removals_->mu);
    removals_->scheduled.erase(item);
    removals_->moved.wait(lock, [&] { return !removals_->moving.contains(item); });
  }
  if (::renameat2(tmp_fd_.get(), staged.staging_name.c_str(), shard, name.c_str(),
                  RENAME_NOREPLACE) == 0) {
    remember_published(shard, name);
    return true;
  }
  const int err = errno;
  if (err == EEXIST) {
    // Kept only if its bytes were verified and it is untouched since: the file stage() hashed
    // and found right, or one a concurrent publish of the same bytes put there.
    struct stat st {};
    const bool tree = staged.kind == ObjectKind::tree;
    if (::fstatat(shard, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        (tree ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode))) {
      const FileStamp now = file_stamp_of(st);
      // A tree's stamp is its top directory's, blind to changes deeper down: only the check
      // stage_tree() just made vouches for it.
      if ((staged.existing == StagedObject::Existing::intact && now == staged.existing_stamp) ||
          (!tree && published_here(name, now))) {
        discard(staged);
        return false;
      }
    }
    if (staged.existing == StagedObject::Existing::damaged)
      spdlog::warn("store: {} does not hold the bytes it is named by; replacing it with the "
                   "verified ones being published",
                   object_path(staged.digest, staged.kind));
    // Damaged, planted, or not the file stage() looked at: replace it atomically with the
    // verified bytes (readers holding the old file keep it; new ones get these).
    return replace_existing(staged, shard, name);
  }
  discard(staged);
  return errno_error(Errc::io, "cannot publish " + object_path(staged.digest, staged.kind), err);
}

void Store::remember_published(int shard_fd, const std::string& name) {
  constexpr std::size_t kRemembered = 256;  // far more than publishes staged at once
  struct stat st {};
  if (::fstatat(shard_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return;
  std::lock_guard lock(recent_->mu);
  if (recent_->items.size() == kRemembered) recent_->items.pop_front();
  recent_->items.emplace_back(name, file_stamp_of(st));
}

bool Store::published_here(const std::string& name, const FileStamp& stamp) const {
  std::lock_guard lock(recent_->mu);
  for (auto it = recent_->items.rbegin(); it != recent_->items.rend(); ++it)
    if (it->first == name) return it->second == stamp;
  return false;
}

void Store::discard(const StagedObject& staged) {
  (void)remove_recursive(tmp_fd_.get(), staged.staging_name);
}

Result<Fd> Store::open_object(const Digest128& digest, ObjectKind kind) const {
  return open_object_with(digest, kind, 0);
}

Result<Fd> Store::open_object_with(const Digest128& digest, ObjectKind kind, int extra_flags) const {
  const bool tree = kind == ObjectKind::tree;
  // A tree is opened as the directory clients are handed.
  const std::string name = object_name(digest, kind) + (tree ? "/" + std::string(kTreeRootName) : "");
  const int fd = ::openat(shard_fds_[shard_of(digest)].get(), name.c_str(),
                          O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | extra_flags | (tree ? O_DIRECTORY : 0));
  if (fd < 0) {
    const int err = errno;
    return errno_error(err == ENOENT ? Errc::not_found : Errc::io,
                       "cannot open " + object_path(digest, kind), err);
  }
  Fd owned(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return errno_error(Errc::io, "fstat " + object_path(digest, kind));
  if (tree ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
    return make_error(Errc::corrupt, object_path(digest, kind) + (tree ? " is not a directory" : " is not a regular file"));
  return owned;
}

Result<ObjectCheck> Store::check_object(const Digest128& digest, ObjectKind kind) const {
  if (kind == ObjectKind::tree)
    return check_tree(shard_fds_[shard_of(digest)].get(), object_name(digest, kind), digest,
                      object_path(digest, kind));
  // O_NONBLOCK: a FIFO planted under the name must not hang a pool thread in open().
  KC_TRY_ASSIGN(const Fd fd, open_object_with(digest, kind, O_NONBLOCK));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return errno_error(Errc::io, "fstat " + object_path(digest, kind));
  ObjectCheck check;
  check.expected = digest;
  check.stamp = file_stamp_of(st);
  // A reused per-thread buffer: checking never allocates per object or holds a module in memory.
  auto hashed = hash_fd(fd.get());
  if (!hashed.ok()) return make_error(Errc::io, "cannot read " + object_path(digest, kind) + ": " + hashed.error().message);
  check.digest = hashed->digest;
  check.size = hashed->size;
  return check;
}

Result<bool> Store::object_exists(const Digest128& digest, ObjectKind kind) const {
  struct stat st {};
  const std::string name = object_name(digest, kind);
  if (::fstatat(shard_fds_[shard_of(digest)].get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0)
    return kind == ObjectKind::tree ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode);
  if (errno == ENOENT) return false;
  return errno_error(Errc::io, "stat " + object_path(digest, kind));
}

Status Store::remove_object(const Digest128& digest, ObjectKind kind) {
  return remove_shard_entry(shard_of(digest), object_name(digest, kind));
}

Status Store::remove_shard_entry(std::uint8_t shard, const std::string& name) {
  std::lock_guard lock(removals_->mu);
  Removals& r = *removals_;
  auto [it, fresh] = r.scheduled.try_emplace(ShardEntry{shard, name}, r.last_seq + 1);
  if (fresh) r.order.emplace_back(++r.last_seq, it->first);
  return {};
}

bool Store::removal_scheduled(std::uint8_t shard, const std::string& name) const {
  const ShardEntry item{shard, name};
  std::lock_guard lock(removals_->mu);
  return removals_->scheduled.contains(item) || removals_->moving.contains(item);
}

Status Store::unlink_damaged(const Digest128& digest, ObjectKind kind) {
  if (kind == ObjectKind::tree) return remove_damaged_tree(digest);
  if (::unlinkat(shard_fds_[shard_of(digest)].get(), object_name(digest, kind).c_str(), 0) != 0 &&
      errno != ENOENT)
    return errno_error(Errc::io, "cannot remove " + object_path(digest, kind));
  return {};
}

void Store::reserve_removals(std::size_t n) {
  std::lock_guard lock(removals_->mu);
  removals_->scheduled.reserve(removals_->scheduled.size() + n);
}

bool Store::removals_waiting() const noexcept {
  std::lock_guard lock(removals_->mu);
  return !removals_->scheduled.empty();
}

std::uint64_t Store::last_removal_seq() const noexcept {
  std::lock_guard lock(removals_->mu);
  return removals_->last_seq;
}

// Under removals_->mu: the oldest live item scheduled up to `upto`, now marked moving, into
// `out` (false: none); stale entries (cancelled or rescheduled) are dropped on the way.
static bool take_removal(auto& r, std::uint64_t upto, auto& out) {
  while (!r.order.empty() && r.order.front().first <= upto) {
    auto [seq, item] = std::move(r.order.front());
    r.order.pop_front();
    auto it = r.scheduled.find(item);
    if (it == r.scheduled.end() || it->second != seq) continue;
    r.scheduled.erase(it);
    r.moving.insert(item);
    out = std::move(item);
    return true;
  }
  return false;
}

Result<std::size_t> Store::process_removals(std::uint64_t upto) {
  {
    std::lock_guard lock(removals_->mu);
    const auto& order = removals_->order;
    if (order.empty() || order.front().first > upto) return std::size_t{0};
  }
  // A fresh trash directory per pass: unlinking there never holds the lock of a directory a
  // later pass renames into.
  static std::atomic<std::uint64_t> generation{0};
  const std::string trash_name = "trash-" + std::to_string(::getpid()) + "-" +
                                 std::to_string(generation.fetch_add(1, std::memory_order_relaxed));
  KC_TRY_ASSIGN(const Fd trash, open_or_make_dir(tmp_fd_.get(), trash_name, root_ + "/tmp/" + trash_name, kPrivateDirMode));
  std::size_t moved = 0;
  for (std::size_t i = 0;; ++i) {
    // One item at a time, taken under the lock and renamed without it: the loop schedules
    // removals meanwhile and never waits for the disk. A publish of the same object either
    // finds the item still scheduled and cancels it, or waits while it is `moving`: the
    // publish sees the file gone, or the removal never happens. Items scheduled during the
    // pass are taken by it too when their number is within `upto`.
    ShardEntry item;
    {
      std::lock_guard lock(removals_->mu);
      if (!take_removal(*removals_, upto, item)) break;
    }
    const bool ok = ::renameat(shard_fds_[item.shard].get(), item.name.c_str(), trash.get(),
                               std::to_string(i).c_str()) == 0;
    const int err = errno;
    {
      std::lock_guard lock(removals_->mu);
      removals_->moving.erase(item);
    }
    removals_->moved.notify_all();
    if (ok)
      ++moved;
    else if (err != ENOENT)
      // Left in place: the next reconcile finds it unreferenced and tries again.
      spdlog::warn("cannot remove {}/{}/{}: {}", objects_path_, shard_name(item.shard), item.name,
                   std::strerror(err));
  }
  // Freeing the blocks is the slow part; nothing else waits for it.
  std::vector<std::string> files;
  KC_TRY(for_each_dirent(trash.get(), root_ + "/tmp/" + trash_name,
                         [&](const dirent& e) { files.emplace_back(e.d_name); }));
  for (const std::string& f : files) free_entry(trash.get(), f);
  if (::unlinkat(tmp_fd_.get(), trash_name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT)
    return errno_error(Errc::io, "cannot remove " + root_ + "/tmp/" + trash_name);
  return moved;
}

Result<std::vector<ShardFile>> Store::list_shard(std::uint8_t shard) const {
  std::vector<ShardFile> out;
  KC_TRY(for_each_dirent(shard_fds_[shard].get(), objects_path_ + "/" + shard_name(shard),
                         [&](const dirent& e) {
                           ShardFile f{e.d_name, e.d_type == DT_REG, e.d_type == DT_DIR, 0};
                           const bool blob = f.name.ends_with(".blob");
                           // Some filesystems do not fill d_type; a blob's link count is asked.
                           if (e.d_type == DT_UNKNOWN || blob) {
                             struct stat st {};
                             const bool ok = ::fstatat(shard_fds_[shard].get(), e.d_name, &st,
                                                       AT_SYMLINK_NOFOLLOW) == 0;
                             f.regular = ok && S_ISREG(st.st_mode);
                             f.directory = ok && S_ISDIR(st.st_mode);
                             f.links = ok ? static_cast<std::uint64_t>(st.st_nlink) : 0;
                           }
                           out.push_back(std::move(f));
                         }));
  return out;
}

Result<std::vector<std::string>> Store::list_staging() const {
  std::vector<std::string> out;
  KC_TRY(for_each_dirent(tmp_fd_.get(), root_ + "/tmp",
                         [&](const dirent& e) { out.emplace_back(e.d_name); }));
  return out;
}

Result<bool> Store::remove_staging(const std::string& name) {
  if (::unlinkat(tmp_fd_.get(), name.c_str(), 0) == 0) return true;
  if (errno == ENOENT) return false;
  return errno_error(Errc::io, "cannot remove " + root_ + "/tmp/" + name);
}

std::optional<std::pair<Digest128, ObjectKind>> Store::parse_object_name(std::string_view name) {
  if (name.size() < 34 || name[32] != '.') return std::nullopt;
  auto digest = parse_digest_hex(name.substr(0, 32));
  const auto kind = parse_kind(name.substr(33));
  if (!digest.ok() || !kind) return std::nullopt;
  // Only the canonical lowercase spelling is ours.
  if (Store::object_name(*digest, *kind) != name) return std::nullopt;
  return std::pair{*digest, *kind};
}

Status Store::sync_shards(const std::bitset<256>& shards) const {
  for (std::size_t i = 0; i < shards.size(); ++i)
    if (shards.test(i) && ::fsync(shard_fds_[i].get()) != 0)
      return errno_error(Errc::io, "fsync " + objects_path_ + "/" + shard_name(static_cast<std::uint8_t>(i)));
  return {};
}

Status Store::sweep_staging() {
  KC_TRY_ASSIGN(const auto names, list_staging());
  for (const std::string& n : names) {
    // A staged file or tree, or a trash directory a previous run did not finish emptying.
    if (is_trash_name(n)) {
      const int fd = ::openat(tmp_fd_.get(), n.c_str(), kDirFlags);
      if (fd >= 0) {
        Fd dir(fd);
        std::vector<std::string> files;
        KC_TRY(for_each_dirent(fd, root_ + "/tmp/" + n, [&](const dirent& e) { files.emplace_back(e.d_name); }));
        for (const auto& f : files) free_entry(fd, f);
      }
    }
    if (auto removed = remove_recursive(tmp_fd_.get(), n); !removed.ok())
      return make_error(Errc::io, "cannot remove " + root_ + "/tmp/" + n + ": " + removed.error().message);
  }
  return {};
}

}  // namespace kcache::daemon
