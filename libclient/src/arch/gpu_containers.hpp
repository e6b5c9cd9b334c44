// arch/gpu_containers.hpp — the non-ELF wrappers GPU code arrives in: CUDA fatbins, clang
// offload bundles (HIP fat binaries) and PTX text.
//
// Contract:
//  * Sniffers look at magic bytes only and never fail. Parsers check every offset and size
//    against the buffer and fail with `Errc::corrupt` naming the broken field; returned views
//    point into the caller's buffer.
//  * kcache stores and serves single-target modules: a cubin or one AMD code object. Fatbins
//    and bundles are recognised so inspection can say what they are; `extract_code_object`
//    is what the daemon uses to take the one code object it needs out of an (uncompressed)
//    offload bundle. Compressed bundles (`CCOB`) are reported as unsupported.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "arch/amd_target.hpp"
#include "arch/cuda_target.hpp"
#include "kcache/result.hpp"

namespace kcache {

// --- CUDA fatbin (what `nvcc -fatbin` writes and the .nv_fatbin section of host objects holds).
struct FatbinEntry {
  std::uint16_t kind = 0;              // 1 = PTX, 2 = ELF (cubin); other values are reported as-is
  std::uint32_t sm = 0;                // e.g. 90 for sm_90 / compute_90
  std::span<const std::byte> payload;  // possibly compressed (padded to 8 bytes)
  std::uint64_t flags = 0;             // entry flags (0x8000 zstd, 0x2000 LZ4; 0x100000 `a`, 0x200000 `f`)
  std::uint64_t stored_size = 0;       // payload bytes without padding (compressed size)
  std::uint64_t uncompressed_size = 0; // of a compressed payload; 0 when not compressed
  bool is_ptx() const noexcept { return kind == 1; }
  bool is_elf() const noexcept { return kind == 2; }
};

bool has_fatbin_magic(std::span<const std::byte> bytes) noexcept;
Result<std::vector<FatbinEntry>> parse_fatbin(std::span<const std::byte> bytes);

// --- clang offload bundle ("__CLANG_OFFLOAD_BUNDLE__"; hipcc's fat binaries).
struct BundleEntry {
  std::string_view
      id;  // "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-", "host-x86_64-unknown-linux-gnu-"
  std::span<const std::byte> data;
};

bool has_offload_bundle_magic(std::span<const std::byte> bytes) noexcept;
bool has_compressed_bundle_magic(std::span<const std::byte> bytes) noexcept;  // "CCOB"
Result<std::vector<BundleEntry>> parse_offload_bundle(std::span<const std::byte> bytes);

// The AMD target ID a bundle entry id names, or nullopt for host and non-AMDGCN entries.
std::optional<AmdTarget> bundle_entry_target(std::string_view id);

// The code object for exactly `target`: the buffer itself when it is already a raw ELF, the
// matching entry when it is an offload bundle; `Errc::not_found` when the bundle has no entry
// for that target (the message lists the ones it has).
Result<std::span<const std::byte>> extract_code_object(std::span<const std::byte> bytes,
                                                       const AmdTarget& target);

// --- PTX text (`nvrtcGetPTX`, `nvcc -ptx`).
struct PtxInfo {
  std::optional<CudaTarget> target;  // from `.target sm_90a`; nullopt when unreadable
};

// PTX when the text carries `.version` and `.target` directives near its start.
std::optional<PtxInfo> sniff_ptx(std::span<const std::byte> bytes);

}  // namespace kcache
