// arch/elf_reader.hpp — a bounds-checked reader of little-endian ELF64 headers, section tables
// and notes, over bytes the caller owns.
//
// Contract:
//  * `ElfFile::parse` never reads outside `bytes`: the header, the program and section header
//    tables, every segment's and section's file range (except SHT_NOBITS) and every name in
//    the section-name string table are checked before use. It fails with `Errc::corrupt` and a
//    message saying what is wrong: not ELF (no magic), truncated header, not ELF64 (wrong class),
//    big-endian, a table or a section running past the end, a name outside its string table.
//  * Returned views (`ElfSection::name`, `::data`, notes) point into `bytes` and live as long
//    as it does.
//  * `parse_notes` splits an SHT_NOTE section into notes, with the same bounds discipline.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "kcache/result.hpp"

namespace kcache {

inline constexpr std::uint16_t kEmCuda = 190;    // EM_CUDA
inline constexpr std::uint16_t kEmAmdgpu = 224;  // EM_AMDGPU
inline constexpr std::uint32_t kShtNote = 7;
inline constexpr std::uint32_t kShtNobits = 8;
inline constexpr std::uint64_t kShfExecinstr = 0x4;

struct ElfHeader {
  std::uint8_t os_abi = 0;       // e_ident[EI_OSABI]
  std::uint8_t abi_version = 0;  // e_ident[EI_ABIVERSION]
  std::uint16_t type = 0;        // e_type: 1 REL, 2 EXEC, 3 DYN
  std::uint16_t machine = 0;     // e_machine
  std::uint32_t flags = 0;       // e_flags
};

struct ElfSection {
  std::string_view name;
  std::uint32_t type = 0;
  std::uint64_t flags = 0;
  std::span<const std::byte> data;  // empty for SHT_NOBITS
};

struct ElfNote {
  std::string_view owner;  // without its NUL
  std::uint32_t type = 0;
  std::span<const std::byte> desc;
};

class ElfFile {
 public:
  static Result<ElfFile> parse(std::span<const std::byte> bytes);

  const ElfHeader& header() const noexcept { return header_; }
  const std::vector<ElfSection>& sections() const noexcept { return sections_; }
  // The first section with that name, or nullptr.
  const ElfSection* find(std::string_view name) const noexcept;

 private:
  ElfHeader header_;
  std::vector<ElfSection> sections_;
};

// True when `bytes` start with the ELF magic (cheap sniffing before a full parse).
bool has_elf_magic(std::span<const std::byte> bytes) noexcept;

Result<std::vector<ElfNote>> parse_notes(std::span<const std::byte> section);

// Little-endian loads from a span; the caller has checked `offset + sizeof(T) <= size`.
std::uint16_t load_le16(std::span<const std::byte> b, std::size_t offset) noexcept;
std::uint32_t load_le32(std::span<const std::byte> b, std::size_t offset) noexcept;
std::uint64_t load_le64(std::span<const std::byte> b, std::size_t offset) noexcept;

// Whether [offset, offset + length) lies within a buffer of `size` bytes, without overflow.
inline bool in_bounds(std::uint64_t offset, std::uint64_t length, std::uint64_t size) noexcept {
  return offset <= size && length <= size - offset;
}

}  // namespace kcache
