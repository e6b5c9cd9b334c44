// Daemon::reload — re-read the configuration (SIGHUP, the `reload` operation, D-Bus Reload).
//
// The command line is parsed again exactly as at start-up (file, then KCACHE_DEVICES, then
// the command line itself), so precedence cannot drift between start-up and reload. The new
// configuration is checked completely before anything is applied: a bad file changes nothing.
// What can change at run time is applied; every other changed key is named in
// `needs_restart` and keeps its running value (docs/operations.md lists both sets).
#include <spdlog/spdlog.h>
#include <systemd/sd-daemon.h>
#include <time.h>

#include <nlohmann/json.hpp>

#include "app/daemon.hpp"
#include "app/service_snapshot.hpp"

namespace kcache::daemon {

namespace {

using nlohmann::json;

std::uint64_t monotonic_usec() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec) / 1000u;
}

// Keys applied at run time: limits are read per request or per connection, so the new value
// holds from the next request (max_frame: from the next connection).
template <class F>
void for_each_runtime_limit(DaemonConfig& now, const DaemonConfig& next, F&& f) {
  f("max_size", now.max_size, next.max_size);
  f("limits.max_frame", now.max_frame, next.max_frame);
  f("limits.max_connections", now.max_connections, next.max_connections);
  f("limits.max_pending_per_client", now.max_pending_per_client, next.max_pending_per_client);
  f("limits.max_name", now.limits.max_name, next.limits.max_name);
  f("limits.max_source", now.limits.max_source, next.limits.max_source);
  f("limits.max_headers", now.limits.max_headers, next.limits.max_headers);
  f("limits.max_header_bytes", now.limits.max_header_bytes, next.limits.max_header_bytes);
  f("limits.max_options", now.limits.max_options, next.limits.max_options);
  f("limits.max_option_length", now.limits.max_option_length, next.limits.max_option_length);
  f("gc.grace", now.gc_grace, next.gc_grace);
  f("gc.high_watermark", now.gc_high_watermark, next.gc_high_watermark);
  f("gc.low_watermark", now.gc_low_watermark, next.gc_low_watermark);
  f("gc.max_age", now.gc_max_age, next.gc_max_age);
}

// Keys that only a restart applies: they shape components built once at start-up.
void restart_only_changes(const DaemonConfig& now, const DaemonConfig& next, json& out) {
  if (next.cache_dir != now.cache_dir) out.push_back("cache_dir");
  if (!next.socket_path.empty() && next.socket_path != now.socket_path) out.push_back("socket");
  if (next.compile_workers != now.compile_workers) out.push_back("compile.workers");
  if (next.compile_timeout != now.compile_timeout) out.push_back("compile.timeout");
  if (next.compile_memory_limit != now.compile_memory_limit) out.push_back("compile.memory_limit");
  if (next.scrub_rate != now.scrub_rate) out.push_back("scrub.rate");
  if (next.compile_failure_ttl != now.compile_failure_ttl) out.push_back("compile.failure_ttl");
  if (next.compile_user != now.compile_user) out.push_back("compile.user");
  if (next.index_flush_interval != now.index_flush_interval)
    out.push_back("index.flush_interval");
  if (next.provider_roots != now.provider_roots) out.push_back("provider_roots");
  if (next.include_roots != now.include_roots) out.push_back("include_roots");
  if (next.socket_mode != now.socket_mode) out.push_back("socket_mode");
  if (next.socket_group != now.socket_group) out.push_back("socket_group");
}

}  // namespace

Result<json> Daemon::reload(std::string_view origin) {
  spdlog::info("reloading the configuration ({})", origin);
  // systemd shows the unit as "reloading" until READY=1 comes back, success or not.
  sd_notifyf(0, "RELOADING=1\nSTATUS=reloading the configuration\nMONOTONIC_USEC=%llu",
             static_cast<unsigned long long>(monotonic_usec()));
  auto result = apply_reload();
  if (!result.ok()) spdlog::error("reload failed, nothing changed: {}", result.error().message);
  sd_notifyf(0, "READY=1\nSTATUS=%s", ServiceSnapshot::of(*this).summary().c_str());
  return result;
}

Result<json> Daemon::apply_reload() {
  if (config_.command_line.empty())
    return make_error(Errc::invalid_argument, "this daemon was not started from a command line");
  std::vector<std::string> args = config_.command_line;
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  KC_TRY_ASSIGN(ParsedArgs parsed, parse_daemon_args(static_cast<int>(args.size()), argv.data()));
  DaemonConfig next = std::move(parsed.config);
  KC_TRY(apply_default_paths(next));

  // Everything that can fail is done before anything changes.
  const bool devices_changed = next.devices != config_.devices;
  std::optional<DeviceTable> devices;
  if (devices_changed) {
    KC_TRY_ASSIGN(DeviceTable table, DeviceTable::resolve(next.devices, config_.sysfs_root));
    devices = std::move(table);
  }
  std::optional<gid_t> admin_gid;
  const bool admin_changed = next.admin_group != config_.admin_group;
  if (admin_changed && !next.admin_group.empty()) {
    KC_TRY_ASSIGN(admin_gid, resolve_group(next.admin_group));
  }

  json changed = json::array();
  json needs_restart = json::array();
  restart_only_changes(config_, next, needs_restart);
  if (next.log_level != config_.log_level) {
    // Compile workers keep the level they were started with until they are replaced.
    spdlog::set_level(spdlog::level::from_str(next.log_level));
    config_.log_level = next.log_level;
    changed.push_back("log_level");
  }
  for_each_runtime_limit(config_, next, [&](const char* name, auto& value, const auto& wanted) {
    if (value == wanted) return;
    value = wanted;
    changed.push_back(name);
  });
  // The collector reads its policy at the start of each run; a lower budget starts one now.
  gc_->set_policy(gc_policy(config_));
  gc_->maybe_start();
  if (admin_changed) {
    admin_.set_group(admin_gid, next.admin_group);
    config_.admin_group = next.admin_group;
    changed.push_back("admin_group");
  }
  if (devices_changed) {
    config_.devices = next.devices;
    const bool different = !devices->same_devices(devices_);
    devices_ = std::move(*devices);
    if (different) {
      changed.push_back("devices");
      // Provider selection is per device: choose again for the new table.
      if (providers_->enabled()) providers_->rescan([] {});
    }
    for (const auto& note : devices_.notes()) spdlog::info("device discovery: {}", note);
    for (const auto& dev : devices_.devices())
      spdlog::info("device {}: {} {} → {} ({}, {})", dev.index, dev.backend, dev.arch,
                   dev.compile_target, dev.source, dev.name);
  }
  for (const auto& key : needs_restart)
    spdlog::warn("reload: {} changed; it takes effect at the next restart", key.get<std::string>());
  spdlog::info("reload done: {} changed", changed.size());
  return json{{"reloaded", true},
              {"changed", std::move(changed)},
              {"needs_restart", std::move(needs_restart)},
              {"devices", devices_.to_json()}};
}

}  // namespace kcache::daemon
