// elf_builder.hpp — hand-crafted ELF images for tests: well-formed ones with chosen header
// fields and sections, and the pieces NVIDIA puts in cubins (.nv.compat, .note.nv.tkinfo).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kcache::testing {

using Bytes = std::vector<std::byte>;

struct CraftSection {
  std::string name;
  std::uint32_t type = 1;   // SHT_PROGBITS
  std::uint64_t flags = 0;  // SHF_EXECINSTR = 0x4 marks native code
  Bytes data;
};

struct CraftElf {
  std::uint8_t elf_class = 2;  // ELFCLASS64
  std::uint8_t data = 1;       // little-endian
  std::uint8_t os_abi = 0;
  std::uint8_t abi_version = 0;
  std::uint16_t type = 2;  // ET_EXEC
  std::uint16_t machine = 0;
  std::uint32_t flags = 0;
  std::vector<CraftSection> sections;
  int segments = 0;  // PT_LOAD program headers (each covering the ELF header), placed last
};

// Layout: 64-byte header, section contents, .shstrtab, the section header table (null section
// first, .shstrtab last), then the program headers — last, as NVRTC places them.
Bytes build_elf(const CraftElf& spec);

Bytes bytes_of(std::string_view text);

// A .nv.compat body as CUDA 13 writes it, with attribute 0x09 (arch-specific) = `arch`.
Bytes nv_compat(bool arch);
// A .note.nv.tkinfo section body whose ptxas options string is `options` ("-arch sm_90a ").
Bytes nv_tkinfo(std::string_view options);

// A cubin-shaped image: CUDA 13 header (OSABI 0x41, ABI 8, e_flags 0x0600SS02/04), a .text
// section with SHF_EXECINSTR and, optionally, .nv.compat and the ptxas note.
Bytes craft_cubin(int sm, bool compat_arch, std::string_view tk_options);

// An AMD code-object-shaped image (OSABI 64, ET_DYN, a .text section) with these e_flags.
Bytes craft_amd(std::uint32_t e_flags, std::uint8_t abi_version = 2);

// A CUDA fatbin in the measured layout of `nvcc -fatbin` (see gpu_containers.cpp): one entry
// per {kind (1 PTX, 2 ELF), payload}, each recording `sm`.
Bytes craft_fatbin(const std::vector<std::pair<std::uint16_t, Bytes>>& entries, std::uint32_t sm);

// A clang offload bundle (`__CLANG_OFFLOAD_BUNDLE__`) of {id, data} entries.
Bytes craft_bundle(const std::vector<std::pair<std::string, Bytes>>& entries);

}  // namespace kcache::testing
