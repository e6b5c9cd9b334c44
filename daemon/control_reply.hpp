// control_reply.hpp — the JSON exchange every control operation shares (docs/protocol.md).
//
// Contract: `control_request(payload)` decodes the request's `json` field into an object, or
// Errc::invalid_argument (the caller answers with it; the connection stays).
// `reply_control(session, id, op, doc)` sends `doc` as the reply's `json` field.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "kcache/result.hpp"
#include "wire/protocol.hpp"

namespace kcache::daemon {

class Session;

Result<nlohmann::json> control_request(std::string_view payload);
void reply_control(Session& session, std::uint32_t request_id, wire::Opcode op,
                   const nlohmann::json& doc);

}  // namespace kcache::daemon
