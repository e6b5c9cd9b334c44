/* fake_libcuda.c — a stand-in for the NVIDIA driver library (libcuda.so.1) in tests.
 *
 * It implements the driver API calls kcached's discovery makes (daemon/devices/device_discovery_cuda.cpp)
 * with canned answers, so discovery runs on machines without an NVIDIA GPU. Load it through
 * KCACHE_LIBCUDA_LIBRARY=<path>. FAKE_CUDA_MODE picks the scenario:
 *   unset / "two"  two devices: 0 = "NVIDIA H100 80GB HBM3" (9.0), 1 = "NVIDIA A10" (8.6)
 *   "none"         cuInit reports CUDA_ERROR_NO_DEVICE (a driver without GPUs)
 *   "broken"       cuInit reports CUDA_ERROR_UNKNOWN (999)
 * Values follow cuda.h: CUresult 0 = success, attribute 75/76 = compute capability major/minor.
 */
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef struct {
  unsigned char bytes[16];
} CUuuid;

enum { kSuccess = 0, kInvalidValue = 1, kNotInitialized = 3, kInvalidDevice = 101,
       kNoDevice = 100, kUnknown = 999 };

static int g_initialized;

static const char* mode(void) {
  const char* m = getenv("FAKE_CUDA_MODE");
  return m != NULL ? m : "two";
}

static int device_count(void) { return strcmp(mode(), "two") == 0 ? 2 : 0; }

CUresult cuInit(unsigned flags) {
  if (flags != 0) return kInvalidValue;
  if (strcmp(mode(), "none") == 0) return kNoDevice;
  if (strcmp(mode(), "broken") == 0) return kUnknown;
  g_initialized = 1;
  return kSuccess;
}

CUresult cuDeviceGetCount(int* count) {
  if (!g_initialized) return kNotInitialized;
  *count = device_count();
  return kSuccess;
}

CUresult cuDeviceGet(CUdevice* dev, int ordinal) {
  if (!g_initialized) return kNotInitialized;
  if (ordinal < 0 || ordinal >= device_count()) return kInvalidDevice;
  *dev = 100 + ordinal; /* a handle that is not the ordinal: callers must use cuDeviceGet */
  return kSuccess;
}

CUresult cuDeviceGetAttribute(int* value, int attribute, CUdevice dev) {
  static const int caps[2][2] = {{9, 0}, {8, 6}};
  if (!g_initialized) return kNotInitialized;
  if (dev < 100 || dev >= 100 + device_count()) return kInvalidDevice;
  if (attribute == 75) *value = caps[dev - 100][0];
  else if (attribute == 76) *value = caps[dev - 100][1];
  else return kInvalidValue;
  return kSuccess;
}

CUresult cuDeviceGetName(char* name, int len, CUdevice dev) {
  static const char* names[2] = {"NVIDIA H100 80GB HBM3", "NVIDIA A10"};
  if (!g_initialized) return kNotInitialized;
  if (dev < 100 || dev >= 100 + device_count() || len <= 0) return kInvalidDevice;
  strncpy(name, names[dev - 100], (size_t)len - 1);
  name[len - 1] = '\0';
  return kSuccess;
}

CUresult cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice dev) {
  if (!g_initialized) return kNotInitialized;
  if (dev < 100 || dev >= 100 + device_count()) return kInvalidDevice;
  for (int i = 0; i < 16; ++i) uuid->bytes[i] = (unsigned char)(0x10 * (dev - 100) + i);
  return kSuccess;
}

CUresult cuGetErrorName(CUresult error, const char** name) {
  switch (error) {
    case kNoDevice: *name = "CUDA_ERROR_NO_DEVICE"; return kSuccess;
    case kUnknown: *name = "CUDA_ERROR_UNKNOWN"; return kSuccess;
    default: return kInvalidValue;
  }
}
