// fuzz_elf.cpp — GPU binary inspection and the publishing gate (arch/elf_inspect.hpp).
//
// Input: any bytes. Checked: the gate accepts a binary under the target it was inspected as
// exactly when it is one native module (a cubin or AMD code object with native code), and
// unbundling never returns bytes outside the input.
#include <cstddef>
#include <cstdint>
#include <span>

#include "arch/binary_check.hpp"
#include "arch/elf_inspect.hpp"
#include "arch/gpu_containers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  static const kcache::Target kDeclared[] = {*kcache::parse_target("sm_90a"),
                                             *kcache::parse_target("gfx90a:xnack-")};
  for (const kcache::Target& t : kDeclared) (void)kcache::check_binary_matches(bytes, t);
  auto code = kcache::extract_code_object(bytes, *kDeclared[1].amd());
  if (code.ok() && !code->empty()) {
    const auto begin = reinterpret_cast<std::uintptr_t>(code->data());
    const auto base = reinterpret_cast<std::uintptr_t>(data);
    if (begin < base || begin + code->size() > base + size) __builtin_trap();
  }
  auto info = kcache::inspect_binary(bytes);
  if (!info.ok()) return 0;
  (void)info->describe();
  if (!info->target) return 0;
  const bool module = (info->kind == kcache::BinaryKind::cubin ||
                       info->kind == kcache::BinaryKind::amd_code_object) &&
                      info->has_native;
  if (kcache::check_binary_matches(bytes, *info->target).ok() != module) __builtin_trap();
  return 0;
}
