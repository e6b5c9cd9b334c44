// devices.hpp — the local GPUs the daemon serves, by index.
//
// Contract:
//  * `DeviceTable::from_list` builds the table from `--devices` / KCACHE_DEVICES (each item a
//    capability `9.0`, a CUDA target `sm_90a` or an AMD target ID `gfx942`); a bad item is an
//    error quoting it. Source "override".
//  * `DeviceTable::discover(sysfs_root)` asks the hardware: NVIDIA devices through the driver
//    (source "driver", CUDA ordinal order) first, then AMD devices from the kfd topology under
//    `sysfs_root` (source "sysfs", node order). It never fails: a source that finds nothing
//    says why in `notes()` (no driver library, no kfd tree, an unreadable node).
//  * `resolve` applies the precedence: an override list replaces discovery entirely.
//  * Each device knows its own compile target (arch.md). Requests by device index resolve
//    through `at()`, which names the valid range when it fails.
//  * `to_json()` is the `devices[]` array of the status and devices documents.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kcache/result.hpp"

namespace kcache::daemon {

struct DeviceInfo {
  std::uint32_t index = 0;
  std::string backend;         // "cuda" | "hip"
  std::string arch;            // capability "9.0" or AMD target ID
  std::string compile_target;  // e.g. "sm_90a", "gfx942"
  std::string source;          // "driver" | "sysfs" | "override"
  std::string name;            // the driver's name; for overrides, the item as given
  std::string uuid;            // "GPU-…" where the driver tells; empty otherwise
};

class DeviceTable {
 public:
  static Result<DeviceTable> from_list(const std::vector<std::string>& items);
  static DeviceTable discover(const std::string& sysfs_root);
  // The override list when there is one (`--devices`, KCACHE_DEVICES, `devices =`), else
  // discovery: the one precedence rule, for start-up and reload alike.
  static Result<DeviceTable> resolve(const std::optional<std::vector<std::string>>& override_list,
                                     const std::string& sysfs_root);

  Result<const DeviceInfo*> at(std::uint32_t index) const;
  const std::vector<DeviceInfo>& devices() const noexcept { return devices_; }
  const std::vector<std::string>& notes() const noexcept { return notes_; }
  nlohmann::json to_json() const;
  // Same devices in the same order (notes aside): whether a reload changed anything.
  bool same_devices(const DeviceTable& other) const noexcept;

 private:
  std::vector<DeviceInfo> devices_;
  std::vector<std::string> notes_;
};

}  // namespace kcache::daemon
