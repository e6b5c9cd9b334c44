// kernels repos: finding checkouts and hub-cache snapshots, and checking their variants.
#include "providers/kernels_repo.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include "providers/kernels_variant.hpp"
#include "providers/manifest.hpp"
#include "variant/variant.hpp"

namespace kcache::providers {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::size_t kMaxRefBytes = 256;

// "kernels--kernels-community--activation" → "kernels-community/activation", or "".
std::string hub_repo_id(const std::string& name) {
  static const std::regex shape(R"((?:models|kernels)--([^/]+?)--([^/]+))");
  std::smatch m;
  if (!std::regex_match(name, m, shape) || m[1].str().find("--") != std::string::npos ||
      m[2].str().find("--") != std::string::npos)
    return {};
  return m[1].str() + "/" + m[2].str();
}

// refs/<ref> files (nested for refs/pr/N), each holding a commit: commit → ref names.
std::map<std::string, std::vector<std::string>> read_refs(const fs::path& refs) {
  std::map<std::string, std::vector<std::string>> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(refs, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (!it->is_regular_file(type_ec) || it->is_symlink(type_ec) || it->file_size(type_ec) > kMaxRefBytes)
      continue;
    std::string commit;
    std::getline(std::ifstream(it->path()), commit);
    while (!commit.empty() && (commit.back() == '\n' || commit.back() == '\r')) commit.pop_back();
    out[commit].push_back(it->path().lexically_relative(refs).generic_string());
  }
  return out;
}

// Importable as the kernels loader imports it: `__init__.py` at the top, or in a package.
bool importable(const fs::path& variant) {
  std::error_code ec;
  if (fs::exists(variant / "__init__.py", ec)) return true;
  for (const fs::path& child : subdirectories(variant))
    if (fs::exists(child / "__init__.py", ec)) return true;
  return false;
}

// One variant: usable, or the first reason it is not.
KernelsVariantState check_variant(const ProviderDir& repo, const std::string& build_rel,
                                  const std::string& name, Hasher& fp) {
  KernelsVariantState v;
  v.name = name;
  fp.update(name);
  auto parsed = parse_variant(name);
  if (!parsed.ok()) {
    v.reason = parsed.error().message;
    return v;
  }
  v.dotted = parsed->str();
  const std::string rel = build_rel + "/" + name;
  v.rel = rel;
  auto meta_file = repo.open_file(rel + "/" + std::string(kKernelsMetadataName));
  if (!meta_file.ok()) {
    v.reason = meta_file.error().code == Errc::not_found
                   ? "no metadata.json (the kernels loader requires one)"
                   : meta_file.error().message;
    return v;
  }
  auto text = static_cast<std::uint64_t>(meta_file->st.st_size) > kMaxManifestBytes
                  ? Result<std::string>(make_error(Errc::invalid_argument, "metadata.json is too large"))
                  : read_whole_file(meta_file->fd.get());
  if (!text.ok()) {
    v.reason = text.error().message;
    return v;
  }
  fp.update(*text);
  const json doc = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  auto meta = doc.is_discarded() ? Result<KernelsMetadata>(make_error(Errc::invalid_argument,
                                                                      "metadata.json is not valid JSON"))
                                 : parse_kernels_metadata(doc);
  if (!meta.ok()) {
    v.reason = meta.error().message;
    return v;
  }
  auto files = list_variant_files(repo, rel);
  if (!files.ok()) {
    v.reason = files.error().message;
    return v;
  }
  hash_variant_files(fp, *files);
  v.identity = variant_identity(*text, *files);
  for (const VariantFile& f : *files) v.bytes += static_cast<std::uint64_t>(f.st.st_size);
  if (!importable(fs::path(repo.path()) / rel)) {
    v.reason = "no __init__.py, flat or in a package directory: kernels cannot import it";
    return v;
  }
  v.has_digest = meta->digest.has_value();
  if (meta->digest) {
    auto violations = check_variant_digest(repo, *files, *meta->digest);
    if (!violations.ok()) {
      v.reason = violations.error().message;
      return v;
    }
    if (!violations->empty()) {
      v.reason = "does not match the expected digest: ";
      for (std::size_t i = 0; i < violations->size(); ++i)
        v.reason += (i == 0 ? "" : "; ") + (*violations)[i];
      return v;
    }
  }
  v.usable = true;
  v.variant = std::move(parsed).value();
  return v;
}

std::string summarize(const std::vector<KernelsVariantState>& variants) {
  std::string out;
  std::size_t bad = 0;
  for (const KernelsVariantState& v : variants) {
    if (v.usable) continue;
    ++bad;
    out += (out.empty() ? "" : "; ") + v.name + ": " + v.reason;
  }
  if (bad == 0) return {};
  return std::to_string(bad) + " of " + std::to_string(variants.size()) + " variants refused: " + out;
}

}  // namespace

bool is_hub_repo_dir(const std::string& dir) {
  return !hub_repo_id(fs::path(dir).filename().string()).empty() && is_directory_path(fs::path(dir) / "snapshots");
}

bool is_hub_cache(const std::string& dir) {
  const auto kids = subdirectories(dir);
  return std::any_of(kids.begin(), kids.end(), [](const fs::path& c) { return is_hub_repo_dir(c.string()); });
}

bool is_kernels_checkout(const std::string& dir) {
  std::error_code ec;
  for (const fs::path& v : subdirectories(fs::path(dir) / "build"))
    if (fs::exists(v / kKernelsMetadataName, ec) && !fs::exists(v / kManifestName, ec)) return true;
  return false;
}

void list_hub_repo(const std::string& dir, RootListing& out) {
  const std::string id = hub_repo_id(fs::path(dir).filename().string());
  out.watch_dirs.push_back(dir);
  out.watch_dirs.push_back(dir + "/refs");
  out.watch_dirs.push_back(dir + "/snapshots");
  const auto refs = read_refs(fs::path(dir) / "refs");
  for (const fs::path& snapshot : subdirectories(fs::path(dir) / "snapshots")) {
    FoundProvider f;
    f.kind = ProviderKind::kernels;
    f.path = snapshot.string();
    f.repo_id = id;
    f.repo_dir = dir;
    f.revision = snapshot.filename().string();
    f.build_rel = "snapshots/" + f.revision + "/build";
    if (auto it = refs.find(f.revision); it != refs.end()) f.refs = it->second;
    out.providers.push_back(std::move(f));
  }
}

FoundProvider checkout_found(const std::string& dir, std::string repo_id) {
  FoundProvider f;
  f.kind = ProviderKind::kernels;
  f.path = dir;
  f.repo_id = std::move(repo_id);
  f.repo_dir = dir;
  f.build_rel = "build";
  return f;
}

LoadedProvider load_kernels_repo(const FoundProvider& found) {
  LoadedProvider p;
  p.kind = ProviderKind::kernels;
  p.path = found.path;
  p.repo_id = found.repo_id;
  p.revision = found.revision;
  p.refs = found.refs;
  p.repo_dir = found.repo_dir;
  const std::string build = found.repo_dir + "/" + found.build_rel;
  p.watch_dirs = {found.path, build};
  Hasher fp;
  fp.update(found.repo_id);
  for (const std::string& r : found.refs) fp.update(r);
  Manifest m;
  m.name = found.repo_id;
  m.package = found.repo_id;
  m.version = found.revision;
  p.manifest = std::move(m);
  auto repo = ProviderDir::open(found.repo_dir);
  if (!repo.ok() || !is_directory_path(build)) {
    p.state = ProviderState::rejected;
    p.reason = repo.ok() ? "no build/ directory of variants" : repo.error().message;
    p.fingerprint = fp.finish();
    return p;
  }
  for (const fs::path& variant : subdirectories(build)) {
    p.watch_dirs.push_back(variant.string());
    p.kernel_variants.push_back(check_variant(*repo, found.build_rel, variant.filename().string(), fp));
  }
  p.fingerprint = fp.finish();
  const bool usable = std::any_of(p.kernel_variants.begin(), p.kernel_variants.end(),
                                  [](const KernelsVariantState& v) { return v.usable; });
  p.state = usable ? ProviderState::active : ProviderState::rejected;
  p.reason = p.kernel_variants.empty() ? "build/ holds no variants" : summarize(p.kernel_variants);
  return p;
}

}  // namespace kcache::providers
