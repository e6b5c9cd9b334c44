#include "compile/compiler.hpp"

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>

namespace kcache {

std::vector<std::string> compiler_library_candidates(std::string_view backend) {
  // An operator's explicit choice replaces the search entirely (and is then the only path
  // an "unavailable" message names).
  const char* override_var = backend == "cuda"  ? "KCACHE_NVRTC_LIBRARY"
                             : backend == "hip" ? "KCACHE_HIPRTC_LIBRARY"
                                                : nullptr;
  if (override_var != nullptr)
    if (const char* path = std::getenv(override_var); path != nullptr && *path != '\0')
      return {path};
  if (backend == "cuda") {
    // Exact SONAMEs first (the loader's search path, e.g. ld.so.conf or LD_LIBRARY_PATH),
    // then the CUDA toolkit's own directory.
    return {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2",
            "/usr/local/cuda/lib64/libnvrtc.so.13", "/usr/local/cuda/lib64/libnvrtc.so.12",
            "/usr/local/cuda/lib64/libnvrtc.so"};
  }
  if (backend == "hip") {
    return {"libhiprtc.so.7", "libhiprtc.so.6", "libhiprtc.so.5", "libamdhip64.so.5",
            "/opt/rocm/lib/libhiprtc.so"};
  }
  return {};
}

Result<std::unique_ptr<Compiler>> load_compiler(std::string_view backend) {
  const auto candidates = compiler_library_candidates(backend);
  if (backend == "cuda") return load_nvrtc(candidates);
  if (backend == "hip") return load_hiprtc(candidates);
  return make_error(Errc::invalid_argument, "unknown backend '" + std::string(backend) + "'");
}

std::string library_fingerprint(const std::string& resolved_path) {
  std::string out = std::filesystem::path(resolved_path).filename().string();
  struct stat st {};
  if (::stat(resolved_path.c_str(), &st) == 0)
    out += " " + std::to_string(st.st_size) + "@" + std::to_string(st.st_mtim.tv_sec);
  return out;
}

std::string_view backend_of_target(std::string_view target) noexcept {
  if (target.starts_with("sm_")) return "cuda";
  if (target.starts_with("gfx")) return "hip";
  return {};
}

}  // namespace kcache
