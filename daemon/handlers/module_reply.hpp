// module_reply.hpp — the module reply of `get`, shared by the cache step (get_handler.cpp)
// and the provider step (providers/provider_step.cpp).
//
// Contract (loop thread):
//  * `send_module` sends `entry` under `key` with `origin`. With want_fd it opens the file
//    first; a file that vanished behind the daemon's back drops the entry and returns the
//    error without replying (the caller may materialize or compile again).
//  * `serve_entry` serves a catalog entry found for a request: it checks the entry is still
//    the file published (else drops it: a miss), sends it, marks it served and counts it
//    (`hits` for Origin::hit, `provider_hits` for Origin::provider). False when nothing was
//    sent and the caller goes on as for a miss.
//  * `serve_published` and `join_reasons`: what both provider steps (provider_step.cpp,
//    kernels_step.cpp) do after a materialization and for a not_found.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cache/entry.hpp"
#include "common/digest.hpp"
#include "kcache/result.hpp"
#include "wire/messages.hpp"

namespace kcache::daemon {

class Daemon;
class Session;

Status send_module(Daemon& d, Session& s, std::uint32_t id, const Digest128& key,
                   const Entry& entry, wire::Origin origin, bool want_fd);

bool serve_entry(Daemon& d, Session& s, std::uint32_t id, const Digest128& key, Entry& entry,
                 wire::Origin origin, bool want_fd);

// After a provider materialization for a waiting request: serves the entry it published under
// `key` (origin provider). False when the outcome is an error or the entry is gone again.
bool serve_published(Daemon& d, Session& s, std::uint32_t id, const Digest128& key,
                     const Result<Entry>& outcome, bool want_fd);

// "a; b; c; and N more": the reasons a not_found gives, at most 16, one readable line.
std::string join_reasons(const std::vector<std::string>& reasons);

}  // namespace kcache::daemon
