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

constexpr TagInfo kTags[] = {
#define KC_TAG(name, value, type) {Tag::name, #name, FieldType::type},
#include "wire_v1.def"
#undef KC_TAG
};
}  // namespace

std::optional<TagInfo> tag_info(std::uint16_t value) noexcept {
  switch (value) {
#define KC_TAG(name, value, type) \
  case value: return TagInfo{Tag::name, #name, FieldType::type};
#include "wire_v1.def"
#undef KC_TAG
    default: return std::nullopt;
  }
}

std::span<const TagInfo> all_tags() noexcept { return kTags; }
std::span<const OpcodeInfo> all_opcodes() noexcept { return kOpcodes; }

std::string tag_name(std::uint16_t value) {
  if (const auto info = tag_info(value)) return info->name;
  return "tag " + std::to_string(value);
}

const char* field_type_name(FieldType type) noexcept {
  switch (type) {
    case FieldType::str: return "str";
    case FieldType::bytes: return "bytes";
    case FieldType::u8: return "u8";
    case FieldType::u16: return "u16";
    case FieldType::u32: return "u32";
    case FieldType::u64: return "u64";
    case FieldType::digest: return "digest";
  }
  return "unknown";
}

std::size_t field_type_width(FieldType type) noexcept {
  switch (type) {
    case FieldType::u8: return 1;
    case FieldType::u16: return 2;
    case FieldType::u32: return 4;
    case FieldType::u64: return 8;
    case FieldType::digest: return 16;
    default: return 0;
  }
}

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
