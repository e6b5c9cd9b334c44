// arch/elf_reader.cpp — ELF64 parsing with every access checked against the buffer.
#include "arch/elf_reader.hpp"

#include <cstring>
#include <string>

namespace kcache {
namespace {

constexpr std::size_t kEhdrSize = 64;
constexpr std::size_t kShdrSize = 64;
constexpr std::size_t kPhdrSize = 56;
constexpr std::uint16_t kShnXindex = 0xffff;

Error corrupt(std::string message) {
  return make_error(Errc::corrupt, std::move(message));
}

template <class T>
T load_le(std::span<const std::byte> b, std::size_t offset) noexcept {
  T v{};
  std::memcpy(&v, b.data() + offset, sizeof v);  // the project only builds for little-endian
  return v;
}

// The NUL-terminated string at `offset` of `table`, or an error.
Result<std::string_view> string_at(std::span<const std::byte> table, std::uint64_t offset) {
  if (offset >= table.size())
    return corrupt("section name offset " + std::to_string(offset) +
                   " is outside the section-name table");
  const auto* begin = reinterpret_cast<const char*>(table.data()) + offset;
  const void* nul = std::memchr(begin, '\0', table.size() - offset);
  if (nul == nullptr)
    return corrupt("section name at offset " + std::to_string(offset) +
                   " is not NUL-terminated inside its table");
  return std::string_view(begin, static_cast<const char*>(nul) - begin);
}

// The program header table and every segment's file range must lie inside the buffer: a
// file cut short after its sections (NVRTC puts the program headers last) is still truncated.
Status check_segments(std::span<const std::byte> b) {
  const std::uint64_t phoff = load_le<std::uint64_t>(b, 32);
  const std::uint16_t phentsize = load_le<std::uint16_t>(b, 54);
  const std::uint16_t phnum = load_le<std::uint16_t>(b, 56);
  if (phnum == 0) return {};
  if (phentsize != kPhdrSize)
    return corrupt("program header size " + std::to_string(phentsize) + " is not 56");
  if (!in_bounds(phoff, std::uint64_t{phnum} * kPhdrSize, b.size()))
    return corrupt("program header table (" + std::to_string(phnum) + " entries at offset " +
                   std::to_string(phoff) + ") runs past the end of the " +
                   std::to_string(b.size()) + "-byte file");
  for (std::uint16_t i = 0; i < phnum; ++i) {
    const std::size_t at = static_cast<std::size_t>(phoff) + std::size_t{i} * kPhdrSize;
    const std::uint64_t offset = load_le<std::uint64_t>(b, at + 8);
    const std::uint64_t filesz = load_le<std::uint64_t>(b, at + 32);
    if (!in_bounds(offset, filesz, b.size()))
      return corrupt("segment " + std::to_string(i) + " (offset " + std::to_string(offset) +
                     ", size " + std::to_string(filesz) + ") runs past the end of the " +
                     std::to_string(b.size()) + "-byte file");
  }
  return {};
}

}  // namespace

std::uint16_t load_le16(std::span<const std::byte> b, std::size_t o) noexcept {
  return load_le<std::uint16_t>(b, o);
}
std::uint32_t load_le32(std::span<const std::byte> b, std::size_t o) noexcept {
  return load_le<std::uint32_t>(b, o);
}
std::uint64_t load_le64(std::span<const std::byte> b, std::size_t o) noexcept {
  return load_le<std::uint64_t>(b, o);
}

bool has_elf_magic(std::span<const std::byte> bytes) noexcept {
  return bytes.size() >= 4 && std::memcmp(bytes.data(),
                                          "\x7f"
                                          "ELF",
                                          4) == 0;
}

Result<ElfFile> ElfFile::parse(std::span<const std::byte> b) {
  if (!has_elf_magic(b)) return corrupt("not an ELF file (no \\x7fELF magic)");
  if (b.size() < kEhdrSize)
    return corrupt("truncated ELF header: " + std::to_string(b.size()) + " bytes, need 64");
  const auto ei_class = static_cast<unsigned>(b[4]);
  if (ei_class != 2)
    return corrupt("ELF class " + std::to_string(ei_class) + (ei_class == 1 ? " (ELF32)" : "") +
                   " is not ELF64; GPU binaries are ELF64");
  if (static_cast<unsigned>(b[5]) != 1) return corrupt("big-endian ELF is not a GPU binary");

  ElfFile f;
  f.header_.os_abi = static_cast<std::uint8_t>(b[7]);
  f.header_.abi_version = static_cast<std::uint8_t>(b[8]);
  f.header_.type = load_le16(b, 16);
  f.header_.machine = load_le16(b, 18);
  f.header_.flags = load_le32(b, 48);
  KC_TRY(check_segments(b));
  const std::uint64_t shoff = load_le64(b, 40);
  const std::uint16_t shentsize = load_le16(b, 58);
  const std::uint16_t shnum = load_le16(b, 60);
  const std::uint16_t shstrndx = load_le16(b, 62);
  if (shnum == 0) return f;  // legal: no section table (nothing else to check)
  if (shentsize != kShdrSize)
    return corrupt("section header size " + std::to_string(shentsize) + " is not 64");
  if (!in_bounds(shoff, std::uint64_t{shnum} * kShdrSize, b.size()))
    return corrupt("section header table (" + std::to_string(shnum) + " entries at offset " +
                   std::to_string(shoff) + ") runs past the end of the " +
                   std::to_string(b.size()) + "-byte file");
  if (shstrndx == kShnXindex) return corrupt("extended section numbering is not supported");
  if (shstrndx >= shnum)
    return corrupt("section-name table index " + std::to_string(shstrndx) +
                   " >= " + std::to_string(shnum) + " sections");

  struct Raw {
    std::uint32_t name, type;
    std::uint64_t flags, offset, size;
  };
  std::vector<Raw> raw(shnum);
  for (std::uint16_t i = 0; i < shnum; ++i) {
    const std::size_t at = static_cast<std::size_t>(shoff) + std::size_t{i} * kShdrSize;
    raw[i] = {load_le32(b, at), load_le32(b, at + 4), load_le64(b, at + 8), load_le64(b, at + 24),
              load_le64(b, at + 32)};
    if (raw[i].type != kShtNobits && !in_bounds(raw[i].offset, raw[i].size, b.size()))
      return corrupt("section " + std::to_string(i) + " (offset " + std::to_string(raw[i].offset) +
                     ", size " + std::to_string(raw[i].size) + ") runs past the end of the " +
                     std::to_string(b.size()) + "-byte file");
  }
  const auto section_bytes = [&](const Raw& r) {
    if (r.type == kShtNobits) return std::span<const std::byte>();
    return b.subspan(static_cast<std::size_t>(r.offset), static_cast<std::size_t>(r.size));
  };
  const std::span<const std::byte> names = section_bytes(raw[shstrndx]);
  f.sections_.reserve(shnum);
  for (const Raw& r : raw) {
    KC_TRY_ASSIGN(std::string_view name, string_at(names, r.name));
    f.sections_.push_back({name, r.type, r.flags, section_bytes(r)});
  }
  return f;
}

const ElfSection* ElfFile::find(std::string_view name) const noexcept {
  for (const ElfSection& s : sections_)
    if (s.name == name) return &s;
  return nullptr;
}

Result<std::vector<ElfNote>> parse_notes(std::span<const std::byte> s) {
  std::vector<ElfNote> notes;
  std::uint64_t at = 0;
  const auto align4 = [](std::uint64_t n) { return (n + 3) & ~std::uint64_t{3}; };
  while (at < s.size()) {
    if (!in_bounds(at, 12, s.size())) return corrupt("truncated ELF note header");
    const std::uint64_t namesz = load_le32(s, at);
    const std::uint64_t descsz = load_le32(s, at + 4);
    const std::uint32_t type = load_le32(s, at + 8);
    const std::uint64_t name_at = at + 12;
    const std::uint64_t desc_at = name_at + align4(namesz);
    if (!in_bounds(name_at, align4(namesz), s.size()) || !in_bounds(desc_at, descsz, s.size()))
      return corrupt("ELF note runs past the end of its section");
    std::string_view owner(reinterpret_cast<const char*>(s.data() + name_at), namesz);
    if (!owner.empty() && owner.back() == '\0') owner.remove_suffix(1);
    notes.push_back({owner, type, s.subspan(desc_at, descsz)});
    at = desc_at + align4(descsz);
  }
  return notes;
}

}  // namespace kcache
