// devices.hpp — the local GPUs the daemon serves, by index.
//
// Contract: `DeviceTable::from_list` builds the table from `--devices` / KCACHE_DEVICES
// (each item a capability `9.0`, a CUDA target `sm_90a` or an AMD target ID `gfx942`); a bad
// item is an error quoting it. Each device knows its own compile target (arch.md). Requests
// by device index resolve through `at()`, which names the valid range when it fails.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kcache/result.hpp"

namespace kcache::daemon {

struct DeviceInfo {
  std::uint32_t index = 0;
  std::string backend;         // "cuda" | "hip"
  std::string arch;            // capability "9.0" or AMD target ID
  std::string compile_target;  // e.g. "sm_90a", "gfx942"
  std::string source;          // "override" (more with discovery: "driver", "sysfs")
};

class DeviceTable {
 public:
  static Result<DeviceTable> from_list(const std::vector<std::string>& items);

  Result<const DeviceInfo*> at(std::uint32_t index) const;
  const std::vector<DeviceInfo>& devices() const noexcept { return devices_; }

 private:
  std::vector<DeviceInfo> devices_;
};

}  // namespace kcache::daemon
