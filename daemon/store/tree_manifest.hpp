// store/tree_manifest.hpp — the canonical description of a directory tree in the store, and
// the tree digest computed over it (docs/layout.md "Trees").
//
// Contract (pure, any thread):
//  * A tree is its files (relative path, XXH3-128 digest, size) and its directories (relative
//    paths; every parent of a file is one). Files are served 0444 and directories 0555 (the
//    store never keeps other modes), so modes are part of the text but never vary.
//  * `encode_tree_manifest` writes the canonical text: the line "kcache-tree 1", then one line
//    per directory "d 0555 <path>" and per file "f 0444 <digest hex> <size> <path>", all sorted
//    by path bytewise. `tree_digest` is the XXH3-128 of that text: two trees have one digest
//    exactly when they hold the same paths, modes and bytes.
//  * `parse_tree_manifest` reads that text back and refuses anything else (Errc::corrupt naming
//    the line): unknown lines, paths that fail check_tree_path, a file whose parent is not
//    listed, duplicates, unsorted lines. So what `verify` compares against is always canonical.
//  * `check_tree_path`: relative, components non-empty and not `.`/`..`, no NUL, newline or
//    backslash, at most kMaxTreePathBytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/digest.hpp"
#include "kcache/result.hpp"

namespace kcache::daemon {

inline constexpr std::size_t kMaxTreePathBytes = 4096;
inline constexpr std::size_t kMaxTreeEntries = 100000;

struct TreeFile {
  std::string path;
  Digest128 digest;
  std::uint64_t size = 0;
  friend bool operator==(const TreeFile&, const TreeFile&) = default;
};

struct TreeManifest {
  std::vector<std::string> dirs;  // sorted
  std::vector<TreeFile> files;    // sorted by path
  std::uint64_t total_size() const noexcept;
  friend bool operator==(const TreeManifest&, const TreeManifest&) = default;
};

Status check_tree_path(std::string_view path);
// Sorts `m` and adds every missing parent directory of its files.
void normalize_tree_manifest(TreeManifest& m);
std::string encode_tree_manifest(const TreeManifest& m);
Digest128 tree_digest(const TreeManifest& m);
Result<TreeManifest> parse_tree_manifest(std::string_view text);

}  // namespace kcache::daemon
