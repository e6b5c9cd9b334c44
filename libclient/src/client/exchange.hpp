// client/exchange.hpp — one request and its reply on a connection, with the timeout rules.
//
// Contract: round_trip() sends one whole request frame (request `id`, opcode `op`) and
// returns its final reply frame (payload valid until the connection's next receive()).
//  * The request timeout runs from the send until any reply. An INTERIM reply with status
//    in_progress restarts the wait with the compile timeout (each further in_progress, too:
//    it means the daemon still works on it). Other interim replies are skipped.
//  * A passed deadline is Errc::timeout naming which timeout and its value; the connection is
//    then broken (the late reply would confuse the next request).
//  * A reply with another opcode or request id, or a final in_progress, is Errc::protocol.
//  * A request larger than the daemon's max_frame (from hello) is Errc::too_large and is not
//    sent; the connection stays usable.
#pragma once

#include <cstdint>
#include <string_view>

#include "client/connection.hpp"
#include "kcache/result.hpp"
#include "wire/frame.hpp"
#include "wire/protocol.hpp"

namespace kcache::client {

Result<wire::Frame> round_trip(Connection& conn, wire::Opcode op, std::uint32_t id,
                               std::string_view frame, const Timeouts& timeouts);

}  // namespace kcache::client
