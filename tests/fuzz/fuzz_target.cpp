// fuzz_target.cpp — the GPU target and device parsers (arch/target.hpp) and the load rules.
//
// Input: "<target>" or "<target>\n<device>" (one line is used as both). Beyond not crashing,
// the contract is checked: canonical forms parse back equal, and a device's own compile
// target loads on it.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "arch/compat.hpp"
#include "arch/target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto newline = input.find('\n');
  const std::string_view device_text =
      newline == std::string_view::npos ? input : input.substr(newline + 1);
  auto target = kcache::parse_target(input.substr(0, newline));
  if (target.ok()) {
    auto again = kcache::parse_target(target->str());
    if (!again.ok() || !(*again == *target)) __builtin_trap();
  }
  auto device = kcache::parse_device(device_text);
  if (device.ok()) {
    auto again = kcache::parse_device(device->str());
    if (!again.ok() || !(*again == *device)) __builtin_trap();
    if (!kcache::check_compatible(device->compile_target(), *device).compatible) __builtin_trap();
    if (target.ok()) (void)kcache::check_compatible(*target, *device);
  }
  return 0;
}
