#include "handlers/control_reply.hpp"

#include "common/text.hpp"
#include "handlers/request_fields.hpp"
#include "server/session.hpp"
#include "wire/messages.hpp"

namespace kcache::daemon {

namespace {

// `doc` with every string and key shown through printable(): the slow path, taken only when
// dump() found text that is not UTF-8.
nlohmann::json printable_copy(const nlohmann::json& doc) {
  if (doc.is_string()) return printable(doc.get_ref<const std::string&>());
  if (doc.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& v : doc) out.push_back(printable_copy(v));
    return out;
  }
  if (doc.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [key, value] : doc.items()) out[printable(key)] = printable_copy(value);
    return out;
  }
  return doc;
}

}  // namespace

Result<nlohmann::json> control_request(std::string_view payload, std::string_view operation,
                                       std::initializer_list<std::string_view> known) {
  KC_TRY_ASSIGN(const std::string text, wire::decode_json_request(payload));
  // Without exceptions: malformed text, invalid UTF-8 and numbers out of range (1e400) all
  // come back discarded.
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object())
    return make_error(Errc::invalid_argument,
                      std::string(operation) +
                          ": the request is not a JSON object (malformed, not UTF-8, or a "
                          "number out of range)");
  KC_TRY(RequestFields(operation, doc).only(known));
  return doc;
}

std::string control_text(const nlohmann::json& doc) {
  try {
    return doc.dump();
  } catch (const nlohmann::json::type_error&) {  // 316: a string that is not UTF-8
    return printable_copy(doc).dump();
  }
}

void reply_control(Session& session, std::uint32_t request_id, wire::Opcode op,
                   const nlohmann::json& doc) {
  wire::ControlReply r;
  r.json = control_text(doc);
  std::string frame = wire::start_frame(r.json.size() + 16);
  wire::encode(frame, r);
  session.reply(request_id, op, std::move(frame));
}

}  // namespace kcache::daemon
