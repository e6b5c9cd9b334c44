// arch/host_object.cpp — device code embedded in host shared objects (host_object.hpp).
#include "arch/host_object.hpp"

#include <zstd.h>

#include <memory>

#include "arch/compat.hpp"
#include "arch/elf_inspect.hpp"
#include "arch/gpu_containers.hpp"

namespace kcache {
namespace {

constexpr std::uint16_t kEmX86_64 = 62;
constexpr std::uint16_t kEmAarch64 = 183;
constexpr std::uint64_t kFlagZstd = 0x8000;
constexpr std::uint64_t kFlagLz4 = 0x2000;
constexpr std::uint64_t kFlagArch = 0x100000;
constexpr std::uint64_t kFlagFamily = 0x200000;
constexpr std::size_t kMaxEntries = 65536;  // bounds the walk of a hostile section

Error corrupt(std::string message) { return make_error(Errc::corrupt, std::move(message)); }

std::string machine_text(std::uint16_t m) {
  switch (m) {
    case kEmX86_64: return "EM_X86_64 (62)";
    case kEmAarch64: return "EM_AARCH64 (183)";
    case kEmCuda: return "EM_CUDA (190)";
    case kEmAmdgpu: return "EM_AMDGPU (224)";
    default: return std::to_string(m);
  }
}

struct DCtxFree {
  void operator()(ZSTD_DCtx* c) const noexcept { ZSTD_freeDCtx(c); }
};

// The entry's payload decompressed, exactly `want` bytes, or why not.
Result<std::string> unzstd(std::span<const std::byte> stored, std::uint64_t want) {
  if (want == 0 || want > kMaxEntryBytes)
    return corrupt("its header declares " + std::to_string(want) + " uncompressed bytes");
  const unsigned long long content = ZSTD_getFrameContentSize(stored.data(), stored.size());
  if (content == ZSTD_CONTENTSIZE_ERROR) return corrupt("it is flagged zstd but is not a zstd frame");
  if (content != ZSTD_CONTENTSIZE_UNKNOWN && content != want)
    return corrupt("its zstd frame holds " + std::to_string(content) + " bytes, its header says " +
                   std::to_string(want));
  thread_local std::unique_ptr<ZSTD_DCtx, DCtxFree> dctx(ZSTD_createDCtx());
  std::string out(static_cast<std::size_t>(want), '\0');
  const std::size_t got =
      ZSTD_decompressDCtx(dctx.get(), out.data(), out.size(), stored.data(), stored.size());
  if (ZSTD_isError(got)) return corrupt(std::string("zstd: ") + ZSTD_getErrorName(got));
  if (got != want)
    return corrupt("it decompresses to " + std::to_string(got) + " bytes, its header says " +
                   std::to_string(want));
  return out;
}

// The target the entry header states: SM plus the suffix flag bits.
std::optional<Target> header_target(const FatbinEntry& e) {
  const std::string suffix = (e.flags & kFlagArch) != 0 ? "a" : (e.flags & kFlagFamily) != 0 ? "f" : "";
  auto t = parse_cuda_target("sm_" + std::to_string(e.sm) + suffix);
  if (!t.ok()) return std::nullopt;
  return Target(*t);
}

Result<HostCodeEntry> read_fatbin_entry(const FatbinEntry& e, std::size_t container) {
  HostCodeEntry out;
  out.section = ".nv_fatbin";
  out.container = container;
  out.kind = e.is_elf() ? "sass" : e.is_ptx() ? "ptx" : "kind " + std::to_string(e.kind);
  out.stored_size = e.stored_size;
  out.compression = (e.flags & kFlagZstd) != 0  ? EntryCompression::zstd
                    : (e.flags & kFlagLz4) != 0 ? EntryCompression::lz4
                                                : EntryCompression::none;
  out.size = out.compression == EntryCompression::none ? e.stored_size : e.uncompressed_size;
  out.target = header_target(e);
  if (!e.is_elf()) return out;
  if (out.compression == EntryCompression::lz4) {
    out.note = "LZ4-compressed: target read from the entry header";
    return out;
  }
  const auto stored = e.payload.first(static_cast<std::size_t>(e.stored_size));
  std::string plain;
  if (out.compression == EntryCompression::zstd) {
    auto decoded = unzstd(stored, e.uncompressed_size);
    if (!decoded.ok())
      return corrupt("sm_" + std::to_string(e.sm) + " entry of fatbin " + std::to_string(container) +
                     ": " + decoded.error().message);
    plain = std::move(decoded).value();
  }
  const auto cubin = plain.empty() ? stored : std::as_bytes(std::span(plain.data(), plain.size()));
  auto info = inspect_binary(cubin);
  if (!info.ok() || info->kind != BinaryKind::cubin || !info->target)
    return corrupt("sm_" + std::to_string(e.sm) + " entry of fatbin " + std::to_string(container) +
                   " is not a cubin" + (info.ok() ? "" : ": " + info.error().message));
  out.target = info->target;
  return out;
}

// Where the next container of a section starts at or after `at`: containers are packed with
// zero padding between them. section.size() when none is left.
std::size_t next_container(std::span<const std::byte> section, std::size_t at) {
  while (at < section.size() && section[at] == std::byte{0}) ++at;
  return at;
}

// Every fatbin of the section: each starts with the magic; zero padding lies between them.
Status read_nv_fatbin(std::span<const std::byte> section, HostObjectInfo& info) {
  for (std::size_t at = next_container(section, 0); at < section.size();
       at = next_container(section, at)) {
    const auto rest = section.subspan(at);
    if (!has_fatbin_magic(rest))
      return corrupt(".nv_fatbin: no fatbin magic at offset " + std::to_string(at));
    KC_TRY_ASSIGN(auto entries, parse_fatbin(rest));
    for (const FatbinEntry& e : entries) {
      if (info.entries.size() == kMaxEntries) return corrupt(".nv_fatbin has too many entries");
      KC_TRY_ASSIGN(HostCodeEntry entry, read_fatbin_entry(e, info.containers));
      info.entries.push_back(std::move(entry));
    }
    ++info.containers;
    at += 16 + load_le64(rest, 8);  // parse_fatbin checked the body lies inside
  }
  return {};
}

// The offload bundles of `.hip_fatbin` (hipcc aligns each to 4 KiB: zero padding between).
Status read_hip_fatbin(std::span<const std::byte> section, HostObjectInfo& info) {
  for (std::size_t at = next_container(section, 0); at < section.size();
       at = next_container(section, at)) {
    const auto rest = section.subspan(at);
    HostCodeEntry entry;
    entry.section = ".hip_fatbin";
    entry.container = info.containers++;
    if (has_compressed_bundle_magic(rest)) {
      entry.kind = "compressed-bundle";
      entry.compression = EntryCompression::zstd;
      entry.stored_size = rest.size();
      entry.note = "compressed offload bundle (CCOB): entries not listed";
      info.entries.push_back(std::move(entry));
      return {};
    }
    KC_TRY_ASSIGN(auto entries, parse_offload_bundle(rest));
    std::uint64_t end = 0;
    for (const BundleEntry& b : entries) {
      HostCodeEntry e = entry;
      const auto target = bundle_entry_target(b.id);
      e.kind = target ? "code-object" : "host";
      if (target) e.target = Target(*target);
      e.stored_size = e.size = b.data.size();
      if (!target) e.note = std::string(b.id);
      info.entries.push_back(std::move(e));
      end = std::max<std::uint64_t>(end, static_cast<std::uint64_t>(b.data.data() - rest.data()) +
                                             b.data.size());
    }
    if (end == 0) return {};
    at += static_cast<std::size_t>(end);
  }
  return {};
}

// Every device `declared` claims to load on: its capability, and for `f` and unsuffixed
// targets the newer minors of its major.
bool loads_wherever(const Target& entry, const Target& declared) {
  const CudaTarget* d = declared.cuda();
  if (d == nullptr || entry.cuda() == nullptr) return false;
  for (int minor = d->minor; minor <= 9; ++minor) {
    const Device device(CudaCapability{d->major, minor});
    if (check_compatible(declared, device).compatible &&
        !check_compatible(entry, device).compatible)
      return false;
  }
  return true;
}

}  // namespace

std::string_view entry_compression_name(EntryCompression c) noexcept {
  switch (c) {
    case EntryCompression::none: return "none";
    case EntryCompression::zstd: return "zstd";
    case EntryCompression::lz4: return "lz4";
  }
  return "unknown";
}

std::uint16_t host_elf_machine() noexcept {
#if defined(__aarch64__)
  return kEmAarch64;
#else
  return kEmX86_64;
#endif
}

bool is_host_object(std::span<const std::byte> bytes) noexcept {
  if (!has_elf_magic(bytes) || bytes.size() < 20) return false;
  const std::uint16_t machine = load_le16(bytes, 18);
  return machine != kEmCuda && machine != kEmAmdgpu;
}

std::string HostObjectInfo::describe() const {
  std::size_t sass = 0, ptx = 0, code_objects = 0;
  for (const HostCodeEntry& e : entries) {
    sass += e.kind == "sass";
    ptx += e.kind == "ptx";
    code_objects += e.kind == "code-object";
  }
  return "host shared object, ELF machine " + machine_text(elf.machine) + ", " +
         std::to_string(containers) + " device-code containers: " + std::to_string(sass) +
         " SASS, " + std::to_string(ptx) + " PTX, " + std::to_string(code_objects) +
         " AMD code objects";
}

Result<HostObjectInfo> inspect_host_object(std::span<const std::byte> bytes) {
  KC_TRY_ASSIGN(ElfFile elf, ElfFile::parse(bytes));
  HostObjectInfo info;
  info.elf = elf.header();
  if (info.elf.machine == kEmCuda || info.elf.machine == kEmAmdgpu)
    return corrupt("ELF machine " + machine_text(info.elf.machine) +
                   " is a GPU binary, not a host object");
  if (const ElfSection* s = elf.find(".nv_fatbin")) KC_TRY(read_nv_fatbin(s->data, info));
  if (const ElfSection* s = elf.find(".hip_fatbin")) KC_TRY(read_hip_fatbin(s->data, info));
  return info;
}

Status check_host_object_matches(std::span<const std::byte> bytes, const Target& declared,
                                 std::span<const Target> provided, bool allow_ptx) {
  const auto refuse = [&](const std::string& why) {
    return make_error(Errc::corrupt,
                      "host object does not match declared target " + declared.str() + ": " + why);
  };
  KC_TRY_ASSIGN(HostObjectInfo info, inspect_host_object(bytes));
  if (info.elf.machine != host_elf_machine())
    return refuse("the ELF machine is " + machine_text(info.elf.machine) + ", the host's is " +
                  machine_text(host_elf_machine()));
  if (info.containers == 0 || info.entries.empty())
    return refuse("it has no .nv_fatbin device code");
  bool covers_declared = false;
  for (const HostCodeEntry& e : info.entries) {
    const std::string what = e.kind + " " + (e.target ? e.target->str() : "(no target)");
    if (e.kind == "ptx") {
      if (!allow_ptx) return refuse("it carries PTX (" + what + ") but the provider is SASS-only");
      continue;
    }
    if (e.kind != "sass" || !e.target)
      return refuse("fatbin " + std::to_string(e.container) + " holds an entry of " + what);
    bool fits = false;
    for (const Target& p : provided) fits = fits || loads_wherever(*e.target, p);
    if (!fits)
      return refuse("its " + what + " entry does not load on every device the provider's "
                    "targets claim");
    covers_declared = covers_declared || loads_wherever(*e.target, declared);
  }
  if (!covers_declared) return refuse("no SASS entry loads on every device " + declared.str() + " claims");
  return {};
}

}  // namespace kcache
