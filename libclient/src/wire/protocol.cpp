#include "wire/protocol.hpp"

#include <algorithm>

namespace kcache::wire {

namespace {
constexpr OpcodeInfo kOpcodes[] = {
#define KC_OPCODE(name, value, min_version, permission) \
  {Opcode::name, #name, min_version, Permission::permission},
#include "wire_v1.def"
#undef KC_OPCODE
};
}  // namespace

std::optional<OpcodeInfo> opcode_info(std::uint16_t value) noexcept {
  for (const OpcodeInfo& info : kOpcodes)
    if (static_cast<std::uint16_t>(info.opcode) == value) return info;
  return std::nullopt;
}

const char* opcode_name(Opcode op) noexcept {
  const auto info = opcode_info(static_cast<std::uint16_t>(op));
  return info ? info->name : "unknown";
}

std::uint32_t request_payload_limit(std::uint16_t opcode, std::uint32_t max_payload) noexcept {
  if (opcode == static_cast<std::uint16_t>(Opcode::get)) return max_payload;
  return std::min(max_payload, kMaxControlPayload);
}

}  // namespace kcache::wire
