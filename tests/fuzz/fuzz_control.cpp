// fuzz_control.cpp — the control operations' requests and replies (daemon/handlers/control_requests.hpp,
// daemon/handlers/control_reply.hpp): what any socket user's status, list, gc, evict, report, verify,
// providers, devices, prefetch and reload frames reach before a handler acts.
//
// Input: the first byte picks a control opcode, the rest is its JSON text. It is decoded as
// the `json` field of a request payload, and the raw bytes as a whole payload too, by that
// opcode's decoder and by every other. Checked: a refusal names its reason, and is always
// invalid_argument, or protocol for fields that do not decode (a request can be wrong,
// never a crash or an internal error). The reply
// renderer gets the input as a string value and must write valid UTF-8 JSON that parses.
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "handlers/control_reply.hpp"
#include "handlers/control_requests.hpp"
#include "wire/fields.hpp"

namespace kd = kcache::daemon;
namespace kw = kcache::wire;

namespace {

constexpr kw::Opcode kControl[] = {
    kw::Opcode::status, kw::Opcode::list,  kw::Opcode::verify,   kw::Opcode::providers,
    kw::Opcode::devices, kw::Opcode::gc,   kw::Opcode::evict,    kw::Opcode::prefetch,
    kw::Opcode::reload, kw::Opcode::report,
};

void decode(kw::Opcode op, std::string_view payload) {
  const kcache::Status st = kd::decode_control(op, payload);
  if (st.ok()) return;
  if (st.error().message.empty()) __builtin_trap();
  // A wrong document is invalid_argument; a payload whose fields do not decode, protocol.
  const kcache::Errc code = st.error().code;
  if (code != kcache::Errc::invalid_argument && code != kcache::Errc::protocol) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const kw::Opcode chosen = kControl[data[0] % std::size(kControl)];
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string payload;
  kw::FieldWriter(payload).str(kw::Tag::json, text);
  decode(chosen, payload);
  for (kw::Opcode op : kControl) {
    if (op != chosen) decode(op, payload);
    decode(op, text);  // the raw bytes as a payload of fields
  }
  // Replies render what the daemon cannot refuse (names on disk, old rows): always UTF-8.
  const std::string reply = kd::control_text(nlohmann::json{{"name", std::string(text)}});
  const auto back = nlohmann::json::parse(reply, nullptr, /*allow_exceptions=*/false);
  if (back.is_discarded() || !back.is_object()) __builtin_trap();
  return 0;
}
