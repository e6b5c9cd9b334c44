// client/get.hpp — the `get` exchange: full requests, key-only lookups and passed fds.
//
// Contract:
//  * GetParams is a validated request (c_api.cpp checks the C struct); views into the
//    caller's memory, valid for the call.
//  * lookup_key() is the cache key of a key-only lookup for `p` compiled for
//    `canonical_target` by the daemon that said `hello` — or nullopt when a key-only lookup is
//    not possible: no source, the daemon lacks the key-lookup capability, or it listed no
//    compiler for the target's backend. The key is DESIGN §3's (common/cache_key.hpp).
//  * fill_request() writes `p` into `r` as the daemon receives it — with `key`, the key-only
//    form below; without, the full request. Every field is assigned, so `r` may be a reused
//    scratch request (its buffers' capacity is kept). The in-process fallback checks the
//    same form against the daemon's rules.
//  * exchange_get() sends one get on `conn` and returns the module. With `key`, the request
//    carries name, version, system, the canonical target and the key — no source, headers or
//    options — and a miss comes back as Errc::need_source for the caller to resend in full.
//    A need_source answer to a full request is Errc::protocol.
//  * With want_fd the result holds the fd passed with the reply; a daemon that passed none
//    (no fd-passing capability) gets the path opened read-only instead. Stray fds are closed.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "client/connection.hpp"
#include "common/digest.hpp"
#include "common/fd.hpp"
#include "kcache/kcache.h"
#include "kcache/result.hpp"
#include "wire/messages.hpp"

namespace kcache::client {

struct GetParams {
  std::string_view name;
  std::string_view version;
  std::string_view target;              // empty: use `device`
  std::optional<std::uint32_t> device;  // only consulted when `target` is empty
  std::optional<std::string_view> source;
  std::span<const kcache_header> headers;
  std::span<const char* const> options;
  std::string_view system;
  bool want_fd = false;
};

struct GetResult {
  wire::ModuleReply module;
  Fd fd;
};

struct KeyOnly {
  std::string_view target;  // canonical
  Digest128 key;
};

void fill_request(wire::GetRequest& r, const GetParams& p, const KeyOnly* key);

std::optional<Digest128> lookup_key(const wire::HelloReply& hello, const GetParams& p,
                                    std::string_view canonical_target);

Result<GetResult> exchange_get(Connection& conn, const GetParams& p, const KeyOnly* key,
                               const Timeouts& timeouts);

}  // namespace kcache::client
