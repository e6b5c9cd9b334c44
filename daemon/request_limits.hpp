// request_limits.hpp — what a get request may contain (DESIGN §9).
//
// Contract: check_request_limits fails with Errc::too_large naming the limit and the value
// (name length, source size, header count and bytes, option count and length) or
// Errc::invalid_argument for content that can never be valid (an empty name, a NUL in a name,
// a header without a name, duplicate header names). check_compile_options refuses options
// that would choose the target behind the daemon's back or write files outside its control.
#pragma once

#include <span>
#include <string>

#include "config.hpp"
#include "kcache/result.hpp"
#include "wire/messages.hpp"

namespace kcache::daemon {

Status check_request_limits(const wire::GetRequest& request, const RequestLimits& limits);
Status check_compile_options(std::span<const std::string> options);

}  // namespace kcache::daemon
