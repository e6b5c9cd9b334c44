// fuzz_reply.cpp — what libkcache decodes from the daemon (wire/messages.hpp): a client must
// survive a daemon that is broken, old, or not a kcached at all.
//
// Input: a byte stream read as libkcache reads its socket, through a FrameReader (the first
// byte picks where it is cut in two); every whole frame's payload, and the raw input, go
// through each reply decoder. Any outcome is fine but a crash, UB or an escaping exception:
// the decoders validate as they go (wire/messages.hpp).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "frame_stream.hpp"
#include "wire/frame.hpp"
#include "wire/messages.hpp"

namespace kw = kcache::wire;

namespace {

void decode_all(std::string_view payload) {
  (void)kw::decode_hello_reply(payload);
  (void)kw::decode_module_reply(payload);
  (void)kw::decode_control_reply(payload);
  (void)kw::decode_compile_result(payload);
  (void)kw::decode_status(payload);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  decode_all(std::string_view(reinterpret_cast<const char*>(data), size));
  kcache::fuzz::for_each_frame(data, size, [](const kw::Frame& f) { decode_all(f.payload); });
  return 0;
}
