// NVIDIA devices through the driver API, dlopen'ed (STYLE 13): no CUDA runtime needed.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

#include "common/dl_library.hpp"
#include "devices/device_discovery.hpp"

namespace kcache::daemon {

namespace {

// The few driver API types and values used here (cuda.h; stable ABI since CUDA 2.x).
using CUresult = int;
using CUdevice = int;
struct CUuuid {
  unsigned char bytes[16];
};
constexpr CUresult kCudaSuccess = 0;
constexpr CUresult kCudaErrorNoDevice = 100;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;

struct CudaApi {
  DlLibrary lib;
  CUresult (*init)(unsigned) = nullptr;
  CUresult (*get_count)(int*) = nullptr;
  CUresult (*get)(CUdevice*, int) = nullptr;
  CUresult (*get_attribute)(int*, int, CUdevice) = nullptr;
  CUresult (*get_name)(char*, int, CUdevice) = nullptr;
  CUresult (*get_uuid)(CUuuid*, CUdevice) = nullptr;             // optional
  CUresult (*error_name)(CUresult, const char**) = nullptr;     // optional
};

Result<CudaApi> load_cuda_api(const std::vector<std::string>& candidates) {
  CudaApi api;
  KC_TRY_ASSIGN(api.lib, DlLibrary::open_first("the NVIDIA driver library", candidates));
  KC_TRY_ASSIGN(api.init, api.lib.symbol<decltype(api.init)>("cuInit"));
  KC_TRY_ASSIGN(api.get_count, api.lib.symbol<decltype(api.get_count)>("cuDeviceGetCount"));
  KC_TRY_ASSIGN(api.get, api.lib.symbol<decltype(api.get)>("cuDeviceGet"));
  KC_TRY_ASSIGN(api.get_attribute,
                api.lib.symbol<decltype(api.get_attribute)>("cuDeviceGetAttribute"));
  KC_TRY_ASSIGN(api.get_name, api.lib.symbol<decltype(api.get_name)>("cuDeviceGetName"));
  // The UUID and error names are niceties: an old driver without them still gives devices.
  // cuDeviceGetUuid_v2 (CUDA 11.4+) is the one that honours MIG; both share the signature.
  if (auto v2 = api.lib.symbol<decltype(api.get_uuid)>("cuDeviceGetUuid_v2"); v2.ok())
    api.get_uuid = *v2;
  else if (auto v1 = api.lib.symbol<decltype(api.get_uuid)>("cuDeviceGetUuid"); v1.ok())
    api.get_uuid = *v1;
  if (auto e = api.lib.symbol<decltype(api.error_name)>("cuGetErrorName"); e.ok())
    api.error_name = *e;
  return api;
}

std::string uuid_text(const CUuuid& u) {
  // nvidia-smi's spelling, so operators can match devices across tools.
  char buf[48];
  const unsigned char* b = u.bytes;
  std::snprintf(buf, sizeof buf,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return buf;
}

std::string describe(const CudaApi& api, const char* call, CUresult rc) {
  const char* name = nullptr;
  if (api.error_name != nullptr && api.error_name(rc, &name) != kCudaSuccess) name = nullptr;
  return std::string(call) + " failed: " + (name != nullptr ? name : "CUDA error") + " (" +
         std::to_string(rc) + ") from " + api.lib.name();
}

}  // namespace

std::vector<std::string> libcuda_candidates() {
  if (const char* path = std::getenv("KCACHE_LIBCUDA_LIBRARY"); path != nullptr && *path != '\0')
    return {path};
  // The driver installs exactly this SONAME; an unversioned libcuda.so is a dev symlink.
  return {"libcuda.so.1"};
}

Result<std::vector<DiscoveredDevice>> discover_cuda_devices() {
  // Loaded once per library path and never unloaded (see the header); a failed load is
  // retried next time. One path in a daemon; tests switch paths within one process.
  static std::mutex mu;
  static std::map<std::vector<std::string>, CudaApi> loaded;
  std::lock_guard lock(mu);
  const auto candidates = libcuda_candidates();
  auto it = loaded.find(candidates);
  if (it == loaded.end()) {
    KC_TRY_ASSIGN(CudaApi api, load_cuda_api(candidates));
    it = loaded.emplace(candidates, std::move(api)).first;
  }
  const CudaApi& api = it->second;

  std::vector<DiscoveredDevice> out;
  CUresult rc = api.init(0);
  if (rc == kCudaErrorNoDevice) return out;
  if (rc != kCudaSuccess) return make_error(Errc::unavailable, describe(api, "cuInit", rc));
  int count = 0;
  if (rc = api.get_count(&count); rc != kCudaSuccess)
    return make_error(Errc::unavailable, describe(api, "cuDeviceGetCount", rc));
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    CUdevice dev = 0;
    if (rc = api.get(&dev, ordinal); rc != kCudaSuccess)
      return make_error(Errc::unavailable, describe(api, "cuDeviceGet", rc));
    int major = 0;
    int minor = 0;
    if (rc = api.get_attribute(&major, kAttrComputeCapabilityMajor, dev); rc != kCudaSuccess)
      return make_error(Errc::unavailable, describe(api, "cuDeviceGetAttribute", rc));
    if (rc = api.get_attribute(&minor, kAttrComputeCapabilityMinor, dev); rc != kCudaSuccess)
      return make_error(Errc::unavailable, describe(api, "cuDeviceGetAttribute", rc));
    if (major <= 0 || minor < 0 || minor > 9)
      return make_error(Errc::unavailable, "device " + std::to_string(ordinal) +
                                               " reports compute capability " +
                                               std::to_string(major) + "." +
                                               std::to_string(minor));
    DiscoveredDevice d{Device(CudaCapability{major, minor}), {}, {}, "driver"};
    char name[256] = {};
    if (api.get_name(name, sizeof name - 1, dev) == kCudaSuccess) d.name = name;
    CUuuid uuid{};
    if (api.get_uuid != nullptr && api.get_uuid(&uuid, dev) == kCudaSuccess)
      d.uuid = uuid_text(uuid);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace kcache::daemon
