// common/units.hpp — human sizes, durations and permission modes, as operators type them.
//
// Sizes: an integer with an optional binary suffix K, M, G, T (also KiB/MiB/GiB/TiB, KB…,
// case-insensitive, all powers of 1024): "10G", "512M", "4096". Durations: an integer with a
// unit ms, s, m, h, d, w ("30d", "12h", "500ms"); a bare number is seconds.
// Bad input → Errc::invalid_argument quoting it. Overflow is an error, never a wrap.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "kcache/result.hpp"

namespace kcache {

Result<std::uint64_t> parse_size(std::string_view text);
Result<std::chrono::milliseconds> parse_duration(std::string_view text);

// "1.5 GiB", "512 B": for humans, never parsed back.
std::string format_size(std::uint64_t bytes);
// A permission mode as chmod takes it and parse_socket_mode reads it: "0660", "0711".
std::string format_mode(std::uint32_t mode);
// The largest unit that divides `d` exactly, as parse_duration reads it: "15m", "10s", "1500ms".
std::string format_duration(std::chrono::milliseconds d);

}  // namespace kcache
