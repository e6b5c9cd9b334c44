#include "app/daemon.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <future>
#include <nlohmann/json.hpp>

#include "common/fd.hpp"
#include "common/paths.hpp"
#include "common/text.hpp"
#include "common/units.hpp"
#include "cache/cache_access.hpp"
#include "loop/contain.hpp"
#include "kcache_config.h"
#include "app/service_snapshot.hpp"
#include "systemd/systemd_link.hpp"

namespace kcache::daemon {

// How soon a cache removed or replaced under a running daemon is noticed (~260 stat calls on
// the thread pool each time).
constexpr std::chrono::milliseconds kOwnershipCheckInterval{2000};

Daemon::Daemon(DaemonConfig config) : config_(std::move(config)) {}

Daemon::~Daemon() {
  // Components hold loop handles: release them, then let the loop run their close callbacks.
  systemd_.reset();
  server_.reset();
  providers_.reset();
  scrubber_.reset();
  gc_.reset();
  reconciler_.reset();
  compiles_.reset();
  pool_.reset();
  if (cache_) cache_->final_flush();
  if (index_worker_) index_worker_->stop();  // applies the final batch
  cache_.reset();
  index_worker_.reset();
  post_.reset();
  sigterm_.reset();
  sigint_.reset();
  watchdog_.reset();
  if (loop_initialized_) {
    uv_run(&loop_, UV_RUN_DEFAULT);
    if (uv_loop_close(&loop_) != 0) spdlog::debug("event loop closed with handles still open");
  }
}

Result<std::unique_ptr<Daemon>> Daemon::create(DaemonConfig config) {
  std::unique_ptr<Daemon> d(new Daemon(std::move(config)));
  KC_TRY(d->start());
  return d;
}

// What compile workers may touch, said once here (a mechanism missing is a warning, not a
// failure), and their scratch directories' parent.
Status Daemon::plan_worker_confinement(WorkerPoolOptions& options) {
  struct stat cache {};
  if (::stat(config_.cache_dir.c_str(), &cache) != 0)
    return errno_error(Errc::io, "stat " + config_.cache_dir);
  KC_TRY_ASSIGN(options.confinement,
                plan_confinement(config_.compile_user, cache.st_uid, include_roots_.roots()));
  for (const auto& c : compilers_.all())
    if (c.available) options.confinement.preload.push_back(c.backend);
  KC_TRY_ASSIGN(scratch_parent_, ScratchDir::create(temp_root(), "kcache-scratch-", 0711));
  options.scratch_parent = scratch_parent_.path();
  confinement_ = probe_confinement(options.confinement);
  confinement_.scratch_parent = scratch_parent_.path();
  if (confinement_.run_as)
    spdlog::info("compile workers run as {} (uid {})", confinement_.run_as->name, confinement_.run_as->uid);
  if (confinement_.landlock_abi > 0)
    spdlog::info("compile workers: Landlock ABI {} confines their files", confinement_.landlock_abi);
  else
    spdlog::warn("compile workers: file access not confined: {}", confinement_.landlock_missing);
  if (!confinement_.seccomp)
    spdlog::warn("compile workers: no system call filter: {}", confinement_.seccomp_missing);
  return {};
}

Status Daemon::start() {
  started_ = std::chrono::steady_clock::now();
  KC_TRY(apply_default_paths(config_));
  if (const int rc = uv_loop_init(&loop_); rc != 0) return uv_error("uv_loop_init", rc);
  loop_initialized_ = true;

  KC_TRY_ASSIGN(lock_, CacheLock::acquire(config_.cache_dir));
  KC_TRY_ASSIGN(Store store, Store::open(config_.cache_dir));
  store_ = std::make_unique<Store>(std::move(store));
  KC_TRY(store_->sweep_staging());
  const std::string index_path = config_.cache_dir + "/index.sqlite";
  KC_TRY_ASSIGN(Fd index_fd, load_index(index_path));
  KC_TRY_ASSIGN(const std::string executable, probe_toolchain());
  KC_TRY(build_services(executable, std::move(index_fd), index_path));
  KC_TRY(open_socket());
  // Who may read the cache follows who may connect (after bind: the socket is the truth).
  KC_TRY(restrict_cache_dir(config_.cache_dir, server_->path()));
  install_signal_handlers();
  systemd_ = std::make_unique<SystemdLink>(*this);
  KC_TRY(systemd_->start());
  return {};
}

// The index: open (migrating), read counters, then stream every row into the catalog on the
// index thread while this thread waits (nothing else runs yet). Returns the index file, held
// so the ownership watch can tell whether index.sqlite is still the file in use.
Result<Fd> Daemon::load_index(const std::string& index_path) {
  const auto t0 = std::chrono::steady_clock::now();
  // A damaged index is never guessed around: the daemon refuses and says what to do.
  const auto damaged = [&index_path](const Error& e) {
    if (e.code == Errc::unsupported_version) return e;
    return make_error(Errc::corrupt,
                      "index " + index_path + " cannot be read (" + e.message +
                          "); kcached will not serve from a damaged index. Move it aside (mv " +
                          index_path + " " + index_path + ".damaged) and start again: the cache "
                          "starts empty and the start-up reconcile removes the objects no row names");
  };
  auto opened = Index::open(index_path);
  if (!opened.ok()) return damaged(opened.error());
  Index index = std::move(opened).value();
  Fd index_fd(::open(index_path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!index_fd) return errno_error(Errc::io, "cannot open " + index_path);
  auto counters = index.load_counters();
  if (!counters.ok()) return damaged(counters.error());
  stats_.load(*counters);
  post_ = std::make_unique<LoopPost>(&loop_);
  index_worker_ = std::make_unique<IndexWorker>(std::move(index), *post_);
  cache_ = std::make_unique<Cache>(&loop_, *store_, *index_worker_, stats_,
                                   config_.index_flush_interval);
  std::promise<Status> loaded;
  index_worker_->submit([&](Index& idx) {
    // Sized once up front: growing a million-entry table rehashes it a dozen times.
    auto rows = idx.count_entries();
    if (!rows.ok()) return loaded.set_value(rows.error());
    cache_->catalog().reserve(*rows);
    loaded.set_value(idx.for_each_entry([&](const EntryRow& row) { cache_->adopt(row); },
                                        Index::Names::skip));
  });
  if (auto status = loaded.get_future().get(); !status.ok()) return damaged(status.error());
  const auto load_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - t0);
  spdlog::info("cache {}: {} entries, {} (index loaded in {} ms)", config_.cache_dir,
               cache_->catalog().size(), format_size(cache_->catalog().bytes()), load_ms.count());
  return index_fd;
}

// The executable (compile workers run it), include roots, compilers and devices, logged.
Result<std::string> Daemon::probe_toolchain() {
  char exe_buf[4096];
  std::size_t exe_len = sizeof exe_buf;
  if (const int rc = uv_exepath(exe_buf, &exe_len); rc != 0) return uv_error("uv_exepath", rc);
  const std::string executable(exe_buf, exe_len);
  KC_TRY_ASSIGN(include_roots_, IncludeRoots::scan(config_.include_roots));
  for (const auto& root : include_roots_.roots()) spdlog::info("include root: {}", root);
  if (!include_roots_.empty())
    spdlog::info("include roots: {} files, {} (in every key:{})", include_roots_.files(),
                 format_size(include_roots_.bytes()), include_roots_.key_suffix());
  compilers_ = CompilerRegistry::probe(executable);
  for (const auto& c : compilers_.all()) {
    if (c.available) spdlog::info("{} compiler: {}", c.backend, c.identity);
    else spdlog::warn("{} compiler unavailable: {}", c.backend, c.error);
  }
  KC_TRY_ASSIGN(devices_, DeviceTable::resolve(config_.devices, config_.sysfs_root));
  for (const auto& note : devices_.notes()) spdlog::info("device discovery: {}", note);
  for (const auto& dev : devices_.devices())
    spdlog::info("device {}: {} {} → {} ({}, {})", dev.index, dev.backend, dev.arch,
                 dev.compile_target, dev.source, dev.name);
  return executable;
}

// The compile pool and the services on the cache, wired to each other.
Status Daemon::build_services(const std::string& executable, Fd index_fd,
                              const std::string& index_path) {
  WorkerPoolOptions pool_options;
  KC_TRY(plan_worker_confinement(pool_options));
  pool_options.executable = executable;
  pool_options.extra_args = {"--log-level", config_.log_level, "--compile-memory-limit",
                             std::to_string(config_.compile_memory_limit)};
  pool_options.max_workers =
      config_.compile_workers != 0 ? config_.compile_workers : uv_available_parallelism();
  pool_options.timeout = config_.compile_timeout;
  pool_options.memory_limit = config_.compile_memory_limit;
  pool_ = std::make_unique<WorkerPool>(&loop_, std::move(pool_options));
  compiles_ = std::make_unique<CompileService>(*cache_, *pool_, stats_, config_.compile_failure_ttl);
  reconciler_ = std::make_unique<Reconciler>(&loop_, *cache_, *index_worker_);
  gc_ = std::make_unique<GarbageCollector>(&loop_, *cache_, *reconciler_, stats_, gc_policy(config_));
  // Crossing the high watermark is noticed where it happens: when a module is published.
  cache_->set_on_published([this] { gc_->maybe_start(); });
  scrubber_ = std::make_unique<Scrubber>(&loop_, *cache_, stats_, config_.scrub_rate);
  ownership_ = std::make_unique<OwnershipWatch>(
      &loop_, lock_, *store_, std::move(index_fd), index_path, kOwnershipCheckInterval,
      [this](const Error& why) { cache_lost(why); });
  reconciler_->set_layout_check([watch = ownership_.get()] { return watch->check(); });
  std::optional<gid_t> admin_gid;
  if (!config_.admin_group.empty()) {
    KC_TRY_ASSIGN(admin_gid, resolve_group(config_.admin_group));
  }
  admin_ = AdminPolicy(::geteuid(), admin_gid);
  admin_.set_group(admin_gid, config_.admin_group);
  providers_ = std::make_unique<ProviderService>(&loop_, *cache_, devices_, config_.provider_roots);
  return {};
}

// The listening socket: the one systemd passed, or bound at the configured path.
Status Daemon::open_socket() {
  server_ = std::make_unique<Server>(&loop_, *this, config_.max_frame);
  if (config_.socket_path.empty() && sd_listen_fds(0) == 1) {
    KC_TRY(server_->adopt(SD_LISTEN_FDS_START));
    spdlog::info("serving on the socket systemd passed ({})", server_->path());
  } else {
    if (config_.socket_path.empty()) {
      KC_TRY_ASSIGN(config_.socket_path, default_socket_path());
    }
    std::optional<gid_t> socket_gid;
    if (!config_.socket_group.empty()) {
      KC_TRY_ASSIGN(socket_gid, resolve_group(config_.socket_group));
    }
    KC_TRY(server_->bind(config_.socket_path, config_.socket_mode, socket_gid));
  }
  KC_TRY(server_->start());
  return {};
}

void Daemon::install_signal_handlers() {
  ::signal(SIGPIPE, SIG_IGN);  // writes use MSG_NOSIGNAL; this covers anything else
  for (auto* h : {&sigterm_, &sigint_}) {
    *h = UvHandle<uv_signal_t>::make();
    uv_signal_init(&loop_, h->get());
    (*h)->data = this;
  }
  auto on_signal = [](uv_signal_t* s, int signum) {
    spdlog::info("received signal {}, stopping", signum);
    if (s->data != nullptr) contain("stop signal", [s] { static_cast<Daemon*>(s->data)->request_stop(); });
  };
  uv_signal_start(sigterm_.get(), on_signal, SIGTERM);
  uv_signal_start(sigint_.get(), on_signal, SIGINT);
}

int Daemon::run() {
  spdlog::info("kcached {} serving on {} (cache {})", KCACHE_VERSION, server_->path(),
               config_.cache_dir);
  sd_notifyf(0, "READY=1\nSTATUS=%s\nMAINPID=%d", ServiceSnapshot::of(*this).summary().c_str(),
             static_cast<int>(::getpid()));

  std::uint64_t watchdog_usec = 0;
  if (sd_watchdog_enabled(0, &watchdog_usec) > 0 && watchdog_usec > 0) {
    // Pinging from the loop itself proves the loop turns, not just that the process lives.
    watchdog_ = UvHandle<uv_timer_t>::make();
    uv_timer_init(&loop_, watchdog_.get());
    const std::uint64_t every_ms = std::max<std::uint64_t>(watchdog_usec / 2000, 1);
    uv_timer_start(watchdog_.get(), [](uv_timer_t*) { sd_notify(0, "WATCHDOG=1"); }, 0, every_ms);
    uv_unref(watchdog_.handle());
  }

  providers_->start();  // scan, watch and prefetch in the background, like the reconcile
  ownership_->start();
  reconciler_->run(Reconciler::Mode::quick, [this](const ReconcileReport& r) {
    spdlog::debug("start-up reconcile: {} entries checked, {} repaired", r.checked_entries, r.repaired);
    gc_->maybe_start();  // a cache over budget at start-up (max_size lowered) shrinks now
    scrubber_->start();
  });
  uv_run(&loop_, UV_RUN_DEFAULT);
  spdlog::info("kcached stopped");
  return exit_code_;
}

void Daemon::cache_lost(const Error& why) {
  spdlog::critical("{}: kcached stops serving {} now (it would hand out files nobody verified, "
                   "write rows nobody reads, or share the directory with another daemon); start "
                   "it again to serve what stands there now",
                   printable(why.message), config_.cache_dir);
  exit_code_ = 1;
  request_stop();
}

void Daemon::request_stop() {
  if (stopping_) return;
  stopping_ = true;
  sd_notify(0, "STOPPING=1");
  // Everything that keeps the loop alive goes; in-flight publishes finish first.
  server_->close();
  if (systemd_) systemd_->shutdown();
  providers_->shutdown();
  pool_->shutdown();
  if (ownership_) ownership_->stop();
  sigterm_.reset();
  sigint_.reset();
  watchdog_.reset();
  post_->unref();
}

bool Daemon::is_admin(const ucred& peer, std::span<const gid_t> groups) const noexcept {
  return admin_.allows(peer.uid, peer.gid, groups);
}

void Daemon::collect_garbage(GcOptions options, std::function<void(const GcReport&)> done) {
  gc_->collect(std::move(options), std::move(done));
}

GcPolicy gc_policy(const DaemonConfig& c) {
  GcPolicy p;
  p.max_size = c.max_size;
  p.high_watermark = c.gc_high_watermark;
  p.low_watermark = std::min(c.gc_low_watermark, c.gc_high_watermark);
  p.grace = c.gc_grace;
  p.max_age = c.gc_max_age;
  return p;
}

nlohmann::json Daemon::status() const {
  using nlohmann::json;
  json devices = devices_.to_json();
  json stats = json::object();
  stats_.for_each([&](const char* name, std::uint64_t v) { stats[name] = v; });
  json compilers = json::array();
  for (const auto& c : compilers_.all())
    compilers.push_back({{"backend", c.backend},
                         {"available", c.available},
                         {"identity", c.available ? json(c.identity) : json(nullptr)},
                         {"error", c.available ? json(nullptr) : json(c.error)}});
  const auto uptime = std::chrono::duration_cast<std::chrono::seconds>(
      std::chrono::steady_clock::now() - started_);
  json doc{{"version", KCACHE_VERSION},
           {"pid", ::getpid()},
           {"uptime_s", uptime.count()},
           {"cache_dir", config_.cache_dir},
           {"socket", server_->path()},
           {"devices", std::move(devices)},
           {"cache",
            {{"bytes", cache_->catalog().bytes()},
             {"entries", cache_->catalog().size()},
             {"apparent_bytes", cache_->catalog().apparent_bytes()},
             {"max_size", config_.max_size}}},
           {"gc",
            {{"running", gc_->running()},
             {"high_watermark", gc_->policy().high_watermark},
             {"low_watermark", gc_->policy().low_watermark},
             {"grace_s", gc_->policy().grace.count() / 1000.0}}},
           {"stats", std::move(stats)},
           {"prefetch", providers_->prefetch_json()},
           {"inflight_compiles", compiles_->inflight()},
           {"compile_workers", {{"processes", pool_->processes()},
                                {"running", pool_->running()},
                                {"queued", pool_->queued()},
                                {"cancelled", pool_->cancelled()}}},
           {"compilers", std::move(compilers)},
           {"include_roots", include_roots_.roots()},
           {"sessions", server_->sessions()},
           {"reconciled", reconciler_->startup_done()},
           {"internal_errors", contained_exceptions()},
           {"compile_confinement", confinement_.to_json()},
           {"index", {{"schema_version", Index::latest_schema_version()}}}};
  providers_->list_into(doc);
  return doc;
}

}  // namespace kcache::daemon
