#include "providers/provider_verify.hpp"

#include <filesystem>

#include "providers/module_check.hpp"
#include "providers/provider_files.hpp"

namespace kcache::providers {

bool VerifyReport::ok() const {
  if (provider.state != ProviderState::active) return false;
  for (const ModuleVerdict& m : modules)
    if (!m.reason.empty()) return false;
  return true;
}

std::string build_variant_of(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(dir), ec);
  if (ec) p = fs::absolute(dir);
  if (p.filename().empty()) p = p.parent_path();
  // build/<variant>/ as the provider, or build/<variant>/<provider>/ (provider_load.hpp).
  if (p.parent_path().filename() == "build") return p.filename().string();
  if (p.parent_path().parent_path().filename() == "build")
    return p.parent_path().filename().string();
  return {};
}

VerifyReport verify_provider(const std::string& dir) {
  VerifyReport report;
  report.provider = load_provider(dir, build_variant_of(dir));
  LoadedProvider& p = report.provider;
  if (!p.manifest || p.state == ProviderState::incomplete) return report;
  auto opened = ProviderDir::open(dir);
  ZstdDCtx dctx;
  std::size_t usable = 0;
  for (std::size_t i = 0; i < p.manifest->modules.size(); ++i) {
    const ModuleSpec& m = p.manifest->modules[i];
    std::string reason = p.module_errors.empty() ? std::string() : p.module_errors[i];
    if (reason.empty()) {
      if (!opened.ok()) {
        reason = opened.error().message;
      } else if (auto bytes = materialize_module(*opened, m, dctx); !bytes.ok()) {
        reason = bytes.error().message;
      }
    }
    if (!p.module_errors.empty()) p.module_errors[i] = reason;
    usable += reason.empty() ? 1 : 0;
    report.modules.push_back({m.name, m.target.str(), std::move(reason)});
  }
  // The daemon's state after materializing every module: no usable module → rejected.
  if (!p.module_errors.empty()) {
    p.reason = summarize_module_errors(p.module_errors);
    p.state = usable == 0 ? ProviderState::rejected : ProviderState::active;
  }
  return report;
}

}  // namespace kcache::providers
