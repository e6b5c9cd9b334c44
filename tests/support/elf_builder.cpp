// elf_builder.cpp — the hand-crafted ELF images of elf_builder.hpp.
#include "elf_builder.hpp"

#include <cstring>

namespace kcache::testing {
namespace {

template <class T>
void put(Bytes* out, std::size_t at, T value) {
  if (out->size() < at + sizeof value) out->resize(at + sizeof value);
  std::memcpy(out->data() + at, &value, sizeof value);
}

template <class T>
void append(Bytes* out, T value) {
  put(out, out->size(), value);
}

void append_bytes(Bytes* out, const Bytes& b) {
  out->insert(out->end(), b.begin(), b.end());
}

void pad4(Bytes* out) {
  while (out->size() % 4 != 0) out->push_back(std::byte{0});
}

}  // namespace

Bytes bytes_of(std::string_view text) {
  const auto* p = reinterpret_cast<const std::byte*>(text.data());
  return Bytes(p, p + text.size());
}

Bytes build_elf(const CraftElf& spec) {
  Bytes out(64, std::byte{0});
  const unsigned char ident[] = {
      0x7f, 'E', 'L', 'F', spec.elf_class, spec.data, 1, spec.os_abi, spec.abi_version};
  std::memcpy(out.data(), ident, sizeof ident);
  put<std::uint16_t>(&out, 16, spec.type);
  put<std::uint16_t>(&out, 18, spec.machine);
  put<std::uint32_t>(&out, 20, 1);
  put<std::uint32_t>(&out, 48, spec.flags);
  put<std::uint16_t>(&out, 52, 64);

  // Section contents, then the name table.
  std::vector<std::uint64_t> offsets;
  std::string names(1, '\0');
  std::vector<std::uint32_t> name_at;
  for (const CraftSection& s : spec.sections) {
    offsets.push_back(out.size());
    append_bytes(&out, s.data);
    name_at.push_back(static_cast<std::uint32_t>(names.size()));
    names += s.name + '\0';
  }
  const auto shstrtab_name = static_cast<std::uint32_t>(names.size());
  names += std::string(".shstrtab") + '\0';
  const std::uint64_t names_at = out.size();
  append_bytes(&out, bytes_of(names));
  while (out.size() % 8 != 0) out.push_back(std::byte{0});

  const std::uint64_t shoff = out.size();
  const auto shnum = static_cast<std::uint16_t>(spec.sections.size() + 2);
  const auto header = [&](std::uint32_t name, std::uint32_t type, std::uint64_t flags,
                          std::uint64_t off, std::uint64_t size) {
    const std::size_t at = out.size();
    out.resize(at + 64, std::byte{0});
    put(&out, at, name);
    put(&out, at + 4, type);
    put(&out, at + 8, flags);
    put(&out, at + 24, off);
    put(&out, at + 32, size);
  };
  header(0, 0, 0, 0, 0);
  for (std::size_t i = 0; i < spec.sections.size(); ++i) {
    const CraftSection& s = spec.sections[i];
    header(name_at[i], s.type, s.flags, offsets[i], s.data.size());
  }
  header(shstrtab_name, 3, 0, names_at, names.size());
  put<std::uint64_t>(&out, 40, shoff);
  put<std::uint16_t>(&out, 58, 64);
  put<std::uint16_t>(&out, 60, shnum);
  put<std::uint16_t>(&out, 62, static_cast<std::uint16_t>(shnum - 1));
  if (spec.segments > 0) {
    put<std::uint64_t>(&out, 32, out.size());
    put<std::uint16_t>(&out, 54, 56);
    put<std::uint16_t>(&out, 56, static_cast<std::uint16_t>(spec.segments));
    for (int i = 0; i < spec.segments; ++i) {
      const std::size_t at = out.size();
      out.resize(at + 56, std::byte{0});
      put<std::uint32_t>(&out, at, 1);        // PT_LOAD
      put<std::uint64_t>(&out, at + 8, 0);    // p_offset
      put<std::uint64_t>(&out, at + 32, 64);  // p_filesz
    }
  }
  return out;
}

Bytes nv_compat(bool arch) {
  // Measured sm_90a .nv.compat: 02090100 02020100 02050500 03070101 02030000 02060100 040b0800
  // followed by 8 value bytes.
  const unsigned char body[] = {2, 9,    static_cast<unsigned char>(arch ? 1 : 0),
                                0, 2,    2,
                                1, 0,    2,
                                5, 5,    0,
                                3, 7,    1,
                                1, 2,    3,
                                0, 0,    2,
                                6, 1,    0,
                                4, 0x0b, 8,
                                0, 0,    0,
                                0, 0,    0,
                                0, 0,    0};
  const auto* p = reinterpret_cast<const std::byte*>(body);
  return Bytes(p, p + sizeof body);
}

Bytes nv_tkinfo(std::string_view options) {
  // Note {namesz, descsz, type 2000, "NVIDIA Corp\0", desc}; desc = u32 version 2, five u32
  // offsets into the string pool at +24 (object, tool, version, branch, options).
  std::string pool(1, '\0');  // offset 0: the empty object name
  const auto add = [&pool](std::string_view text) {
    const auto at = static_cast<std::uint32_t>(pool.size());
    pool += std::string(text) + '\0';
    return at;
  };
  const std::uint32_t tool = add("ptxas");
  const std::uint32_t version = add("Cuda compilation tools, release 13.0, V13.0.88");
  const std::uint32_t branch = add("Build system must define TOOLS_VERSION_EXTENDED");
  const std::uint32_t opts = add(options);
  Bytes desc;
  for (std::uint32_t v : {2u, 0u, tool, version, branch, opts}) append(&desc, v);
  append_bytes(&desc, bytes_of(pool));
  pad4(&desc);
  Bytes note;
  append<std::uint32_t>(&note, 12);
  append<std::uint32_t>(&note, static_cast<std::uint32_t>(desc.size()));
  append<std::uint32_t>(&note, 2000);
  append_bytes(&note, bytes_of(std::string_view("NVIDIA Corp\0", 12)));
  append_bytes(&note, desc);
  return note;
}

Bytes craft_cubin(int sm, bool compat_arch, std::string_view tk_options) {
  CraftElf e;
  e.os_abi = 0x41;
  e.abi_version = 8;
  e.machine = 190;
  e.flags = 0x06000000u | (static_cast<std::uint32_t>(sm) << 8) | (sm >= 100 ? 0x02u : 0x04u);
  if (!tk_options.empty()) e.sections.push_back({".note.nv.tkinfo", 7, 0, nv_tkinfo(tk_options)});
  e.sections.push_back({".nv.compat", 0x70000086, 0, nv_compat(compat_arch)});
  e.sections.push_back({".text.scale", 1, 0x6, Bytes(128, std::byte{0x11})});
  e.segments = 2;
  return build_elf(e);
}

Bytes craft_amd(std::uint32_t e_flags, std::uint8_t abi_version) {
  CraftElf e;
  e.os_abi = 64;
  e.abi_version = abi_version;
  e.type = 3;
  e.machine = 224;
  e.flags = e_flags;
  e.sections.push_back({".text", 1, 0x6, Bytes(64, std::byte{0x22})});
  return build_elf(e);
}

Bytes craft_fatbin(const std::vector<std::pair<std::uint16_t, Bytes>>& entries, std::uint32_t sm) {
  Bytes body;
  for (const auto& [kind, payload] : entries) {
    const std::size_t start = body.size();
    append<std::uint16_t>(&body, kind);
    append<std::uint16_t>(&body, 0x0101);
    append<std::uint32_t>(&body, 0x40);
    append<std::uint64_t>(&body, payload.size());
    body.resize(start + 0x1c, std::byte{0});
    append<std::uint32_t>(&body, sm);
    body.resize(start + 0x40, std::byte{0});
    append_bytes(&body, payload);
  }
  Bytes out;
  append<std::uint32_t>(&out, 0xBA55ED50);
  append<std::uint16_t>(&out, 1);
  append<std::uint16_t>(&out, 16);
  append<std::uint64_t>(&out, body.size());
  append_bytes(&out, body);
  return out;
}

Bytes craft_bundle(const std::vector<std::pair<std::string, Bytes>>& entries) {
  Bytes out = bytes_of("__CLANG_OFFLOAD_BUNDLE__");
  append<std::uint64_t>(&out, entries.size());
  std::size_t table = out.size();
  for (const auto& e : entries) table += 24 + e.first.size();
  std::size_t data_at = table;
  for (const auto& [id, data] : entries) {
    append<std::uint64_t>(&out, data_at);
    append<std::uint64_t>(&out, data.size());
    append<std::uint64_t>(&out, id.size());
    append_bytes(&out, bytes_of(id));
    data_at += data.size();
  }
  for (const auto& e : entries) append_bytes(&out, e.second);
  return out;
}

}  // namespace kcache::testing
