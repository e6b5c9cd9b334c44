#include "server/dispatch.hpp"

#include "handlers/handlers.hpp"

namespace kcache::daemon {

namespace {
struct Route {
  wire::Opcode op;
  Handler handler;
};

constexpr Route kRoutes[] = {
    {wire::Opcode::get, handle_get},
    {wire::Opcode::status, handle_status},
    {wire::Opcode::list, handle_list},
    {wire::Opcode::verify, handle_verify},
    {wire::Opcode::gc, handle_gc},
    {wire::Opcode::evict, handle_evict},
    {wire::Opcode::devices, handle_devices},
    {wire::Opcode::reload, handle_reload},
    {wire::Opcode::providers, handle_providers},
    {wire::Opcode::prefetch, handle_prefetch},
    {wire::Opcode::report, handle_report},
};
}  // namespace

Handler find_handler(wire::Opcode op) noexcept {
  for (const Route& r : kRoutes)
    if (r.op == op) return r.handler;
  return nullptr;
}

}  // namespace kcache::daemon
