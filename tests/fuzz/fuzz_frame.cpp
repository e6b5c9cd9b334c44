// fuzz_frame.cpp — the wire protocol: frame reassembly and the request decoders the daemon
// runs on untrusted bytes (wire/frame.hpp, wire/messages.hpp).
//
// Input: a byte stream, fed to a FrameReader in two pieces (the first byte picks the cut) so
// partial headers and payloads are exercised; every whole frame's payload and the raw input
// go through each request decoder.
#include <cstddef>
#include <cstdint>
#include <string_view>

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
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  decode_all(input);
  kcache::wire::FrameReader reader(1u << 20);  // small limit: oversize is cheap to reach
  const std::size_t cut = size == 0 ? 0 : data[0] % (size + 1);
  for (std::string_view piece : {input.substr(0, cut), input.substr(cut)}) {
    if (!reader.feed(piece).ok()) break;
    while (true) {
      auto frame = reader.next();
      if (!frame.ok() || !frame->has_value()) break;
      if ((*frame)->payload.size() != (*frame)->header.payload_length) __builtin_trap();
      decode_all((*frame)->payload);
    }
  }
  return 0;
}
