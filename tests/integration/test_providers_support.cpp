#include "test_providers_support.hpp"

#include <zstd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "gpu_compilers.hpp"
#include "providers/provider_key.hpp"

namespace kcache::test {

namespace fs = std::filesystem;

namespace {
std::string as_string(const std::vector<std::byte>& b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}
}  // namespace

void ProviderFixture::SetUp() {
  DaemonFixture::SetUp();
  const auto& probe = kcache::testing::nvrtc_compile("sm_90a");
  if (probe.status != kcache::testing::CompileOutcome::Status::ok)
    GTEST_SKIP() << "NVRTC is needed to build provider modules: " << probe.message;
  root_ = dir_ + "/providers";
  fs::create_directories(root_);
}

void ProviderFixture::start_with_devices(const std::string& devices, std::vector<std::string> extra) {
  std::vector<std::string> args{"--devices", devices, "--provider-root", root_};
  args.insert(args.end(), extra.begin(), extra.end());
  start(args);
}

std::string ProviderFixture::cubin_bytes(const std::string& arch) {
  const auto& out = kcache::testing::nvrtc_compile(arch);
  EXPECT_EQ(out.status, kcache::testing::CompileOutcome::Status::ok) << arch << ": " << out.message;
  return as_string(out.code);
}

std::string ProviderFixture::ptx_bytes(const std::string& arch) {
  return as_string(kcache::testing::nvrtc_compile(arch).ptx);
}

std::string ProviderFixture::hsaco_bytes(const std::string& arch) {
  const auto& out = kcache::testing::hiprtc_compile(arch);
  return out.status == kcache::testing::CompileOutcome::Status::ok ? as_string(out.code) : "";
}

std::string ProviderFixture::hsaco_file(const std::string& arch, const std::string& name) {
  std::string dir = arch;
  for (char& c : dir)
    if (c == ':') c = '_';
  const std::string path = dir_ + "/bin/" + dir + "/" + name + ".hsaco";
  write_file(path, hsaco_bytes(arch));
  return path;
}

std::string ProviderFixture::cubin_file(const std::string& arch, const std::string& name) {
  const std::string path = dir_ + "/bin/" + arch + "/" + name + ".cubin";
  write_file(path, cubin_bytes(arch));
  return path;
}

CommandResult ProviderFixture::pack(const std::vector<std::string>& args) {
  std::vector<std::string> argv{KCACHE_PACK_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_command(argv);
}

void ProviderFixture::pack_provider(const std::string& dir_name, const std::string& name,
                                    const std::string& version,
                                    const std::vector<std::string>& modules,
                                    const std::vector<std::string>& extra) {
  // Packed next to the root, then renamed in: the daemon sees the whole provider at once.
  const std::string staging = dir_ + "/staging-" + dir_name;
  const bool amd = !modules.empty() && modules.front().rfind("gfx", 0) == 0;
  std::vector<std::string> args{"--name", name, "--package", "pkg", "--version", version,
                                "--backend", amd ? "rocm-5.2" : "cuda-13.0", "--out", staging};
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), modules.begin(), modules.end());
  const CommandResult r = pack(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path target = fs::path(root_) / dir_name;
  fs::create_directories(target.parent_path());
  fs::rename(staging, target);
}

json ProviderFixture::providers() {
  const CommandResult r = kcachectl({"providers", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out, nullptr, false);
}

json ProviderFixture::wait_for(const std::string& path, const std::function<bool(const json&)>& done,
                               std::chrono::milliseconds deadline) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  json last;
  while (true) {
    const json doc = providers();
    if (doc.is_object())
      for (const json& p : doc["providers"])
        if (p.value("path", "") == path) {
          last = p;
          if (done(p)) return p;
        }
    if (std::chrono::steady_clock::now() > until) {
      ADD_FAILURE() << "provider " << path << " did not reach the expected state; last seen: "
                    << last.dump() << "\nall: " << doc.dump();
      return last;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void ProviderFixture::wait_prefetched(std::uint64_t jobs) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (true) {
    const json s = status();
    const json& p = s["prefetch"];
    if (p["queued"].get<int>() == 0 && p["running"].get<int>() == 0 &&
        p["done"].get<std::uint64_t>() + p["failed"].get<std::uint64_t>() >= jobs)
      return;
    ASSERT_LT(std::chrono::steady_clock::now(), until) << "prefetch never finished: " << p.dump();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::string ProviderFixture::provider_key(const std::string& provider, const std::string& package,
                                          const std::string& version, const std::string& variant,
                                          const std::string& module, const std::string& target,
                                          const std::string& bytes) {
  return providers::compute_provider_key({provider, package, version, variant, module, target,
                                          digest_of(std::string_view(bytes))})
      .hex();
}

void ProviderFixture::write_file(const std::string& path, const std::string& bytes) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

std::string ProviderFixture::zstd(const std::string& bytes, bool record_size) {
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, record_size ? 1 : 0);
  std::string out(ZSTD_compressBound(bytes.size()), '\0');
  const std::size_t n = ZSTD_compress2(c, out.data(), out.size(), bytes.data(), bytes.size());
  ZSTD_freeCCtx(c);
  out.resize(n);
  return out;
}

}  // namespace kcache::test
