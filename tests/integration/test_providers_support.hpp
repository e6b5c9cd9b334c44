// test_providers_support.hpp — what the provider integration tests share: a fixture with a
// provider root, NVRTC cubins written to files, kcache-pack, and polling of
// `kcachectl providers --json` with a deadline (never a bare sleep).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/digest.hpp"
#include "daemon_fixture.hpp"

namespace kcache::test {

using nlohmann::json;

class ProviderFixture : public DaemonFixture {
 protected:
  void SetUp() override;

  // Starts kcached watching root_ with these devices (capabilities like "9.0").
  void start_with_devices(const std::string& devices, std::vector<std::string> extra = {});

  // The NVRTC cubin for `arch` written to <dir>/bin/<arch>/<name>.cubin; its path.
  std::string cubin_file(const std::string& arch, const std::string& name);
  std::string cubin_bytes(const std::string& arch);
  std::string ptx_bytes(const std::string& arch);
  // The hiprtc code object for `arch` (gfx90a, gfx90a:xnack-, ...), or empty when hiprtc is
  // missing or cannot compile for it (the test then skips).
  std::string hsaco_bytes(const std::string& arch);
  // Written to <dir>/bin/<arch>/<name>.hsaco; its path.
  std::string hsaco_file(const std::string& arch, const std::string& name);

  CommandResult pack(const std::vector<std::string>& args);
  // Packs one provider under root_/<dir_name>: `modules` are "TARGET=FILE" arguments. The
  // backend is rocm-5.2 when the first target is an AMD one, else cuda-13.0.
  void pack_provider(const std::string& dir_name, const std::string& name,
                     const std::string& version, const std::vector<std::string>& modules,
                     const std::vector<std::string>& extra = {});

  json providers();
  // Polls until the provider at `path` satisfies `done`; fails the test past the deadline.
  json wait_for(const std::string& path, const std::function<bool(const json&)>& done,
                std::chrono::milliseconds deadline = std::chrono::seconds(10));
  json wait_state(const std::string& path, const std::string& state) {
    return wait_for(path, [&](const json& p) { return p.value("state", "") == state; });
  }
  // Waits until at least `jobs` prefetch jobs ended and nothing is queued or running.
  void wait_prefetched(std::uint64_t jobs);

  // The catalog key kcached gives a provider module (docs/providers.md), as hex.
  static std::string provider_key(const std::string& provider, const std::string& package,
                                  const std::string& version, const std::string& variant,
                                  const std::string& module, const std::string& target,
                                  const std::string& bytes);

  // Writes a provider by hand (for the ones kcache-pack refuses to write).
  void write_file(const std::string& path, const std::string& bytes);
  static std::string zstd(const std::string& bytes, bool record_size = true);

  std::string root_;
};

}  // namespace kcache::test
