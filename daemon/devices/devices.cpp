#include "devices/devices.hpp"

#include <nlohmann/json.hpp>

#include "arch/target.hpp"
#include "devices/device_discovery.hpp"

namespace kcache::daemon {

namespace {

DeviceInfo make_info(std::uint32_t index, const Device& device, std::string source) {
  DeviceInfo info;
  info.index = index;
  info.backend = std::string(backend_name(device.backend()));
  info.arch = device.str();
  info.compile_target = device.compile_target().str();
  info.source = std::move(source);
  return info;
}

}  // namespace

Result<DeviceTable> DeviceTable::from_list(const std::vector<std::string>& items) {
  DeviceTable table;
  for (const std::string& item : items) {
    auto device = parse_device(item);
    if (!device.ok())
      return make_error(Errc::invalid_argument, "device '" + item + "': " + device.error().message);
    DeviceInfo info =
        make_info(static_cast<std::uint32_t>(table.devices_.size()), *device, "override");
    info.name = item;
    table.devices_.push_back(std::move(info));
  }
  return table;
}

DeviceTable DeviceTable::discover(const std::string& sysfs_root) {
  DeviceTable table;
  auto add = [&](const DiscoveredDevice& d) {
    DeviceInfo info =
        make_info(static_cast<std::uint32_t>(table.devices_.size()), d.device, d.source);
    info.name = d.name;
    info.uuid = d.uuid;
    table.devices_.push_back(std::move(info));
  };
  // NVIDIA first, in CUDA ordinal order, so `device: i` means what cudaSetDevice(i) means
  // on a host with only NVIDIA GPUs; AMD likewise keeps HIP's order on AMD-only hosts.
  auto cuda = discover_cuda_devices();
  if (cuda.ok()) {
    for (const auto& d : *cuda) add(d);
    if (cuda->empty()) table.notes_.push_back("NVIDIA: the driver reports no devices");
  } else {
    table.notes_.push_back("NVIDIA: " + cuda.error().message);
  }
  KfdDiscovery amd = discover_kfd_devices(sysfs_root);
  for (const auto& d : amd.devices) add(d);
  for (auto& note : amd.notes) table.notes_.push_back("AMD: " + std::move(note));
  return table;
}

Result<DeviceTable> DeviceTable::resolve(
    const std::optional<std::vector<std::string>>& override_list, const std::string& sysfs_root) {
  if (override_list) return from_list(*override_list);
  return discover(sysfs_root);
}

Result<const DeviceInfo*> DeviceTable::at(std::uint32_t index) const {
  if (index < devices_.size()) return &devices_[index];
  if (devices_.empty())
    return make_error(Errc::invalid_argument,
                      "unknown device index " + std::to_string(index) +
                          ": this daemon has no devices (give a target, or start kcached with --devices)");
  return make_error(Errc::invalid_argument, "unknown device index " + std::to_string(index) +
                                                " (devices are 0.." +
                                                std::to_string(devices_.size() - 1) + ")");
}

nlohmann::json DeviceTable::to_json() const {
  using nlohmann::json;
  json out = json::array();
  for (const auto& d : devices_) {
    json j{{"index", d.index},
           {"backend", d.backend},
           {"arch", d.arch},
           {"compile_target", d.compile_target},
           {"source", d.source},
           {"name", d.name}};
    if (!d.uuid.empty()) j["uuid"] = d.uuid;
    out.push_back(std::move(j));
  }
  return out;
}

bool DeviceTable::same_devices(const DeviceTable& other) const noexcept {
  if (devices_.size() != other.devices_.size()) return false;
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    const DeviceInfo& a = devices_[i];
    const DeviceInfo& b = other.devices_[i];
    if (a.arch != b.arch || a.backend != b.backend || a.source != b.source || a.name != b.name ||
        a.uuid != b.uuid)
      return false;
  }
  return true;
}

}  // namespace kcache::daemon
