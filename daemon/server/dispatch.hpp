// dispatch.hpp — the opcode → handler table (STYLE 9).
//
// Contract: find_handler returns the handler of a client-facing opcode, nullptr for opcodes
// clients may not send (worker-only) or that have no handler. The minimum protocol version and
// the permission come from schema/wire_v1.def and are checked by Session before the call.
// A handler answers through the session, now or later (holding a quota slot meanwhile).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "wire/protocol.hpp"

namespace kcache::daemon {

class Daemon;
class Session;

using Handler = void (*)(Daemon& daemon, const std::shared_ptr<Session>& session,
                         std::uint32_t request_id, std::string_view payload);

Handler find_handler(wire::Opcode op) noexcept;

}  // namespace kcache::daemon
