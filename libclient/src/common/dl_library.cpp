#include "common/dl_library.hpp"

#include <dlfcn.h>
#include <link.h>
#include <climits>
#include <cstdlib>

namespace kcache {

DlLibrary::~DlLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

DlLibrary& DlLibrary::operator=(DlLibrary&& o) noexcept {
  if (this != &o) {
    if (handle_ != nullptr) dlclose(handle_);
    handle_ = std::exchange(o.handle_, nullptr);
    name_ = std::move(o.name_);
  }
  return *this;
}

Result<DlLibrary> DlLibrary::open_first(std::string_view what,
                                        std::span<const std::string> candidates) {
  std::string tried;
  std::string last_error;
  for (const std::string& name : candidates) {
    void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h != nullptr) {
      DlLibrary lib;
      lib.handle_ = h;
      lib.name_ = name;
      return lib;
    }
    if (!tried.empty()) tried += ", ";
    tried += name;
    if (const char* e = dlerror()) last_error = e;
  }
  std::string msg = std::string(what) + " not available (tried " + tried + ")";
  if (!last_error.empty()) msg += ": " + last_error;
  return make_error(Errc::unavailable, std::move(msg));
}

Result<void*> DlLibrary::raw_symbol(const char* name) const {
  dlerror();
  void* p = dlsym(handle_, name);
  if (p == nullptr)
    return make_error(Errc::unavailable,
                      std::string("symbol ") + name + " missing from " + name_);
  return p;
}

std::string DlLibrary::resolved_path() const {
  struct link_map* map = nullptr;
  if (handle_ == nullptr || dlinfo(handle_, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr)
    return name_;
  char buf[PATH_MAX];
  if (realpath(map->l_name, buf) == nullptr) return map->l_name;
  return buf;
}

}  // namespace kcache
