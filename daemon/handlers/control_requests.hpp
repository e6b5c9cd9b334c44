// control_requests.hpp — the request of every control operation, decoded from its payload
// by one function each: the fields each operation takes (docs/protocol.md) are written here
// once, and the handlers only act on what these return.
//
// Contract: each decoder reads the payload's `json` field through control_request() and
// RequestFields (one type per field, unknown fields refused), applies the operation's own
// rules, and returns the typed request or Errc::invalid_argument naming what is wrong.
// Nothing here throws or touches daemon state, so decode_control() is what the control fuzz
// target runs on arbitrary bytes for every control opcode.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "upkeep/gc.hpp"
#include "kcache/result.hpp"
#include "wire/protocol.hpp"

namespace kcache::daemon {

struct ListRequest {
  std::string name;         // empty: every entry
  std::uint64_t limit = 0;  // 0: no limit
};

struct EvictRequest {
  std::string key_hex;
  std::string name;
  bool force = false;
};

struct ReportRequest {
  std::uint64_t fallbacks = 0;
  std::uint64_t compile_ms = 0;
};

Result<ListRequest> decode_list(std::string_view payload);
// {"max_size": bytes, "max_age_s": seconds (at most a century), "dry_run": bool}
Result<GcOptions> decode_gc(std::string_view payload);
// Exactly one of "key" and "name"; "force".
Result<EvictRequest> decode_evict(std::string_view payload);
Result<ReportRequest> decode_report(std::string_view payload);
// status, verify, providers, devices, prefetch, reload: no fields (an empty object or none).
Status decode_fieldless(std::string_view payload, wire::Opcode op);

// The decoder of `op`'s request; Errc::invalid_argument for hello, get and compile, which
// are not control operations.
Status decode_control(wire::Opcode op, std::string_view payload);

}  // namespace kcache::daemon
