// The TOML configuration file (docs/operations.md lists every key).
#include <toml++/toml.h>

#include <limits>
#include <optional>

#include "common/units.hpp"
#include "config/config.hpp"

namespace kcache::daemon {

namespace {

Error bad(const std::string& path, const std::string& key, const std::string& why) {
  return make_error(Errc::invalid_argument, path + ": " + key + ": " + why);
}

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

// A size is a TOML integer (bytes) or a string like "10G".
Result<std::uint64_t> size_value(const std::string& path, const std::string& key,
                                 const toml::node& node) {
  if (auto i = integer_of(node)) {
    if (*i < 0) return bad(path, key, "must not be negative");
    return static_cast<std::uint64_t>(*i);
  }
  if (auto s = node.value<std::string>()) {
    auto parsed = parse_size(*s);
    if (!parsed.ok()) return bad(path, key, parsed.error().message);
    return *parsed;
  }
  return bad(path, key, "expected a size (integer bytes or a string like \"10G\")");
}

// A duration is a TOML integer (seconds) or a string like "120s".
Result<std::chrono::milliseconds> duration_value(const std::string& path, const std::string& key,
                                                 const toml::node& node) {
  if (auto i = integer_of(node)) {
    if (*i < 0) return bad(path, key, "must not be negative");
    // As the string form ("…s") does: a count of milliseconds that overflows is refused.
    if (*i > std::numeric_limits<std::int64_t>::max() / 1000)
      return bad(path, key, std::to_string(*i) + " seconds is too large");
    return std::chrono::milliseconds(*i * 1000);
  }
  if (auto s = node.value<std::string>()) {
    auto parsed = parse_duration(*s);
    if (!parsed.ok()) return bad(path, key, parsed.error().message);
    return *parsed;
  }
  return bad(path, key, "expected a duration (integer seconds or a string like \"2m\")");
}

Result<std::string> string_value(const std::string& path, const std::string& key,
                                 const toml::node& node) {
  if (auto s = node.value<std::string>()) return *s;
  return bad(path, key, "expected a string");
}

Result<std::size_t> count_value(const std::string& path, const std::string& key,
                                const toml::node& node) {
  if (auto i = integer_of(node); i && *i >= 0) return static_cast<std::size_t>(*i);
  return bad(path, key, "expected a non-negative integer");
}

Status apply_key(const std::string& path, const std::string& key, const toml::node& node,
                 DaemonConfig& c) {
  if (key == "cache_dir") { KC_TRY_ASSIGN(c.cache_dir, string_value(path, key, node)); return {}; }
  if (key == "socket") { KC_TRY_ASSIGN(c.socket_path, string_value(path, key, node)); return {}; }
  if (key == "log_level") { KC_TRY_ASSIGN(c.log_level, string_value(path, key, node)); return {}; }
  if (key == "max_size") { KC_TRY_ASSIGN(c.max_size, size_value(path, key, node)); return {}; }
  if (key == "devices") {
    const auto* arr = node.as_array();
    if (arr == nullptr) return bad(path, key, "expected an array of strings");
    std::vector<std::string> devices;
    for (const auto& item : *arr) {
      auto s = item.value<std::string>();
      if (!s) return bad(path, key, "expected an array of strings");
      devices.push_back(*s);
    }
    c.devices = std::move(devices);
    return {};
  }
  if (key == "provider_roots") {
    const auto* arr = node.as_array();
    if (arr == nullptr) return bad(path, key, "expected an array of directories");
    std::vector<std::string> roots;
    for (const auto& item : *arr) {
      auto s = item.value<std::string>();
      if (!s || s->empty()) return bad(path, key, "expected an array of directories");
      roots.push_back(*s);
    }
    c.provider_roots = std::move(roots);
    return {};
  }
  if (key == "include_roots") {
    const auto* arr = node.as_array();
    if (arr == nullptr) return bad(path, key, "expected an array of directories");
    std::vector<std::string> roots;
    for (const auto& item : *arr) {
      auto s = item.value<std::string>();
      if (!s || s->empty() || !s->starts_with('/')) return bad(path, key, "expected an array of absolute directories");
      roots.push_back(*s);
    }
    c.include_roots = std::move(roots);
    return {};
  }
  if (key == "compile.workers") { KC_TRY_ASSIGN(c.compile_workers, count_value(path, key, node)); return {}; }
  if (key == "compile.timeout") { KC_TRY_ASSIGN(c.compile_timeout, duration_value(path, key, node)); return {}; }
  if (key == "scrub.rate") { KC_TRY_ASSIGN(c.scrub_rate, size_value(path, key, node)); return {}; }
  if (key == "compile.memory_limit") { KC_TRY_ASSIGN(c.compile_memory_limit, size_value(path, key, node)); return {}; }
  if (key == "compile.user") { KC_TRY_ASSIGN(c.compile_user, string_value(path, key, node)); return {}; }
  if (key == "compile.failure_ttl") { KC_TRY_ASSIGN(c.compile_failure_ttl, duration_value(path, key, node)); return {}; }
  if (key == "limits.max_frame") {
    KC_TRY_ASSIGN(const std::uint64_t v, size_value(path, key, node));
    if (v < 4096 || v > (1ull << 30)) return bad(path, key, "must be between 4K and 1G");
    c.max_frame = static_cast<std::uint32_t>(v);
    return {};
  }
  if (key == "limits.max_connections") { KC_TRY_ASSIGN(c.max_connections, count_value(path, key, node)); return {}; }
  if (key == "limits.max_connections_per_uid") { KC_TRY_ASSIGN(c.max_connections_per_uid, count_value(path, key, node)); return {}; }
  if (key == "limits.max_queued_per_client") { KC_TRY_ASSIGN(c.max_queued_per_client, size_value(path, key, node)); return {}; }
  if (key == "limits.frame_timeout") { KC_TRY_ASSIGN(c.frame_timeout, duration_value(path, key, node)); return {}; }
  if (key == "limits.stall_timeout") { KC_TRY_ASSIGN(c.stall_timeout, duration_value(path, key, node)); return {}; }
  if (key == "limits.idle_timeout") { KC_TRY_ASSIGN(c.idle_timeout, duration_value(path, key, node)); return {}; }
  if (key == "limits.max_pending_per_client") { KC_TRY_ASSIGN(c.max_pending_per_client, count_value(path, key, node)); return {}; }
  if (key == "limits.max_source") { KC_TRY_ASSIGN(c.limits.max_source, size_value(path, key, node)); return {}; }
  if (key == "limits.max_headers") { KC_TRY_ASSIGN(c.limits.max_headers, count_value(path, key, node)); return {}; }
  if (key == "limits.max_header_bytes") { KC_TRY_ASSIGN(c.limits.max_header_bytes, size_value(path, key, node)); return {}; }
  if (key == "limits.max_options") { KC_TRY_ASSIGN(c.limits.max_options, count_value(path, key, node)); return {}; }
  if (key == "limits.max_option_length") { KC_TRY_ASSIGN(c.limits.max_option_length, count_value(path, key, node)); return {}; }
  if (key == "limits.max_name") { KC_TRY_ASSIGN(c.limits.max_name, count_value(path, key, node)); return {}; }
  if (key == "socket_group") { KC_TRY_ASSIGN(c.socket_group, string_value(path, key, node)); return {}; }
  if (key == "admin_group") { KC_TRY_ASSIGN(c.admin_group, string_value(path, key, node)); return {}; }
  if (key == "socket_mode") {
    KC_TRY_ASSIGN(const std::string text, string_value(path, key, node));
    KC_TRY_ASSIGN(c.socket_mode, parse_socket_mode(text));
    return {};
  }
  if (key == "gc.grace") { KC_TRY_ASSIGN(c.gc_grace, duration_value(path, key, node)); return {}; }
  if (key == "gc.max_age") {
    KC_TRY_ASSIGN(const auto age, duration_value(path, key, node));
    c.gc_max_age = std::chrono::duration_cast<std::chrono::seconds>(age);
    return {};
  }
  if (key == "gc.high_watermark" || key == "gc.low_watermark") {
    auto pct = integer_of(node);
    if (!pct || *pct < 1 || *pct > 100) return bad(path, key, "expected a percentage of max_size, 1 to 100");
    (key == "gc.high_watermark" ? c.gc_high_watermark : c.gc_low_watermark) = static_cast<double>(*pct) / 100.0;
    return {};
  }
  if (key == "index.flush_interval") { KC_TRY_ASSIGN(c.index_flush_interval, duration_value(path, key, node)); return {}; }
  return bad(path, key, "unknown key");
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
        KC_TRY(apply_key(path, k + "." + std::string(subkey.str()), subnode, config));
      continue;
    }
    KC_TRY(apply_key(path, k, node, config));
  }
  config.config_file = path;
  return {};
}

}  // namespace kcache::daemon

namespace kcache::daemon {

Result<std::uint32_t> parse_socket_mode(const std::string& text) {
  std::uint32_t mode = 0;
  if (text.empty() || text.size() > 4)
    return make_error(Errc::invalid_argument, "socket mode '" + text + "' is not an octal mode like 0660");
  for (char ch : text) {
    if (ch < '0' || ch > '7')
      return make_error(Errc::invalid_argument, "socket mode '" + text + "' is not an octal mode like 0660");
    mode = mode * 8 + static_cast<std::uint32_t>(ch - '0');
  }
  if (mode > 0777) return make_error(Errc::invalid_argument, "socket mode '" + text + "' is above 0777");
  return mode;
}

}  // namespace kcache::daemon
