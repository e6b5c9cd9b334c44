// handlers.hpp — the request handlers, one per operation (daemon/server/dispatch.cpp's table).
//
// Contract: each handler decodes its payload, acts, and answers through the session, now or
// later (holding a quota slot meanwhile). Nothing thrown leaves one (the session contains it).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

namespace kcache::daemon {

class Daemon;
class Session;

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

}  // namespace kcache::daemon
