// The provider step of get for a kernels repo (kernels_step.hpp).
#include "handlers/kernels_step.hpp"

#include "app/daemon.hpp"
#include "handlers/module_reply.hpp"
#include "server/session.hpp"

namespace kcache::daemon {

namespace {

constexpr auto kGet = wire::Opcode::get;


// The devices the variant's device code must run on: the request's, else every local one.
std::vector<Device> devices_to_check(Daemon& d, const Device* device) {
  if (device != nullptr) return {*device};
  std::vector<Device> out;
  for (const DeviceInfo& info : d.devices().devices())
    if (auto parsed = parse_device(info.arch); parsed.ok()) out.push_back(std::move(parsed).value());
  return out;
}

// "kernels repo org/name (revision main): why".
struct RepoWords {
  std::string text;
  explicit RepoWords(const wire::GetRequest& req)
      : text("kernels repo " + req.name + " (revision " + std::string(providers::kernels_revision_name(req.version)) + ")") {}
};

void reply_refused(Session& s, std::uint32_t id, const RepoWords& repo, const std::string& why) {
  s.reply_error(id, kGet, make_error(Errc::not_found, repo.text + ": " + why));
}

}  // namespace

bool serve_kernels_variant(Daemon& d, const std::shared_ptr<Session>& s, std::uint32_t id,
                           const wire::GetRequest& req, const Device* device, const SystemInfo* system) {
  ProviderService& providers = d.providers();
  const providers::KernelsChoice choice =
      providers::choose_kernels_variant(providers.table(), {req.name, req.version, system});
  if (!choice.repo_known) return false;
  if (!choice.pick) {
    reply_refused(*s, id, RepoWords(req), "no build variant serves this request: " + join_reasons(choice.reasons));
    return true;
  }
  const providers::KernelsPick pick = *choice.pick;
  std::vector<Device> devices = devices_to_check(d, device);
  const Digest128 key = providers.variant_key(pick, devices);
  const bool want_fd = (req.flags & wire::kGetWantFd) != 0;
  if (Entry* e = d.cache().lookup(key); e != nullptr && serve_entry(d, *s, id, key, *e, wire::Origin::provider, want_fd))
    return true;
  const std::string variant = providers.table()[pick.provider].kernel_variants[pick.variant].name;
  if (const std::string refused = providers.variant_refusal(key); !refused.empty()) {
    reply_refused(*s, id, RepoWords(req), "build variant " + variant + " was refused: " + refused);
    return true;
  }
  if (!s->acquire_slot()) {
    s->reply_error(id, kGet, make_error(Errc::busy, "too many pending requests on this connection"));
    return true;
  }
  s->reply_in_progress(id, kGet, "materializing build variant " + variant);
  std::weak_ptr<Session> weak = s;
  providers.materialize_variant(
      pick, key, std::move(devices),
      [&d, weak, id, key, want_fd, repo = RepoWords(req), variant](const Result<Entry>& outcome) {
        auto session = weak.lock();
        if (!session) return;
        session->release_slot();
        if (serve_published(d, *session, id, key, outcome, want_fd)) return;
        if (outcome.ok()) {
          reply_refused(*session, id, repo, "build variant " + variant + " vanished as it was published");
          return;
        }
        const Error& e = outcome.error();
        if (e.code == Errc::corrupt || e.code == Errc::not_found)
          reply_refused(*session, id, repo, "build variant " + variant + " was refused: " + e.message);
        else
          session->reply_error(id, kGet, e);
      });
  return true;
}

}  // namespace kcache::daemon
