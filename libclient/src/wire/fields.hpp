// wire/fields.hpp — the payload's field encoding (TLV).
//
// Grammar: payload = field*;  field = u16 tag, u32 length, `length` bytes (little-endian).
// Integer fields have exactly their type's width; digests are 16 canonical bytes.
// Contract:
//  * `FieldWriter` appends fields to a string; it never fails.
//  * `FieldReader` walks a payload without copying; a field whose length runs past the end,
//    or a field the def types as fixed-width (u8…u64, digest) with another length, is
//    Errc::protocol naming the field ("field 'device' (u32) has 2 bytes, expected 4").
//    Typed accessors check the width too (a caller may read a field as another type).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/digest.hpp"
#include "kcache/result.hpp"
#include "wire/protocol.hpp"

namespace kcache::wire {

class FieldWriter {
 public:
  explicit FieldWriter(std::string& out) : out_(out) {}
  void bytes(Tag tag, std::string_view value);
  void str(Tag tag, std::string_view value) { bytes(tag, value); }
  void u8(Tag tag, std::uint8_t value);
  void u16(Tag tag, std::uint16_t value);
  void u32(Tag tag, std::uint32_t value);
  void u64(Tag tag, std::uint64_t value);
  void digest(Tag tag, const Digest128& value);

 private:
  std::string& out_;
};

struct Field {
  std::uint16_t tag = 0;
  std::string_view value;

  Result<std::uint8_t> as_u8() const;
  Result<std::uint16_t> as_u16() const;
  Result<std::uint32_t> as_u32() const;
  Result<std::uint64_t> as_u64() const;
  Result<Digest128> as_digest() const;
};

class FieldReader {
 public:
  explicit FieldReader(std::string_view payload) : rest_(payload) {}
  // The next field, nullopt at the end, or a protocol error for a truncated field.
  Result<std::optional<Field>> next();

 private:
  std::string_view rest_;
};

}  // namespace kcache::wire
