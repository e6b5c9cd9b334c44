// compile/request_rules.hpp — what a compile request may contain (DESIGN §9): the daemon
// checks every get with it, and libkcache's in-process fallback applies the same rules.
//
// Contract: check_request_limits fails with Errc::too_large naming the limit and the value
// (name length, source size, header count and bytes, option count and length) or
// Errc::invalid_argument for content that can never be valid (an empty name, a NUL in a name,
// a module name, version or header name that is not UTF-8 or holds a control character
// (common/text.hpp), a header without a name, duplicate header names). Options are checked by
// compile/option_rules.hpp, include directives by compile/include_rules.hpp.
#pragma once

#include <string>

#include "kcache/result.hpp"
#include "wire/messages.hpp"

namespace kcache {

struct RequestLimits {
  std::size_t max_name = 1024;
  std::size_t max_source = 16u << 20;
  std::size_t max_headers = 256;
  std::size_t max_header_bytes = 16u << 20;
  std::size_t max_options = 256;
  std::size_t max_option_length = 4096;
};

Status check_request_limits(const wire::GetRequest& request, const RequestLimits& limits);
}  // namespace kcache
