// arch/host_object.hpp — host shared objects that embed device code: a FlashInfer module is an
// x86-64 `.so` whose `.nv_fatbin` section holds the kernels (docs/targets.md "Host objects").
//
// Contract:
//  * `is_host_object` is a cheap sniff: an ELF whose machine is neither EM_CUDA nor EM_AMDGPU.
//  * `inspect_host_object` parses the ELF (bounds-checked, elf_reader.hpp) and lists every
//    device-code entry: each fatbin of the `.nv_fatbin` section (several are concatenated,
//    with zero padding between them) and each entry of each, and each offload bundle of a
//    `.hip_fatbin` section. A zstd-compressed cubin entry is decompressed — refused when its
//    header or its frame promises more than kMaxEntryBytes, or when it decodes to another size
//    than its header says — and inspected (elf_inspect.hpp), so its target carries the suffix
//    the cubin records; an entry that cannot be opened (LZ4, an unknown kind) keeps the target
//    its header gives (SM and the `a`/`f` flag bits) and says why in `note`. Failures are
//    Errc::corrupt naming the broken part; nothing outside `bytes` is read.
//  * `check_host_object_matches(bytes, declared, provided)` is the publishing gate for a host
//    module served for the CUDA target `declared` by a provider that declares `provided`
//    (declared among them): the ELF machine is the host's; there is a `.nv_fatbin`; no entry
//    is PTX unless `allow_ptx`; every SASS entry loads on every device some provided target
//    claims (so an sm_80 cubin in an sm90a provider, or an sm_100a one in an sm100f provider,
//    is refused); and some SASS entry loads on every device `declared` claims.
//  * Pure: any thread (one zstd context per thread).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "arch/elf_reader.hpp"
#include "arch/target.hpp"
#include "kcache/result.hpp"

namespace kcache {

inline constexpr std::uint64_t kMaxEntryBytes = 1ull << 30;  // one decompressed entry

enum class EntryCompression : std::uint8_t { none, zstd, lz4 };
std::string_view entry_compression_name(EntryCompression c) noexcept;  // "none"/"zstd"/"lz4"

struct HostCodeEntry {
  std::string section;            // ".nv_fatbin" or ".hip_fatbin"
  std::size_t container = 0;      // which fatbin or bundle of the section, from 0
  std::string kind;               // "sass", "ptx", "code-object", "host", "kind N"
  std::optional<Target> target;   // SASS/code object: what it was built for; PTX: its compute level
  EntryCompression compression = EntryCompression::none;
  std::uint64_t stored_size = 0;  // bytes in the section
  std::uint64_t size = 0;         // decompressed
  std::string note;               // when the entry could not be opened: why
};

struct HostObjectInfo {
  ElfHeader elf;
  std::vector<HostCodeEntry> entries;
  std::size_t containers = 0;  // fatbins and bundles found
  std::string describe() const;  // one line: machine, container and entry counts
};

// The ELF machine of the host kcache was built for (EM_X86_64 on x86-64, EM_AARCH64 on arm64).
std::uint16_t host_elf_machine() noexcept;

bool is_host_object(std::span<const std::byte> bytes) noexcept;

Result<HostObjectInfo> inspect_host_object(std::span<const std::byte> bytes);

Status check_host_object_matches(std::span<const std::byte> bytes, const Target& declared,
                                 std::span<const Target> provided, bool allow_ptx);

}  // namespace kcache
