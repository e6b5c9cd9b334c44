// wire/protocol.hpp — constants of wire protocol v1, generated from schema/wire_v1.def.
//
// Contract: every opcode, tag and status code used on a socket comes from this header; the
// table in schema/ is the definition and docs/protocol.md the prose (its opcode, tag and
// status tables are compared with the def by a test). Names and types of opcodes and tags are
// known at run time, so errors name what they concern.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "kcache/result.hpp"

namespace kcache::wire {

inline constexpr std::uint32_t kProtocolVersion = 1;
inline constexpr std::uint32_t kMinProtocolVersion = 1;
inline constexpr std::size_t kHeaderSize = 12;
inline constexpr std::uint32_t kDefaultMaxFrame = 64u << 20;  // 64 MiB payload
inline constexpr std::string_view kMagic = "kcache";
inline constexpr std::uint16_t kReplyBit = 0x8000;
inline constexpr std::uint16_t kFlagInterim = 0x0001;
inline constexpr std::uint32_t kGetWantFd = 0x1;
inline constexpr std::uint64_t kCapFdPassing = 0x1;   // daemon can pass module fds
inline constexpr std::uint64_t kCapKeyLookup = 0x2;   // daemon accepts key-only gets

enum class Permission : std::uint8_t { anyone, admin, worker };

enum class Opcode : std::uint16_t {
#define KC_OPCODE(name, value, min_version, permission) name = value,
#include "wire_v1.def"
#undef KC_OPCODE
};

enum class Tag : std::uint16_t {
#define KC_TAG(name, value, type) name = value,
#include "wire_v1.def"
#undef KC_TAG
};

// A field's type, from the def's `type` column: fixed-width integers and digests have exactly
// their width; str and bytes any length.
enum class FieldType : std::uint8_t { str, bytes, u8, u16, u32, u64, digest };

struct TagInfo {
  Tag tag;
  const char* name;
  FieldType type;
};

// The def's row of a tag; nullopt for tags it does not define (skipped: forward compatibility).
std::optional<TagInfo> tag_info(std::uint16_t value) noexcept;
// Every row of the def's tag table, in the def's order.
std::span<const TagInfo> all_tags() noexcept;
// "key", or "tag 999" for a tag the def does not define: how errors name a field.
std::string tag_name(std::uint16_t value);
const char* field_type_name(FieldType type) noexcept;
// The width a value of `type` must have; 0 for any (str, bytes).
std::size_t field_type_width(FieldType type) noexcept;

struct OpcodeInfo {
  Opcode opcode;
  const char* name;
  std::uint32_t min_version;
  Permission permission;
};

// Looks an opcode up in the table; nullopt for values the table does not define.
std::optional<OpcodeInfo> opcode_info(std::uint16_t value) noexcept;
const char* opcode_name(Opcode op) noexcept;
// Every row of the def's opcode table, in the def's order.
std::span<const OpcodeInfo> all_opcodes() noexcept;

// The largest request payload a client may send with `opcode`: `get` up to max_payload (the
// daemon's max_frame); hello and the control operations, whose payload is a small JSON
// document, kMaxControlPayload — so a frame that could only be abuse is refused at its header.
inline constexpr std::uint32_t kMaxControlPayload = 1u << 20;
std::uint32_t request_payload_limit(std::uint16_t opcode, std::uint32_t max_payload) noexcept;

// The status table must match kcache::Errc value for value.
#define KC_STATUS(name, value) \
  static_assert(static_cast<std::uint16_t>(::kcache::Errc::name) == (value), #name);
#include "wire_v1.def"
#undef KC_STATUS

}  // namespace kcache::wire
