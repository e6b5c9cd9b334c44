#include "workload.hpp"

#include <cstring>
#include <nlohmann/json.hpp>

#include "module_bytes.hpp"
#include "provider_writer.hpp"

namespace kcache::crash {

namespace {

std::uint64_t next(std::uint64_t& state) {  // splitmix64: small, seeded, good enough here
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::string module_name(int salt, bool hip) {
  return (hip ? "crash_scale_" : "crash_axpy_") + std::to_string(salt);
}

// Tiny kernels: `salt` makes each a distinct source, so a distinct key and module.
std::string source_of(int salt, bool hip) {
  const std::string s = std::to_string(salt);
  if (hip)
    return "extern \"C\" __global__ void scale" + s + "(float* y, int n) {\n"
           "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
           "  if (i < n) y[i] *= " + s + ".0f;\n}\n";
  return "extern \"C\" __global__ void axpy" + s + "(float a, const float* x, float* y, int n) {\n"
         "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
         "  if (i < n) y[i] = a * x[i] + y[i] + " + s + ".0f;\n}\n";
}

}  // namespace

Workload::Workload(WorkloadOptions options, Ledger& ledger)
    : options_(std::move(options)), ledger_(ledger) {}

Workload::~Workload() { stop(); }

void Workload::start() {
  for (int i = 0; i < options_.threads + options_.hit_threads; ++i)
    threads_.emplace_back([this, i] { run(i); });
}

void Workload::pause() { gate_.pause(); }

void Workload::resume() { gate_.resume(); }

void Workload::stop() {
  gate_.stop();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

void Workload::run(int index) {
  ClientOptions o;
  o.socket_path = options_.socket;
  o.connect_timeout = std::chrono::milliseconds(300);
  o.request_timeout = std::chrono::milliseconds(20000);
  // Hit threads wait on a compile only briefly: a recent module a kill took back out of the
  // index is recompiled by the mixed threads, while these go on hitting the others.
  const bool hitter = index >= options_.threads;
  o.compile_timeout = std::chrono::milliseconds(hitter ? 150 : 180000);
  o.fallback = false;  // the daemon's answers only: a fallback module would prove nothing
  auto client = Client::open(o);
  if (!client) {
    ledger_.violation("cannot create a client: " + client.error().message);
    return;
  }
  std::uint64_t rng = options_.seed * 1000003 + static_cast<std::uint64_t>(index);
  while (gate_.enter()) {
    const std::uint64_t epoch_before = kill_epoch_;
    one_op(*client, rng, hitter);
    // While the daemon is down, requests fail fast: do not spin on connect.
    const bool spin = !up_ || kill_epoch_ != epoch_before;
    gate_.leave();
    if (spin) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void Workload::one_op(const Client& client, std::uint64_t& rng, bool hitter) {
  int r = static_cast<int>(next(rng) % 1000);
  const bool want_fd = next(rng) % 4 != 0;  // 3 in 4 through the passed fd, else the path
  bool have_known = false;
  {
    const std::lock_guard lock(known_mutex_);
    have_known = !known_.empty();
  }
  if (hitter) {
    const int provider_share = options_.providers != nullptr ? kHitterProviderPerMille : 0;
    if (!have_known) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    else if (r < 950 - provider_share) do_get(client, pick_known(rng, true), want_fd, true);
    else if (r < 950) do_provider_get(client, rng, want_fd, true);
    else do_control(client, "status", "{}");
    return;
  }
  if (!have_known && r >= options_.fresh_per_mille) r = 0;  // nothing to hit yet: compile

  if ((r -= options_.fresh_per_mille) < 0) {
    const int salt = next_salt_++;
    latest_fresh_ = salt;
    do_get(client, {salt, false}, want_fd);
  } else if ((r -= 30) < 0) {  // join the newest fresh compile (or hit it)
    const int salt = latest_fresh_;
    if (salt > 0) do_get(client, {salt, false}, want_fd);
  } else if ((r -= options_.hip_per_mille) < 0) {
    do_get(client, {r % 2 == 0 ? next_salt_++ : pick_known(rng, false).salt, true}, want_fd);
  } else if (options_.providers != nullptr && (r -= options_.provider_per_mille) < 0) {
    do_provider_get(client, rng, want_fd, false);
  } else if ((r -= 550 - (options_.providers != nullptr ? options_.provider_per_mille : 0)) < 0) {
    do_get(client, pick_known(rng, true), want_fd);
  } else if ((r -= 100) < 0) {
    do_get(client, pick_known(rng, false), want_fd);  // old: GC may have evicted it
  } else if ((r -= 120) < 0) {
    do_control(client, "status", "{}");
  } else if ((r -= 40) < 0) {
    do_control(client, "list", R"({"limit": 20})");
  } else if ((r -= 25) < 0) {
    do_control(client, "gc", "{}");
  } else {
    const Source victim = pick_old(rng);
    do_control(client, "evict", nlohmann::json{{"name", module_name(victim.salt, victim.hip)}}.dump());
  }
}

Workload::Source Workload::pick_known(std::uint64_t& rng, bool recent) {
  const std::lock_guard lock(known_mutex_);
  if (known_.empty()) return {next_salt_++, false};
  const std::size_t window = recent ? std::min(known_.size(), kRecent) : known_.size();
  return known_[known_.size() - 1 - next(rng) % window];
}

// Outside the window the hit threads use: evicting those would turn hits into compiles that
// the next kill interrupts again and again.
Workload::Source Workload::pick_old(std::uint64_t& rng) {
  const std::lock_guard lock(known_mutex_);
  if (known_.size() <= kRecent) return {0, false};  // nothing old enough: a name never used
  return known_[next(rng) % (known_.size() - kRecent)];
}

void Workload::do_get(const Client& client, Source m, bool want_fd, bool hitter) {
  const std::uint64_t epoch = kill_epoch_;
  const bool up = up_;
  const std::string name = module_name(m.salt, m.hip);
  const std::string source = source_of(m.salt, m.hip);
  Request req;
  req.name = name;
  req.target = m.hip ? "gfx90a" : "sm_90a";
  req.source = source;
  req.want_fd = want_fd;
  ++ledger_.requests;
  auto got = client.get(req);
  if (!got && hitter && got.error().code == Errc::timeout &&
      got.error().message.find("compile timeout") != std::string::npos) {
    ++ledger_.hit_gave_up;  // a miss, left to the compiling threads: not a failure
    return;
  }
  if (!got) {
    failed("get " + name + " for " + std::string(req.target), got.error(), epoch, up);
    return;
  }
  ++ledger_.requests_ok;
  if (want_fd && got->fd.get() < 0)
    ledger_.violation("get " + name + " asked for an fd and got none");
  check_module(m, *got);
}

void Workload::check_module(const Source& m, const kcache::Module& got) {
  const std::string what = module_name(m.salt, m.hip) + " (key " + got.key + ", " + got.path + ")";
  if (got.origin == Origin::compiled) ++ledger_.compiled;
  else if (got.origin == Origin::hit) ++ledger_.hits;
  else ledger_.violation(what + ": unexpected origin " + origin_name(got.origin));
  std::string bytes;
  if (!verify_received(what, got, bytes)) return;
  const std::lock_guard lock(known_mutex_);
  known_.push_back(m);
  if (!m.hip && bank_.size() < kBank) bank_.push_back(std::move(bytes));
}

bool Workload::verify_received(const std::string& what, const kcache::Module& got,
                               std::string& bytes) {
  ReadResult r = got.fd.get() >= 0 ? read_fd(got.fd.get()) : read_path(got.path);
  if (r.error != 0) {
    ledger_.violation(what + ": cannot read the module just served: " + std::strerror(r.error));
    return false;
  }
  if (r.bytes.size() != got.size)
    ledger_.violation(what + ": " + std::to_string(r.bytes.size()) + " bytes, the reply said " +
                      std::to_string(got.size));
  if (const std::string d = xxh128_hex(r.bytes); d != got.digest)
    ledger_.violation(what + ": content digest " + d + ", the reply said " + got.digest);
  ++ledger_.modules_verified;
  ledger_.module_bytes += r.bytes.size();
  bytes = std::move(r.bytes);

  const std::lock_guard lock(known_mutex_);
  auto [it, inserted] = key_digest_.emplace(got.key, got.digest);
  if (!inserted && it->second != got.digest)
    ledger_.violation(what + ": key served digest " + got.digest + ", earlier " + it->second);
  return inserted;
}

std::vector<std::string> Workload::cubin_bank() const {
  const std::lock_guard lock(known_mutex_);
  return bank_;
}

void Workload::do_provider_get(const Client& client, std::uint64_t& rng, bool want_fd,
                               bool hitter) {
  const auto pick = options_.providers->pick(next(rng));
  if (!pick) return;
  const std::uint64_t epoch = kill_epoch_;
  const bool up = up_;
  const auto started = ProviderChurn::Clock::now();
  Request req;
  req.name = pick->name;
  req.version = kProviderVersion;
  req.target = "sm_90a";
  req.want_fd = want_fd;
  ++ledger_.requests;
  ++ledger_.provider_requests;
  auto got = client.get(req);
  if (!got && hitter && got.error().code == Errc::timeout &&
      got.error().message.find("compile timeout") != std::string::npos) {
    ++ledger_.hit_gave_up;  // materializing took longer than a hit thread waits
    return;
  }
  if (!got) {
    if (up && kill_epoch_ == epoch && !options_.providers->stable_through(pick->generation, started)) {
      ++ledger_.provider_absent;  // its provider came or went meanwhile
      return;
    }
    failed("get provider module " + pick->name, got.error(), epoch, up);
    return;
  }
  ++ledger_.requests_ok;
  const std::string what = "provider module " + pick->name + " (key " + got->key + ", " + got->path + ")";
  if (got->origin != Origin::provider)
    ledger_.violation(what + ": origin " + origin_name(got->origin) + ", not provider");
  if (got->digest != pick->digest)
    ledger_.violation(what + ": the reply says digest " + got->digest + ", the manifest shipped " +
                      pick->digest);
  if (want_fd && got->fd.get() < 0) ledger_.violation(what + ": asked for an fd and got none");
  std::string bytes;
  (void)verify_received(what, *got, bytes);
  ++ledger_.provider_served;
}

void Workload::do_control(const Client& client, const char* op, const std::string& json) {
  const bool admin = std::strcmp(op, "gc") == 0 || std::strcmp(op, "evict") == 0;
  // libkcache retries reads once on a broken connection but never an admin operation
  // (docs/client.md): a pooled connection to the killed daemon is renewed with a status first.
  thread_local std::uint64_t renewed_epoch = ~std::uint64_t{0};
  if (admin && renewed_epoch != kill_epoch_) {
    renewed_epoch = kill_epoch_;
    (void)client.control("status");
  }
  const std::uint64_t epoch = kill_epoch_;
  const bool up = up_;
  ++ledger_.requests;
  auto reply = client.control(op, json);
  if (!reply) {
    failed(std::string(op) + " " + json, reply.error(), epoch, up);
    return;
  }
  ++ledger_.requests_ok;
  if (admin) ++ledger_.admin_ops;
  if (nlohmann::json::parse(*reply, nullptr, false).is_discarded())
    ledger_.violation(std::string(op) + " answered something that is not JSON: " + *reply);
}

void Workload::failed(const std::string& what, const Error& e, std::uint64_t epoch, bool up) {
  if (!up || kill_epoch_ != epoch) {
    ++ledger_.cut_by_kill;
    return;
  }
  ledger_.violation(what + " failed while kcached was up: " + std::string(errc_name(e.code)) +
                    ": " + e.message);
}

}  // namespace kcache::crash
