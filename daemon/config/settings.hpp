// settings.hpp — every setting kcached takes, written once: its TOML key, command-line flag,
// kind, bounds, default, reload policy and one line of documentation.
//
// Contract:
//  * `settings()` is the table, in the order docs/operations.md lists it. The TOML loader
//    (config_file.cpp), the command line (options.cpp), reload (app/reload.cpp) and the
//    settings table of docs/operations.md (rendered by `settings_markdown()`, compared by a
//    test) all read it: no other file names a key, a flag or a bound.
//  * `parse_text(setting, text)` takes one command-line or environment value (one element of
//    a list) and gives it within the setting's bounds, or the reason it is refused (the caller
//    prefixes where it came from). The TOML file's forms go through `check_value` (the same
//    bounds). `bounds_text` says the bounds in words, for errors and the docs alike.
//  * `setting.store(config, value)` sets the field; `setting.load(config)` reads it back in the
//    same form, so two configurations compare setting by setting (reload's diff).
//  * `find_setting(key)` looks a TOML key up; nullptr when no setting has it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "config/config.hpp"
#include "kcache/result.hpp"

namespace kcache::daemon {

enum class SettingKind {
  text,      // a string (log_level: one of a fixed set)
  size,      // bytes: TOML integer or "10G"; command line "10G"
  duration,  // milliseconds: TOML integer seconds or "120s"; command line "120s"
  count,     // a non-negative integer
  percent,   // 1 to 100, of max_size
  mode,      // octal permission bits, as chmod takes them ("0660")
  list,      // strings: TOML array; command line repeated (or comma-separated: devices)
};

enum class ItemRule { any, log_level, devices, dirs, absolute_dirs };

// How a reload treats a changed value (docs/systemd.md, "Reload").
enum class ReloadPolicy {
  live,     // read where it is used, so the new value holds from the next use
  step,     // applied by a step of its own in reload (log level, admin group, devices)
  restart,  // shapes something built once at start-up: reported in needs_restart
};

// std::monostate: unset (an optional setting without a value). Durations are milliseconds.
using SettingValue = std::variant<std::monostate, std::string, std::uint64_t, std::vector<std::string>>;

struct Setting {
  std::string_view key;   // TOML key ("compile.timeout")
  std::string_view flag;  // command-line flag ("--compile-timeout"); empty: file only
  SettingKind kind;
  ItemRule items;  // what each value (each list item) must be
  std::uint64_t min;      // in the kind's unit; a size or duration of 0 passes when zero_ok
  std::uint64_t max;
  bool zero_ok;
  std::string_view default_value;  // DaemonConfig{}'s value as the parser takes it; "" unset
  std::string_view default_note;   // the default in words, where the value alone says too little
  ReloadPolicy reload;
  std::string_view doc;            // one line: what it does
  void (*store)(DaemonConfig&, SettingValue);
  SettingValue (*load)(const DaemonConfig&);
};

std::span<const Setting> settings();
const Setting* find_setting(std::string_view key);

Result<SettingValue> parse_text(const Setting& setting, const std::string& text);
// A value in the setting's unit (a list: every item) within its bounds, or why not.
Status check_value(const Setting& setting, const SettingValue& value);
// "between 4 KiB and 1 GiB", "at least 1s", "0 or at least 256 MiB"; empty when unbounded.
std::string bounds_text(const Setting& setting);

// The settings table of docs/operations.md, as Markdown rows (header included).
std::string settings_markdown();

// "0660" (octal, as chmod takes it) → 0660; at most 0777.
Result<std::uint32_t> parse_socket_mode(const std::string& text);

}  // namespace kcache::daemon
