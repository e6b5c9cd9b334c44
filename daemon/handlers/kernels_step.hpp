// handlers/kernels_step.hpp — the provider step of `get` for a kernels repo (DESIGN §3,
// docs/providers.md "Serving a kernels repo").
//
// Contract (loop thread, after the first provider scan):
//  * `serve_kernels_variant` returns false, doing nothing, unless `name` is the repo id of a
//    kernels provider; then the request is answered here and nowhere else.
//  * The variant is kernels_select.hpp's pick for the request's revision and system. Its device
//    code is checked against the request's device (by index or target), or every local device
//    when it names none. A variant in the catalog for that check is served at once; else it is
//    materialized as a tree (the client gets `in_progress` meanwhile) and served, origin
//    `provider`, path_kind directory.
//  * No pick is `not_found` naming the repo and revision with one reason per variant; a
//    refused materialization (a digest mismatch, device code that cannot run) is `not_found`
//    with that reason, remembered until the next scan.
#pragma once

#include <cstdint>
#include <memory>

#include "arch/target.hpp"
#include "variant/system.hpp"
#include "wire/messages.hpp"

namespace kcache::daemon {

class Daemon;
class Session;

bool serve_kernels_variant(Daemon& d, const std::shared_ptr<Session>& s, std::uint32_t id,
                           const wire::GetRequest& req, const Device* device, const SystemInfo* system);

}  // namespace kcache::daemon
