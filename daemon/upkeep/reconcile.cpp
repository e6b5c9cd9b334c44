#include "upkeep/reconcile.hpp"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <memory>
#include <unordered_map>
#include <unordered_set>

namespace kcache::daemon {

namespace {
struct Item {
  Digest128 key;
  Digest128 digest;
  ObjectKind kind;
  std::uint64_t size;
};

// A problem found on the pool thread, to be re-checked on the loop before anything changes.
struct Candidate {
  enum class What { missing, digest_mismatch, size_mismatch, orphan, stray, not_regular } what;
  std::size_t item = 0;  // for entry problems
  std::uint8_t shard = 0;
  std::string name;      // for file problems
  std::string detail;
};

// What the pool thread found in the store (scan_store).
struct StoreScan {
  std::vector<Candidate> candidates;
  std::vector<std::string> staging;
  std::vector<std::string> io_errors;
  std::uint64_t checked_bytes = 0;
};
}  // namespace

struct Reconciler::Scan {
  Mode mode = Mode::quick;
  std::vector<Item> items;
  StoreScan found;
  std::string index_findings;
  std::string layout_findings;  // what check_layout found removed or replaced
  std::vector<Done> waiters;
};

nlohmann::json ReconcileReport::to_json() const {
  nlohmann::json problems_json = nlohmann::json::array();
  for (const Problem& p : problems)
    problems_json.push_back({{"kind", p.kind}, {"key", p.key}, {"path", p.path}, {"detail", p.detail}});
  return {{"ok", ok()},
          {"full", full},
          {"checked_entries", checked_entries},
          {"checked_bytes", checked_bytes},
          {"problems", std::move(problems_json)},
          {"repaired", repaired}};
}

void Reconciler::run(Mode mode, Done done) {
  queued_.emplace_back(mode, std::move(done));
  if (!running_) start_next();
}

namespace {

// Pool thread: every file of the 256 shards, judged by its name alone. Fills `present` with
// the digests of well-named objects.
void list_shards(const Store& store, const std::vector<Item>& items, StoreScan& out,
                 std::unordered_set<Digest128, Digest128Hash>& present) {
  std::unordered_set<Digest128, Digest128Hash> referenced;
  referenced.reserve(items.size());
  for (const Item& it : items) referenced.insert(it.digest);
  present.reserve(items.size());
  for (int s = 0; s < 256; ++s) {
    const auto shard = static_cast<std::uint8_t>(s);
    auto files = store.list_shard(shard);
    if (!files.ok()) {
      out.io_errors.push_back(files.error().message);
      continue;
    }
    for (const ShardFile& f : *files) {
      const auto parsed = Store::parse_object_name(f.name);
      if (!(parsed ? f.well_typed(parsed->second) : f.regular)) {
        out.candidates.push_back({Candidate::What::not_regular, 0, shard, f.name,
                                  parsed && parsed->second == ObjectKind::tree ? "not a directory"
                                                                               : "not a regular file"});
        continue;
      }
      if (!parsed || Store::shard_of(parsed->first) != shard) {
        out.candidates.push_back({Candidate::What::stray, 0, shard, f.name, "not an object name"});
        continue;
      }
      if (parsed->second == ObjectKind::blob) {
        // A blob lives as long as a tree links it; one with no tree left is garbage.
        if (f.links <= 1)
          out.candidates.push_back({Candidate::What::orphan, 0, shard, f.name, "no tree links it"});
        continue;
      }
      present.insert(parsed->first);
      if (!referenced.contains(parsed->first))
        out.candidates.push_back({Candidate::What::orphan, 0, shard, f.name, "no index entry references it"});
    }
  }
}

// Pool thread: reads one object and says what is wrong with it (detail empty: nothing).
Candidate verify_object(const Store& store, const Item& it, std::uint64_t& checked_bytes) {
  Candidate c{Candidate::What::missing, 0, 0, {}, {}};
  auto check = store.check_object(it.digest, it.kind);
  if (!check.ok()) {
    c.detail = check.error().message;
    return c;
  }
  checked_bytes += check->size;
  if (check->size != it.size) {
    c.what = Candidate::What::size_mismatch;
    c.detail = "size " + std::to_string(check->size) + ", index says " + std::to_string(it.size);
  } else if (!check->intact()) {
    c.what = Candidate::What::digest_mismatch;
    c.detail = check->problem.empty() ? "content digest " + check->digest.hex() : check->problem;
  }
  return c;
}

// Pool thread: lists the store and (full mode) reads every object once.
StoreScan scan_store(const Store& store, bool full, const std::vector<Item>& items) {
  StoreScan out;
  std::unordered_set<Digest128, Digest128Hash> present;
  list_shards(store, items, out, present);
  // Full mode reads each distinct object once; the verdict applies to every key naming it.
  std::unordered_map<Digest128, Candidate, Digest128Hash> verdicts;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const Item& it = items[i];
    if (!present.contains(it.digest)) {
      out.candidates.push_back({Candidate::What::missing, i, 0, {}, "object file is missing"});
      continue;
    }
    if (!full) continue;
    auto v = verdicts.find(it.digest);
    if (v == verdicts.end()) v = verdicts.emplace(it.digest, verify_object(store, it, out.checked_bytes)).first;
    if (!v->second.detail.empty()) {
      Candidate c = v->second;
      c.item = i;
      out.candidates.push_back(std::move(c));
    }
  }
  auto names = store.list_staging();
  if (names.ok()) out.staging = std::move(*names);
  else out.io_errors.push_back(names.error().message);
  return out;
}

const char* kind_name(Candidate::What w) {
  switch (w) {
    case Candidate::What::missing: return "missing_object";
    case Candidate::What::digest_mismatch: return "digest_mismatch";
    case Candidate::What::size_mismatch: return "size_mismatch";
    case Candidate::What::orphan: return "orphan_object";
    case Candidate::What::stray: return "stray_file";
    case Candidate::What::not_regular: return "not_a_regular_file";
  }
  return "unknown";
}

}  // namespace

void Reconciler::start_next() {
  if (queued_.empty()) {
    running_ = false;
    return;
  }
  running_ = true;
  auto scan = std::make_shared<Scan>();
  scan->mode = queued_.front().first;
  // Requests queued for the same mode share this pass.
  for (auto it = queued_.begin(); it != queued_.end();) {
    if (it->first == scan->mode) {
      scan->waiters.push_back(std::move(it->second));
      it = queued_.erase(it);
    } else {
      ++it;
    }
  }
  const auto& entries = cache_.catalog().entries();
  scan->items.reserve(entries.size());
  for (const auto& [key, e] : entries) scan->items.push_back({key, e.digest, e.kind, e.size});

  const bool full = scan->mode == Mode::full;
  run_in_pool(
      loop_,
      [scan, full, &store = cache_.store(), check = check_layout_] {
        if (check)
          if (Status layout = check(); !layout.ok()) scan->layout_findings = layout.error().message;
        scan->found = scan_store(store, full, scan->items);
      },
      [this, scan, full] {
        if (!full) {
          decide(*scan);
          return;
        }
        index_.query<std::string>(
            [](Index& index) {
              auto r = index.quick_check();
              return r.ok() ? *r : r.error().message;
            },
            [this, scan](std::string findings) {
              scan->index_findings = std::move(findings);
              decide(*scan);
            });
      });
}

namespace {

// A finding about an entry, checked against the catalog as it is now and repaired; false
// when it no longer holds (the entry changed, or its object was published again).
bool repair_entry(Cache& cache, const Candidate& c, const std::vector<Item>& items, Problem& p) {
  Store& store = cache.store();
  const Item& it = items[c.item];
  const Entry* now = cache.catalog().find(it.key);
  if (now == nullptr || now->digest != it.digest) return false;  // changed meanwhile
  if (c.what == Candidate::What::missing) {
    auto exists = store.object_exists(it.digest, it.kind);
    if (exists.ok() && *exists) return false;  // republished since the listing
  }
  p.key = it.key.hex();
  p.path = store.object_path(it.digest, it.kind);
  if (c.what != Candidate::What::missing) (void)store.remove_object(it.digest, it.kind);
  cache.remove(it.key);
  return true;
}

// A finding about a file in a shard; false when it no longer holds or is being removed.
// Sets `removed` when the file is gone.
bool repair_file(Cache& cache, const Candidate& c, Problem& p, bool& removed) {
  Store& store = cache.store();
  if (store.removal_scheduled(c.shard, c.name)) return false;  // GC or evict is removing it
  if (c.what == Candidate::What::orphan) {
    const auto parsed = Store::parse_object_name(c.name);
    if (!parsed || cache.catalog().digest_referenced(parsed->first)) return false;
    p.path = store.object_path(parsed->first, parsed->second);
  } else {
    char shard[3];
    std::snprintf(shard, sizeof shard, "%02x", c.shard);
    p.path = store.root() + "/objects/" + shard + "/" + c.name;
  }
  // Never followed, only moved away and unlinked: that removes a symlink itself.
  removed = store.remove_shard_entry(c.shard, c.name).ok();
  return true;
}

// Staging files survive only while a publish is in flight; with none, any left are stale.
void sweep_stale_staging(Cache& cache, const std::vector<std::string>& staging,
                         ReconcileReport& report) {
  if (cache.publishes_in_flight() != 0) return;
  Store& store = cache.store();
  for (const std::string& name : staging) {
    if (Store::is_trash_name(name)) continue;  // being freed by a removal pass
    auto removed = store.remove_staging(name);
    if (removed.ok() && *removed) {
      report.problems.push_back({"stale_staging", "", store.root() + "/tmp/" + name,
                                 "staging file without a publish in flight"});
      ++report.repaired;
    }
  }
}

}  // namespace

void Reconciler::decide(Scan& scan) {
  ReconcileReport report;
  report.full = scan.mode == Mode::full;
  report.checked_entries = scan.items.size();
  report.checked_bytes = scan.found.checked_bytes;
  for (const Candidate& c : scan.found.candidates) {
    Problem p{kind_name(c.what), "", "", c.detail};
    const bool entry_problem = c.what == Candidate::What::missing ||
                               c.what == Candidate::What::digest_mismatch ||
                               c.what == Candidate::What::size_mismatch;
    // An entry's problem is repaired whenever it still holds; a file may fail to go.
    bool repaired = false;
    if (entry_problem) repaired = repair_entry(cache_, c, scan.items, p);
    else if (!repair_file(cache_, c, p, repaired)) continue;
    if (entry_problem && !repaired) continue;  // no longer holds
    if (repaired) ++report.repaired;
    report.problems.push_back(std::move(p));
  }
  sweep_stale_staging(cache_, scan.found.staging, report);
  const std::string& root = cache_.store().root();
  for (const std::string& e : scan.found.io_errors) report.problems.push_back({"io_error", "", "", e});
  if (!scan.index_findings.empty())
    report.problems.push_back({"index", "", root + "/index.sqlite", scan.index_findings});
  if (!scan.layout_findings.empty())
    report.problems.push_back({"replaced", "", root, scan.layout_findings});
  finish(scan, std::move(report));
}

void Reconciler::finish(Scan& scan, ReconcileReport report) {
  if (report.repaired > 0) cache_.flush();
  const bool startup = scan.mode == Mode::quick;
  if (startup && !report.ok())
    spdlog::warn("start-up reconcile repaired {} problem(s) in {}", report.repaired, cache_.store().root());
  for (const Problem& p : report.problems)
    spdlog::info("reconcile: {} {} {}", p.kind, p.path, p.detail);
  // A repair is reported once it is on the disk (the removals it scheduled are freed after
  // the index batch), and so is the start-up reconcile's "reconciled".
  const bool repaired = report.repaired > 0;
  auto answer = [this, startup, waiters = std::move(scan.waiters), report = std::move(report)]() mutable {
    if (startup) startup_done_ = true;
    for (auto& w : waiters) w(report);
  };
  if (repaired) cache_.after_removals(std::move(answer));
  else answer();
  start_next();
}

}  // namespace kcache::daemon
