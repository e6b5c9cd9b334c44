// A FlashInfer provider package: manifest.json by the shim's rules, modules as host objects.
#include "providers/flashinfer_provider.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>

#include "providers/module_check.hpp"
#include "providers/provider_files.hpp"
#include "providers/provider_key.hpp"

namespace kcache::providers {

namespace {

using nlohmann::json;

Error bad(std::string message) {
  return make_error(Errc::invalid_argument, "manifest.json: " + std::move(message));
}

LoadedProvider finish(LoadedProvider p, ProviderState state, std::string reason, Hasher& fp) {
  p.state = state;
  p.reason = std::move(reason);
  p.fingerprint = fp.finish();
  return p;
}

Result<std::vector<std::string>> string_list(const json& doc, const char* key) {
  const json& v = doc.at(key);
  if (!v.is_array()) return bad("'" + std::string(key) + "' must be a list of strings");
  std::vector<std::string> out;
  for (const json& item : v) {
    if (!item.is_string()) return bad("'" + std::string(key) + "' holds " + item.dump() + ", not a string");
    out.push_back(item.get<std::string>());
  }
  return out;
}

Status check_module_name(const std::string& name) {
  if (name.empty() || name == "." || name == ".." || name.size() > 255 ||
      name.find_first_of(std::string_view("/\\\0", 3)) != std::string::npos)
    return bad("module name " + json(name).dump() + " is not a single path component");
  return {};
}

// "+cu130" in the version names the CUDA it was built with: cuda-13.0, else plain "cuda".
std::string backend_of(const std::string& version) {
  static const std::regex local(R"(\+cu(\d+)(\d)$)");
  std::smatch m;
  if (std::regex_search(version, m, local)) return "cuda-" + m[1].str() + "." + m[2].str();
  return "cuda";
}

// manifest.json, confined to the package directory; rejected/incomplete outcomes as reasons.
Result<std::string> read_manifest(const ProviderDir& dir) {
  auto file = dir.open_file(kFlashInferManifestName);
  if (!file.ok()) {
    if (file.error().code == Errc::not_found)
      return make_error(Errc::invalid_argument,
                        "no manifest.json: not a package built by flashinfer-jit-cache-provider");
    return std::move(file).error();
  }
  if (static_cast<std::uint64_t>(file->st.st_size) > kMaxManifestBytes)
    return make_error(Errc::invalid_argument, "manifest.json is larger than " +
                                                  std::to_string(kMaxManifestBytes) + " bytes");
  return read_whole_file(file->fd.get());
}

// The package must lie inside its site-packages (a symlinked package must not point out).
Status check_confined(const ProviderDir& dir, const std::string& site_packages) {
  std::error_code ec;
  const std::string root = std::filesystem::canonical(site_packages, ec).string();
  if (ec) return make_error(Errc::not_found, "site-packages " + site_packages + " is gone");
  const std::string& real = dir.real_path();
  if (real.size() <= root.size() || real.compare(0, root.size(), root) != 0 || real[root.size()] != '/')
    return make_error(Errc::corrupt, "the package resolves outside " + site_packages + " (" + real + ")");
  return {};
}

struct RecordLine {
  std::string sha256;  // standard base64, or empty
  std::optional<std::uint64_t> size;
};

// RECORD (`path,sha256=<urlsafe base64, unpadded>,size`, paths relative to site-packages):
// the lines of files under `prefix`, keyed by their path below it.
std::map<std::string, RecordLine> read_record(const FoundProvider& found, const std::string& prefix) {
  std::map<std::string, RecordLine> out;
  std::ifstream in(found.dist_info + "/RECORD");
  std::string line;
  for (std::size_t n = 0; std::getline(in, line) && n < 4 * kMaxModules; ++n) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::size_t c1 = line.find(','), c2 = line.find(',', c1 == std::string::npos ? c1 : c1 + 1);
    if (c1 == std::string::npos || c2 == std::string::npos || !line.starts_with(prefix)) continue;
    RecordLine r;
    std::string hash = line.substr(c1 + 1, c2 - c1 - 1);
    if (hash.starts_with("sha256=")) {
      hash.erase(0, 7);
      std::replace(hash.begin(), hash.end(), '-', '+');
      std::replace(hash.begin(), hash.end(), '_', '/');
      while (hash.size() % 4 != 0) hash += '=';
      r.sha256 = hash;
    }
    const std::string size = line.substr(c2 + 1);
    if (!size.empty() && size.size() < 20 && size.find_first_not_of("0123456789") == std::string::npos)
      r.size = std::stoull(size);
    out.emplace(line.substr(prefix.size(), c1 - prefix.size()), std::move(r));
  }
  return out;
}

void add_modules(LoadedProvider& p, const ProviderDir& dir, const FlashInferManifest& fi,
                 const std::map<std::string, RecordLine>& record, Hasher& fp) {
  for (const std::string& name : fi.modules) {
    const std::string file = "jit_cache/" + name + "/" + name + ".so";
    p.watch_dirs.push_back(p.path + "/jit_cache/" + name);
    auto opened = dir.open_file(file);
    std::string error;
    ModuleSpec spec{name, file, p.manifest->targets.front()};
    spec.format = ModuleFormat::host_object;
    spec.digest_is_identity = true;
    spec.provided = p.manifest->targets;
    if (!opened.ok()) {
      error = opened.error().code == Errc::not_found
                  ? "module '" + name + "': listed in manifest.json but " + file + " is missing"
                  : "module '" + name + "': " + opened.error().message;
    } else if (opened->st.st_size == 0 ||
               static_cast<std::uint64_t>(opened->st.st_size) > kMaxModuleSize) {
      error = "module '" + name + "': " + file + " is " + std::to_string(opened->st.st_size) +
              " bytes (1 byte to " + std::to_string(kMaxModuleSize) + " allowed)";
    } else if (auto r = record.find(file); r != record.end() && r->second.size &&
               *r->second.size != static_cast<std::uint64_t>(opened->st.st_size)) {
      error = "module '" + name + "': " + file + " is " + std::to_string(opened->st.st_size) +
              " bytes, the wheel's RECORD says " + std::to_string(*r->second.size);
    } else {
      spec.size = static_cast<std::uint64_t>(opened->st.st_size);
      spec.digest = file_identity(opened->st);
      if (r != record.end()) spec.record_sha256 = r->second.sha256;
    }
    fp.update(error.empty() ? spec.digest.hex() : error);
    for (const Target& t : p.manifest->targets) {
      spec.target = t;
      p.modules_by_name[name].push_back(p.manifest->modules.size());
      p.keys.push_back(compute_provider_key({p.manifest->name, fi.distribution, fi.version, "",
                                             name, t.str(), spec.digest}));
      p.manifest->modules.push_back(spec);
      p.module_errors.push_back(error);
    }
  }
}

}  // namespace

Result<Target> normalize_flashinfer_arch(std::string_view text) {
  std::string s;
  for (char c : text) s += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  const auto not_space = [](char c) { return c != ' ' && c != '\t' && c != '\n' && c != '\r'; };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  for (std::string_view prefix : {"compute_", "sm_", "sm"})
    if (s.starts_with(prefix)) {
      s.erase(0, prefix.size());
      break;
    }
  std::erase(s, '.');
  std::erase(s, '_');
  static const std::regex shape(R"(\d{2,3}[af]?)");
  if (!std::regex_match(s, shape))
    return make_error(Errc::invalid_argument,
                      "CUDA architecture " + json(std::string(text)).dump() +
                          " is not of the form sm90a / 9.0a / compute_100f");
  auto t = parse_cuda_target("sm" + s);
  if (!t.ok())
    return make_error(Errc::invalid_argument, "CUDA architecture " +
                                                  json(std::string(text)).dump() + ": " +
                                                  t.error().message);
  return Target(*t);
}

Result<FlashInferManifest> parse_flashinfer_manifest(const json& doc) {
  if (!doc.is_object()) return bad("not a JSON object");
  const auto schema = doc.find("schema_version");
  if (schema == doc.end() || !schema->is_number_integer() ||
      schema->get<std::int64_t>() != kFlashInferSchemaVersion)
    return bad("unsupported schema_version " + (schema == doc.end() ? "(missing)" : schema->dump()) +
               " (FlashInfer's shim and kcache read schema_version 1)");
  std::string missing;
  for (const char* key : {"distribution", "version", "cuda_architectures", "modules"})
    if (!doc.contains(key)) missing += (missing.empty() ? "" : ", ") + std::string(key);
  if (!missing.empty()) return bad("is missing fields: " + missing);
  FlashInferManifest out;
  for (const char* key : {"distribution", "version"}) {
    const json& v = doc.at(key);
    if (!v.is_string() || v.get<std::string>().empty())
      return bad("'" + std::string(key) + "' must be a non-empty string");
  }
  out.distribution = doc.at("distribution").get<std::string>();
  out.version = doc.at("version").get<std::string>();
  KC_TRY_ASSIGN(const auto archs, string_list(doc, "cuda_architectures"));
  for (const std::string& a : archs) {
    auto t = normalize_flashinfer_arch(a);
    if (!t.ok()) return bad(t.error().message);
    out.architectures.push_back(*t);
  }
  KC_TRY_ASSIGN(out.modules, string_list(doc, "modules"));
  for (const std::string& m : out.modules) KC_TRY(check_module_name(m));
  if (out.architectures.empty()) return bad("has no CUDA architectures");
  if (out.modules.empty()) return bad("has no modules");
  std::sort(out.architectures.begin(), out.architectures.end());
  out.architectures.erase(std::unique(out.architectures.begin(), out.architectures.end()),
                          out.architectures.end());
  std::sort(out.modules.begin(), out.modules.end());
  out.modules.erase(std::unique(out.modules.begin(), out.modules.end()), out.modules.end());
  if (out.modules.size() > kMaxModules) return bad("lists more than " + std::to_string(kMaxModules) + " modules");
  return out;
}

LoadedProvider load_flashinfer_provider(const FoundProvider& found) {
  LoadedProvider p;
  p.kind = ProviderKind::flashinfer;
  p.path = found.path;
  p.watch_dirs = {found.path, found.path + "/jit_cache"};
  Hasher fp;
  fp.update(found.entry_point);
  fp.update(found.dist_info);
  fp.update(found.installing ? "installing" : "installed");
  if (!found.problem.empty()) return finish(std::move(p), ProviderState::rejected, found.problem, fp);
  if (found.installing)
    return finish(std::move(p), ProviderState::incomplete,
                  "being installed: " + found.dist_info + " has no RECORD yet", fp);
  auto dir = ProviderDir::open(found.path);
  if (!dir.ok())
    return finish(std::move(p), ProviderState::rejected,
                  "entry point '" + found.entry_point + "' of " + found.dist_info + ": " +
                      dir.error().message, fp);
  if (auto confined = check_confined(*dir, found.site_packages); !confined.ok())
    return finish(std::move(p), ProviderState::rejected, confined.error().message, fp);
  auto text = read_manifest(*dir);
  if (!text.ok()) return finish(std::move(p), ProviderState::rejected, text.error().message, fp);
  fp.update(*text);
  json doc = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded())
    return finish(std::move(p), ProviderState::rejected, "manifest.json is not valid JSON", fp);
  auto fi = parse_flashinfer_manifest(doc);
  if (!fi.ok()) return finish(std::move(p), ProviderState::rejected, fi.error().message, fp);
  Manifest m;
  m.name = found.entry_point;
  m.package = fi->distribution;
  m.version = fi->version;
  m.backend = backend_of(fi->version);
  m.targets = fi->architectures;
  p.manifest = std::move(m);
  const std::string prefix =
      std::filesystem::path(found.path).lexically_relative(found.site_packages).generic_string() + "/";
  add_modules(p, *dir, *fi, read_record(found, prefix), fp);
  const bool usable = std::any_of(p.module_errors.begin(), p.module_errors.end(),
                                  [](const std::string& e) { return e.empty(); });
  const std::string summary = summarize_module_errors(p.module_errors);
  return finish(std::move(p), usable ? ProviderState::active : ProviderState::rejected, summary, fp);
}

}  // namespace kcache::providers
