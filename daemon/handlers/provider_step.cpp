// The provider step of get: rank, serve from the catalog, or materialize and serve.
#include "handlers/provider_step.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>

#include "app/daemon.hpp"
#include "handlers/kernels_step.hpp"
#include "handlers/module_reply.hpp"
#include "providers/system_json.hpp"
#include "server/session.hpp"

namespace kcache::daemon {

namespace {

constexpr auto kGet = wire::Opcode::get;

struct Step {
  wire::GetRequest req;
  GetContinuation next;
  std::optional<Device> device;
  std::optional<SystemInfo> system;
  std::vector<Digest128> tried;       // keys that failed to materialize for this request
  std::vector<std::string> failures;  // and why
};

// "The device" of a request (docs/providers.md): by index, or the local device whose own
// compile target the explicit target is, else the device that target names.
Result<Device> device_of(Daemon& d, const wire::GetRequest& req) {
  if (!req.target.empty()) {
    KC_TRY_ASSIGN(const Target target, parse_target(req.target));
    const std::string canonical = target.str();
    for (const DeviceInfo& dev : d.devices().devices())
      if (dev.compile_target == canonical) return parse_device(dev.arch);
    return parse_device(canonical);
  }
  if (!req.device) return make_error(Errc::invalid_argument, "neither a target nor a device");
  KC_TRY_ASSIGN(const DeviceInfo* info, d.devices().at(*req.device));
  return parse_device(info->arch);
}

void attempt(Daemon& d, const std::shared_ptr<Session>& s, std::uint32_t id,
             const std::shared_ptr<Step>& step) {
  ProviderService& providers = d.providers();
  const bool want_fd = (step->req.flags & wire::kGetWantFd) != 0;
  providers::SelectQuery query{step->req.name, step->req.version, &*step->device,
                               step->system ? &*step->system : nullptr, false};
  const providers::ProviderChoice choice = providers::choose_providers(providers.table(), query);
  for (const providers::Pick& pick : choice.ranked) {
    const Digest128 key = providers.key_of(pick);
    if (std::find(step->tried.begin(), step->tried.end(), key) != step->tried.end()) continue;
    // A catalog entry whose file vanished or changed is dropped: materialize it again.
    if (Entry* e = d.cache().lookup(key); e != nullptr && serve_entry(d, *s, id, key, *e, wire::Origin::provider, want_fd))
      return;
    if (!s->acquire_slot()) {
      s->reply_error(id, kGet, make_error(Errc::busy, "too many pending requests on this connection"));
      return;
    }
    // The interim reply goes first: the outcome may arrive before materialize() returns.
    s->reply_in_progress(id, kGet, "materializing a provider module");
    std::weak_ptr<Session> weak = s;
    providers.materialize(pick, /*urgent=*/true,
                          [&d, weak, id, key, step, want_fd](const Result<Entry>& outcome) {
                            auto session = weak.lock();
                            if (!session) return;
                            session->release_slot();
                            if (serve_published(d, *session, id, key, outcome, want_fd)) return;
                            step->tried.push_back(key);
                            step->failures.push_back(outcome.ok() ? "module " + key.hex() + " vanished"
                                                                  : outcome.error().message);
                            attempt(d, session, id, step);
                          });
    return;
  }
  query.explain = true;
  std::vector<std::string> reasons = std::move(step->failures);
  for (std::string& r : providers::choose_providers(providers.table(), query).reasons)
    reasons.push_back(std::move(r));
  step->next(d, s, id, std::move(step->req), join_reasons(reasons));
}


// After the first scan: a kernels repo is answered by its own step; the other kinds need a
// version and a device.
void offer(Daemon& d, const std::shared_ptr<Session>& s, std::uint32_t id, const std::shared_ptr<Step>& step) {
  if (serve_kernels_variant(d, s, id, step->req, step->device ? &*step->device : nullptr,
                            step->system ? &*step->system : nullptr))
    return;
  if (step->req.version.empty() || !step->device) {
    step->next(d, s, id, std::move(step->req), {});  // the next steps report a bad target or device
    return;
  }
  attempt(d, s, id, step);
}

}  // namespace

void serve_from_providers(Daemon& d, const std::shared_ptr<Session>& s, std::uint32_t id,
                          wire::GetRequest req, GetContinuation next) {
  // A kernels request names its repo and system; its revision is optional.
  if ((req.version.empty() && req.system.empty()) || !d.providers().enabled()) {
    next(d, s, id, std::move(req), {});
    return;
  }
  auto step = std::make_shared<Step>();
  if (!req.system.empty()) {
    auto system = providers::parse_system_json(req.system);
    if (!system.ok()) {
      s->reply_error(id, kGet, system.error());
      return;
    }
    step->system = std::move(system).value();
  }
  const bool names_device = !req.target.empty() || req.device.has_value();
  auto device = device_of(d, req);
  if (device.ok()) {
    step->device = std::move(device).value();
  } else if (names_device) {
    next(d, s, id, std::move(req), {});  // the next steps report a bad target or device
    return;
  }
  step->req = std::move(req);
  step->next = next;
  std::weak_ptr<Session> weak = s;
  d.providers().when_scanned([&d, weak, id, step] {
    if (auto session = weak.lock()) offer(d, session, id, step);
  });
}

}  // namespace kcache::daemon
