#include "common/paths.hpp"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

namespace kcache {

namespace {
const char* env(const char* name) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? v : nullptr;
}

bool is_socket(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}
}  // namespace

Result<std::string> default_cache_dir() {
  if (::geteuid() == 0) return std::string(kSystemCacheDir);
  if (const char* xdg = env("XDG_CACHE_HOME")) return std::string(xdg) + "/kcache";
  if (const char* home = env("HOME")) return std::string(home) + "/.cache/kcache";
  if (const passwd* pw = ::getpwuid(::geteuid()); pw != nullptr && pw->pw_dir != nullptr)
    return std::string(pw->pw_dir) + "/.cache/kcache";
  return make_error(Errc::invalid_argument,
                    "no cache directory: XDG_CACHE_HOME and HOME are unset; pass --cache-dir");
}

Result<std::string> user_socket_path() {
  if (const char* run = env("XDG_RUNTIME_DIR")) return std::string(run) + "/kcache.sock";
  return make_error(Errc::invalid_argument,
                    "no socket path: XDG_RUNTIME_DIR is unset; pass --socket or set KCACHE_SOCKET");
}

Result<std::string> default_socket_path() {
  if (::geteuid() == 0) return std::string(kSystemSocket);
  return user_socket_path();
}

Result<std::string> client_socket_path() {
  if (const char* s = env("KCACHE_SOCKET")) return std::string(s);
  if (is_socket(kSystemSocket)) return std::string(kSystemSocket);
  auto user = user_socket_path();
  if (user.ok()) return user;
  // Neither exists: name the system path so the error says where we looked.
  return std::string(kSystemSocket);
}

}  // namespace kcache
