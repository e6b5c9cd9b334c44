// compile/request_rules.hpp — what a compile request may contain (DESIGN §9): the daemon
// checks every get with it, and libkcache's in-process fallback applies the same rules.
//
// Contract: check_request_limits fails with Errc::too_large naming the limit and the value
// (name length, source size, header count and bytes, option count and length) or
// Errc::invalid_argument for content that can never be valid (an empty name, a NUL in a name,
// a header without a name, duplicate header names). check_compile_options refuses options
// that would choose the target behind the daemon's back or write files outside its control.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>

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
// Whether an include directory an option names may be used (the daemon's include_roots).
using IncludeDirCheck = std::function<bool(std::string_view dir)>;

// With `allow_include`, `-I DIR`/`-IDIR`/`-isystem DIR`/`--include-path=DIR` pass when it
// allows DIR and fail naming include_roots when not; without, every include option fails.
Status check_compile_options(std::span<const std::string> options,
                             const IncludeDirCheck& allow_include = {});

}  // namespace kcache
