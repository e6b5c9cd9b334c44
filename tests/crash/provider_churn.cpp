#include "provider_churn.hpp"

#include <algorithm>
#include <filesystem>

#include "module_bytes.hpp"
#include "provider_writer.hpp"

namespace kcache::crash {

namespace fs = std::filesystem;

ProviderChurn::ProviderChurn(ProviderChurnOptions options, Ledger& ledger,
                             std::function<std::vector<std::string>()> bank)
    : options_(std::move(options)), ledger_(ledger), bank_(std::move(bank)), rng_(options_.seed) {
  fs::create_directories(options_.root);
  fs::create_directories(options_.scratch);
}

ProviderChurn::~ProviderChurn() { stop(); }

void ProviderChurn::start() {
  thread_ = std::thread([this] { run(); });
}

void ProviderChurn::pause() { gate_.pause(); }

void ProviderChurn::resume() { gate_.resume(); }

void ProviderChurn::stop() {
  gate_.stop();
  if (thread_.joinable()) thread_.join();
}

void ProviderChurn::run() {
  std::mt19937_64 pace(options_.seed * 7919 + 1);
  while (gate_.enter()) {
    step();
    gate_.leave();
    if (!gate_.sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(150, 600)(pace))))
      return;
  }
}

void ProviderChurn::step() {
  const std::lock_guard ops(ops_mutex_);
  if (!remove_one(/*only_expired=*/true) &&
      present().size() < static_cast<std::size_t>(options_.max_present))
    (void)add();
}

bool ProviderChurn::add_now() {
  const std::lock_guard ops(ops_mutex_);
  if (present().size() >= static_cast<std::size_t>(options_.max_present))
    (void)remove_one(/*only_expired=*/false);
  return add();
}

bool ProviderChurn::add() {
  const std::vector<std::string> cubins = bank_();
  if (cubins.empty()) return false;
  Provider p;
  p.generation = next_generation_++;
  p.dir_name = "p" + std::to_string(p.generation);
  ProviderSpec spec;
  spec.name = "crashprov" + std::to_string(p.generation);
  const int count = 2 + static_cast<int>(rng_() % 2);
  for (int i = 0; i < count; ++i) {
    ProviderModule m;
    m.name = "cp" + std::to_string(p.generation) + "_" + std::to_string(i);
    m.bytes = cubins[rng_() % cubins.size()];
    m.zstd = rng_() % 2 == 0;
    p.modules.push_back({p.generation, m.name, xxh128_hex(m.bytes)});
    spec.modules.push_back(std::move(m));
  }
  {
    // Known before the daemon can see it: any entry it publishes is checkable.
    const std::lock_guard lock(state_mutex_);
    for (const ProviderPick& m : p.modules) shipped_[m.name] = m.digest;
  }
  const std::string final_dir = options_.root + "/" + p.dir_name;
  std::string error;
  if (rng_() % 4 == 0) {  // in place: incomplete (no manifest) until the last rename
    error = write_provider(final_dir, spec);
  } else {
    const std::string aside = options_.scratch + "/" + p.dir_name;
    error = write_provider(aside, spec);
    std::error_code ec;
    if (error.empty()) fs::rename(aside, final_dir, ec);
    if (ec) error = "cannot move " + aside + " into the root: " + ec.message();
  }
  if (!error.empty()) {
    ledger_.violation("harness: cannot write provider " + p.dir_name + ": " + error);
    return false;
  }
  p.complete_at = Clock::now();
  p.expires_at = p.complete_at + std::chrono::milliseconds(std::uniform_int_distribution<int>(
                                     static_cast<int>(options_.min_life.count()),
                                     static_cast<int>(options_.max_life.count()))(rng_));
  {
    const std::lock_guard lock(state_mutex_);
    providers_.push_back(std::move(p));
  }
  ++ledger_.providers_added;
  return true;
}

bool ProviderChurn::remove_one(bool only_expired) {
  std::string dir_name;
  {
    const std::lock_guard lock(state_mutex_);
    Provider* victim = nullptr;  // the one whose life ends first
    for (Provider& p : providers_)
      if (!p.removed && (victim == nullptr || p.expires_at < victim->expires_at)) victim = &p;
    if (victim == nullptr || (only_expired && victim->expires_at > Clock::now())) return false;
    victim->removed = true;  // from now on its modules may be refused
    dir_name = victim->dir_name;
  }
  const std::string in_root = options_.root + "/" + dir_name;
  std::error_code ec;
  if (rng_() % 2 == 0) {  // out at once, then deleted where the daemon does not look
    const std::string grave = options_.scratch + "/gone-" + dir_name;
    fs::rename(in_root, grave, ec);
    if (!ec) fs::remove_all(grave, ec);
  } else {  // file by file, under the watcher's eyes
    fs::remove_all(in_root, ec);
  }
  if (ec) ledger_.violation("harness: cannot remove provider " + dir_name + ": " + ec.message());
  ++ledger_.providers_removed;
  return true;
}

std::optional<ProviderPick> ProviderChurn::pick(std::uint64_t random) const {
  const std::lock_guard lock(state_mutex_);
  std::vector<const Provider*> live;
  std::vector<const Provider*> gone;
  for (const Provider& p : providers_) (p.removed ? gone : live).push_back(&p);
  // Mostly providers in the root; now and then one that left (its modules: `not found`).
  constexpr std::size_t kRecentGone = 8;
  if (gone.size() > kRecentGone) gone.erase(gone.begin(), gone.end() - kRecentGone);
  const auto& from = (random % 100 < 85 && !live.empty()) || gone.empty() ? live : gone;
  if (from.empty()) return std::nullopt;
  const Provider& p = *from[(random >> 8) % from.size()];
  return p.modules[(random >> 24) % p.modules.size()];
}

bool ProviderChurn::stable_through(std::uint64_t generation, Clock::time_point started) const {
  const std::lock_guard lock(state_mutex_);
  const auto it = std::find_if(providers_.begin(), providers_.end(),
                               [&](const Provider& p) { return p.generation == generation; });
  return it != providers_.end() && !it->removed && it->complete_at + options_.settle <= started;
}

std::optional<std::string> ProviderChurn::shipped_digest(const std::string& module_name) const {
  const std::lock_guard lock(state_mutex_);
  const auto it = shipped_.find(module_name);
  if (it == shipped_.end()) return std::nullopt;
  return it->second;
}

std::map<std::string, std::size_t> ProviderChurn::present() const {
  const std::lock_guard lock(state_mutex_);
  std::map<std::string, std::size_t> out;
  for (const Provider& p : providers_)
    if (!p.removed) out[p.dir_name] = p.modules.size();
  return out;
}

}  // namespace kcache::crash
