// arch/elf_inspect.hpp — what a GPU binary was built for, read from its own bytes.
//
// Contract:
//  * `inspect_binary` recognises a cubin (ELF64, e_machine 190 EM_CUDA), an AMD code object
//    (ELF64, e_machine 224 EM_AMDGPU, code object v4+), PTX text, a CUDA fatbin and a clang
//    offload bundle, and reports the target, whether native code (SASS/ISA) and PTX are
//    present, and the toolkit notes. It never reads outside `bytes`. Failures are
//    `Errc::corrupt` with a reason: not ELF, truncated, not ELF64, wrong machine, unknown
//    AMD mach, code object v2/v3, malformed section table.
//  * For a cubin the SM number comes from e_flags; the `a`/`f` suffix is NOT in e_flags for
//    CUDA 13 output (measured, see elf_inspect.cpp) and is taken from the ptxas note, else the
//    .nv.compat arch-specific attribute, else e_flags; `suffix_evidence` says which.
//  * Whether a binary may be published for a target is arch/binary_check.hpp's.
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

enum class BinaryKind : std::uint8_t { cubin, amd_code_object, ptx, cuda_fatbin, offload_bundle };

// "cubin", "amd-code-object", "ptx", "cuda-fatbin", "offload-bundle".
std::string_view binary_kind_name(BinaryKind kind) noexcept;

// Where a cubin's `a`/`f` suffix was read from, strongest first.
enum class SuffixEvidence : std::uint8_t {
  toolkit_note,      // ptxas options in .note.nv.tkinfo ("-arch sm_100f"): exact suffix
  compat_attribute,  // .nv.compat attribute 0x09: arch-specific or not (`f` looks unsuffixed)
  e_flags,           // EF_CUDA_ACCELERATORS bits: arch-specific or not
  none,              // not a cubin, or nothing recorded
};

struct BinaryInfo {
  BinaryKind kind = BinaryKind::cubin;
  ElfHeader elf;                 // zeroes for non-ELF kinds
  std::optional<Target> target;  // what it was built for (PTX: its .target); none for containers
  SuffixEvidence suffix_evidence = SuffixEvidence::none;
  bool has_native = false;            // SASS / AMDGPU ISA present
  bool has_ptx = false;               // PTX present (PTX text, fatbin PTX entry, debug PTX section)
  bool relocatable = false;           // ET_REL: needs a device link before loading
  int amd_generic_version = 0;        // e_flags >> 24 of a generic code object (v6+)
  std::string toolkit;                // "Cuda compilation tools, release 13.0, V13.0.88"
  std::string tool_options;           // "-arch sm_90a"
  std::vector<std::string> contents;  // container entries: "sm_90 elf", "compute_90 ptx", ids

  std::string describe() const;  // one line for logs and `kcachectl`
};

Result<BinaryInfo> inspect_binary(std::span<const std::byte> bytes);

}  // namespace kcache
