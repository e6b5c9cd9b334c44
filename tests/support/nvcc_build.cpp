// Test-time nvcc builds of FlashInfer-style host objects (nvcc_build.hpp).
#include "nvcc_build.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

namespace kcache::testing {
namespace {

constexpr const char* kKernel = R"(#include <cuda_runtime.h>
__global__ void axpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
extern "C" int launch_axpy(float a, const float* x, float* y, int n) {
  axpy<<<(n + 255) / 256, 256>>>(a, x, y, n);
  return static_cast<int>(cudaGetLastError());
}
)";

std::string find_nvcc() {
  if (const char* env = std::getenv("KCACHE_NVCC"); env != nullptr && *env != '\0') return env;
  if (::access("/usr/local/cuda/bin/nvcc", X_OK) == 0) return "/usr/local/cuda/bin/nvcc";
  if (std::system("command -v nvcc > /dev/null 2>&1") == 0) return "nvcc";
  return {};
}

std::string quote(const std::string& s) { return "'" + s + "'"; }

HostObject build(const std::vector<std::string>& gencodes, bool compress) {
  HostObject out;
  const std::string nvcc = find_nvcc();
  if (nvcc.empty()) {
    out.message = "nvcc not found ($KCACHE_NVCC, /usr/local/cuda/bin/nvcc, PATH)";
    return out;
  }
  out.available = true;
  char dir_template[] = "/tmp/kcache-nvcc-XXXXXX";
  if (::mkdtemp(dir_template) == nullptr) {
    out.message = "mkdtemp failed";
    return out;
  }
  const std::string dir = dir_template;
  std::ofstream(dir + "/k.cu") << kKernel;
  std::string cmd = quote(nvcc) + " -shared -Xcompiler -fPIC";
  if (compress) cmd += " -Xfatbin=-compress-all";
  for (const std::string& g : gencodes) cmd += " -gencode " + quote(g);
  cmd += " -o " + quote(dir + "/k.so") + " " + quote(dir + "/k.cu") + " > " +
         quote(dir + "/log") + " 2>&1";
  const int rc = std::system(cmd.c_str());
  std::stringstream bytes, log;
  if (std::ifstream so(dir + "/k.so", std::ios::binary); rc == 0 && so) bytes << so.rdbuf();
  log << std::ifstream(dir + "/log").rdbuf();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  const std::string s = bytes.str();
  if (s.empty()) {
    out.message = "nvcc failed (" + cmd + "): " + log.str();
    return out;
  }
  out.bytes.resize(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) out.bytes[i] = static_cast<std::byte>(s[i]);
  out.ok = true;
  return out;
}

}  // namespace

const HostObject& nvcc_host_object(const std::vector<std::string>& gencodes, bool compress) {
  static std::mutex mutex;
  static std::map<std::pair<std::vector<std::string>, bool>, HostObject> cache;
  const std::lock_guard lock(mutex);
  const auto key = std::pair{gencodes, compress};
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  return cache.emplace(key, build(gencodes, compress)).first->second;
}

}  // namespace kcache::testing
