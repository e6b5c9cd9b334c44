// handlers/provider_step.hpp — step 1 of `get` (DESIGN §3): serve from a provider.
//
// Contract (loop thread):
//  * A request with a `version` is first offered to the providers (after the first scan):
//    the device is the request's device index, or for an explicit target the local device
//    whose own compile target it is, else the device that target names (`sm_90a` → 9.0);
//    `system` (JSON, system_json.hpp) orders and filters variants. The ranked modules
//    (provider_select.hpp) are tried in order: one in the catalog is served at once; one not
//    yet materialized is materialized now (the client gets `in_progress` meanwhile) and
//    served; one that fails its checks is refused and the next one is tried. A served
//    module has origin `provider` and counts `provider_hits`.
//  * When no provider serves — no version, no providers, none matches, or a malformed target
//    or device the later steps will report — `next` continues the request (hit → compile →
//    not found) with one line per provider saying why it did not serve (empty if none was
//    consulted). A malformed `system` is answered with invalid_argument here.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "wire/messages.hpp"

namespace kcache::daemon {

class Daemon;
class Session;

using GetContinuation = void (*)(Daemon& daemon, const std::shared_ptr<Session>& session,
                                 std::uint32_t request_id, wire::GetRequest request,
                                 std::string provider_reasons);

void serve_from_providers(Daemon& daemon, const std::shared_ptr<Session>& session,
                          std::uint32_t request_id, wire::GetRequest request,
                          GetContinuation next);

}  // namespace kcache::daemon
