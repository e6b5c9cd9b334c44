#include "wire/fields.hpp"

#include <array>

namespace kcache::wire {

namespace {
constexpr std::size_t kFieldHeader = 6;

template <class T>
void append_le(std::string& out, T v) {
  // One append, not one push_back per byte: this runs ~20 times per reply on the hit path.
  char le[sizeof(T)];
  for (std::size_t i = 0; i < sizeof(T); ++i)
    le[i] = static_cast<char>((static_cast<std::uint64_t>(v) >> (8 * i)) & 0xff);
  out.append(le, sizeof(T));
}

// A field's tag (u16) and value length (u32), little-endian, in one append.
void append_header(std::string& out, Tag tag, std::uint32_t length) {
  const auto t = static_cast<std::uint16_t>(tag);
  const char header[kFieldHeader] = {static_cast<char>(t & 0xff), static_cast<char>(t >> 8),
                                     static_cast<char>(length & 0xff), static_cast<char>((length >> 8) & 0xff),
                                     static_cast<char>((length >> 16) & 0xff), static_cast<char>(length >> 24)};
  out.append(header, kFieldHeader);
}

Error wrong_width(std::uint16_t tag, std::size_t got, std::size_t want) {
  return make_error(Errc::protocol, "field '" + tag_name(tag) + "' has " + std::to_string(got) +
                                        " bytes, expected " + std::to_string(want));
}

template <class T>
Result<T> read_le(const Field& f) {
  if (f.value.size() != sizeof(T)) return wrong_width(f.tag, f.value.size(), sizeof(T));
  std::uint64_t v = 0;
  for (std::size_t i = sizeof(T); i-- > 0;)
    v = (v << 8) | static_cast<unsigned char>(f.value[i]);
  return static_cast<T>(v);
}
}  // namespace

void FieldWriter::bytes(Tag tag, std::string_view value) {
  append_header(out_, tag, static_cast<std::uint32_t>(value.size()));
  out_.append(value);
}
void FieldWriter::u8(Tag tag, std::uint8_t v) {
  append_header(out_, tag, 1);
  append_le(out_, v);
}
void FieldWriter::u16(Tag tag, std::uint16_t v) {
  append_header(out_, tag, 2);
  append_le(out_, v);
}
void FieldWriter::u32(Tag tag, std::uint32_t v) {
  append_header(out_, tag, 4);
  append_le(out_, v);
}
void FieldWriter::u64(Tag tag, std::uint64_t v) {
  append_header(out_, tag, 8);
  append_le(out_, v);
}
void FieldWriter::digest(Tag tag, const Digest128& d) {
  const auto b = d.bytes();
  bytes(tag, std::string_view(reinterpret_cast<const char*>(b.data()), b.size()));
}

Result<std::uint8_t> Field::as_u8() const { return read_le<std::uint8_t>(*this); }
Result<std::uint16_t> Field::as_u16() const { return read_le<std::uint16_t>(*this); }
Result<std::uint32_t> Field::as_u32() const { return read_le<std::uint32_t>(*this); }
Result<std::uint64_t> Field::as_u64() const { return read_le<std::uint64_t>(*this); }

Result<Digest128> Field::as_digest() const {
  if (value.size() != 16) return wrong_width(tag, value.size(), 16);
  std::array<std::uint8_t, 16> b{};
  for (std::size_t i = 0; i < 16; ++i) b[i] = static_cast<std::uint8_t>(value[i]);
  return Digest128::from_bytes(b);
}

Result<std::optional<Field>> FieldReader::next() {
  if (rest_.empty()) return std::optional<Field>{};
  if (rest_.size() < kFieldHeader)
    return make_error(Errc::protocol, "truncated field header (" + std::to_string(rest_.size()) +
                                          " trailing bytes)");
  const auto* p = reinterpret_cast<const unsigned char*>(rest_.data());
  const std::uint16_t tag = static_cast<std::uint16_t>(p[0] | (p[1] << 8));
  const std::uint32_t len = static_cast<std::uint32_t>(p[2]) | (static_cast<std::uint32_t>(p[3]) << 8) |
                            (static_cast<std::uint32_t>(p[4]) << 16) |
                            (static_cast<std::uint32_t>(p[5]) << 24);
  if (rest_.size() - kFieldHeader < len)
    return make_error(Errc::protocol, "field '" + tag_name(tag) + "' claims " +
                                          std::to_string(len) + " bytes but only " +
                                          std::to_string(rest_.size() - kFieldHeader) + " remain");
  // The def's type column is enforced here, for every message: a fixed-width field of any
  // other width is malformed whatever reads it.
  if (const auto info = tag_info(tag)) {
    const std::size_t width = field_type_width(info->type);
    if (width != 0 && len != width)
      return make_error(Errc::protocol, "field '" + std::string(info->name) + "' (" +
                                            field_type_name(info->type) + ") has " +
                                            std::to_string(len) + " bytes, expected " +
                                            std::to_string(width));
  }
  Field f{tag, rest_.substr(kFieldHeader, len)};
  rest_.remove_prefix(kFieldHeader + len);
  return std::optional<Field>{f};
}

}  // namespace kcache::wire
