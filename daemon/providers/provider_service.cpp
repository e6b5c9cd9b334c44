#include "providers/provider_service.hpp"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>
#include <set>
#include <nlohmann/json.hpp>

#include "loop/contain.hpp"

namespace kcache::daemon {

namespace {

// refused_modules[] lists the first this many of a provider's refused modules.
constexpr std::size_t kMaxRefusedShown = 32;

using providers::LoadedProvider;
using providers::ProviderState;

// Prefetch takes at most this much of the libuv thread pool (8 threads, daemon/main.cpp) and
// of memory. A job spends most of its time in the fsync of its staged module, so jobs overlap
// their fsyncs: 4 jobs publish a 1 GiB provider 1.5× faster than 2 (docs/benchmarks.md).
constexpr std::size_t kMaxMaterializeJobs = 4;
constexpr std::uint64_t kMaxMaterializeBytes = 256ull << 20;
// Debounce: a burst of events (a provider being copied) becomes one scan.
constexpr std::chrono::milliseconds kQuiet{100};
constexpr std::chrono::milliseconds kMaxDelay{1000};
constexpr std::uint64_t kMissingRootPollMs = 1000;

void add_watch(std::vector<WatchedDir>& out, const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    out.push_back({path, st.st_dev, st.st_ino});
}

void log_state(const LoadedProvider& p) {
  const std::string name = p.manifest ? p.manifest->name + " " + p.manifest->version : p.path;
  switch (p.state) {
    case ProviderState::active:
      spdlog::info("provider {} ({}): active, {} modules{}{}", name, p.path,
                   p.manifest->modules.size(), p.reason.empty() ? "" : "; ", p.reason);
      break;
    case ProviderState::rejected:
      spdlog::warn("provider {}: rejected: {}", p.path, p.reason);
      break;
    case ProviderState::incomplete:
      spdlog::info("provider {}: incomplete: {}", p.path, p.reason);
      break;
    case ProviderState::removed:
      spdlog::info("provider {} ({}): removed", name, p.path);
      break;
  }
}

// A kernels repo revision: its id, commit, refs and each variant's verdict.
void add_kernels_json(const LoadedProvider& p, nlohmann::json& j) {
  nlohmann::json variants = nlohmann::json::array();
  for (const providers::KernelsVariantState& v : p.kernel_variants)
    variants.push_back({{"name", v.name},
                        {"variant", v.dotted.empty() ? nlohmann::json() : nlohmann::json(v.dotted)},
                        {"state", v.usable ? "usable" : "rejected"},
                        {"digest", v.has_digest},
                        {"reason", v.reason}});
  j["repo"] = p.repo_id;
  j["revision"] = p.revision;
  j["refs"] = p.refs;
  j["variants"] = std::move(variants);
}

}  // namespace

struct ProviderService::ScanResult {
  std::vector<LoadedProvider> providers;
  std::vector<WatchedDir> watch;
  bool roots_missing = false;
};

ProviderService::ProviderService(uv_loop_t* loop, Cache& cache, const DeviceTable& devices,
                                 std::vector<std::string> roots)
    : loop_(loop), cache_(cache), roots_(std::move(roots)), devices_(devices),
      materializer_(loop, cache, kMaxMaterializeJobs, kMaxMaterializeBytes),
      watcher_(loop, [this] { schedule_scan(); }, kQuiet, kMaxDelay) {}

ProviderService::~ProviderService() = default;

void ProviderService::start() {
  if (!enabled()) {
    scanned_once_ = true;
    return;
  }
  missing_root_timer_ = UvHandle<uv_timer_t>::make();
  uv_timer_init(loop_, missing_root_timer_.get());
  missing_root_timer_->data = this;
  uv_timer_start(
      missing_root_timer_.get(),
      [](uv_timer_t* t) {
        auto* self = static_cast<ProviderService*>(t->data);
        if (self != nullptr && self->roots_missing_)
          contain("provider root poll", [self] { self->schedule_scan(); });
      },
      kMissingRootPollMs, kMissingRootPollMs);
  uv_unref(missing_root_timer_.handle());
  schedule_scan();
}

void ProviderService::shutdown() {
  stopped_ = true;
  watcher_.close();
  missing_root_timer_.reset();
  materializer_.shutdown();
}

void ProviderService::when_scanned(std::function<void()> fn) {
  if (scanned_once_ || !enabled()) {
    fn();
    return;
  }
  first_scan_waiters_.push_back(std::move(fn));
}

void ProviderService::rescan(std::function<void()> done) {
  if (!enabled() || stopped_) {
    done();
    return;
  }
  next_scan_waiters_.push_back(std::move(done));
  schedule_scan();
}

void ProviderService::schedule_scan() {
  if (stopped_) return;
  if (scanning_) {
    scan_again_ = true;
    return;
  }
  scanning_ = true;
  scan_again_ = false;
  running_scan_waiters_ = std::move(next_scan_waiters_);
  next_scan_waiters_.clear();
  auto result = std::make_shared<ScanResult>();
  run_in_pool(
      loop_,
      [roots = roots_, result] {
        for (const std::string& root : roots) {
          const providers::RootListing listing = providers::list_root(root);
          if (!listing.exists) result->roots_missing = true;
          for (const std::string& dir : listing.watch_dirs) add_watch(result->watch, dir);
          for (const providers::FoundProvider& found : listing.providers) {
            LoadedProvider p = providers::load_found(found);
            for (const std::string& dir : p.watch_dirs) add_watch(result->watch, dir);
            result->providers.push_back(std::move(p));
          }
        }
      },
      [this, result] {
        scanning_ = false;
        if (stopped_) return;
        apply(*result);
        if (scan_again_) schedule_scan();
      });
}

std::vector<std::string> ProviderService::versions_serving(std::string_view name) const {
  constexpr std::size_t kShown = 8;
  std::set<std::string> versions;
  const std::string key(name);
  for (const LoadedProvider& p : table_) {
    if (p.state != ProviderState::active || !p.manifest || p.kind == providers::ProviderKind::kernels) continue;
    if (p.modules_by_name.contains(key)) versions.insert(p.manifest->version);
    if (versions.size() == kShown) break;
  }
  return {versions.begin(), versions.end()};
}

void ProviderService::apply(ScanResult& result) {
  roots_missing_ = result.roots_missing;
  refused_variants_.clear();  // judged again against what the scan found
  std::sort(result.providers.begin(), result.providers.end(),
            [](const LoadedProvider& a, const LoadedProvider& b) { return a.path < b.path; });
  std::vector<LoadedProvider> next;
  next.reserve(result.providers.size() + table_.size());
  auto old = table_.begin();
  for (LoadedProvider& fresh : result.providers) {
    if (!next.empty() && next.back().path == fresh.path) continue;  // listed by two roots
    while (old != table_.end() && old->path < fresh.path) {
      if (old->state != ProviderState::removed) {
        old->state = ProviderState::removed;
        old->reason = "the directory is gone";
        log_state(*old);
      }
      next.push_back(std::move(*old++));
    }
    const bool known = old != table_.end() && old->path == fresh.path;
    if (known && old->state != ProviderState::removed && old->fingerprint == fresh.fingerprint) {
      next.push_back(std::move(*old++));  // unchanged: keep what materializing taught us
      continue;
    }
    if (known) ++old;
    log_state(fresh);
    next.push_back(std::move(fresh));
  }
  for (; old != table_.end(); ++old) {
    if (old->state != ProviderState::removed) {
      old->state = ProviderState::removed;
      old->reason = "the directory is gone";
      log_state(*old);
    }
    next.push_back(std::move(*old));
  }
  table_ = std::move(next);

  // Files created between the listing and a new watch would be missed: look once more.
  if (watcher_.watch(result.watch) > 0) scan_again_ = true;
  prefetch();

  if (!scanned_once_) {
    scanned_once_ = true;
    auto waiters = std::move(first_scan_waiters_);
    first_scan_waiters_.clear();
    for (auto& fn : waiters) fn();
  }
  auto waiters = std::move(running_scan_waiters_);
  running_scan_waiters_.clear();
  for (auto& fn : waiters) materializer_.when_idle(std::move(fn));
}

void ProviderService::prefetch() {
  std::vector<Device> devices;
  for (const DeviceInfo& d : devices_.devices())
    if (auto dev = parse_device(d.arch); dev.ok()) devices.push_back(std::move(dev).value());
  for (const providers::Pick& pick : providers::prefetch_set(table_, devices)) {
    const Digest128& key = key_of(pick);
    if (cache_.lookup(key) != nullptr || materializer_.in_flight(key)) continue;
    materialize(pick, /*urgent=*/false, [](const Result<Entry>&) {});
  }
}

void ProviderService::materialize(const providers::Pick& pick, bool urgent,
                                  Materializer::Done done) {
  const LoadedProvider& p = table_[pick.provider];
  const providers::ModuleSpec& m = p.manifest->modules[pick.module];
  const ObjectKind kind = m.format == providers::ModuleFormat::host_object
                             ? ObjectKind::so
                             : *kind_for_backend(backend_name(m.target.backend()));
  MaterializeJob job{p.keys[pick.module], p.path, m,
                     PublishMeta{m.name, m.target.str(), kind, EntryOrigin::provider}};
  materializer_.submit(
      std::move(job), urgent,
      [this, path = p.path, fingerprint = p.fingerprint, module = pick.module,
       done = std::move(done)](const Result<Entry>& outcome) {
        if (!outcome.ok()) {
          const Error& e = outcome.error();
          if (e.code == Errc::corrupt) refuse(path, fingerprint, module, e.message);
          else if (e.code == Errc::not_found) schedule_scan();  // changed under us: look again
          else if (e.code != Errc::unavailable) spdlog::warn("provider {}: {}", path, e.message);
        }
        done(outcome);
      });
}

void ProviderService::refuse(const std::string& path, const Digest128& fingerprint,
                             std::size_t module, const std::string& reason) {
  auto it = std::lower_bound(table_.begin(), table_.end(), path,
                             [](const LoadedProvider& p, const std::string& x) { return p.path < x; });
  // The provider may have changed since the job started: the refusal was about the old files.
  if (it == table_.end() || it->path != path || it->fingerprint != fingerprint ||
      it->state != ProviderState::active)
    return;
  spdlog::warn("provider {}: {}", path, reason);
  it->module_errors[module] = reason;
  it->reason = providers::summarize_module_errors(it->module_errors);
  if (std::all_of(it->module_errors.begin(), it->module_errors.end(),
                  [](const std::string& e) { return !e.empty(); })) {
    it->state = ProviderState::rejected;
    log_state(*it);
  }
}

void ProviderService::list_into(nlohmann::json& doc) const {
  doc["providers"] = to_json();
  doc["providers_total"] = table_.size();
  doc["providers_truncated"] = table_.size() > kMaxProvidersShown;
}

nlohmann::json ProviderService::to_json() const {
  using nlohmann::json;
  json out = json::array();
  for (const LoadedProvider& p : table_) {
    if (out.size() == kMaxProvidersShown) break;
    json j{{"path", p.path},
           {"kind", providers::provider_kind_name(p.kind)},
           {"state", providers::provider_state_name(p.state)},
           {"reason", p.reason}};
    if (!p.manifest) {
      out.push_back(std::move(j));
      continue;
    }
    const providers::Manifest& m = *p.manifest;
    json targets = json::array();
    for (const Target& t : m.targets) targets.push_back(t.str());
    json refused = json::array();
    std::size_t materialized = 0, refused_total = 0;
    for (std::size_t i = 0; i < m.modules.size() && i < p.module_errors.size(); ++i) {
      // Bounded: a provider of 65,536 bad modules must not make every status reply 14 MB.
      if (!p.module_errors[i].empty() && ++refused_total <= kMaxRefusedShown)
        refused.push_back({{"name", m.modules[i].name},
                           {"target", m.modules[i].target.str()},
                           {"reason", p.module_errors[i]}});
      if (cache_.catalog().find(p.keys[i]) != nullptr) ++materialized;
    }
    j["name"] = m.name;
    j["package"] = m.package;
    j["version"] = m.version;
    j["backend"] = m.backend;
    j["variant"] = p.variant ? json(p.variant->str()) : json(nullptr);
    j["targets"] = std::move(targets);
    j["modules"] = m.modules.size();
    j["materialized"] = materialized;
    j["refused_modules"] = std::move(refused);
    j["refused_total"] = refused_total;
    j["refused_truncated"] = refused_total > kMaxRefusedShown;
    if (p.kind == providers::ProviderKind::kernels) add_kernels_json(p, j);
    out.push_back(std::move(j));
  }
  return out;
}

nlohmann::json ProviderService::prefetch_json() const {
  const MaterializeProgress p = materializer_.progress();
  return {{"queued", p.queued}, {"running", p.running}, {"done", p.done},
          {"failed", p.failed}, {"bytes", p.bytes}, {"busy_s", p.busy_s}};
}

}  // namespace kcache::daemon
