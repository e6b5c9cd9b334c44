// config.hpp — everything kcached can be told, with its embedded defaults.
//
// Contract: `DaemonConfig{}` holds the defaults; settings.hpp's table says, once per field,
// its key, flag, bounds, default and reload policy (docs/operations.md is rendered from it).
// `load_config_file(path, config)` overlays a TOML file; `parse_daemon_args(argc, argv)`
// overlays KCACHE_DEVICES and then the command line (command line wins). Unknown keys, bad
// values and values out of bounds are errors that name the key (or flag) and the value;
// nothing is silently ignored.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compile/request_rules.hpp"
#include "compiler/worker_confinement.hpp"
#include "kcache/result.hpp"

namespace kcache::daemon {

struct DaemonConfig {
  std::string cache_dir;    // empty: default (see paths.hpp)
  std::string socket_path;  // empty: default, or the socket systemd passes
  std::string config_file;
  std::optional<std::vector<std::string>> devices;  // set: replaces GPU discovery
  std::vector<std::string> provider_roots;          // watched for provider directories
  std::vector<std::string> include_roots;           // header directories compiles may use
  std::string log_level = "info";
  std::uint64_t max_size = 10ull << 30;
  std::size_t compile_workers = 0;  // 0: number of cores
  std::chrono::milliseconds compile_timeout{120'000};
  std::uint64_t scrub_rate = 8u << 20;  // bytes/s of stored objects re-verified; 0: off
  std::uint64_t compile_memory_limit = 8ull << 30;   // RLIMIT_AS of a worker; 0: none
  std::chrono::milliseconds compile_failure_ttl{60'000};  // failures answered from memory
  std::string compile_user = "nobody";  // a root daemon's workers run as this user
  std::uint32_t max_frame = 64u << 20;
  std::size_t max_connections = 1024;
  std::size_t max_pending_per_client = 64;
  std::size_t max_queued_per_client = 64u << 20;
  // Connection hygiene (server.hpp): one abusive client must not cost the others.
  std::size_t max_connections_per_uid = 512;
  std::chrono::milliseconds frame_timeout{10'000};   // hello, or a started frame, must complete
  std::chrono::milliseconds stall_timeout{30'000};   // replies unread this long: closed
  std::chrono::milliseconds idle_timeout{900'000};   // nothing asked this long: closed
  std::chrono::milliseconds index_flush_interval{100};
  std::uint32_t socket_mode = 0660;
  std::string socket_group;  // chgrp of the socket (empty: the daemon's group)
  std::string admin_group;   // members may run admin operations (besides root and our uid)
  // Garbage collection (DESIGN §7): budget is max_size; see gc.hpp for the policy.
  std::chrono::milliseconds gc_grace{60'000};
  double gc_high_watermark = 1.0;
  double gc_low_watermark = 0.9;
  std::optional<std::chrono::seconds> gc_max_age;
  RequestLimits limits;
  std::string sysfs_root = "/sys";  // where AMD discovery reads the kfd topology
  std::string bus_address;          // D-Bus: empty = the system bus, "none" = no D-Bus
  std::vector<std::string> command_line;  // argv as given: a reload parses it again
};

Status load_config_file(const std::string& path, DaemonConfig& config);

struct ParsedArgs {
  DaemonConfig config;
  bool compile_worker = false;  // internal: run as a compile worker process
  ConfinementPlan worker_plan;  // internal: what that worker may touch
  std::string probe_compiler;   // internal: report this backend's compiler identity and exit
  bool exit_now = false;        // --help / --version printed
  int exit_code = 0;
};

// argv as given to main(). Usage errors → Errc::invalid_argument with CLI11's message.
Result<ParsedArgs> parse_daemon_args(int argc, char** argv);

// Fills default cache dir and socket path where unset.
Status apply_default_paths(DaemonConfig& config);

}  // namespace kcache::daemon
