// arch/text_util.hpp — small ASCII helpers shared by the target and variant parsers.
//
// Contract: locale-independent (never calls <cctype> with a negative char), no allocation
// except where a std::string is returned.
#pragma once

#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kcache {

inline bool is_ascii_digit(char c) noexcept {
  return c >= '0' && c <= '9';
}
inline bool is_ascii_lower(char c) noexcept {
  return c >= 'a' && c <= 'z';
}

inline bool all_digits(std::string_view s) noexcept {
  if (s.empty()) return false;
  for (char c : s)
    if (!is_ascii_digit(c)) return false;
  return true;
}

inline std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// Decimal digits only (no sign, no spaces), at most 9 of them so the value fits an int.
inline std::optional<int> parse_small_uint(std::string_view s) noexcept {
  if (!all_digits(s) || s.size() > 9) return std::nullopt;
  int value = 0;
  std::from_chars(s.data(), s.data() + s.size(), value);
  return value;
}

// Like parse_small_uint, but also refuses leading zeros ("07"), so every accepted text is
// the one the number prints as and no name is silently reinterpreted.
inline std::optional<int> parse_canonical_uint(std::string_view s) noexcept {
  if (s.size() > 1 && s[0] == '0') return std::nullopt;
  return parse_small_uint(s);
}

// Splits on `sep`, keeping empty pieces (so "a--b" yields an empty middle piece to reject).
inline std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      parts.push_back(s.substr(start));
      return parts;
    }
    parts.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

}  // namespace kcache
