// AMD devices from the kfd topology in sysfs: what ROCm's thunk reads, without ROCm.
//
// Facts used (Linux drivers/gpu/drm/amd/amdkfd/kfd_topology.{c,h}, kfd_process.c):
//  * nodes/N/properties: "key value" lines. gfx_target_version = major*10000 + minor*100 +
//    stepping (0 on CPU nodes); capability bit HSA_CAP_SRAM_EDCSUPPORTED (0x04000000) is set
//    when SRAM ECC is enabled on the GPU; unique_id is the ASIC serial ROCm shows as its UUID;
//    drm_render_minor names /dev/dri/renderD<minor> and so the drm device.
//  * XNACK is a per-process mode whose default follows the amdgpu `noretry` parameter
//    (0: retry on, processes get XNACK on; 1: off). -1 ("auto") resolves inside the kernel
//    per GPU and kernel version, so it is left unknown here. GFX10+ never runs with XNACK on.
#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "arch/amd_processors.hpp"
#include "devices/device_discovery.hpp"

namespace kcache::daemon {

namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kCapSramEdc = 0x04000000;

std::optional<std::string> read_text(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\0')) s.pop_back();
  return s;
}

std::optional<std::uint64_t> to_u64(std::string_view s) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// properties: one "key value" per line, values unsigned decimal.
std::map<std::string, std::uint64_t> parse_properties(const std::string& text) {
  std::map<std::string, std::uint64_t> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const auto space = line.find(' ');
    if (space == std::string::npos) continue;
    if (auto v = to_u64(line.substr(space + 1))) out[line.substr(0, space)] = *v;
  }
  return out;
}

// The boot-time default XNACK mode from amdgpu's noretry parameter, if it pins one.
AmdFeature xnack_default(const std::string& sysfs_root) {
  const auto noretry = read_text(fs::path(sysfs_root) / "module/amdgpu/parameters/noretry");
  if (!noretry) return AmdFeature::any;
  if (*noretry == "0") return AmdFeature::on;
  if (*noretry == "1") return AmdFeature::off;
  return AmdFeature::any;
}

// A human name: the board's FRU product name where the driver exposes one, else kfd's
// node name unless it is the placeholder newer kernels use, else the processor.
std::string device_name(const std::string& sysfs_root, const fs::path& node,
                        const std::map<std::string, std::uint64_t>& props,
                        const std::string& processor) {
  if (const auto minor = props.find("drm_render_minor"); minor != props.end()) {
    const auto product = read_text(fs::path(sysfs_root) / "class/drm" /
                                   ("renderD" + std::to_string(minor->second)) /
                                   "device/product_name");
    if (product && !product->empty()) return *product;
  }
  if (const auto name = read_text(node / "name");
      name && !name->empty() && *name != "ip discovery")
    return *name;
  return processor;
}

std::vector<std::pair<std::uint64_t, fs::path>> numbered_nodes(const fs::path& dir) {
  std::vector<std::pair<std::uint64_t, fs::path>> nodes;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (auto n = to_u64(entry.path().filename().string())) nodes.emplace_back(*n, entry.path());
  }
  // Numeric order (10 after 9): ROCm numbers its agents in this order.
  std::sort(nodes.begin(), nodes.end());
  return nodes;
}

}  // namespace

KfdDiscovery discover_kfd_devices(const std::string& sysfs_root) {
  KfdDiscovery out;
  const fs::path nodes_dir = fs::path(sysfs_root) / "class/kfd/kfd/topology/nodes";
  std::error_code ec;
  if (!fs::is_directory(nodes_dir, ec)) {
    out.notes.push_back("no kfd topology at " + nodes_dir.string());
    return out;
  }
  const AmdFeature xnack_boot = xnack_default(sysfs_root);
  for (const auto& [number, node] : numbered_nodes(nodes_dir)) {
    const auto text = read_text(node / "properties");
    if (!text) {
      out.notes.push_back("kfd node " + std::to_string(number) + ": cannot read properties");
      continue;
    }
    const auto props = parse_properties(*text);
    const auto version = props.find("gfx_target_version");
    if (version == props.end()) {
      out.notes.push_back("kfd node " + std::to_string(number) + ": no gfx_target_version");
      continue;
    }
    if (version->second == 0) continue;  // a CPU node
    const auto gfx = gfx_name_from_kfd_version(static_cast<std::uint32_t>(version->second));
    if (!gfx || version->second > 0xffffffffu) {
      out.notes.push_back("kfd node " + std::to_string(number) + ": gfx_target_version " +
                          std::to_string(version->second) + " is not a GFX version");
      continue;
    }
    AmdTarget target;
    target.processor = *gfx;
    // Features only where the processor has the setting (gfx1030 has neither) and the fact is
    // exposed; an unknown processor keeps both unknown.
    if (const AmdProcessorInfo* info = find_amd_processor(*gfx)) {
      if (info->sramecc) {
        const auto cap = props.find("capability");
        if (cap != props.end())
          target.sramecc = (cap->second & kCapSramEdc) != 0 ? AmdFeature::on : AmdFeature::off;
      }
      // noretry governs GFX9 (SOC15) only; older APUs keep their own, unexposed mode.
      if (info->xnack && version->second >= 100000) target.xnack = AmdFeature::off;
      else if (info->xnack && version->second >= 90000) target.xnack = xnack_boot;
    }
    DiscoveredDevice d{Device(target), device_name(sysfs_root, node, props, *gfx), {}, "sysfs"};
    if (const auto id = props.find("unique_id"); id != props.end() && id->second != 0) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "GPU-%016llx", static_cast<unsigned long long>(id->second));
      d.uuid = buf;
    }
    out.devices.push_back(std::move(d));
  }
  return out;
}

}  // namespace kcache::daemon
