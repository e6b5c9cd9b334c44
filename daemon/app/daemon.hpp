// daemon.hpp — kcached as a library: owns the loop and every component, in start-up order.
//
// Contract:
//  * Daemon::create(config) takes the cache directory lock, opens the store and index
//    (migrating it), loads the catalog, probes compilers and binds the socket. Any failure is
//    an error that names what failed (the binary prints it and exits 1).
//  * run() serves until SIGTERM/SIGINT (or request_stop()), then shuts down cleanly: stops
//    accepting, ends sessions, kills compile workers, flushes the index. Returns the exit code:
//    0, or 1 when the OwnershipWatch found the cache directory, its lock, the index or a shard
//    directory removed or replaced (it then stops serving at once, and says why).
//  * READY=1 goes to the service manager once the socket serves and the index is loaded.
//  * reload(origin) re-reads the configuration (reload.cpp): what can change at run time is
//    applied, the rest named as needing a restart; a bad configuration changes nothing and is
//    the error. The reply document: reloaded, changed[], needs_restart[], devices[].
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <span>
#include <string>
#include <string_view>

#include "cache/cache.hpp"
#include "cache/cache_lock.hpp"
#include "compiler/compile_service.hpp"
#include "compiler/compilers.hpp"
#include "compiler/include_roots.hpp"
#include "upkeep/scrubber.hpp"
#include "config/config.hpp"
#include "devices/devices.hpp"
#include "upkeep/gc.hpp"
#include "index/index_worker.hpp"
#include "cache/ownership_watch.hpp"
#include "server/peer_auth.hpp"
#include "providers/provider_service.hpp"
#include "upkeep/reconcile.hpp"
#include "compiler/scratch_dir.hpp"
#include "server/server.hpp"
#include "app/stats.hpp"
#include "store/store.hpp"
#include "loop/uv.hpp"
#include "compiler/worker_pool.hpp"

namespace kcache::daemon {

class SystemdLink;

// The GC policy a configuration asks for.
GcPolicy gc_policy(const DaemonConfig& config);

class Daemon {
 public:
  static Result<std::unique_ptr<Daemon>> create(DaemonConfig config);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  int run();
  void request_stop();

  // For request handlers (loop thread).
  uv_loop_t* loop() noexcept { return &loop_; }
  const DaemonConfig& config() const noexcept { return config_; }
  Cache& cache() noexcept { return *cache_; }
  CompileService& compiles() noexcept { return *compiles_; }
  Stats& stats() noexcept { return stats_; }
  const DeviceTable& devices() const noexcept { return devices_; }
  const CompilerRegistry& compilers() const noexcept { return compilers_; }
  const IncludeRoots& include_roots() const noexcept { return include_roots_; }
  IndexWorker& index() noexcept { return *index_worker_; }
  Reconciler& reconciler() noexcept { return *reconciler_; }
  ProviderService& providers() noexcept { return *providers_; }
  Server& server() noexcept { return *server_; }
  // Root, the daemon's uid, or a member of the admin group (primary or in `groups`).
  bool is_admin(const ucred& peer, std::span<const gid_t> groups = {}) const noexcept;
  const AdminPolicy& admin_policy() const noexcept { return admin_; }
  GarbageCollector& gc() noexcept { return *gc_; }
  // Runs a collection (queued behind one in progress); `done` gets the report.
  void collect_garbage(GcOptions options, std::function<void(const GcReport&)> done);
  nlohmann::json status() const;
  Result<nlohmann::json> reload(std::string_view origin);

 private:
  explicit Daemon(DaemonConfig config);
  Status start();
  // The steps of start(), in order.
  Result<Fd> load_index(const std::string& index_path);
  Result<std::string> probe_toolchain();
  Status build_services(const std::string& executable, Fd index_fd, const std::string& index_path);
  Status open_socket();
  void install_signal_handlers();
  Status plan_worker_confinement(WorkerPoolOptions& options);
  void stop();
  void cache_lost(const Error& why);
  Result<nlohmann::json> apply_reload();
  // Installs a new device table; true when it differs from the old one (providers rescan).
  bool replace_devices(DeviceTable devices);

  DaemonConfig config_;
  uv_loop_t loop_{};
  bool loop_initialized_ = false;
  std::chrono::steady_clock::time_point started_;
  CacheLock lock_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<LoopPost> post_;
  std::unique_ptr<IndexWorker> index_worker_;
  Stats stats_;
  std::unique_ptr<Cache> cache_;
  CompilerRegistry compilers_;
  IncludeRoots include_roots_;
  DeviceTable devices_;
  ScratchDir scratch_parent_;  // holds every worker's scratch directory
  ConfinementSupport confinement_;
  std::unique_ptr<WorkerPool> pool_;
  std::unique_ptr<CompileService> compiles_;
  std::unique_ptr<Reconciler> reconciler_;
  std::unique_ptr<GarbageCollector> gc_;
  std::unique_ptr<Scrubber> scrubber_;
  std::unique_ptr<OwnershipWatch> ownership_;
  AdminPolicy admin_;
  std::unique_ptr<ProviderService> providers_;
  std::unique_ptr<Server> server_;
  UvHandle<uv_signal_t> sigterm_;
  UvHandle<uv_signal_t> sigint_;
  UvHandle<uv_timer_t> watchdog_;
  std::unique_ptr<SystemdLink> systemd_;  // STATUS=, SIGHUP, D-Bus
  bool stopping_ = false;
  int exit_code_ = 0;  // 1 once the cache was lost from under the daemon
};

}  // namespace kcache::daemon
