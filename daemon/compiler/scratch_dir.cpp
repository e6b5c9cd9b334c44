#include "compiler/scratch_dir.hpp"

#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "common/fd.hpp"

namespace kcache::daemon {

Result<ScratchDir> ScratchDir::create(const std::string& parent, const std::string& prefix,
                                      mode_t mode, std::optional<std::pair<uid_t, gid_t>> owner) {
  std::string path = parent + "/" + prefix + "XXXXXX";
  if (::mkdtemp(path.data()) == nullptr) return errno_error(Errc::io, "mkdtemp " + path);
  ScratchDir dir;
  dir.path_ = path;  // removed again if what follows fails
  if (owner && ::chown(path.c_str(), owner->first, owner->second) != 0)
    return errno_error(Errc::io, "chown " + path);
  if (::chmod(path.c_str(), mode) != 0) return errno_error(Errc::io, "chmod " + path);
  return dir;
}

ScratchDir::~ScratchDir() { remove(); }

ScratchDir& ScratchDir::operator=(ScratchDir&& o) noexcept {
  if (this != &o) {
    remove();
    path_ = std::exchange(o.path_, {});
  }
  return *this;
}

void ScratchDir::remove() noexcept {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
  if (ec) spdlog::warn("cannot remove scratch directory {}: {}", path_, ec.message());
  path_.clear();
}

std::string temp_root() {
  const char* t = std::getenv("TMPDIR");
  return t != nullptr && *t == '/' ? std::string(t) : std::string("/tmp");
}

}  // namespace kcache::daemon
