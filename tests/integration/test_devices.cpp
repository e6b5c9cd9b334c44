// GPU discovery end to end: kcached finds fake GPUs (a fake driver library, fake kfd trees),
// kcachectl shows them, requests by device index resolve through them, overrides win.
#include <filesystem>

#include "../fakes/kfd_tree.hpp"
#include "daemon_fixture.hpp"

namespace kcache::test {
namespace {

class Devices : public DaemonFixture {
 protected:
  // Discovery with the fake NVIDIA driver (two GPUs) and a kfd tree with an MI300X and an
  // MI210 (Debian's hiprtc 5.2 compiles for gfx90a, not for gfx942).
  void start_discovering(const std::vector<std::string>& extra_args = {},
                         std::vector<std::string> env = {}) {
    write_kfd_tree(sysfs(),
                   {FakeGpu{.node = 1, .gfx_target_version = 90402, .sram_ecc = true,
                            .unique_id = 0xfeedbeef, .render_minor = 128,
                            .product_name = "AMD Instinct MI300X OAM"},
                    FakeGpu{.node = 2, .gfx_target_version = 90010, .sram_ecc = true,
                            .unique_id = 0x1234, .render_minor = 129,
                            .kfd_name = "aldebaran"}},
                   1);
    discover_devices_ = true;
    std::vector<std::string> args{"--sysfs-root", sysfs()};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    // Defaults first: the caller's entries come later and win.
    env.insert(env.begin(), {std::string("KCACHE_LIBCUDA_LIBRARY=") + FAKE_LIBCUDA_PATH,
                             "KCACHE_DEVICES="});
    start(args, env);
  }
  std::string sysfs() const { return dir_ + "/sysfs"; }
};

TEST_F(Devices, KcachectlListsDriverDevicesThenSysfsDevices) {
  start_discovering();
  const CommandResult r = kcachectl({"devices", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  const auto& devices = doc["devices"];
  ASSERT_EQ(devices.size(), 4u) << r.out;
  EXPECT_EQ(devices[0]["index"], 0);
  EXPECT_EQ(devices[0]["backend"], "cuda");
  EXPECT_EQ(devices[0]["name"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(devices[0]["arch"], "9.0");
  EXPECT_EQ(devices[0]["compile_target"], "sm_90a");
  EXPECT_EQ(devices[0]["source"], "driver");
  EXPECT_EQ(devices[0]["uuid"], "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f");
  EXPECT_EQ(devices[1]["compile_target"], "sm_86");
  EXPECT_EQ(devices[2]["backend"], "hip");
  EXPECT_EQ(devices[2]["name"], "AMD Instinct MI300X OAM");
  EXPECT_EQ(devices[2]["arch"], "gfx942:sramecc+:xnack-");
  EXPECT_EQ(devices[2]["source"], "sysfs");
  EXPECT_EQ(devices[2]["uuid"], "GPU-00000000feedbeef");
  EXPECT_EQ(devices[3]["name"], "aldebaran");
  EXPECT_EQ(devices[3]["compile_target"], "gfx90a:sramecc+:xnack-");

  // The status document carries the same table.
  EXPECT_EQ(status()["devices"], devices);

  const CommandResult human = kcachectl({"devices"});
  ASSERT_EQ(human.exit_code, 0) << human.err;
  EXPECT_NE(human.out.find("INDEX  BACKEND  NAME"), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("NVIDIA A10"), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("gfx942:sramecc+:xnack-  sysfs"), std::string::npos) << human.out;
}

TEST_F(Devices, DevicesOptionReplacesDiscovery) {
  start_discovering({"--devices", "gfx90a:xnack+"});
  const auto devices = nlohmann::json::parse(kcachectl({"devices", "--json"}).out)["devices"];
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0]["compile_target"], "gfx90a:xnack+");
  EXPECT_EQ(devices[0]["source"], "override");
  EXPECT_EQ(read_file(log_path_).find("device discovery:"), std::string::npos)
      << "discovery ran although an override was given";
}

TEST_F(Devices, KcacheDevicesEnvironmentReplacesDiscovery) {
  start_discovering({}, {"KCACHE_DEVICES=sm_80,gfx1100"});
  const auto devices = nlohmann::json::parse(kcachectl({"devices", "--json"}).out)["devices"];
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0]["compile_target"], "sm_80");
  EXPECT_EQ(devices[1]["compile_target"], "gfx1100");
  EXPECT_EQ(devices[1]["source"], "override");
}

TEST_F(Devices, RequestByDeviceIndexCompilesForThatDevicesTarget) {
  KC_REQUIRE_HIPRTC();
  start_discovering();
  Client c = client();
  const std::string src = hip_source(7);
  Request r;
  r.name = "scale7";
  r.device = 3;  // the MI210 of the kfd tree
  r.source = src;
  auto m = c.get(r);
  ASSERT_TRUE(m.ok()) << m.error().message << "\n" << m.error().log;
  EXPECT_EQ(m->target, "gfx90a:sramecc+:xnack-");
  EXPECT_TRUE(is_elf_with_machine(m->path, 224)) << m->path;
}

TEST_F(Devices, RequestByNvidiaDeviceIndexCompilesForThatDevicesTarget) {
  start_discovering({}, compiler_double_env());  // NVRTC, or the double standing in
  Client c = client();
  const std::string src = cuda_source(7);
  Request r;
  r.name = "scale7";
  r.device = 1;  // the fake driver's second GPU, compute capability 8.6
  r.source = src;
  auto m = c.get(r);
  ASSERT_TRUE(m.ok()) << m.error().message << "\n" << m.error().log;
  EXPECT_EQ(m->target, "sm_86");
  EXPECT_TRUE(is_elf_with_machine(m->path, 190)) << m->path;  // EM_CUDA
}

TEST_F(Devices, UnknownDeviceIndexIsAClearErrorBeforeAnyCompile) {
  start_discovering();
  Client c = client();
  const std::string src = hip_source(8);
  Request r;
  r.name = "scale8";
  r.device = 4;
  r.source = src;
  auto bad = c.get(r);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, Errc::invalid_argument);
  EXPECT_NE(bad.error().message.find("unknown device index 4 (devices are 0..3)"),
            std::string::npos)
      << bad.error().message;
  EXPECT_EQ(stat("compiles"), 0u);
  EXPECT_EQ(stat("misses"), 0u);
}

TEST_F(Devices, HostWithoutGpusHasNoDevicesAndSaysWhy) {
  discover_devices_ = true;
  start({"--sysfs-root", sysfs()},
        {"KCACHE_LIBCUDA_LIBRARY=/nonexistent/libcuda.so.1", "KCACHE_DEVICES="});
  const CommandResult r = kcachectl({"devices"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("no devices"), std::string::npos) << r.out;
  const std::string log = read_file(log_path_);
  EXPECT_NE(log.find("device discovery: NVIDIA: the NVIDIA driver library not available (tried "
                     "/nonexistent/libcuda.so.1)"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("device discovery: AMD: no kfd topology at " + sysfs()), std::string::npos)
      << log;
}

}  // namespace
}  // namespace kcache::test
