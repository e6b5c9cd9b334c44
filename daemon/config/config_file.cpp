// The TOML configuration file: each key is a setting of the table (settings.hpp), read in the
// setting's TOML form and checked against the same bounds as the command line.
#include <toml++/toml.h>

#include <limits>
#include <optional>

#include "common/units.hpp"
#include "config/config.hpp"
#include "config/settings.hpp"

namespace kcache::daemon {

namespace {

// node.value<int64_t>() minus its undefined behaviour: toml++ converts a float that holds an
// integer, but casts one beyond int64's range unchecked (found by fuzz_config). Such floats
// are refused here before it looks; everything else converts as toml++ converts it.
std::optional<std::int64_t> integer_of(const toml::node& node) {
  if (const auto* f = node.as_floating_point()) {
    const double v = f->get();
    if (!(v >= -0x1p63 && v < 0x1p63)) return std::nullopt;  // NaN fails too
  }
  return node.value<std::int64_t>();
}

Error refused(std::string why) { return make_error(Errc::invalid_argument, std::move(why)); }

// A size is a TOML integer (bytes) or a string like "10G".
Result<SettingValue> size_of(const toml::node& node) {
  if (auto i = integer_of(node)) {
    if (*i < 0) return refused("must not be negative");
    return SettingValue(static_cast<std::uint64_t>(*i));
  }
  if (auto s = node.value<std::string>()) {
    KC_TRY_ASSIGN(const std::uint64_t v, parse_size(*s));
    return SettingValue(v);
  }
  return refused("expected a size (integer bytes or a string like \"10G\")");
}

// A duration is a TOML integer (seconds) or a string like "120s".
Result<SettingValue> duration_of(const toml::node& node) {
  if (auto i = integer_of(node)) {
    if (*i < 0) return refused("must not be negative");
    // As the string form ("…s") does: a count of milliseconds that overflows is refused.
    if (*i > std::numeric_limits<std::int64_t>::max() / 1000)
      return refused(std::to_string(*i) + " seconds is too large");
    return SettingValue(static_cast<std::uint64_t>(*i) * 1000);
  }
  if (auto s = node.value<std::string>()) {
    KC_TRY_ASSIGN(const auto d, parse_duration(*s));
    return SettingValue(static_cast<std::uint64_t>(d.count()));
  }
  return refused("expected a duration (integer seconds or a string like \"2m\")");
}

Result<SettingValue> list_of(const toml::node& node) {
  const auto* arr = node.as_array();
  if (arr == nullptr) return refused("expected an array of strings");
  std::vector<std::string> items;
  for (const auto& item : *arr) {
    auto s = item.value<std::string>();
    if (!s) return refused("expected an array of strings");
    items.push_back(*s);
  }
  return SettingValue(std::move(items));
}

Result<SettingValue> value_of(const Setting& s, const toml::node& node) {
  switch (s.kind) {
    case SettingKind::size: return size_of(node);
    case SettingKind::duration: return duration_of(node);
    case SettingKind::list: return list_of(node);
    case SettingKind::count:
    case SettingKind::percent:
      if (auto i = integer_of(node); i && *i >= 0) return SettingValue(static_cast<std::uint64_t>(*i));
      return refused(s.kind == SettingKind::percent ? "expected a percentage of max_size, 1 to 100"
                                                    : "expected a non-negative integer");
    case SettingKind::mode: {
      auto text = node.value<std::string>();
      if (!text) return refused("expected an octal mode as a string, like \"0660\"");
      KC_TRY_ASSIGN(const std::uint32_t mode, parse_socket_mode(*text));
      return SettingValue(std::uint64_t{mode});
    }
    case SettingKind::text:
      if (auto text = node.value<std::string>()) return SettingValue(*text);
      return refused("expected a string");
  }
  return refused("unknown kind");
}

Status apply_key(const std::string& key, const toml::node& node, DaemonConfig& config) {
  const Setting* setting = find_setting(key);
  if (setting == nullptr) return refused("unknown key");
  KC_TRY_ASSIGN(SettingValue value, value_of(*setting, node));
  KC_TRY(check_value(*setting, value));
  setting->store(config, std::move(value));
  return {};
}

Status apply_named(const std::string& path, const std::string& key, const toml::node& node,
                   DaemonConfig& config) {
  if (auto applied = apply_key(key, node, config); !applied.ok())
    return refused(path + ": " + key + ": " + applied.error().message);
  return {};
}

}  // namespace

Status load_config_file(const std::string& path, DaemonConfig& config) {
  toml::table table;
  try {
    table = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    const auto& where = e.source().begin;
    return make_error(Errc::invalid_argument, path + ":" + std::to_string(where.line) + ":" +
                                                  std::to_string(where.column) + ": " +
                                                  std::string(e.description()));
  }
  for (const auto& [key, node] : table) {
    const std::string k(key.str());
    if (const auto* sub = node.as_table()) {
      for (const auto& [subkey, subnode] : *sub)
        KC_TRY(apply_named(path, k + "." + std::string(subkey.str()), subnode, config));
      continue;
    }
    KC_TRY(apply_named(path, k, node, config));
  }
  config.config_file = path;
  return {};
}

}  // namespace kcache::daemon
