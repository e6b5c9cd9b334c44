// The canonical text of a tree and its digest (tree_manifest.hpp).
#include "store/tree_manifest.hpp"

#include <algorithm>
#include <charconv>
#include <set>

namespace kcache::daemon {

namespace {

constexpr std::string_view kHeader = "kcache-tree 1";

std::string_view parent_of(std::string_view path) {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string_view{} : path.substr(0, slash);
}

Error bad_line(std::size_t n, std::string_view why) {
  return make_error(Errc::corrupt, "tree manifest line " + std::to_string(n) + ": " + std::string(why));
}

}  // namespace

std::uint64_t TreeManifest::total_size() const noexcept {
  std::uint64_t total = 0;
  for (const TreeFile& f : files) total += f.size;
  return total;
}

Status check_tree_path(std::string_view path) {
  if (path.empty() || path.size() > kMaxTreePathBytes)
    return make_error(Errc::invalid_argument, "a tree path is empty or longer than 4096 bytes");
  if (path.find_first_of(std::string_view("\0\n\\", 3)) != std::string_view::npos)
    return make_error(Errc::invalid_argument, "tree path '" + std::string(path) + "' holds NUL, a newline or a backslash");
  std::size_t start = 0;
  while (start <= path.size()) {
    const auto end = std::min(path.find('/', start), path.size());
    const std::string_view part = path.substr(start, end - start);
    if (part.empty() || part == "." || part == "..")
      return make_error(Errc::invalid_argument, "tree path '" + std::string(path) + "' is not a plain relative path");
    start = end + 1;
  }
  return {};
}

void normalize_tree_manifest(TreeManifest& m) {
  std::set<std::string> dirs;
  for (const std::string& d : m.dirs)
    for (std::string_view p = d; !p.empty(); p = parent_of(p)) dirs.emplace(p);
  for (const TreeFile& f : m.files)
    for (std::string_view p = parent_of(f.path); !p.empty(); p = parent_of(p)) dirs.emplace(p);
  m.dirs.assign(dirs.begin(), dirs.end());
  std::sort(m.files.begin(), m.files.end(),
            [](const TreeFile& a, const TreeFile& b) { return a.path < b.path; });
}

std::string encode_tree_manifest(const TreeManifest& m) {
  std::string out(kHeader);
  out += '\n';
  // One merged, path-ordered walk of directories and files.
  std::size_t d = 0, f = 0;
  while (d < m.dirs.size() || f < m.files.size()) {
    if (f == m.files.size() || (d < m.dirs.size() && m.dirs[d] < m.files[f].path)) {
      out += "d 0555 " + m.dirs[d++] + '\n';
      continue;
    }
    const TreeFile& file = m.files[f++];
    out += "f 0444 " + file.digest.hex() + ' ' + std::to_string(file.size) + ' ' + file.path + '\n';
  }
  return out;
}

Digest128 tree_digest(const TreeManifest& m) { return digest_of(encode_tree_manifest(m)); }

Result<TreeManifest> parse_tree_manifest(std::string_view text) {
  if (!text.starts_with(std::string(kHeader) + "\n")) return bad_line(1, "not a kcache tree manifest");
  text.remove_prefix(kHeader.size() + 1);
  TreeManifest m;
  std::set<std::string, std::less<>> dirs;
  std::string last;
  for (std::size_t n = 2; !text.empty(); ++n) {
    const auto nl = text.find('\n');
    if (nl == std::string_view::npos) return bad_line(n, "no newline at the end");
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl + 1);
    if (m.dirs.size() + m.files.size() >= kMaxTreeEntries) return bad_line(n, "too many entries");
    std::string_view path;
    if (line.starts_with("d 0555 ")) {
      path = line.substr(7);
    } else if (line.starts_with("f 0444 ") && line.size() > 7 + 33) {
      TreeFile f;
      auto digest = parse_digest_hex(line.substr(7, 32));
      if (!digest.ok() || line[39] != ' ') return bad_line(n, "bad file digest");
      f.digest = *digest;
      const std::string_view rest = line.substr(40);
      const auto space = rest.find(' ');
      if (space == std::string_view::npos) return bad_line(n, "no path");
      const auto [p, ec] = std::from_chars(rest.data(), rest.data() + space, f.size);
      if (ec != std::errc{} || p != rest.data() + space || std::to_string(f.size) != rest.substr(0, space))
        return bad_line(n, "bad file size");
      path = rest.substr(space + 1);
      f.path = path;
      m.files.push_back(std::move(f));
    } else {
      return bad_line(n, "unknown entry");
    }
    if (auto ok = check_tree_path(path); !ok.ok()) return bad_line(n, ok.error().message);
    if (!last.empty() && !(last < path)) return bad_line(n, "entries are not sorted or repeat");
    if (const auto parent = parent_of(path); !parent.empty() && !dirs.contains(parent))
      return bad_line(n, "its parent directory is not listed before it");
    last = path;
    if (line[0] == 'd') {
      dirs.emplace(path);
      m.dirs.emplace_back(path);
    }
  }
  return m;
}

}  // namespace kcache::daemon
