// fuzz_system.cpp — the `system` field of a get request (providers/system_json.hpp): the
// worker's variant facts, sent by any socket user and matched against provider variants.
//
// Input: the field's text. Checked: a refusal is invalid_argument and names its reason; an
// accepted one has the three required facts.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "providers/system_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = kcache::providers::parse_system_json(text);
  if (!parsed.ok()) {
    if (parsed.error().message.empty()) __builtin_trap();
    if (parsed.error().code != kcache::Errc::invalid_argument) __builtin_trap();
    return 0;
  }
  if (parsed->cpu.empty() || parsed->os.empty()) __builtin_trap();  // required facts
  return 0;
}
