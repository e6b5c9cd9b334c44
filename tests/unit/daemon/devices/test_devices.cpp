// Device discovery from fake kfd trees and a fake NVIDIA driver library (no GPU needed).
#include "devices/devices.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "../../../fakes/kfd_tree.hpp"
#include "devices/device_discovery.hpp"

namespace kcache::daemon {
namespace {

using test::FakeGpu;
using test::write_kfd_tree;

// Sets an environment variable for one test and restores it afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) ::setenv(name, value, 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

class Discovery : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kcache-sysfs-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  std::vector<std::string> targets(const KfdDiscovery& d) {
    std::vector<std::string> out;
    for (const auto& dev : d.devices) out.push_back(dev.device.compile_target().str());
    return out;
  }
  std::string root_;
};

TEST_F(Discovery, Gfx90aNodeBecomesATargetWithItsSramEccAndXnackState) {
  write_kfd_tree(root_,
                 {FakeGpu{.node = 1, .gfx_target_version = 90010, .sram_ecc = true,
                          .unique_id = 0x1a2b3c4d5e6f7081, .render_minor = 128,
                          .kfd_name = "aldebaran", .product_name = "AMD Instinct MI210"}},
                 1);
  const KfdDiscovery d = discover_kfd_devices(root_);
  ASSERT_EQ(d.devices.size(), 1u) << (d.notes.empty() ? "" : d.notes[0]);
  EXPECT_EQ(d.devices[0].device.str(), "gfx90a:sramecc+:xnack-");
  EXPECT_EQ(d.devices[0].device.compile_target().str(), "gfx90a:sramecc+:xnack-");
  EXPECT_EQ(d.devices[0].name, "AMD Instinct MI210");
  EXPECT_EQ(d.devices[0].uuid, "GPU-1a2b3c4d5e6f7081");
  EXPECT_EQ(d.devices[0].source, "sysfs");
}

TEST_F(Discovery, Gfx942FollowsTheNoretryParameterForXnack) {
  const FakeGpu mi300{.node = 1, .gfx_target_version = 90402, .sram_ecc = true};
  write_kfd_tree(root_, {mi300}, 0);
  EXPECT_EQ(targets(discover_kfd_devices(root_)),
            std::vector<std::string>{"gfx942:sramecc+:xnack+"});
  write_kfd_tree(root_, {mi300}, 1);
  EXPECT_EQ(targets(discover_kfd_devices(root_)),
            std::vector<std::string>{"gfx942:sramecc+:xnack-"});
}

TEST_F(Discovery, XnackStaysUnknownWhenNoretryIsAutoOrAbsent) {
  const FakeGpu mi300{.node = 1, .gfx_target_version = 90402, .sram_ecc = false};
  write_kfd_tree(root_, {mi300}, std::nullopt);
  EXPECT_EQ(targets(discover_kfd_devices(root_)), std::vector<std::string>{"gfx942:sramecc-"});
  write_kfd_tree(root_, {mi300}, -1);
  EXPECT_EQ(targets(discover_kfd_devices(root_)), std::vector<std::string>{"gfx942:sramecc-"});
}

TEST_F(Discovery, ProcessorsWithoutFeatureSettingsGetNone) {
  // gfx1100 has neither setting; GFX10.1 has xnack but kfd never turns it on there.
  write_kfd_tree(root_,
                 {FakeGpu{.node = 1, .gfx_target_version = 110000},
                  FakeGpu{.node = 2, .gfx_target_version = 100100, .render_minor = 129}},
                 0);
  EXPECT_EQ(targets(discover_kfd_devices(root_)),
            (std::vector<std::string>{"gfx1100", "gfx1010:xnack-"}));
}

TEST_F(Discovery, NodesComeInNumericOrderAndCpuNodesAreSkipped) {
  std::vector<FakeGpu> gpus;
  for (unsigned n = 1; n <= 11; ++n)
    gpus.push_back(FakeGpu{.node = n,
                           .gfx_target_version = n == 10 ? 90402u : 90010u,
                           .render_minor = 127 + n});
  write_kfd_tree(root_, gpus, 1);
  const auto t = targets(discover_kfd_devices(root_));
  ASSERT_EQ(t.size(), 11u);
  EXPECT_EQ(t[8], "gfx90a:sramecc+:xnack-");  // node 9
  EXPECT_EQ(t[9], "gfx942:sramecc+:xnack-");  // node 10 sorts after 9, not after 1
}

TEST_F(Discovery, NameFallsBackToTheKfdNameThenTheProcessor) {
  write_kfd_tree(root_,
                 {FakeGpu{.node = 1, .gfx_target_version = 90010, .kfd_name = "aldebaran"},
                  FakeGpu{.node = 2, .gfx_target_version = 90402, .render_minor = 129}},
                 1);
  const KfdDiscovery d = discover_kfd_devices(root_);
  ASSERT_EQ(d.devices.size(), 2u);
  EXPECT_EQ(d.devices[0].name, "aldebaran");
  EXPECT_EQ(d.devices[1].name, "gfx942");  // "ip discovery" is a placeholder, not a name
  EXPECT_EQ(d.devices[1].uuid, "");        // unique_id 0: unknown
}

TEST_F(Discovery, UnreadableOrMalformedNodesAreSkippedWithANote) {
  write_kfd_tree(root_, {FakeGpu{.node = 1, .gfx_target_version = 90010}}, 1);
  test::write_text(std::filesystem::path(root_) / "class/kfd/kfd/topology/nodes/2/properties",
                   "simd_count 4\ngfx_target_version 123\n");
  std::filesystem::create_directories(std::filesystem::path(root_) /
                                      "class/kfd/kfd/topology/nodes/3");
  const KfdDiscovery d = discover_kfd_devices(root_);
  EXPECT_EQ(d.devices.size(), 1u);
  ASSERT_EQ(d.notes.size(), 2u);
  EXPECT_NE(d.notes[0].find("node 2: gfx_target_version 123"), std::string::npos) << d.notes[0];
  EXPECT_NE(d.notes[1].find("node 3: cannot read properties"), std::string::npos) << d.notes[1];
}

TEST_F(Discovery, NoKfdTreeMeansNoAmdDevicesAndSaysWhere) {
  const KfdDiscovery d = discover_kfd_devices(root_);
  EXPECT_TRUE(d.devices.empty());
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_NE(d.notes[0].find(root_ + "/class/kfd/kfd/topology/nodes"), std::string::npos);
}

TEST_F(Discovery, FakeDriverLibraryGivesCapabilityNameAndUuid) {
  const ScopedEnv lib("KCACHE_LIBCUDA_LIBRARY", FAKE_LIBCUDA_PATH);
  const ScopedEnv mode("FAKE_CUDA_MODE", nullptr);
  auto found = discover_cuda_devices();
  ASSERT_TRUE(found.ok()) << found.error().message;
  ASSERT_EQ(found->size(), 2u);
  EXPECT_EQ((*found)[0].device.str(), "9.0");
  EXPECT_EQ((*found)[0].device.compile_target().str(), "sm_90a");
  EXPECT_EQ((*found)[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ((*found)[0].uuid, "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f");
  EXPECT_EQ((*found)[0].source, "driver");
  EXPECT_EQ((*found)[1].device.compile_target().str(), "sm_86");
  EXPECT_EQ((*found)[1].uuid, "GPU-10111213-1415-1617-1819-1a1b1c1d1e1f");
}

TEST_F(Discovery, DriverWithoutDevicesIsAnEmptyListAndABrokenOneAnError) {
  const ScopedEnv lib("KCACHE_LIBCUDA_LIBRARY", FAKE_LIBCUDA_PATH);
  {
    const ScopedEnv mode("FAKE_CUDA_MODE", "none");
    auto found = discover_cuda_devices();
    ASSERT_TRUE(found.ok()) << found.error().message;
    EXPECT_TRUE(found->empty());
  }
  const ScopedEnv mode("FAKE_CUDA_MODE", "broken");
  auto found = discover_cuda_devices();
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.error().code, Errc::unavailable);
  EXPECT_NE(found.error().message.find("cuInit failed: CUDA_ERROR_UNKNOWN (999)"),
            std::string::npos)
      << found.error().message;
}

TEST_F(Discovery, TableListsNvidiaDevicesFirstThenAmdInOrder) {
  const ScopedEnv lib("KCACHE_LIBCUDA_LIBRARY", FAKE_LIBCUDA_PATH);
  const ScopedEnv mode("FAKE_CUDA_MODE", nullptr);
  write_kfd_tree(root_, {FakeGpu{.node = 1, .gfx_target_version = 90402, .sram_ecc = true}}, 1);
  const DeviceTable table = DeviceTable::discover(root_);
  ASSERT_EQ(table.devices().size(), 3u);
  EXPECT_EQ(table.devices()[0].compile_target, "sm_90a");
  EXPECT_EQ(table.devices()[1].compile_target, "sm_86");
  EXPECT_EQ(table.devices()[2].compile_target, "gfx942:sramecc+:xnack-");
  EXPECT_EQ(table.devices()[2].index, 2u);
  EXPECT_EQ(table.devices()[2].backend, "hip");
  const auto json = table.to_json();
  EXPECT_EQ(json[0]["uuid"], "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f");
  EXPECT_EQ(json[2]["source"], "sysfs");
}

TEST_F(Discovery, MissingDriverLibraryIsANoteNamingThePathTried) {
  const ScopedEnv lib("KCACHE_LIBCUDA_LIBRARY", "/nonexistent/libcuda.so.1");
  const DeviceTable table = DeviceTable::discover(root_);
  EXPECT_TRUE(table.devices().empty());
  ASSERT_EQ(table.notes().size(), 2u);
  EXPECT_NE(table.notes()[0].find("NVIDIA: the NVIDIA driver library not available (tried "
                                  "/nonexistent/libcuda.so.1)"),
            std::string::npos)
      << table.notes()[0];
}

TEST_F(Discovery, AnOverrideListReplacesDiscovery) {
  const ScopedEnv lib("KCACHE_LIBCUDA_LIBRARY", FAKE_LIBCUDA_PATH);
  write_kfd_tree(root_, {FakeGpu{.node = 1, .gfx_target_version = 90402}}, 1);
  auto table = DeviceTable::resolve(std::vector<std::string>{"gfx90a:xnack+"}, root_);
  ASSERT_TRUE(table.ok()) << table.error().message;
  ASSERT_EQ(table->devices().size(), 1u);
  EXPECT_EQ(table->devices()[0].source, "override");
  EXPECT_EQ(table->devices()[0].compile_target, "gfx90a:xnack+");
  EXPECT_FALSE(DeviceTable::resolve(std::vector<std::string>{"gfx9x"}, root_).ok());
}

TEST_F(Discovery, UnknownIndexNamesTheValidRange) {
  auto table = DeviceTable::from_list({"sm_90a", "gfx942"});
  ASSERT_TRUE(table.ok());
  auto bad = table->at(2);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "unknown device index 2 (devices are 0..1)");
}

TEST_F(Discovery, AnyIndexIsUnknownWithoutDevicesAndTheErrorSaysWhatToDo) {
  auto table = DeviceTable::from_list({});
  ASSERT_TRUE(table.ok());
  auto bad = table->at(0);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, Errc::invalid_argument);
  EXPECT_NE(bad.error().message.find("this daemon has no devices"), std::string::npos)
      << bad.error().message;
}

}  // namespace
}  // namespace kcache::daemon
