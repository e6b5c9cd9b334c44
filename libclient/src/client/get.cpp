#include "client/get.hpp"

#include <fcntl.h>

#include <string>
#include <utility>

#include "client/exchange.hpp"
#include "common/cache_key.hpp"
#include "compile/compiler.hpp"

namespace kcache::client {

namespace {

// A full request's buffers can be megabytes (the source); do not pin that per connection.
constexpr std::size_t kKeepBuffer = 256 * 1024;

void release_large_buffers(Connection& conn) {
  wire::GetRequest& r = conn.get_scratch();
  r.source.reset();
  r.headers.clear();
  r.headers.shrink_to_fit();
  if (conn.send_buffer().capacity() > kKeepBuffer) std::string().swap(conn.send_buffer());
}

Result<Fd> module_fd(Connection& conn, const std::string& path) {
  Fd fd = conn.take_fd();
  if (fd) return fd;
  // An older daemon without fd passing: the next best thing is opening the path now.
  fd.reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return errno_error(Errc::io, "cannot open module '" + path + "'");
  return fd;
}

}  // namespace

void fill_request(wire::GetRequest& r, const GetParams& p, const KeyOnly* key) {
  // assign() into the connection's scratch reuses its capacity: no allocation on the hit path.
  r.name.assign(p.name);
  r.version.assign(p.version);
  r.system.assign(p.system);
  r.flags = p.want_fd ? wire::kGetWantFd : 0;
  if (key != nullptr) {
    r.target.assign(key->target);
    r.device.reset();
    r.source.reset();
    r.headers.clear();
    r.options.clear();
    r.key = key->key;
    return;
  }
  r.target.assign(p.target);
  r.device = p.target.empty() ? p.device : std::nullopt;
  if (p.source)
    r.source.emplace(*p.source);
  else
    r.source.reset();
  r.headers.resize(p.headers.size());
  for (std::size_t i = 0; i < p.headers.size(); ++i) {
    r.headers[i].name.assign(p.headers[i].name);
    r.headers[i].data.assign(p.headers[i].data, p.headers[i].data_size);
  }
  r.options.resize(p.options.size());
  for (std::size_t i = 0; i < p.options.size(); ++i) r.options[i].assign(p.options[i]);
  // The daemon never trusts a key sent with a source, so a full request carries none.
  r.key.reset();
}

std::optional<Digest128> lookup_key(const wire::HelloReply& hello, const GetParams& p,
                                    std::string_view canonical_target) {
  if (!p.source || (hello.capabilities & wire::kCapKeyLookup) == 0) return std::nullopt;
  const std::string_view backend = backend_of_target(canonical_target);
  if (backend.empty()) return std::nullopt;
  const wire::CompilerInfo* compiler = nullptr;
  for (const wire::CompilerInfo& c : hello.compilers)
    if (c.backend == backend) compiler = &c;
  // Without the daemon's compiler identity the key cannot match the daemon's.
  if (compiler == nullptr) return std::nullopt;

  const KeySubject subject{backend, canonical_target, compiler->identity, p.name, *p.source};
  return compute_cache_key(key_input_of(subject, p.options, p.headers));
}

Result<GetResult> exchange_get(Connection& conn, const GetParams& p, const KeyOnly* key,
                               const Timeouts& timeouts) {
  conn.discard_fds();
  wire::GetRequest& request = conn.get_scratch();
  fill_request(request, p, key);
  const std::uint32_t id = conn.next_request_id();
  const std::string_view frame = build_frame(conn.send_buffer(), wire::Opcode::get, id,
                                             [&](std::string& out) { wire::encode(out, request); });
  auto reply = round_trip(conn, wire::Opcode::get, id, frame, timeouts);
  if (key == nullptr) release_large_buffers(conn);
  if (!reply.ok()) return std::move(reply).error();

  auto module = wire::decode_module_reply(reply->payload);
  if (!module.ok()) {
    const Errc code = module.error().code;
    conn.discard_fds();
    // Malformed replies (and the daemon's own protocol errors) end the connection.
    if (code == Errc::protocol) conn.mark_broken();
    if (code == Errc::need_source && key == nullptr)
      return make_error(Errc::protocol, "kcached asked for the source of a request that had it");
    return std::move(module).error();
  }
  GetResult result{std::move(module).value(), Fd{}};
  if (p.want_fd) {
    auto fd = module_fd(conn, result.module.path);
    conn.discard_fds();
    if (!fd.ok()) return std::move(fd).error();
    result.fd = std::move(fd).value();
  }
  conn.discard_fds();
  return result;
}

}  // namespace kcache::client
