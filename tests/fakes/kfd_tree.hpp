// kfd_tree.hpp — writes fake kfd topology trees (what amdgpu exposes under /sys) for tests.
//
// `write_kfd_tree(root, gpus, noretry)` creates, under `root` (a stand-in for /sys, passed to
// kcached as --sysfs-root):
//   class/kfd/kfd/topology/nodes/0/properties      a CPU node (gfx_target_version 0)
//   class/kfd/kfd/topology/nodes/<n>/{properties,name}   one per FakeGpu
//   class/drm/renderD<minor>/device/product_name   where the FakeGpu has a product name
//   module/amdgpu/parameters/noretry               when `noretry` is given
// The property lines and values mirror a real MI210/MI300X node (kfd_topology.c order).
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace kcache::test {

struct FakeGpu {
  unsigned node = 1;
  std::uint32_t gfx_target_version = 90010;
  bool sram_ecc = true;
  std::uint64_t unique_id = 0;
  unsigned render_minor = 128;
  std::string kfd_name = "ip discovery";
  std::string product_name;  // empty: no FRU product name file
};

inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

inline void write_kfd_tree(const std::string& root, const std::vector<FakeGpu>& gpus,
                           std::optional<int> noretry) {
  namespace fs = std::filesystem;
  const fs::path nodes = fs::path(root) / "class/kfd/kfd/topology/nodes";
  write_text(nodes / "0/properties",
             "cpu_cores_count 32\nsimd_count 0\nmem_banks_count 1\ncaches_count 0\n"
             "io_links_count 1\ngfx_target_version 0\nvendor_id 0\ndevice_id 0\n"
             "location_id 0\ndrm_render_minor 0\nmax_engine_clk_ccompute 3700\n");
  write_text(nodes / "0/name", "\n");
  for (const FakeGpu& g : gpus) {
    // Doorbell 2.0, AQL double map, SVM, coherent host access; plus SRAM ECC when enabled.
    std::uint64_t capability = 0x00002000 | 0x00004000 | 0x08000000 | 0x10000000;
    if (g.sram_ecc) capability |= 0x04000000;
    const fs::path dir = nodes / std::to_string(g.node);
    write_text(dir / "properties",
               "cpu_cores_count 0\nsimd_count 440\nmem_banks_count 1\ncaches_count 206\n"
               "io_links_count 1\ncpu_core_id_base 0\nsimd_id_base 2147487744\n"
               "max_waves_per_simd 8\nlds_size_in_kb 64\nwave_front_size 64\n"
               "gfx_target_version " + std::to_string(g.gfx_target_version) +
                   "\nvendor_id 4098\ndevice_id 29856\nlocation_id 768\ndomain 0\n"
                   "drm_render_minor " + std::to_string(g.render_minor) +
                   "\nhive_id 0\nnum_sdma_engines 2\nlocal_mem_size 0\nfw_version 151\n"
                   "capability " + std::to_string(capability) +
                   "\ndebug_prop 1511\nsdma_fw_version 19\nunique_id " +
                   std::to_string(g.unique_id) + "\nnum_xcc 1\n");
    write_text(dir / "name", g.kfd_name + "\n");
    if (!g.product_name.empty())
      write_text(fs::path(root) / "class/drm" / ("renderD" + std::to_string(g.render_minor)) /
                     "device/product_name",
                 g.product_name + "\n");
  }
  if (noretry)
    write_text(fs::path(root) / "module/amdgpu/parameters/noretry", std::to_string(*noretry) + "\n");
}

}  // namespace kcache::test
