#include "common/units.hpp"

#include <cctype>
#include <charconv>
#include <cstdio>
#include <limits>

namespace kcache {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

struct NumberWithUnit {
  std::uint64_t value = 0;
  std::string unit;  // lowercase
};

// Splits "123abc" into 123 and "abc"; fails without leading digits.
Result<NumberWithUnit> split_number(std::string_view text, const char* what) {
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec == std::errc::result_out_of_range)
    return make_error(Errc::invalid_argument, std::string(what) + " '" + std::string(text) +
                                                  "' is too large");
  if (ec != std::errc() || ptr == text.data())
    return make_error(Errc::invalid_argument, std::string(what) + " '" + std::string(text) +
                                                  "' does not start with a number");
  std::string_view unit(ptr, static_cast<std::size_t>(end - ptr));
  while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  return NumberWithUnit{value, lower(unit)};
}

Result<std::uint64_t> scale(std::uint64_t value, std::uint64_t factor, std::string_view text,
                            const char* what) {
  if (factor != 0 && value > std::numeric_limits<std::uint64_t>::max() / factor)
    return make_error(Errc::invalid_argument, std::string(what) + " '" + std::string(text) +
                                                  "' is too large");
  return value * factor;
}

}  // namespace

Result<std::uint64_t> parse_size(std::string_view text) {
  KC_TRY_ASSIGN(const NumberWithUnit n, split_number(text, "size"));
  const std::uint64_t value = n.value;
  const std::string& unit = n.unit;
  std::uint64_t factor = 0;
  if (unit.empty() || unit == "b") factor = 1;
  else if (unit == "k" || unit == "kb" || unit == "kib") factor = 1ull << 10;
  else if (unit == "m" || unit == "mb" || unit == "mib") factor = 1ull << 20;
  else if (unit == "g" || unit == "gb" || unit == "gib") factor = 1ull << 30;
  else if (unit == "t" || unit == "tb" || unit == "tib") factor = 1ull << 40;
  else
    return make_error(Errc::invalid_argument, "size '" + std::string(text) +
                                                  "' has an unknown unit (use K, M, G or T)");
  return scale(value, factor, text, "size");
}

Result<std::chrono::milliseconds> parse_duration(std::string_view text) {
  KC_TRY_ASSIGN(const NumberWithUnit n, split_number(text, "duration"));
  const std::uint64_t value = n.value;
  const std::string& unit = n.unit;
  std::uint64_t factor = 0;
  if (unit == "ms") factor = 1;
  else if (unit.empty() || unit == "s") factor = 1000;
  else if (unit == "m" || unit == "min") factor = 60'000;
  else if (unit == "h") factor = 3'600'000;
  else if (unit == "d") factor = 86'400'000;
  else if (unit == "w") factor = 7 * 86'400'000ull;
  else
    return make_error(Errc::invalid_argument,
                      "duration '" + std::string(text) + "' has an unknown unit (use ms, s, m, h, d or w)");
  KC_TRY_ASSIGN(const std::uint64_t ms, scale(value, factor, text, "duration"));
  if (ms > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    return make_error(Errc::invalid_argument, "duration '" + std::string(text) + "' is too large");
  return std::chrono::milliseconds(static_cast<std::int64_t>(ms));
}

std::string format_size(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 5) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[u]);
  return buf;
}

std::string format_duration(std::chrono::milliseconds d) {
  static constexpr struct {
    std::int64_t ms;
    const char* unit;
  } kUnits[] = {{604'800'000, "w"}, {86'400'000, "d"}, {3'600'000, "h"}, {60'000, "m"}, {1000, "s"}};
  const std::int64_t ms = d.count();
  for (const auto& u : kUnits)
    if (ms != 0 && ms % u.ms == 0) return std::to_string(ms / u.ms) + u.unit;
  return std::to_string(ms) + "ms";
}

std::string format_mode(std::uint32_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

}  // namespace kcache
