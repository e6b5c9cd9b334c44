#include "control_reply.hpp"

#include "session.hpp"
#include "wire/messages.hpp"

namespace kcache::daemon {

Result<nlohmann::json> control_request(std::string_view payload) {
  KC_TRY_ASSIGN(const std::string text, wire::decode_json_request(payload));
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object())
    return make_error(Errc::invalid_argument, "request is not a JSON object");
  return doc;
}

void reply_control(Session& session, std::uint32_t request_id, wire::Opcode op,
                   const nlohmann::json& doc) {
  wire::ControlReply r;
  r.json = doc.dump();
  std::string frame = wire::start_frame(r.json.size() + 16);
  wire::encode(frame, r);
  session.reply(request_id, op, std::move(frame));
}

}  // namespace kcache::daemon
