// Parsing, bounds and documentation of the settings (settings.hpp).
#include "config/settings.hpp"

#include <algorithm>
#include <array>
#include <charconv>

#include "common/units.hpp"

namespace kcache::daemon {

namespace {

constexpr std::array kLogLevels{"trace", "debug", "info", "warn", "error", "critical", "off"};

Error refused(std::string why) { return make_error(Errc::invalid_argument, std::move(why)); }

// A size as the parser reads it where it is exact ("256M"), else in bytes.
std::string exact_size(std::uint64_t v) {
  static constexpr std::pair<std::uint64_t, const char*> kUnits[] = {
      {1ull << 40, "T"}, {1ull << 30, "G"}, {1ull << 20, "M"}, {1ull << 10, "K"}};
  for (const auto& [unit, suffix] : kUnits)
    if (v != 0 && v % unit == 0) return std::to_string(v / unit) + suffix;
  return std::to_string(v);
}

std::string in_unit(const Setting& s, std::uint64_t v) {
  switch (s.kind) {
    case SettingKind::size: return exact_size(v);
    case SettingKind::duration:
      return format_duration(std::chrono::milliseconds(static_cast<std::int64_t>(v)));
    case SettingKind::mode: return format_mode(static_cast<std::uint32_t>(v));
    default: return std::to_string(v);
  }
}

Result<std::uint64_t> parse_count(const std::string& text) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size())
    return refused("'" + text + "' is not a non-negative integer");
  return v;
}

Result<std::uint64_t> parse_number(const Setting& s, const std::string& text) {
  switch (s.kind) {
    case SettingKind::size: return parse_size(text);
    case SettingKind::duration: {
      KC_TRY_ASSIGN(const auto d, parse_duration(text));
      return static_cast<std::uint64_t>(d.count());
    }
    case SettingKind::mode: {
      KC_TRY_ASSIGN(const std::uint32_t mode, parse_socket_mode(text));
      return mode;
    }
    default: return parse_count(text);
  }
}

Status check_item(const Setting& s, const std::string& item) {
  switch (s.items) {
    case ItemRule::dirs:
      if (item.empty()) return refused("an empty directory name");
      return {};
    case ItemRule::absolute_dirs:
      if (!item.starts_with('/')) return refused("'" + item + "' is not an absolute directory");
      return {};
    case ItemRule::log_level:
      if (std::find(kLogLevels.begin(), kLogLevels.end(), item) == kLogLevels.end())
        return refused("'" + item + "' is not one of trace, debug, info, warn, error, critical, off");
      return {};
    default: return {};
  }
}

}  // namespace

std::string bounds_text(const Setting& s) {
  const bool has_min = s.min > 0, has_max = s.max != UINT64_MAX;
  if (!has_min && !has_max) return {};
  if (s.zero_ok) return "0 or at least " + in_unit(s, s.min);
  if (has_min && has_max) return "between " + in_unit(s, s.min) + " and " + in_unit(s, s.max);
  return has_min ? "at least " + in_unit(s, s.min) : "at most " + in_unit(s, s.max);
}

Status check_value(const Setting& s, const SettingValue& value) {
  if (const auto* list = std::get_if<std::vector<std::string>>(&value)) {
    for (const std::string& item : *list) KC_TRY(check_item(s, item));
    return {};
  }
  if (const auto* text = std::get_if<std::string>(&value)) return check_item(s, *text);
  const auto* number = std::get_if<std::uint64_t>(&value);
  if (number == nullptr) return {};  // unset
  const bool zero_passes = s.zero_ok && *number == 0;
  if (!zero_passes && (*number < s.min || *number > s.max))
    return refused(in_unit(s, *number) + " is out of range: must be " + bounds_text(s));
  return {};
}

Result<SettingValue> parse_text(const Setting& s, const std::string& text) {
  SettingValue value;
  if (s.kind == SettingKind::list) {
    value = std::vector<std::string>{text};
  } else if (s.kind == SettingKind::text) {
    value = text;
  } else {
    KC_TRY_ASSIGN(const std::uint64_t v, parse_number(s, text));
    value = v;
  }
  KC_TRY(check_value(s, value));
  return value;
}

std::string settings_markdown() {
  std::string out =
      "| setting | command line | default | on reload | meaning |\n|---|---|---|---|---|\n";
  for (const Setting& s : settings()) {
    const std::string flag = s.flag.empty() ? "—" : "`" + std::string(s.flag) + "`";
    std::string def = s.default_note.empty() ? "`" + std::string(s.default_value) + "`"
                                             : std::string(s.default_note);
    std::string doc(s.doc);
    if (const std::string bounds = bounds_text(s); !bounds.empty()) doc += " (" + bounds + ")";
    const char* reload = s.reload == ReloadPolicy::restart ? "restart" : "applied";
    out += "| `" + std::string(s.key) + "` | " + flag + " | " + def + " | " + reload + " | " + doc +
           " |\n";
  }
  return out;
}

Result<std::uint32_t> parse_socket_mode(const std::string& text) {
  std::uint32_t mode = 0;
  if (text.empty() || text.size() > 4)
    return refused("socket mode '" + text + "' is not an octal mode like 0660");
  for (char ch : text) {
    if (ch < '0' || ch > '7') return refused("socket mode '" + text + "' is not an octal mode like 0660");
    mode = mode * 8 + static_cast<std::uint32_t>(ch - '0');
  }
  if (mode > 0777) return refused("socket mode '" + text + "' is above 0777");
  return mode;
}

}  // namespace kcache::daemon
