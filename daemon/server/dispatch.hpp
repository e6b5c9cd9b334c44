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

#include "cache/entry.hpp"
#include "wire/messages.hpp"
#include "wire/protocol.hpp"

namespace kcache::daemon {

class Daemon;
class Session;

using Handler = void (*)(Daemon& daemon, const std::shared_ptr<Session>& session,
                         std::uint32_t request_id, std::string_view payload);

Handler find_handler(wire::Opcode op) noexcept;

// The handlers (one file per concern).
void handle_get(Daemon&, const std::shared_ptr<Session>&, std::uint32_t, std::string_view);
void handle_status(Daemon&, const std::shared_ptr<Session>&, std::uint32_t, std::string_view);
void handle_list(Daemon&, const std::shared_ptr<Session>&, std::uint32_t, std::string_view);
void handle_verify(Daemon&, const std::shared_ptr<Session>&, std::uint32_t, std::string_view);
void handle_gc(Daemon&, const std::shared_ptr<Session>&, std::uint32_t, std::string_view);
void handle_evict(Daemon&, const std::shared_ptr<Session>&, std::uint32_t, std::string_view);
void handle_devices(Daemon&, const std::shared_ptr<Session>&, std::uint32_t, std::string_view);
void handle_reload(Daemon&, const std::shared_ptr<Session>&, std::uint32_t, std::string_view);
void handle_providers(Daemon&, const std::shared_ptr<Session>&, std::uint32_t, std::string_view);
void handle_prefetch(Daemon&, const std::shared_ptr<Session>&, std::uint32_t, std::string_view);
void handle_report(Daemon&, const std::shared_ptr<Session>&, std::uint32_t, std::string_view);

// The module reply of `get` (get_handler.cpp), shared with the provider step: sends `entry`
// under `key`; with want_fd it opens the file first, and a file that vanished drops the entry
// and returns the error without replying (the caller may materialize or compile again).
Status send_module(Daemon& d, Session& s, std::uint32_t id, const Digest128& key,
                   const Entry& entry, wire::Origin origin, bool want_fd);

}  // namespace kcache::daemon
