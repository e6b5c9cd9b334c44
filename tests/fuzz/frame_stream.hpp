// frame_stream.hpp — how the wire fuzz targets read their input: as a stream cut in two
// (the first byte picks the cut, so partial headers and payloads are exercised), through a
// FrameReader with a small limit (an oversize header is cheap to reach). Each whole frame
// goes to `on_frame`; a frame whose payload is not its header's length is a bug (trap).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "wire/frame.hpp"

namespace kcache::fuzz {

template <class OnFrame>
void for_each_frame(const std::uint8_t* data, std::size_t size, OnFrame&& on_frame) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  wire::FrameReader reader(1u << 20);
  const std::size_t cut = size == 0 ? 0 : data[0] % (size + 1);
  for (std::string_view piece : {input.substr(0, cut), input.substr(cut)}) {
    if (!reader.feed(piece).ok()) return;
    while (true) {
      auto frame = reader.next();
      if (!frame.ok() || !frame->has_value()) break;
      if ((*frame)->payload.size() != (*frame)->header.payload_length) __builtin_trap();
      on_frame(**frame);
    }
  }
}

}  // namespace kcache::fuzz
