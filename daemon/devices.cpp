#include "devices.hpp"

#include "arch/target.hpp"

namespace kcache::daemon {

Result<DeviceTable> DeviceTable::from_list(const std::vector<std::string>& items) {
  DeviceTable table;
  for (const std::string& item : items) {
    auto device = parse_device(item);
    if (!device.ok())
      return make_error(Errc::invalid_argument, "device '" + item + "': " + device.error().message);
    DeviceInfo info;
    info.index = static_cast<std::uint32_t>(table.devices_.size());
    info.backend = std::string(backend_name(device->backend()));
    info.arch = device->str();
    info.compile_target = device->compile_target().str();
    info.source = "override";
    table.devices_.push_back(std::move(info));
  }
  return table;
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

}  // namespace kcache::daemon
