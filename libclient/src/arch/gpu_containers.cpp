// arch/gpu_containers.cpp — fatbin, offload bundle and PTX recognition.
//
// Fatbin layout, measured on `nvcc -fatbin -gencode arch=compute_90a,code=[sm_90a,compute_90a]`
// (CUDA 13.0): a 16-byte header {u32 magic 0xBA55ED50, u16 version 1, u16 header size 16,
// u64 size of the entries}, then entries {u16 kind (1 PTX, 2 ELF), u16, u32 entry-header size
// (0x40 ELF, 0x50 PTX), u64 payload size, ..., u32 SM at +0x1c, ...}, each followed by its
// payload. The PTX entry's payload was zstd-compressed (28 b5 2f fd), the cubin was not.
// With `-Xfatbin=-compress-all` every entry is zstd-compressed: the base header then holds the
// compressed size (u32 at +0x10, the payload being padded to 8 bytes), the flags (u64 at +0x28,
// 0x8000 = compressed; 0x100000 / 0x200000 = an `a` / `f` target) and the uncompressed size
// (u64 at +0x38). Measured on CUDA 13.0 host objects (docs/targets.md "Host objects").
//
// Offload bundle layout (clang's OffloadBundler): 24-byte magic "__CLANG_OFFLOAD_BUNDLE__",
// u64 entry count, then per entry {u64 offset, u64 size, u64 id length, id bytes}.
#include "arch/gpu_containers.hpp"

#include <cstring>

#include "arch/elf_reader.hpp"

namespace kcache {
namespace {

constexpr std::uint32_t kFatbinMagic = 0xBA55ED50;
constexpr std::string_view kBundleMagic = "__CLANG_OFFLOAD_BUNDLE__";
constexpr std::size_t kMaxEntries = 4096;  // bounds the walk of a hostile container
constexpr std::size_t kPtxScan = 64 * 1024;

Error corrupt(std::string message) {
  return make_error(Errc::corrupt, std::move(message));
}

bool starts_with(std::span<const std::byte> b, std::string_view magic) {
  return b.size() >= magic.size() && std::memcmp(b.data(), magic.data(), magic.size()) == 0;
}

}  // namespace

bool has_fatbin_magic(std::span<const std::byte> b) noexcept {
  return b.size() >= 4 && load_le32(b, 0) == kFatbinMagic;
}

Result<std::vector<FatbinEntry>> parse_fatbin(std::span<const std::byte> b) {
  if (!has_fatbin_magic(b)) return corrupt("not a CUDA fatbin (no 0xBA55ED50 magic)");
  if (b.size() < 16) return corrupt("truncated fatbin header");
  const std::uint64_t header = load_le16(b, 6);
  const std::uint64_t body = load_le64(b, 8);
  if (header < 16 || !in_bounds(header, body, b.size()))
    return corrupt("fatbin body (" + std::to_string(body) + " bytes after a " +
                   std::to_string(header) + "-byte header) runs past the end of the file");
  std::vector<FatbinEntry> entries;
  std::uint64_t at = header;
  const std::uint64_t end = header + body;
  while (at < end) {
    if (entries.size() == kMaxEntries) return corrupt("fatbin has too many entries");
    if (!in_bounds(at, 0x20, end)) return corrupt("truncated fatbin entry header");
    const std::uint64_t entry_header = load_le32(b, at + 4);
    const std::uint64_t size = load_le64(b, at + 8);
    if (entry_header < 0x20 || !in_bounds(at, entry_header, end) ||
        !in_bounds(at + entry_header, size, end))
      return corrupt("fatbin entry at offset " + std::to_string(at) + " runs past the fatbin");
    FatbinEntry entry{load_le16(b, at), load_le32(b, at + 0x1c),
                      b.subspan(at + entry_header, static_cast<std::size_t>(size))};
    // The compressed size, flags and uncompressed size sit in the 0x40-byte base header.
    if (entry_header >= 0x40) {
      entry.flags = load_le64(b, at + 0x28);
      entry.uncompressed_size = load_le64(b, at + 0x38);
      const std::uint64_t stored = load_le32(b, at + 0x10);
      entry.stored_size = stored != 0 && stored <= size ? stored : size;
    } else {
      entry.stored_size = size;
    }
    entries.push_back(entry);
    at += entry_header + size;
  }
  return entries;
}

bool has_offload_bundle_magic(std::span<const std::byte> b) noexcept {
  return starts_with(b, kBundleMagic);
}

bool has_compressed_bundle_magic(std::span<const std::byte> b) noexcept {
  return starts_with(b, "CCOB");
}

Result<std::vector<BundleEntry>> parse_offload_bundle(std::span<const std::byte> b) {
  if (!has_offload_bundle_magic(b)) return corrupt("not a clang offload bundle");
  if (!in_bounds(kBundleMagic.size(), 8, b.size())) return corrupt("truncated offload bundle");
  const std::uint64_t count = load_le64(b, kBundleMagic.size());
  if (count > kMaxEntries)
    return corrupt("offload bundle claims " + std::to_string(count) + " entries");
  std::vector<BundleEntry> entries;
  std::uint64_t at = kBundleMagic.size() + 8;
  for (std::uint64_t i = 0; i < count; ++i) {
    if (!in_bounds(at, 24, b.size())) return corrupt("truncated offload bundle entry table");
    const std::uint64_t offset = load_le64(b, at);
    const std::uint64_t size = load_le64(b, at + 8);
    const std::uint64_t id_len = load_le64(b, at + 16);
    if (!in_bounds(at + 24, id_len, b.size()))
      return corrupt("offload bundle entry id runs past the end");
    if (!in_bounds(offset, size, b.size()))
      return corrupt("offload bundle entry " + std::to_string(i) + " runs past the end");
    entries.push_back({std::string_view(reinterpret_cast<const char*>(b.data()) + at + 24, id_len),
                       b.subspan(offset, size)});
    at += 24 + id_len;
  }
  return entries;
}

std::optional<AmdTarget> bundle_entry_target(std::string_view id) {
  // "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-" (v4+: empty environment, two dashes) or the
  // older "hip-amdgcn-amd-amdhsa-gfx906".
  constexpr std::string_view kTriple = "amdgcn-amd-amdhsa-";
  const auto pos = id.find(kTriple);
  if (pos == std::string_view::npos) return std::nullopt;
  std::string_view rest = id.substr(pos + kTriple.size());
  while (rest.starts_with('-')) rest.remove_prefix(1);
  auto t = parse_amd_target(rest);
  if (!t.ok()) return std::nullopt;
  return std::move(t).value();
}

Result<std::span<const std::byte>> extract_code_object(std::span<const std::byte> b,
                                                       const AmdTarget& target) {
  if (has_elf_magic(b)) return b;
  if (has_compressed_bundle_magic(b))
    return make_error(Errc::invalid_argument,
                      "compressed offload bundle (CCOB) is not supported; unbundle it first");
  KC_TRY_ASSIGN(auto entries, parse_offload_bundle(b));
  std::string have;
  for (const BundleEntry& e : entries) {
    const auto t = bundle_entry_target(e.id);
    if (!t) continue;
    if (*t == target) return e.data;
    have += (have.empty() ? "" : ", ") + t->str();
  }
  return make_error(Errc::not_found, "offload bundle has no code object for " + target.str() +
                                         " (it has: " + (have.empty() ? "none" : have) + ")");
}

std::optional<PtxInfo> sniff_ptx(std::span<const std::byte> b) {
  const std::string_view text(reinterpret_cast<const char*>(b.data()),
                              b.size() < kPtxScan ? b.size() : kPtxScan);
  const auto directive = [&](std::string_view name) -> std::size_t {
    // A directive starts a line (after optional blanks).
    for (std::size_t pos = text.find(name); pos != text.npos; pos = text.find(name, pos + 1)) {
      std::size_t i = pos;
      while (i > 0 && (text[i - 1] == ' ' || text[i - 1] == '\t')) --i;
      if (i == 0 || text[i - 1] == '\n') return pos;
    }
    return text.npos;
  };
  const std::size_t version = directive(".version");
  const std::size_t target = directive(".target");
  if (version == text.npos || target == text.npos) return std::nullopt;
  PtxInfo info;
  std::size_t i = target + 7;
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
  std::size_t j = i;
  while (j < text.size() && text[j] != ',' && text[j] != ' ' && text[j] != '\n' && text[j] != '\r')
    ++j;
  if (auto t = parse_cuda_target(text.substr(i, j - i)); t.ok()) info.target = *t;
  return info;
}

}  // namespace kcache
