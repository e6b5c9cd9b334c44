#include "wire/frame.hpp"

#include <algorithm>
#include <cstring>

namespace kcache::wire {

namespace {
// A connection that once carried a large frame keeps at most this much mapped while it idles.
constexpr std::size_t kKeptBuffer = 1u << 20;

void put_u16(char* p, std::uint16_t v) noexcept {
  p[0] = static_cast<char>(v & 0xff);
  p[1] = static_cast<char>(v >> 8);
}
void put_u32(char* p, std::uint32_t v) noexcept {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
std::uint16_t get_u16(const char* p) noexcept {
  return static_cast<std::uint16_t>(static_cast<unsigned char>(p[0]) |
                                    (static_cast<unsigned char>(p[1]) << 8));
}
std::uint32_t get_u32(const char* p) noexcept {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}
}  // namespace

void encode_header(const FrameHeader& h, char* out) noexcept {
  put_u32(out, h.payload_length);
  put_u16(out + 4, h.opcode);
  put_u16(out + 6, h.flags);
  put_u32(out + 8, h.request_id);
}

FrameHeader decode_header(const char* in) noexcept {
  return FrameHeader{get_u32(in), get_u16(in + 4), get_u16(in + 6), get_u32(in + 8)};
}

std::string start_frame(std::size_t payload_hint) {
  std::string frame;
  frame.reserve(kHeaderSize + payload_hint);
  frame.resize(kHeaderSize);
  return frame;
}

void seal_frame(std::string& frame, std::uint16_t opcode, std::uint16_t flags,
                std::uint32_t request_id) noexcept {
  encode_header({static_cast<std::uint32_t>(frame.size() - kHeaderSize), opcode, flags, request_id},
                frame.data());
}

void append_frame(std::string& out, std::uint16_t opcode, std::uint16_t flags,
                  std::uint32_t request_id, std::string_view payload) {
  char header[kHeaderSize];
  encode_header({static_cast<std::uint32_t>(payload.size()), opcode, flags, request_id}, header);
  out.append(header, kHeaderSize);
  out.append(payload);
}

Result<std::span<char>> FrameReader::prepare(std::size_t min_free) {
  if (start_ == size_) {
    start_ = size_ = 0;
    // A connection that once carried a large frame does not keep its buffer while it idles.
    if (buf_.capacity() > kKeptBuffer) buf_.release();
  }
  if (buf_.capacity() - size_ < min_free) {
    // Compact before growing: consumed bytes at the front are dead.
    if (start_ > 0) {
      std::memmove(buf_.data(), buf_.data() + start_, size_ - start_);
      size_ -= start_;
      start_ = 0;
    }
    KC_TRY(buf_.reserve(size_ + min_free));
  }
  return std::span<char>(buf_.data() + size_, buf_.capacity() - size_);
}

Status FrameReader::feed(std::string_view bytes) {
  if (bytes.empty()) return {};
  KC_TRY_ASSIGN(std::span<char> space, prepare(bytes.size()));
  std::memcpy(space.data(), bytes.data(), bytes.size());
  commit(bytes.size());
  return {};
}

bool FrameReader::frame_ready() const noexcept {
  if (failed_) return true;
  if (size_ - start_ < kHeaderSize) return false;
  const FrameHeader h = decode_header(buf_.data() + start_);
  return h.payload_length > limit_for(h.opcode) || size_ - start_ >= kHeaderSize + h.payload_length;
}

std::uint32_t FrameReader::limit_for(std::uint16_t opcode) const noexcept {
  return limit_ != nullptr ? std::min(max_payload_, limit_(opcode, max_payload_)) : max_payload_;
}

Result<std::optional<Frame>> FrameReader::next() {
  if (failed_) return make_error(Errc::protocol, "frame stream already failed");
  if (size_ - start_ < kHeaderSize) return std::optional<Frame>{};
  const FrameHeader h = decode_header(buf_.data() + start_);
  if (const std::uint32_t limit = limit_for(h.opcode); h.payload_length > limit) {
    failed_ = true;
    return make_error(Errc::too_large, "frame of " + std::to_string(h.payload_length) +
                                           " bytes exceeds the limit of " + std::to_string(limit) +
                                           " bytes" + (limit < max_payload_ ? " for its opcode" : ""));
  }
  // An incomplete frame: prepare() grows the buffer as its bytes arrive.
  if (size_ - start_ < kHeaderSize + h.payload_length) return std::optional<Frame>{};
  Frame f{h, std::string_view(buf_.data() + start_ + kHeaderSize, h.payload_length)};
  start_ += kHeaderSize + h.payload_length;
  return std::optional<Frame>{f};
}

}  // namespace kcache::wire
