// kcached's command line (DESIGN §8): CLI11 parses, the config file fills the gaps.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "common/paths.hpp"
#include "common/units.hpp"
#include "config/config.hpp"
#include "kcache_config.h"

namespace kcache::daemon {

namespace {
std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}
// "UID:GID:NAME", as worker_confinement.cpp's to_args() writes it.
Result<RunAs> parse_run_as(const std::string& text) {
  RunAs who;
  unsigned long uid = 0, gid = 0;
  int name_at = 0;
  if (std::sscanf(text.c_str(), "%lu:%lu:%n", &uid, &gid, &name_at) != 2 || name_at == 0)
    return make_error(Errc::invalid_argument, "--run-as: expected UID:GID:NAME, not '" + text + "'");
  who.uid = static_cast<uid_t>(uid);
  who.gid = static_cast<gid_t>(gid);
  who.name = text.substr(static_cast<std::size_t>(name_at));
  return who;
}

}  // namespace

Result<ParsedArgs> parse_daemon_args(int argc, char** argv) {
  ParsedArgs parsed;
  CLI::App app{"kcached — the per-host GPU kernel module cache daemon", "kcached"};
  app.set_version_flag("--version", std::string("kcached ") + KCACHE_VERSION);

  std::string cache_dir, socket, config_file, devices, log_level, max_size, timeout, max_frame;
  std::size_t workers = 0;
  app.add_option("--cache-dir", cache_dir, "Cache directory (default: /var/cache/kcache as root, else $XDG_CACHE_HOME/kcache)");
  app.add_option("--socket", socket, "Listening socket (default: /run/kcache/kcache.sock as root, else $XDG_RUNTIME_DIR/kcache.sock)");
  app.add_option("--config", config_file, "TOML configuration file")->check(CLI::ExistingFile);
  std::vector<std::string> provider_roots;
  app.add_option("--provider-root", provider_roots, "Directory of provider artifacts to watch (repeatable; replaces provider_roots of the config file)")
      ->allow_extra_args(false);
  std::vector<std::string> include_roots;
  app.add_option("--include-root", include_roots, "Header directory compiles may use with -I (repeatable; replaces include_roots of the config file)")
      ->allow_extra_args(false);
  app.add_option("--devices", devices, "Comma-separated device list replacing GPU discovery, e.g. sm_90a,gfx942 (also $KCACHE_DEVICES)");
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error, critical or off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
  app.add_option("--max-size", max_size, "Cache size budget, e.g. 10G (default 10G)");
  app.add_option("--compile-workers", workers, "Concurrent compile worker processes (default: cores)");
  app.add_option("--compile-timeout", timeout, "Per-compile timeout, e.g. 120s (default 120s)");
  std::string memory_limit, failure_ttl, scrub_rate;
  app.add_option("--scrub-rate", scrub_rate, "Bytes per second of stored objects re-verified in the background, e.g. 8M (default 8M; 0: off)");
  app.add_option("--compile-memory-limit", memory_limit, "Address-space limit of a compile worker, e.g. 8G (default 8G; 0: none)");
  app.add_option("--compile-failure-ttl", failure_ttl, "How long a failed compile is answered from memory, e.g. 60s (default 60s; 0: never)");
  app.add_option("--max-frame", max_frame, "Largest accepted request payload (default 64M)");
  std::string gc_grace, socket_mode, socket_group, admin_group;
  app.add_option("--gc-grace", gc_grace, "Entries served within this period are never evicted (default 60s)");
  app.add_option("--socket-mode", socket_mode, "Mode of the socket the daemon binds, octal (default 0660)");
  app.add_option("--socket-group", socket_group, "Group of the socket the daemon binds (default: the daemon's)");
  app.add_option("--admin-group", admin_group, "Members of this group may run admin operations (gc, evict, verify, prefetch, reload)");
  std::string sysfs_root, bus_address;
  app.add_option("--sysfs-root", sysfs_root, "Where sysfs is mounted, for AMD discovery (default /sys; tests, containers)");
  app.add_option("--bus-address", bus_address, "D-Bus address for org.kcache1 (default: the system bus; 'none': no D-Bus)");
  std::string compile_user;
  app.add_option("--compile-user", compile_user, "User a root kcached runs its compile workers as (default nobody; never root or the cache's owner)");
  app.add_flag("--compile-worker", parsed.compile_worker, "Internal: run as a compile worker")
      ->group("");
  std::string run_as;
  app.add_option("--scratch", parsed.worker_plan.scratch, "Internal: the worker's scratch directory")->group("");
  app.add_option("--read-root", parsed.worker_plan.read_roots, "Internal: a directory the worker may read")
      ->group("")->allow_extra_args(false);
  app.add_option("--run-as", run_as, "Internal: UID:GID:NAME the worker becomes")->group("");
  app.add_option("--preload", parsed.worker_plan.preload, "Internal: a backend the worker loads before confining")
      ->group("")->allow_extra_args(false);
  app.add_option("--probe-compiler", parsed.probe_compiler, "Internal: print a backend's compiler identity")
      ->group("");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    std::cout << app.help();
    parsed.exit_now = true;
    return parsed;
  } catch (const CLI::CallForVersion& e) {
    std::cout << e.what() << "\n";
    parsed.exit_now = true;
    return parsed;
  } catch (const CLI::ParseError& e) {
    return make_error(Errc::invalid_argument, e.what());
  }
  if (parsed.compile_worker || !parsed.probe_compiler.empty()) {
    parsed.config.log_level = log_level.empty() ? "info" : log_level;
    if (!memory_limit.empty()) {
      auto v = parse_size(memory_limit);
      if (!v.ok()) return make_error(Errc::invalid_argument, "--compile-memory-limit: " + v.error().message);
      parsed.config.compile_memory_limit = *v;
    }
    if (!run_as.empty()) {
      KC_TRY_ASSIGN(parsed.worker_plan.run_as, parse_run_as(run_as));
    }
    return parsed;
  }

  DaemonConfig& c = parsed.config;
  c.command_line.assign(argv, argv + argc);  // a reload (SIGHUP) parses it again
  if (!config_file.empty()) KC_TRY(load_config_file(config_file, c));
  // Command line over environment over file.
  if (const char* env = std::getenv("KCACHE_DEVICES"); env != nullptr && *env != '\0')
    c.devices = split_list(env);
  if (!cache_dir.empty()) c.cache_dir = cache_dir;
  if (!socket.empty()) c.socket_path = socket;
  if (!devices.empty()) c.devices = split_list(devices);
  if (!provider_roots.empty()) c.provider_roots = provider_roots;
  if (!include_roots.empty()) c.include_roots = include_roots;
  if (!log_level.empty()) c.log_level = log_level;
  if (!compile_user.empty()) c.compile_user = compile_user;
  if (!max_size.empty()) {
    auto v = parse_size(max_size);
    if (!v.ok()) return make_error(Errc::invalid_argument, "--max-size: " + v.error().message);
    c.max_size = *v;
  }
  if (workers != 0) c.compile_workers = workers;
  if (!gc_grace.empty()) {
    auto v = parse_duration(gc_grace);
    if (!v.ok()) return make_error(Errc::invalid_argument, "--gc-grace: " + v.error().message);
    c.gc_grace = *v;
  }
  if (!socket_mode.empty()) {
    auto v = parse_socket_mode(socket_mode);
    if (!v.ok()) return make_error(Errc::invalid_argument, "--socket-mode: " + v.error().message);
    c.socket_mode = *v;
  }
  if (!socket_group.empty()) c.socket_group = socket_group;
  if (!admin_group.empty()) c.admin_group = admin_group;
  if (!sysfs_root.empty()) c.sysfs_root = sysfs_root;
  if (!bus_address.empty()) c.bus_address = bus_address;
  if (!timeout.empty()) {
    auto v = parse_duration(timeout);
    if (!v.ok()) return make_error(Errc::invalid_argument, "--compile-timeout: " + v.error().message);
    if (v->count() < 1000) return make_error(Errc::invalid_argument, "--compile-timeout must be at least 1s");
    c.compile_timeout = *v;
  }
  if (!memory_limit.empty()) {
    auto v = parse_size(memory_limit);
    if (!v.ok()) return make_error(Errc::invalid_argument, "--compile-memory-limit: " + v.error().message);
    if (*v != 0 && *v < (256ull << 20))
      return make_error(Errc::invalid_argument, "--compile-memory-limit must be 0 (none) or at least 256M");
    c.compile_memory_limit = *v;
  }
  if (!scrub_rate.empty()) {
    auto v = parse_size(scrub_rate);
    if (!v.ok()) return make_error(Errc::invalid_argument, "--scrub-rate: " + v.error().message);
    c.scrub_rate = *v;
  }
  if (!failure_ttl.empty()) {
    auto v = parse_duration(failure_ttl);
    if (!v.ok()) return make_error(Errc::invalid_argument, "--compile-failure-ttl: " + v.error().message);
    c.compile_failure_ttl = *v;
  }
  if (!max_frame.empty()) {
    auto v = parse_size(max_frame);
    if (!v.ok()) return make_error(Errc::invalid_argument, "--max-frame: " + v.error().message);
    if (*v < 4096 || *v > (1ull << 30))
      return make_error(Errc::invalid_argument, "--max-frame must be between 4K and 1G");
    c.max_frame = static_cast<std::uint32_t>(*v);
  }
  return parsed;
}

Status apply_default_paths(DaemonConfig& config) {
  if (config.cache_dir.empty()) {
    KC_TRY_ASSIGN(config.cache_dir, default_cache_dir());
  }
  return {};
}

}  // namespace kcache::daemon
