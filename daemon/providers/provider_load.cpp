// Finding providers under a root and loading one: manifest, variant, module files, fingerprint.
#include "providers/provider_load.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <set>

#include "providers/flashinfer_provider.hpp"
#include "providers/kernels_repo.hpp"
#include "providers/module_check.hpp"
#include "providers/provider_files.hpp"
#include "providers/provider_key.hpp"
#include "providers/site_packages.hpp"

namespace kcache::providers {

namespace {

namespace fs = std::filesystem;

bool hidden(const fs::path& p) { return p.filename().string().starts_with('.'); }

void hash_stat(Hasher& h, const struct stat& st) {
  const Digest128 identity = file_identity(st);
  h.update(&identity, sizeof identity);
}

LoadedProvider incomplete(LoadedProvider p, std::string why) {
  p.state = ProviderState::incomplete;
  p.reason = std::move(why);
  return p;
}

LoadedProvider rejected(LoadedProvider p, std::string why) {
  p.state = ProviderState::rejected;
  p.reason = std::move(why);
  return p;
}

// The manifest's variant and the build/<variant>/ it sits in must agree.
Status settle_variant(LoadedProvider& p) {
  std::optional<Variant> from_dir;
  if (!p.build_variant.empty()) {
    auto v = parse_variant(p.build_variant);
    if (!v.ok())
      return make_error(Errc::invalid_argument, "build directory name: " + v.error().message);
    from_dir = std::move(v).value();
  }
  const std::optional<Variant>& declared = p.manifest->variant;
  if (declared && from_dir && !(*declared == *from_dir))
    return make_error(Errc::invalid_argument, "variant " + declared->str() +
                                                  " in the manifest differs from its build/ directory " +
                                                  from_dir->str());
  p.variant = declared ? declared : from_dir;
  return {};
}

}  // namespace

bool is_directory_path(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);  // follows symlinks: a linked-in provider is fine
}

std::vector<fs::path> subdirectories(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (!hidden(it->path()) && is_directory_path(it->path())) out.push_back(it->path());
  std::sort(out.begin(), out.end());
  return out;
}

std::string_view provider_state_name(ProviderState s) noexcept {
  switch (s) {
    case ProviderState::active: return "active";
    case ProviderState::rejected: return "rejected";
    case ProviderState::incomplete: return "incomplete";
    case ProviderState::removed: return "removed";
  }
  return "unknown";
}

std::string_view provider_kind_name(ProviderKind k) noexcept {
  switch (k) {
    case ProviderKind::kcache: return "kcache";
    case ProviderKind::flashinfer: return "flashinfer";
    case ProviderKind::kernels: return "kernels";
  }
  return "unknown";
}

LoadedProvider load_found(const FoundProvider& found) {
  if (found.kind == ProviderKind::flashinfer) return load_flashinfer_provider(found);
  if (found.kind == ProviderKind::kernels) return load_kernels_repo(found);
  return load_provider(found.path, found.build_variant);
}

std::string summarize_module_errors(const std::vector<std::string>& errors) {
  std::size_t bad = 0;
  const std::string* first = nullptr;
  for (const std::string& e : errors) {
    if (e.empty()) continue;
    ++bad;
    if (first == nullptr) first = &e;
  }
  if (bad == 0) return {};
  return std::to_string(bad) + " of " + std::to_string(errors.size()) + " modules refused: " + *first;
}

LoadedProvider load_provider(const std::string& path, std::string_view build_variant) {
  LoadedProvider p;
  p.path = path;
  p.build_variant = std::string(build_variant);
  p.watch_dirs.push_back(path);
  Hasher fingerprint;
  fingerprint.update(p.build_variant);

  auto dir = ProviderDir::open(path);
  if (!dir.ok()) {
    p.fingerprint = fingerprint.finish();
    return incomplete(std::move(p), dir.error().message);
  }
  auto manifest_file = dir->open_file(kManifestName);
  if (!manifest_file.ok()) {
    p.fingerprint = fingerprint.finish();
    if (manifest_file.error().code == Errc::not_found)
      return incomplete(std::move(p), "no " + std::string(kManifestName) + " (yet)");
    return rejected(std::move(p), manifest_file.error().message);
  }
  if (static_cast<std::uint64_t>(manifest_file->st.st_size) > kMaxManifestBytes) {
    p.fingerprint = fingerprint.finish();
    return rejected(std::move(p), std::string(kManifestName) + " is larger than " +
                                      std::to_string(kMaxManifestBytes) + " bytes");
  }
  auto text = read_whole_file(manifest_file->fd.get());
  if (!text.ok()) return incomplete(std::move(p), text.error().message);
  fingerprint.update(*text);
  p.fingerprint = fingerprint.finish();

  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(*text);
  } catch (const nlohmann::json::parse_error& e) {
    // An error at the very end is a file cut short (being written): retried on the next event.
    if (e.byte >= text->size())
      return incomplete(std::move(p), std::string(kManifestName) +
                                          " is truncated (being written?): " + e.what());
    return rejected(std::move(p), std::string(kManifestName) + " is not valid JSON: " + e.what());
  } catch (const nlohmann::json::exception& e) {  // 406: a number out of range (1e400)
    return rejected(std::move(p), std::string(kManifestName) + " is not valid JSON: " + e.what());
  }
  auto manifest = parse_manifest(doc);
  if (!manifest.ok()) return rejected(std::move(p), manifest.error().message);
  p.manifest = std::move(manifest).value();
  if (auto v = settle_variant(p); !v.ok()) return rejected(std::move(p), v.error().message);

  std::set<std::string> subdirs;
  std::size_t usable = 0;
  const std::string variant = p.variant ? p.variant->str() : std::string();
  for (const ModuleSpec& m : p.manifest->modules) {
    const Manifest& mf = *p.manifest;
    const std::string target = m.target.str();
    p.modules_by_name[m.name].push_back(p.keys.size());
    p.keys.push_back(compute_provider_key(
        {mf.name, mf.package, mf.version, variant, m.name, target, m.digest}));
    if (const auto slash = m.file.rfind('/'); slash != std::string::npos)
      subdirs.insert(path + "/" + m.file.substr(0, slash));
    struct stat st {};
    auto checked = check_module_file(*dir, m, &st);
    if (!checked.ok() && checked.error().code == Errc::not_found) {
      p.fingerprint = fingerprint.finish();
      return incomplete(std::move(p), checked.error().message + " (still being copied?)");
    }
    if (checked.ok()) {
      hash_stat(fingerprint, st);
      ++usable;
    } else {
      fingerprint.update(checked.error().message);
    }
    p.module_errors.push_back(checked.ok() ? std::string() : checked.error().message);
  }
  p.fingerprint = fingerprint.finish();
  p.watch_dirs.insert(p.watch_dirs.end(), subdirs.begin(), subdirs.end());
  if (usable == 0) return rejected(std::move(p), summarize_module_errors(p.module_errors));
  p.state = ProviderState::active;
  p.reason = summarize_module_errors(p.module_errors);
  return p;
}

namespace {

void add_site_packages(RootListing& out, const std::string& dir) {
  SitePackagesListing listing = list_site_packages(dir);
  for (FoundProvider& f : listing.providers) out.providers.push_back(std::move(f));
  for (std::string& d : listing.watch_dirs) out.watch_dirs.push_back(std::move(d));
}

// A hub cache, one hub repo, or a kernels checkout (id: its name under the root).
bool add_kernels(RootListing& out, const std::string& dir, const std::string& id) {
  if (is_hub_repo_dir(dir)) {
    list_hub_repo(dir, out);
    return true;
  }
  if (is_hub_cache(dir)) {
    out.watch_dirs.push_back(dir);
    for (const fs::path& child : subdirectories(dir))
      if (is_hub_repo_dir(child.string())) list_hub_repo(child.string(), out);
    return true;
  }
  if (!is_kernels_checkout(dir)) return false;
  out.providers.push_back(checkout_found(dir, id));
  return true;
}

// A site-packages, or an environment holding some: FlashInfer providers only.
bool add_python(RootListing& out, const std::string& dir) {
  if (is_site_packages(dir)) {
    add_site_packages(out, dir);
    return true;
  }
  if (!is_python_environment(dir)) return false;
  out.watch_dirs.push_back(dir);
  for (const std::string& sp : environment_site_packages(dir)) add_site_packages(out, sp);
  return true;
}

}  // namespace

RootListing list_root(const std::string& root) {
  RootListing out;
  if (!is_directory_path(root)) return out;
  out.exists = true;
  if (add_python(out, root) || add_kernels(out, root, fs::path(root).filename().string()))
    return out;
  out.watch_dirs.push_back(root);
  for (const fs::path& child : subdirectories(root)) {
    if (child.filename() != "build") {
      if (!add_python(out, child.string()) &&
          !add_kernels(out, child.string(), child.filename().string()))
        out.providers.push_back({child.string(), {}});
      continue;
    }
    out.watch_dirs.push_back(child.string());
    for (const fs::path& variant_dir : subdirectories(child)) {
      const std::string variant = variant_dir.filename().string();
      std::error_code ec;
      if (fs::exists(variant_dir / kManifestName, ec)) {
        out.providers.push_back({variant_dir.string(), variant});
        continue;
      }
      out.watch_dirs.push_back(variant_dir.string());
      for (const fs::path& provider : subdirectories(variant_dir))
        out.providers.push_back({provider.string(), variant});
    }
  }
  return out;
}

}  // namespace kcache::providers
