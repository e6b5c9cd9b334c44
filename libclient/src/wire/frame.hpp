// wire/frame.hpp — framing: a 12-byte little-endian header, then the payload.
//
// Grammar (protocol v1):
//   frame  = u32 payload_length, u16 opcode, u16 flags, u32 request_id, payload_length bytes
// Contract:
//  * `encode_header` writes exactly kHeaderSize bytes.
//  * `FrameReader` accumulates bytes from a stream and yields whole frames. A header whose
//    payload_length exceeds the reader's limit is a protocol error (Errc::too_large) reported
//    before any of the payload is buffered; after an error the reader stays failed. A reader
//    given a per-opcode limit (payload_limit below) applies the smaller of the two.
//  * Memory follows the bytes received, never a header's claim: a 12-byte header announcing
//    64 MiB costs nothing until the payload arrives. Growing the buffer never copies what it
//    holds (wire/byte_buffer.hpp), so a large frame costs no pause that grows with its size.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "kcache/result.hpp"
#include "wire/byte_buffer.hpp"
#include "wire/protocol.hpp"

namespace kcache::wire {

struct FrameHeader {
  std::uint32_t payload_length = 0;
  std::uint16_t opcode = 0;
  std::uint16_t flags = 0;
  std::uint32_t request_id = 0;
};

void encode_header(const FrameHeader& header, char* out) noexcept;
FrameHeader decode_header(const char* in) noexcept;

// Building a frame, one way: a buffer starts with a blank header (start_frame), the payload's
// fields are appended to it in place (never copied), and seal_frame fills the header in from
// the buffer's size. build_frame does all three into a reused buffer; the daemon's handlers
// start and fill a frame and the session seals it with the reply's opcode and flags.
std::string start_frame(std::size_t payload_hint = 256);
void seal_frame(std::string& frame, std::uint16_t opcode, std::uint16_t flags,
                std::uint32_t request_id) noexcept;

// Builds one frame in `buf` (replacing its contents, keeping its capacity); returns it.
template <class EncodePayload>
std::string_view build_frame(std::string& buf, std::uint16_t opcode, std::uint16_t flags,
                             std::uint32_t request_id, EncodePayload&& encode_payload) {
  buf.assign(kHeaderSize, '\0');
  encode_payload(buf);
  seal_frame(buf, opcode, flags, request_id);
  return buf;
}

// Appends a whole frame with a payload already in bytes to `out` (tests and fuzzers that
// write raw, possibly malformed, payloads).
void append_frame(std::string& out, std::uint16_t opcode, std::uint16_t flags,
                  std::uint32_t request_id, std::string_view payload);

struct Frame {
  FrameHeader header;
  std::string_view payload;  // valid until the next call into the FrameReader
};

// The largest payload an opcode may carry (at most max_payload), for readers that know what
// their peer may send; nullptr: max_payload for every opcode.
using PayloadLimit = std::uint32_t (*)(std::uint16_t opcode, std::uint32_t max_payload) noexcept;

class FrameReader {
 public:
  explicit FrameReader(std::uint32_t max_payload = kDefaultMaxFrame, PayloadLimit limit = nullptr)
      : max_payload_(max_payload), limit_(limit) {}

  // Space to receive into: at least `min_free` bytes, or an error when no memory could be
  // mapped for it. Call commit(n) after writing n bytes.
  Result<std::span<char>> prepare(std::size_t min_free = 64 * 1024);
  void commit(std::size_t n) noexcept { size_ += n; }
  // Feeds bytes by copy (tests, fuzzers).
  Status feed(std::string_view bytes);

  // The next complete frame, nullopt if more bytes are needed, or an error.
  Result<std::optional<Frame>> next();
  // True when next() would not return nullopt (a whole frame, or a header to refuse).
  bool frame_ready() const noexcept;
  std::size_t buffered() const noexcept { return size_ - start_; }

 private:
  std::uint32_t limit_for(std::uint16_t opcode) const noexcept;

  ByteBuffer buf_;
  std::size_t start_ = 0;  // first unconsumed byte
  std::size_t size_ = 0;   // bytes of buf_ in use
  std::uint32_t max_payload_;
  PayloadLimit limit_;
  bool failed_ = false;
};

}  // namespace kcache::wire
