#include "compiler/include_roots.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <system_error>
#include <utility>

#include "common/digest.hpp"

namespace kcache::daemon {

namespace fs = std::filesystem;

namespace {

Result<std::string> resolve(std::string_view path) {
  const std::string p(path);
  std::unique_ptr<char, decltype(&std::free)> real(::realpath(p.c_str(), nullptr), &std::free);
  if (!real) return make_error(Errc::not_found, "include root '" + p + "' cannot be resolved");
  return std::string(real.get());
}

// Adds `file` (its path relative to the root, then its bytes) to the digest.
Status hash_file(Hasher& h, const fs::path& file, const std::string& rel, std::uint64_t* bytes) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return make_error(Errc::io, "cannot read " + file.string());
  const std::uint64_t n = rel.size();
  h.update(&n, sizeof n);
  h.update(rel);
  char buf[64 * 1024];
  while (in) {
    in.read(buf, sizeof buf);
    const auto got = static_cast<std::size_t>(in.gcount());
    h.update(buf, got);
    *bytes += got;
  }
  return {};
}

}  // namespace

Result<IncludeRoots> IncludeRoots::scan(const std::vector<std::string>& roots) {
  IncludeRoots out;
  if (roots.empty()) return out;
  Hasher h;
  for (const std::string& given : roots) {
    KC_TRY_ASSIGN(std::string root, resolve(given));
    std::error_code ec;
    if (!fs::is_directory(root, ec))
      return make_error(Errc::invalid_argument, "include root '" + given + "' is not a directory");
    std::vector<std::string> files;
    for (fs::recursive_directory_iterator it(root, fs::directory_options::none, ec), end;
         !ec && it != end; it.increment(ec)) {
      if (it->is_symlink(ec)) continue;  // never followed: a link may lead out of the root
      if (it->is_regular_file(ec)) files.push_back(fs::relative(it->path(), root).string());
      if (files.size() + out.files_ > kMaxFiles)
        return make_error(Errc::too_large, "include root '" + given + "' holds more than " +
                                               std::to_string(kMaxFiles) + " files");
    }
    if (ec) return make_error(Errc::io, "cannot list include root '" + given + "': " + ec.message());
    std::sort(files.begin(), files.end());
    h.update(root);
    for (const std::string& rel : files) {
      KC_TRY(hash_file(h, fs::path(root) / rel, rel, &out.bytes_));
      if (out.bytes_ > kMaxBytes)
        return make_error(Errc::too_large, "include root '" + given + "' holds more than " +
                                               std::to_string(kMaxBytes >> 30) + " GiB");
    }
    out.files_ += files.size();
    out.roots_.push_back(std::move(root));
  }
  out.key_suffix_ = " +include-roots " + h.finish().hex();
  return out;
}

bool IncludeRoots::allows(std::string_view dir) const {
  if (roots_.empty() || dir.empty()) return false;
  auto real = resolve(dir);
  if (!real.ok()) return false;
  return std::any_of(roots_.begin(), roots_.end(), [&](const std::string& root) {
    return root == "/" || *real == root ||
           (real->starts_with(root) && (*real)[root.size()] == '/');
  });
}

}  // namespace kcache::daemon
