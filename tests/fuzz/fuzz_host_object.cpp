// fuzz_host_object.cpp — device code embedded in host objects (arch/host_object.hpp): what a
// FlashInfer wheel's `<mod>.so` feeds the publishing gate.
//
// Input: any bytes. Checked: inspection never fails silently (a refusal names a reason), the
// gate never accepts an object inspection refuses or one with an entry outside the provided
// targets, and what the gate accepts has a SASS entry and no PTX.
#include <cstddef>
#include <cstdint>
#include <span>

#include "arch/host_object.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  static const kcache::Target kDeclared = *kcache::parse_target("sm_90a");
  static const kcache::Target kProvided[] = {kDeclared, *kcache::parse_target("sm_80")};
  (void)kcache::is_host_object(bytes);
  auto info = kcache::inspect_host_object(bytes);
  const kcache::Status gate = kcache::check_host_object_matches(bytes, kDeclared, kProvided, false);
  if (!info.ok()) {
    if (info.error().message.empty() || gate.ok()) __builtin_trap();
    return 0;
  }
  (void)info->describe();
  if (!gate.ok()) return gate.error().message.empty() ? (__builtin_trap(), 0) : 0;
  bool sass = false;
  for (const kcache::HostCodeEntry& e : info->entries) {
    if (e.kind == "ptx" || !e.target) __builtin_trap();
    sass |= e.kind == "sass";
  }
  if (!sass) __builtin_trap();
  return 0;
}
