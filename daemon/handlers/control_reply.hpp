// control_reply.hpp — the JSON exchange every control operation shares (docs/protocol.md).
//
// Contract: `control_request(payload, operation, known)` decodes the request's `json` field
// into an object whose fields are all in `known`, or Errc::invalid_argument naming what is
// wrong (the caller answers with it; the connection stays); read the fields with
// request_fields.hpp. `control_text(doc)` is the reply's text: always valid UTF-8 — a
// string that is not (a directory name on the disk, a row an older kcached wrote) is shown
// through common/text.hpp's printable(), never a reason to fail. `reply_control(session, id,
// op, doc)` sends control_text(doc) as the reply's `json` field.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "kcache/result.hpp"
#include "wire/protocol.hpp"

namespace kcache::daemon {

class Session;

Result<nlohmann::json> control_request(std::string_view payload, std::string_view operation,
                                       std::initializer_list<std::string_view> known = {});
std::string control_text(const nlohmann::json& doc);
void reply_control(Session& session, std::uint32_t request_id, wire::Opcode op,
                   const nlohmann::json& doc);

}  // namespace kcache::daemon
