// providers/provider_service.hpp — the daemon's providers: watched roots, the provider table,
// background prefetch and on-demand materialization (DESIGN §6, docs/providers.md).
//
// Contract (loop thread only):
//  * start() scans every root on the thread pool and watches the roots, their build/ trees and
//    every provider directory (dir_watcher.hpp, debounced). Any change rescans within about a
//    second; a root that does not exist yet is looked for every second. Requests that need
//    providers wait for the first scan (`when_scanned`), never for later ones.
//  * A rescan replaces a provider whose fingerprint changed and keeps an unchanged one as it
//    is (with the module refusals learnt while materializing); a vanished directory stays
//    listed as `removed`. An incomplete or rejected provider is never used.
//  * After each scan the modules `prefetch_set` picks for the local devices are queued on the
//    Materializer (bounded; entries already in the catalog are skipped). A module that fails
//    its checks while materializing is refused with the reason, and its provider becomes
//    `rejected` when no usable module is left.
//  * `table()` and picks into it are valid until the next scan is applied: use them at once.
//  * shutdown() stops watching and drops queued prefetches; running ones finish.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "arch/target.hpp"
#include "cache/cache.hpp"
#include "devices/devices.hpp"
#include "loop/dir_watcher.hpp"
#include "providers/materializer.hpp"
#include "providers/provider_load.hpp"
#include "providers/kernels_select.hpp"
#include "providers/provider_select.hpp"

namespace kcache::daemon {

class ProviderService {
 public:
  ProviderService(uv_loop_t* loop, Cache& cache, const DeviceTable& devices,
                  std::vector<std::string> roots);
  ~ProviderService();
  ProviderService(const ProviderService&) = delete;
  ProviderService& operator=(const ProviderService&) = delete;

  void start();
  void shutdown();
  bool enabled() const noexcept { return !roots_.empty(); }
  const std::vector<std::string>& roots() const noexcept { return roots_; }
  // Runs fn once the first scan is applied (at once when it is, or when there are no roots).
  void when_scanned(std::function<void()> fn);

  std::span<const providers::LoadedProvider> table() const noexcept { return table_; }
  const Digest128& key_of(const providers::Pick& p) const {
    return table_[p.provider].keys[p.module];
  }
  // Materializes a pick for a waiting request (urgent) or a prefetch; refusals are recorded.
  void materialize(const providers::Pick& pick, bool urgent, Materializer::Done done);

  // kernels build variants (provider_variants.cpp). The key of a variant served for `devices`
  // (their device code is checked against exactly those), a refusal learnt for that key since
  // the last scan (empty: none), and its materialization as a tree for a waiting request.
  Digest128 variant_key(const providers::KernelsPick& pick, std::span<const Device> devices) const;
  std::string variant_refusal(const Digest128& key) const;
  // For a request that gave no version: the versions active providers serve module `name` at
  // (at most a few, sorted), so the not_found can say what to ask for. Empty when none.
  std::vector<std::string> versions_serving(std::string_view name) const;
  void materialize_variant(const providers::KernelsPick& pick, const Digest128& key,
                           std::vector<Device> devices, Materializer::Done done);

  // Rescans now; `done` runs once that scan is applied and the prefetches queued are done.
  void rescan(std::function<void()> done);

  // Sets doc's `providers` (status and the providers operation): the first
  // kMaxProvidersShown in scan order, so a root of 100,000 provider directories does not make
  // every status reply tens of megabytes built on the loop; `providers_total` counts them all
  // and `providers_truncated` says when the list is cut.
  static constexpr std::size_t kMaxProvidersShown = 256;
  void list_into(nlohmann::json& doc) const;
  nlohmann::json prefetch_json() const;
  MaterializeProgress progress() const { return materializer_.progress(); }

 private:
  struct ScanResult;
  nlohmann::json to_json() const;  // the providers[] list_into() sets
  void schedule_scan();
  void apply(ScanResult& result);
  void prefetch();
  void refuse(const std::string& path, const Digest128& fingerprint, std::size_t module,
              const std::string& reason);

  uv_loop_t* loop_;
  Cache& cache_;
  std::vector<std::string> roots_;
  const DeviceTable& devices_;  // the daemon's: a reload may replace its contents
  std::vector<providers::LoadedProvider> table_;  // sorted by path
  // Variant keys whose materialization was refused (a digest, device code), until the next scan.
  std::unordered_map<Digest128, std::string, Digest128Hash> refused_variants_;
  Materializer materializer_;
  DirWatcher watcher_;
  UvHandle<uv_timer_t> missing_root_timer_;
  bool roots_missing_ = false;
  bool scanning_ = false;
  bool scan_again_ = false;
  bool scanned_once_ = false;
  bool stopped_ = false;
  std::vector<std::function<void()>> first_scan_waiters_;
  std::vector<std::function<void()>> next_scan_waiters_;     // rescan() callers, not started yet
  std::vector<std::function<void()>> running_scan_waiters_;  // ... whose scan is running
};

}  // namespace kcache::daemon
