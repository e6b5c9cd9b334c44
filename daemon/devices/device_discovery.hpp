// device_discovery.hpp — finds the host's GPUs without a CUDA runtime, ROCm or torch.
//
// Contract (any thread, one discovery at a time per process):
//  * `discover_cuda_devices()` dlopen()s the NVIDIA driver library (`libcuda.so.1`, or
//    $KCACHE_LIBCUDA_LIBRARY) and reads every device's compute capability, name and UUID in
//    CUDA ordinal order (the driver applies CUDA_VISIBLE_DEVICES). No library →
//    Errc::unavailable naming what was tried; a driver without devices is an empty list; any
//    other driver failure is Errc::unavailable with the CUresult. The library stays loaded for
//    the life of the process (cuInit starts driver threads; unloading under them is unsafe).
//  * `discover_kfd_devices(sysfs_root)` reads `<sysfs_root>/class/kfd/kfd/topology/nodes/N/`
//    in node order, skipping CPU nodes (gfx_target_version 0). The target ID carries
//    `sramecc±` from the node's capability bit and `xnack±` from the amdgpu `noretry`
//    parameter where those facts are exposed (docs/devices.md), else leaves them out.
//    No kfd tree → an empty list with a note; a node that cannot be read → skipped with a note.
//  * Found devices carry source "driver" (libcuda) or "sysfs" (kfd).
#pragma once

#include <string>
#include <vector>

#include "arch/target.hpp"
#include "kcache/result.hpp"

namespace kcache::daemon {

struct DiscoveredDevice {
  Device device;
  std::string name;  // "NVIDIA H100 80GB HBM3", "AMD Instinct MI300X", or the gfx name
  std::string uuid;  // "GPU-…" where the driver says; empty otherwise
  std::string source;
};

struct KfdDiscovery {
  std::vector<DiscoveredDevice> devices;
  std::vector<std::string> notes;  // nodes skipped and why; a missing tree
};

// The libcuda names tried, in order ($KCACHE_LIBCUDA_LIBRARY replaces the list).
std::vector<std::string> libcuda_candidates();

Result<std::vector<DiscoveredDevice>> discover_cuda_devices();

KfdDiscovery discover_kfd_devices(const std::string& sysfs_root);

}  // namespace kcache::daemon
