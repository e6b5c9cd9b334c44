// The settings table (settings.hpp): each setting of kcached, once.
#include <cmath>
#include <optional>

#include "config/settings.hpp"

namespace kcache::daemon {

namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// A field's value in and out of SettingValue. The kind (parse) and the field type (storage)
// are checked against each other by the unit test that round-trips every default.
void store_field(std::string& f, SettingValue v) { f = std::get<std::string>(std::move(v)); }
template <std::unsigned_integral T>
void store_field(T& f, SettingValue v) { f = static_cast<T>(std::get<std::uint64_t>(v)); }
void store_field(milliseconds& f, SettingValue v) {
  f = milliseconds(static_cast<milliseconds::rep>(std::get<std::uint64_t>(v)));
}
void store_field(std::optional<seconds>& f, SettingValue v) {
  if (std::holds_alternative<std::monostate>(v)) return f.reset();
  f = seconds(static_cast<seconds::rep>(std::get<std::uint64_t>(v) / 1000));
}
void store_field(double& percent_of_one, SettingValue v) {
  percent_of_one = static_cast<double>(std::get<std::uint64_t>(v)) / 100.0;
}
void store_field(std::vector<std::string>& f, SettingValue v) {
  f = std::get<std::vector<std::string>>(std::move(v));
}
void store_field(std::optional<std::vector<std::string>>& f, SettingValue v) {
  if (std::holds_alternative<std::monostate>(v)) return f.reset();
  f = std::get<std::vector<std::string>>(std::move(v));
}

SettingValue load_field(const std::string& f) { return f; }
template <std::unsigned_integral T>
SettingValue load_field(const T& f) { return static_cast<std::uint64_t>(f); }
SettingValue load_field(const milliseconds& f) { return static_cast<std::uint64_t>(f.count()); }
SettingValue load_field(const std::optional<seconds>& f) {
  if (!f) return std::monostate{};
  return static_cast<std::uint64_t>(f->count()) * 1000;
}
SettingValue load_field(const double& percent_of_one) {
  return static_cast<std::uint64_t>(std::llround(percent_of_one * 100.0));
}
SettingValue load_field(const std::vector<std::string>& f) { return f; }
SettingValue load_field(const std::optional<std::vector<std::string>>& f) {
  if (!f) return std::monostate{};
  return *f;
}

#define KC_FIELD(member)                                                                   \
  [](DaemonConfig& c, SettingValue v) { store_field(c.member, std::move(v)); },            \
      [](const DaemonConfig& c) { return load_field(c.member); }

using K = SettingKind;
using R = ReloadPolicy;
constexpr std::uint64_t kNoMax = UINT64_MAX;

// key, flag, kind, item rule, min, max, zero_ok, default, default in words, reload, doc, field
const Setting kSettings[] = {
    {"cache_dir", "--cache-dir", K::text, ItemRule::any, 0, kNoMax, false, "",
     "root: `/var/cache/kcache`; else `$XDG_CACHE_HOME/kcache` or `~/.cache/kcache`", R::restart,
     "the cache directory kcached owns (flock on the directory and on `kcache.lock`)",
     KC_FIELD(cache_dir)},
    {"socket", "--socket", K::text, ItemRule::any, 0, kNoMax, false, "",
     "the socket systemd passes; root: `/run/kcache/kcache.sock`; else `$XDG_RUNTIME_DIR/kcache.sock`",
     R::restart, "where clients connect", KC_FIELD(socket_path)},
    {"socket_mode", "--socket-mode", K::mode, ItemRule::any, 0, 0777, false, "0660", "", R::restart,
     "mode of the socket kcached binds (octal)", KC_FIELD(socket_mode)},
    {"socket_group", "--socket-group", K::text, ItemRule::any, 0, kNoMax, false, "",
     "the daemon's group", R::restart, "group of the socket kcached binds", KC_FIELD(socket_group)},
    {"admin_group", "--admin-group", K::text, ItemRule::any, 0, kNoMax, false, "", "none", R::step,
     "members may run admin operations (gc, evict, verify, prefetch, reload)", KC_FIELD(admin_group)},
    {"devices", "--devices", K::list, ItemRule::devices, 0, kNoMax, false, "", "GPU discovery",
     R::step,
     "devices replacing discovery: capabilities (`9.0`), CUDA targets (`sm_90a`) or AMD target IDs "
     "(`gfx942`); comma-separated on the command line; also `$KCACHE_DEVICES`",
     KC_FIELD(devices)},
    {"provider_roots", "--provider-root", K::list, ItemRule::dirs, 0, kNoMax, false, "", "none",
     R::restart, "directories of provider artifacts to watch (the flag repeats)",
     KC_FIELD(provider_roots)},
    {"include_roots", "--include-root", K::list, ItemRule::absolute_dirs, 0, kNoMax, false, "",
     "none", R::restart, "header directories compiles may name with `-I` (the flag repeats)",
     KC_FIELD(include_roots)},
    {"log_level", "--log-level", K::text, ItemRule::log_level, 0, kNoMax, false, "info", "", R::step,
     "`trace`, `debug`, `info`, `warn`, `error`, `critical` or `off`", KC_FIELD(log_level)},
    {"max_size", "--max-size", K::size, ItemRule::any, 0, kNoMax, false, "10G", "", R::live,
     "the cache's size budget (GC keeps it)", KC_FIELD(max_size)},
    {"compile.workers", "--compile-workers", K::count, ItemRule::any, 0, 4096, false, "0",
     "`0`: the number of cores", R::restart, "concurrent compile worker processes",
     KC_FIELD(compile_workers)},
    {"compile.timeout", "--compile-timeout", K::duration, ItemRule::any, 1000, kNoMax, false,
     "120s", "", R::restart, "per compile; the worker is killed past it", KC_FIELD(compile_timeout)},
    {"compile.memory_limit", "--compile-memory-limit", K::size, ItemRule::any, 256ull << 20,
     kNoMax, true, "8G", "", R::restart,
     "address-space limit (RLIMIT_AS) of each compile worker; `0`: none",
     KC_FIELD(compile_memory_limit)},
    {"compile.failure_ttl", "--compile-failure-ttl", K::duration, ItemRule::any, 0, kNoMax, false,
     "60s", "", R::restart, "how long a failed compile is answered from memory; `0`: never",
     KC_FIELD(compile_failure_ttl)},
    {"compile.user", "--compile-user", K::text, ItemRule::any, 0, kNoMax, false, "nobody", "",
     R::restart,
     "the user a root kcached runs its compile workers as; root and the cache's owner are refused",
     KC_FIELD(compile_user)},
    {"scrub.rate", "--scrub-rate", K::size, ItemRule::any, 0, kNoMax, false, "8M", "", R::restart,
     "bytes per second of stored objects re-verified in the background; `0`: off",
     KC_FIELD(scrub_rate)},
    {"gc.grace", "--gc-grace", K::duration, ItemRule::any, 0, kNoMax, false, "60s", "", R::live,
     "entries served this recently are never evicted", KC_FIELD(gc_grace)},
    {"gc.high_watermark", "", K::percent, ItemRule::any, 1, 100, false, "100", "", R::live,
     "a collection starts when the cache passes this percentage of `max_size`",
     KC_FIELD(gc_high_watermark)},
    {"gc.low_watermark", "", K::percent, ItemRule::any, 1, 100, false, "90", "", R::live,
     "… and removes entries until the cache is under this percentage (at most the high one)",
     KC_FIELD(gc_low_watermark)},
    {"gc.max_age", "", K::duration, ItemRule::any, 1000, kNoMax, false, "", "none", R::live,
     "entries not served for this long are removed whatever the cache's size", KC_FIELD(gc_max_age)},
    {"limits.max_frame", "--max-frame", K::size, ItemRule::any, 4096, 1ull << 30, false, "64M", "",
     R::live, "largest request payload accepted (from the next connection)", KC_FIELD(max_frame)},
    {"limits.max_connections", "", K::count, ItemRule::any, 0, kNoMax, false, "1024", "", R::live,
     "connections at once; beyond it new ones are closed at once", KC_FIELD(max_connections)},
    {"limits.max_connections_per_uid", "", K::count, ItemRule::any, 0, kNoMax, false, "512", "",
     R::live, "connections of one peer uid at once", KC_FIELD(max_connections_per_uid)},
    {"limits.max_queued_per_client", "", K::size, ItemRule::any, 0, kNoMax, false, "64M", "",
     R::live, "replies waiting for a client that does not read (from the next connection)",
     KC_FIELD(max_queued_per_client)},
    {"limits.frame_timeout", "", K::duration, ItemRule::any, 0, kNoMax, false, "10s", "", R::live,
     "`hello`, and any frame once started, must complete within this", KC_FIELD(frame_timeout)},
    {"limits.stall_timeout", "", K::duration, ItemRule::any, 0, kNoMax, false, "30s", "", R::live,
     "replies that do not move this long: the connection is closed", KC_FIELD(stall_timeout)},
    {"limits.idle_timeout", "", K::duration, ItemRule::any, 0, kNoMax, false, "15m", "", R::live,
     "no request this long: closed (libkcache reconnects)", KC_FIELD(idle_timeout)},
    {"limits.max_pending_per_client", "", K::count, ItemRule::any, 0, kNoMax, false, "64", "",
     R::live, "requests of one connection answered later (compiles, ls, verify)",
     KC_FIELD(max_pending_per_client)},
    {"limits.max_name", "", K::count, ItemRule::any, 0, kNoMax, false, "1024", "", R::live,
     "bytes in a module name", KC_FIELD(limits.max_name)},
    {"limits.max_source", "", K::size, ItemRule::any, 0, kNoMax, false, "16M", "", R::live,
     "bytes of source in one request", KC_FIELD(limits.max_source)},
    {"limits.max_headers", "", K::count, ItemRule::any, 0, kNoMax, false, "256", "", R::live,
     "headers in one request", KC_FIELD(limits.max_headers)},
    {"limits.max_header_bytes", "", K::size, ItemRule::any, 0, kNoMax, false, "16M", "", R::live,
     "bytes of headers in one request", KC_FIELD(limits.max_header_bytes)},
    {"limits.max_options", "", K::count, ItemRule::any, 0, kNoMax, false, "256", "", R::live,
     "compiler options in one request", KC_FIELD(limits.max_options)},
    {"limits.max_option_length", "", K::count, ItemRule::any, 0, kNoMax, false, "4096", "", R::live,
     "bytes in one compiler option", KC_FIELD(limits.max_option_length)},
    {"index.flush_interval", "", K::duration, ItemRule::any, 0, kNoMax, false, "100ms", "",
     R::restart, "how often access times and counters reach SQLite", KC_FIELD(index_flush_interval)},
    {"sysfs_root", "--sysfs-root", K::text, ItemRule::any, 0, kNoMax, false, "/sys", "",
     R::restart, "where sysfs is mounted, for AMD discovery (tests, containers)", KC_FIELD(sysfs_root)},
    {"bus_address", "--bus-address", K::text, ItemRule::any, 0, kNoMax, false, "",
     "the system bus", R::restart, "D-Bus address for org.kcache1; `none`: no D-Bus",
     KC_FIELD(bus_address)},
};

#undef KC_FIELD

}  // namespace

std::span<const Setting> settings() { return kSettings; }

const Setting* find_setting(std::string_view key) {
  for (const Setting& s : kSettings)
    if (s.key == key) return &s;
  return nullptr;
}

}  // namespace kcache::daemon
