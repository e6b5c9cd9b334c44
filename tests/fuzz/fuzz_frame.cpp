// fuzz_frame.cpp — the wire protocol: frame reassembly and the request decoders the daemon
// runs on untrusted bytes (wire/frame.hpp, wire/messages.hpp).
//
// Input: a byte stream, fed to a FrameReader in two pieces (the first byte picks the cut) so
// partial headers and payloads are exercised; every whole frame's payload and the raw input
// go through each request decoder.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "frame_stream.hpp"
#include "wire/frame.hpp"
#include "wire/messages.hpp"

namespace {

void decode_all(std::string_view payload) {
  (void)kcache::wire::decode_hello_request(payload);
  (void)kcache::wire::decode_get_request(payload);
  (void)kcache::wire::decode_compile_job(payload);
  (void)kcache::wire::decode_json_request(payload);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  decode_all(std::string_view(reinterpret_cast<const char*>(data), size));
  kcache::fuzz::for_each_frame(data, size, [](const kcache::wire::Frame& f) { decode_all(f.payload); });
  return 0;
}
