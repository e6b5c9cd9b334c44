// Entry points of installed distributions, read from their dist-info (site_packages.hpp).
#include "providers/site_packages.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "common/fd.hpp"

namespace kcache::providers {

namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxEntryPointsBytes = 1u << 20;
constexpr std::string_view kProviderAttr = "get_provider";

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool is_identifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

bool path_exists(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

// The file's text, or "" when it is missing, unreadable or larger than the bound.
std::string read_small(const fs::path& p) {
  Fd fd(::open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (!fd) return {};
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<std::uint64_t>(st.st_size) > kMaxEntryPointsBytes)
    return {};
  auto text = read_whole_file(fd.get());
  return text.ok() ? std::move(text).value() : std::string();
}

// "flashinfer_jit_cache.providers.sm90a" → "<dir>/flashinfer_jit_cache/providers/sm90a", or
// "" when a component is not an identifier (no `..`, no `/`, nothing outside `dir`).
std::string package_dir(const std::string& dir, std::string_view module) {
  std::string out = dir;
  for (std::size_t at = 0; at <= module.size();) {
    const std::size_t dot = std::min(module.find('.', at), module.size());
    const std::string_view part = module.substr(at, dot - at);
    if (!is_identifier(part)) return {};
    out += '/';
    out += part;
    at = dot + 1;
  }
  return out;
}

FoundProvider found_for(const std::string& dir, const fs::path& dist_info, const EntryPoint& ep,
                        bool installing) {
  FoundProvider f;
  f.kind = ProviderKind::flashinfer;
  f.entry_point = ep.name;
  f.dist_info = dist_info.string();
  f.site_packages = dir;
  f.installing = installing;
  f.path = package_dir(dir, ep.module);
  if (f.path.empty()) {
    f.path = f.dist_info + "#" + ep.name;
    f.problem = "entry point '" + ep.name + " = " + ep.module + ":" + ep.attr +
                "' does not name a module by dotted identifiers";
  } else if (ep.attr != kProviderAttr) {
    f.problem = "entry point '" + ep.name + " = " + ep.module + ":" + ep.attr +
                "' is not a provider built by flashinfer-jit-cache-provider (" +
                std::string(kProviderAttr) + "); kcache runs no provider code";
  }
  return f;
}

}  // namespace

std::vector<EntryPoint> parse_entry_points(std::string_view text, std::string_view group) {
  std::vector<EntryPoint> out;
  bool in_group = false;
  while (!text.empty()) {
    const std::size_t nl = std::min(text.find('\n'), text.size());
    const std::string_view line = trim(text.substr(0, nl));
    text.remove_prefix(std::min(nl + 1, text.size()));
    if (line.empty() || line.front() == '#' || line.front() == ';') continue;
    if (line.front() == '[') {
      in_group = line.back() == ']' && trim(line.substr(1, line.size() - 2)) == group;
      continue;
    }
    const std::size_t eq = line.find('=');
    if (!in_group || eq == std::string_view::npos) continue;
    EntryPoint ep;
    ep.name = std::string(trim(line.substr(0, eq)));
    std::string_view value = trim(line.substr(eq + 1));
    if (const std::size_t bracket = value.find('['); bracket != std::string_view::npos)
      value = trim(value.substr(0, bracket));  // extras do not change where it points
    const std::size_t colon = value.find(':');
    ep.module = std::string(trim(value.substr(0, colon)));
    if (colon != std::string_view::npos) ep.attr = std::string(trim(value.substr(colon + 1)));
    if (!ep.name.empty()) out.push_back(std::move(ep));
  }
  return out;
}

bool is_site_packages(const std::string& dir) {
  const std::string name = fs::path(dir).filename().string();
  if (name == "site-packages" || name == "dist-packages") return true;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".dist-info" && is_directory_path(it->path())) return true;
  return false;
}

bool is_python_environment(const std::string& dir) {
  return path_exists(fs::path(dir) / "pyvenv.cfg") || is_directory_path(fs::path(dir) / "conda-meta");
}

std::vector<std::string> environment_site_packages(const std::string& env) {
  std::vector<std::string> out;
  for (const char* lib : {"lib", "lib64"}) {
    const fs::path libdir = fs::path(env) / lib;
    std::error_code ec;
    for (fs::directory_iterator it(libdir, ec), end; !ec && it != end; it.increment(ec)) {
      if (!it->path().filename().string().starts_with("python3")) continue;
      for (const char* leaf : {"site-packages", "dist-packages"})
        if (is_directory_path(it->path() / leaf)) out.push_back((it->path() / leaf).string());
    }
  }
  // lib64 is often a symlink to lib: list each real directory once.
  std::sort(out.begin(), out.end());
  std::vector<std::string> unique;
  std::vector<fs::path> seen;
  for (const std::string& sp : out) {
    std::error_code ec;
    const fs::path real = fs::canonical(sp, ec);
    if (ec || std::find(seen.begin(), seen.end(), real) != seen.end()) continue;
    seen.push_back(real);
    unique.push_back(sp);
  }
  return unique;
}

SitePackagesListing list_site_packages(const std::string& dir) {
  SitePackagesListing out;
  out.watch_dirs.push_back(dir);
  std::vector<fs::path> dist_infos;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".dist-info" && !it->path().filename().string().starts_with('.'))
      dist_infos.push_back(it->path());
  std::sort(dist_infos.begin(), dist_infos.end());
  for (const fs::path& dist_info : dist_infos) {
    const bool installing = !path_exists(dist_info / "RECORD");
    if (installing) out.watch_dirs.push_back(dist_info.string());
    const std::string text = read_small(dist_info / "entry_points.txt");
    if (text.empty()) continue;
    const auto eps = parse_entry_points(text, kFlashInferGroup);
    if (eps.empty()) continue;
    if (!installing) out.watch_dirs.push_back(dist_info.string());
    for (const EntryPoint& ep : eps) out.providers.push_back(found_for(dir, dist_info, ep, installing));
  }
  return out;
}

}  // namespace kcache::providers
