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
#include "config/settings.hpp"

namespace kcache::daemon {

namespace {

using nlohmann::json;

std::uint64_t monotonic_usec() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec) / 1000u;
}

// The settings whose value changed, by what a reload does with them (settings.hpp): `live`
// ones are taken into the running configuration here (their users read it at each use);
// `step` ones are applied by a step of their own below; `restart` ones are only reported.
struct SettingChanges {
  std::vector<const Setting*> live, step, restart;
};

SettingChanges diff_settings(const DaemonConfig& now, const DaemonConfig& next) {
  SettingChanges out;
  for (const Setting& s : settings()) {
    if (s.load(now) == s.load(next)) continue;
    switch (s.reload) {
      case ReloadPolicy::live: out.live.push_back(&s); break;
      case ReloadPolicy::step: out.step.push_back(&s); break;
      case ReloadPolicy::restart: out.restart.push_back(&s); break;
    }
  }
  return out;
}

// The command line as given at start-up, parsed again exactly as then.
Result<DaemonConfig> parse_again(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  KC_TRY_ASSIGN(ParsedArgs parsed, parse_daemon_args(static_cast<int>(args.size()), argv.data()));
  KC_TRY(apply_default_paths(parsed.config));
  return std::move(parsed.config);
}

bool changed(const SettingChanges& c, std::string_view key) {
  for (const Setting* s : c.step)
    if (s->key == key) return true;
  return false;
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
  KC_TRY_ASSIGN(DaemonConfig next, parse_again(config_.command_line));
  // No socket named: the daemon keeps the one systemd passed it, or its default path.
  if (next.socket_path.empty()) next.socket_path = config_.socket_path;
  const SettingChanges changes = diff_settings(config_, next);

  // Everything that can fail is done before anything changes.
  std::optional<DeviceTable> devices;
  if (changed(changes, "devices")) {
    KC_TRY_ASSIGN(DeviceTable table, DeviceTable::resolve(next.devices, config_.sysfs_root));
    devices = std::move(table);
  }
  std::optional<gid_t> admin_gid;
  const bool admin_changed = changed(changes, "admin_group");
  if (admin_changed && !next.admin_group.empty()) {
    KC_TRY_ASSIGN(admin_gid, resolve_group(next.admin_group));
  }

  json applied = json::array();
  for (const Setting* s : changes.live) {
    s->store(config_, s->load(next));
    applied.push_back(s->key);
  }
  // The collector reads its policy at the start of each run; a lower budget starts one now.
  gc_->set_policy(gc_policy(config_));
  gc_->maybe_start();
  if (changed(changes, "log_level")) {
    // Compile workers keep the level they were started with until they are replaced.
    spdlog::set_level(spdlog::level::from_str(next.log_level));
    config_.log_level = next.log_level;
    applied.push_back("log_level");
  }
  if (admin_changed) {
    admin_.set_group(admin_gid, next.admin_group);
    config_.admin_group = next.admin_group;
    applied.push_back("admin_group");
  }
  if (devices) {
    config_.devices = next.devices;
    if (replace_devices(std::move(*devices))) applied.push_back("devices");
  }
  json needs_restart = json::array();
  for (const Setting* s : changes.restart) {
    spdlog::warn("reload: {} changed; it takes effect at the next restart", s->key);
    needs_restart.push_back(s->key);
  }
  spdlog::info("reload done: {} changed", applied.size());
  return json{{"reloaded", true},
              {"changed", std::move(applied)},
              {"needs_restart", std::move(needs_restart)},
              {"devices", devices_.to_json()}};
}

bool Daemon::replace_devices(DeviceTable devices) {
  const bool different = !devices.same_devices(devices_);
  devices_ = std::move(devices);
  // Provider selection is per device: choose again for the new table.
  if (different && providers_->enabled()) providers_->rescan([] {});
  for (const auto& note : devices_.notes()) spdlog::info("device discovery: {}", note);
  for (const auto& dev : devices_.devices())
    spdlog::info("device {}: {} {} → {} ({}, {})", dev.index, dev.backend, dev.arch,
                 dev.compile_target, dev.source, dev.name);
  return different;
}

}  // namespace kcache::daemon
