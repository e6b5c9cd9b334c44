// Directory trees on disk: staging, checking, removing (tree_store.hpp).
#include "store/tree_store.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>

#include "store/store.hpp"

namespace kcache::daemon {

namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
constexpr std::size_t kChunk = 128 * 1024;
constexpr std::size_t kMaxManifestBytes = 64u << 20;

char* chunk_buffer() {
  thread_local const std::unique_ptr<char[]> buffer(new char[kChunk]);
  return buffer.get();
}

std::string blob_name(const Digest128& d) { return Store::object_name(d, ObjectKind::blob); }

// The names in a directory (not . and ..), or an error.
Result<std::vector<std::pair<std::string, unsigned char>>> entries_of(int dir_fd) {
  const int dup = ::openat(dir_fd, ".", kDirFlags);
  if (dup < 0) return errno_error(Errc::io, "cannot reopen a directory");
  DIR* d = ::fdopendir(dup);
  if (d == nullptr) {
    ::close(dup);
    return errno_error(Errc::io, "cannot list a directory");
  }
  std::vector<std::pair<std::string, unsigned char>> out;
  while (const dirent* e = ::readdir(d)) {
    const std::string_view n = e->d_name;
    if (n != "." && n != "..") out.emplace_back(e->d_name, e->d_type);
  }
  ::closedir(d);
  return out;
}

// Copies `src` into a new 0444 file `name` under `dir` while hashing; fsynced.
Result<TreeFile> copy_file(int src, int dir, const std::string& name, const std::string& path,
                           struct stat& st) {
  Fd out(::openat(dir, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0444));
  if (!out) return errno_error(Errc::io, "cannot create the staged copy of " + path);
  Hasher hasher;
  TreeFile f;
  f.path = path;
  char* buf = chunk_buffer();
  for (;;) {
    const ssize_t n = ::read(src, buf, kChunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno_error(Errc::io, "cannot read " + path);
    if (n == 0) break;
    hasher.update(buf, static_cast<std::size_t>(n));
    KC_TRY(write_all(out.get(), buf, static_cast<std::size_t>(n)));
    f.size += static_cast<std::uint64_t>(n);
  }
  if (::fsync(out.get()) != 0 || ::fstat(out.get(), &st) != 0)
    return errno_error(Errc::io, "cannot sync the staged copy of " + path);
  f.digest = hasher.finish();
  return f;
}

// Hands the staged bytes to `check`, mapped read-only (nothing is copied into memory).
Status check_staged(int dir, const std::string& name, const TreeFile& f, const TreeFileCheck& check) {
  if (!check) return {};
  if (f.size == 0) return check(f.path, {});
  Fd fd(::openat(dir, name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return errno_error(Errc::io, "cannot reopen the staged copy of " + f.path);
  void* map = ::mmap(nullptr, f.size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (map == MAP_FAILED) return errno_error(Errc::io, "cannot map the staged copy of " + f.path);
  Status verdict = check(f.path, std::string_view(static_cast<const char*>(map), f.size));
  ::munmap(map, f.size);
  return verdict;
}

// Whether the blob under `name` holds exactly the bytes of `f` (read back and hashed).
bool blob_matches(int shard, const std::string& name, const TreeFile& f) {
  Fd fd(::openat(shard, name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  struct stat st {};
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || (st.st_mode & 07777) != 0444 ||
      static_cast<std::uint64_t>(st.st_size) != f.size)
    return false;
  auto hashed = hash_fd(fd.get());
  return hashed.ok() && hashed->digest == f.digest;
}

// Makes the staged file `name` share its blob: the existing blob when it verifies, else this
// file becomes the blob. Failing to share only costs space, never correctness.
void share_blob(int dir, const std::string& name, const TreeFile& f, std::span<const Fd> shards) {
  const int shard = shards[Store::shard_of(f.digest)].get();
  const std::string blob = blob_name(f.digest);
  if (blob_matches(shard, blob, f)) {
    const std::string linked = name + ".blob";
    if (::linkat(shard, blob.c_str(), dir, linked.c_str(), 0) == 0 &&
        ::renameat(dir, linked.c_str(), dir, name.c_str()) != 0)
      ::unlinkat(dir, linked.c_str(), 0);
    return;
  }
  if (::linkat(dir, name.c_str(), shard, blob.c_str(), 0) == 0 || errno != EEXIST) return;
  // Damaged or planted: replaced atomically with these verified bytes.
  static std::atomic<std::uint64_t> counter{0};
  const std::string spare = blob + "." + std::to_string(::getpid()) + "." + std::to_string(counter++) + ".tmp";
  if (::linkat(dir, name.c_str(), dir, spare.c_str(), 0) != 0) return;
  if (::renameat(dir, spare.c_str(), shard, blob.c_str()) != 0) ::unlinkat(dir, spare.c_str(), 0);
}

// Opens (creating 0700 while filling) each directory of the tree, parents first.
Result<std::map<std::string, Fd>> make_dirs(int staging_fd, const std::vector<std::string>& dirs) {
  std::map<std::string, Fd> fds;
  if (::mkdirat(staging_fd, std::string(kTreeRootName).c_str(), 0700) != 0)
    return errno_error(Errc::io, "cannot create the staged tree");
  fds.emplace("", Fd(::openat(staging_fd, std::string(kTreeRootName).c_str(), kDirFlags)));
  for (const std::string& d : dirs) {  // sorted: a parent comes before its children
    const auto slash = d.rfind('/');
    const std::string parent = slash == std::string::npos ? "" : d.substr(0, slash);
    const std::string leaf = slash == std::string::npos ? d : d.substr(slash + 1);
    const int pfd = fds.at(parent).get();
    if (::mkdirat(pfd, leaf.c_str(), 0700) != 0) return errno_error(Errc::io, "cannot create directory " + d);
    Fd fd(::openat(pfd, leaf.c_str(), kDirFlags));
    if (!fd) return errno_error(Errc::io, "cannot open directory " + d);
    fds.emplace(d, std::move(fd));
  }
  for (const auto& [path, fd] : fds)
    if (!fd) return errno_error(Errc::io, "cannot open the staged tree");
  return fds;
}

// Seals the directories (0555, children first) and makes their entries durable.
Status seal_dirs(std::map<std::string, Fd>& fds) {
  for (auto it = fds.rbegin(); it != fds.rend(); ++it)
    if (::fchmod(it->second.get(), 0555) != 0 || ::fsync(it->second.get()) != 0)
      return errno_error(Errc::io, "cannot seal directory " + (it->first.empty() ? "." : it->first));
  return {};
}

Status write_manifest(int staging_fd, const std::string& text) {
  const std::string name(kTreeManifestName);
  Fd fd(::openat(staging_fd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0444));
  if (!fd) return errno_error(Errc::io, "cannot create the tree manifest");
  KC_TRY(write_all(fd.get(), text.data(), text.size()));
  if (::fsync(fd.get()) != 0) return errno_error(Errc::io, "cannot sync the tree manifest");
  return {};
}

Result<BuiltTree> fill_tree(int staging_fd, std::vector<std::string> dirs, std::vector<TreeFileSource>& files,
                            const TreeFileCheck& check, std::span<const Fd> shards) {
  BuiltTree built;
  TreeManifest& m = built.manifest;
  m.dirs = std::move(dirs);
  for (const std::string& d : m.dirs) KC_TRY(check_tree_path(d));
  for (const TreeFileSource& s : files) {
    KC_TRY(check_tree_path(s.path));
    m.files.push_back({s.path, {}, 0});
  }
  normalize_tree_manifest(m);
  for (std::size_t i = 1; i < m.files.size(); ++i)
    if (m.files[i].path == m.files[i - 1].path)
      return make_error(Errc::invalid_argument, "tree file " + m.files[i].path + " is listed twice");
  KC_TRY_ASSIGN(auto dir_fds, make_dirs(staging_fd, m.dirs));
  std::map<std::string, TreeFile> done;
  for (TreeFileSource& s : files) {
    const auto slash = s.path.rfind('/');
    const int dir = dir_fds.at(slash == std::string::npos ? "" : s.path.substr(0, slash)).get();
    const std::string leaf = slash == std::string::npos ? s.path : s.path.substr(slash + 1);
    struct stat st {};
    KC_TRY_ASSIGN(TreeFile f, copy_file(s.fd.get(), dir, leaf, s.path, st));
    KC_TRY(check_staged(dir, leaf, f, check));
    share_blob(dir, leaf, f, shards);
    built.disk_size += static_cast<std::uint64_t>(st.st_blocks) * 512;
    done.emplace(f.path, f);
  }
  for (TreeFile& f : m.files) f = done.at(f.path);
  KC_TRY(seal_dirs(dir_fds));
  const std::string text = encode_tree_manifest(m);
  built.digest = digest_of(text);
  KC_TRY(write_manifest(staging_fd, text));
  // 0711, not 0555: moving a directory to another parent needs write permission on it (its
  // `..` changes), and a daemon that is not root has no override. Nobody else lists it.
  if (::fchmod(staging_fd, 0711) != 0 || ::fsync(staging_fd) != 0)
    return errno_error(Errc::io, "cannot seal the staged tree");
  return built;
}

}  // namespace

Result<BuiltTree> build_tree(int tmp_fd, const std::string& staging, std::vector<std::string> dirs,
                             std::vector<TreeFileSource>& files, const TreeFileCheck& check,
                             std::span<const Fd> shard_fds) {
  if (files.size() + dirs.size() > kMaxTreeEntries)
    return make_error(Errc::too_large, "a tree of more than " + std::to_string(kMaxTreeEntries) + " entries");
  if (::mkdirat(tmp_fd, staging.c_str(), 0700) != 0) return errno_error(Errc::io, "cannot create a staging tree");
  Fd staging_fd(::openat(tmp_fd, staging.c_str(), kDirFlags));
  auto built = staging_fd ? fill_tree(staging_fd.get(), std::move(dirs), files, check, shard_fds)
                          : Result<BuiltTree>(errno_error(Errc::io, "cannot open a staging tree"));
  if (!built.ok()) (void)remove_recursive(tmp_fd, staging);
  if (built.ok() && ::fsync(tmp_fd) != 0) return errno_error(Errc::io, "cannot sync tmp/");
  return built;
}

namespace {

struct TreeWalk {
  TreeManifest found;
  std::string problem;  // the first thing that does not belong
  std::uint64_t bytes = 0;
};

// Hashes a file of a published tree; false (with `problem`) when it is not as the store made it.
bool walk_file(int dir, const std::string& name, const std::string& path, TreeWalk& w) {
  Fd fd(::openat(dir, name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  struct stat st {};
  if (!fd || ::fstat(fd.get(), &st) != 0) {
    w.problem = path + ": cannot be opened";
    return false;
  }
  if (!S_ISREG(st.st_mode) || (st.st_mode & 07777) != 0444) {
    w.problem = path + ": not a 0444 regular file";
    return false;
  }
  auto hashed = hash_fd(fd.get());
  if (!hashed.ok()) {
    w.problem = path + ": cannot be read";
    return false;
  }
  w.bytes += hashed->size;
  w.found.files.push_back({path, hashed->digest, hashed->size});
  return true;
}

bool walk_dir(int dir, const std::string& prefix, TreeWalk& w, int depth) {
  struct stat st {};
  if (depth > 64 || ::fstat(dir, &st) != 0 || (st.st_mode & 07777) != 0555) {
    w.problem = (prefix.empty() ? "." : prefix) + ": not a 0555 directory";
    return false;
  }
  auto names = entries_of(dir);
  if (!names.ok()) {
    w.problem = prefix + ": " + names.error().message;
    return false;
  }
  for (const auto& [name, type] : *names) {
    const std::string path = prefix.empty() ? name : prefix + "/" + name;
    if (w.found.files.size() + w.found.dirs.size() > kMaxTreeEntries) {
      w.problem = "more entries than any tree may hold";
      return false;
    }
    Fd sub(::openat(dir, name.c_str(), kDirFlags));
    if (sub) {
      w.found.dirs.push_back(path);
      if (!walk_dir(sub.get(), path, w, depth + 1)) return false;
    } else if (!walk_file(dir, name, path, w)) {
      return false;
    }
  }
  return true;
}


// The manifest of the tree whose top directory is `top`: a regular file of bounded size that
// parses (Errc::corrupt otherwise).
Result<TreeManifest> read_manifest(int top) {
  Fd manifest(::openat(top, std::string(kTreeManifestName).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  struct stat st {};
  if (!manifest || ::fstat(manifest.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<std::uint64_t>(st.st_size) > kMaxManifestBytes)
    return make_error(Errc::corrupt, "its manifest is missing or not a file");
  KC_TRY_ASSIGN(const std::string text, read_whole_file(manifest.get()));
  return parse_tree_manifest(text);
}

}  // namespace

Result<ObjectCheck> check_tree(int shard_fd, const std::string& name, const Digest128& expected,
                               const std::string& shown) {
  Fd top(::openat(shard_fd, name.c_str(), kDirFlags));
  if (!top) {
    const int err = errno;
    if (err == ENOENT) return make_error(Errc::not_found, shown + " is gone");
    return make_error(Errc::corrupt, shown + " is not a directory");
  }
  struct stat st {};
  if (::fstat(top.get(), &st) != 0) return errno_error(Errc::io, "fstat " + shown);
  ObjectCheck check;
  check.expected = expected;
  check.stamp = file_stamp_of(st);
  auto listed = read_manifest(top.get());
  if (!listed.ok()) return make_error(listed.error().code, shown + ": " + listed.error().message);
  TreeWalk w;
  Fd root(::openat(top.get(), std::string(kTreeRootName).c_str(), kDirFlags));
  if (!root) return make_error(Errc::corrupt, shown + ": no tree/ directory");
  const bool walked = walk_dir(root.get(), "", w, 0);
  check.size = w.bytes;
  if (walked) {
    normalize_tree_manifest(w.found);
    // What is on disk, described the same way: equal to the manifest exactly when intact.
    check.digest = tree_digest(w.found);
    if (check.digest == expected && *listed == w.found) return check;
    w.problem = "its files do not match the tree digest it is named by";
  }
  check.problem = shown + ": " + w.problem;
  if (check.digest == expected) check.digest.low ^= 1;  // damaged, whatever the bytes hash to
  return check;
}

std::vector<Digest128> tree_blobs(int dir_fd, const std::string& name) {
  Fd top(::openat(dir_fd, name.c_str(), kDirFlags));
  if (!top) return {};
  auto m = read_manifest(top.get());
  if (!m.ok()) return {};
  std::vector<Digest128> out;
  for (const TreeFile& f : m->files) out.push_back(f.digest);
  return out;
}

Result<FdHash> hash_fd(int fd) {
  Hasher hasher;
  FdHash out;
  char* buf = chunk_buffer();
  for (;;) {
    const ssize_t n = ::read(fd, buf, kChunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno_error(Errc::io, "read");
    if (n == 0) break;
    hasher.update(buf, static_cast<std::size_t>(n));
    out.size += static_cast<std::uint64_t>(n);
  }
  out.digest = hasher.finish();
  return out;
}

Status remove_recursive(int dir_fd, const std::string& name) {
  if (::unlinkat(dir_fd, name.c_str(), 0) == 0 || errno == ENOENT) return {};
  if (errno != EISDIR && errno != EPERM) return errno_error(Errc::io, "cannot remove " + name);
  Fd sub(::openat(dir_fd, name.c_str(), kDirFlags));
  if (!sub) return errno_error(Errc::io, "cannot open " + name);
  if (::fchmod(sub.get(), 0700) != 0) return errno_error(Errc::io, "cannot chmod " + name);
  KC_TRY_ASSIGN(const auto names, entries_of(sub.get()));
  for (const auto& [child, type] : names) KC_TRY(remove_recursive(sub.get(), child));
  if (::unlinkat(dir_fd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT)
    return errno_error(Errc::io, "cannot remove directory " + name);
  return {};
}

void drop_unlinked_blob(int shard_fd, const Digest128& digest) {
  const std::string name = blob_name(digest);
  struct stat st {};
  if (::fstatat(shard_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1)
    ::unlinkat(shard_fd, name.c_str(), 0);
}

}  // namespace kcache::daemon
