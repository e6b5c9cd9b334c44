#include "synth_module.hpp"

#include <charconv>
#include <string>

namespace kcache::testing {

Bytes synth_cubin(std::string_view arch, std::string_view payload) {
  if (!arch.starts_with("sm_")) return {};
  std::string_view rest = arch.substr(3);
  char suffix = '\0';
  if (!rest.empty() && (rest.back() == 'a' || rest.back() == 'f')) {
    suffix = rest.back();
    rest.remove_suffix(1);
  }
  int sm = 0;
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), sm);
  if (ec != std::errc() || end != rest.data() + rest.size() || sm < 10 || sm > 255) return {};

  CraftElf e;
  e.os_abi = 0x41;  // CUDA 13's ELF ABI, as craft_cubin (measured on NVRTC output)
  e.abi_version = 8;
  e.machine = 190;
  e.flags = 0x06000000u | (static_cast<std::uint32_t>(sm) << 8) | (sm >= 100 ? 0x02u : 0x04u);
  e.sections.push_back({".note.nv.tkinfo", 7, 0, nv_tkinfo("-arch " + std::string(arch) + " ")});
  e.sections.push_back({".nv.compat", 0x70000086, 0, nv_compat(suffix == 'a')});
  Bytes text = bytes_of(payload);
  if (text.size() < 128) text.resize(128, std::byte{0});  // real kernels are never tiny
  e.sections.push_back({".text.kernel", 1, 0x6, std::move(text)});
  e.segments = 2;
  return build_elf(e);
}

}  // namespace kcache::testing
