// client/c_api.cpp — the C ABI of libkcache (kcache/kcache.h) over client::Client.
//
// Everything here is noexcept at the boundary: exceptions (std::bad_alloc above all) become
// KCACHE_EINTERNAL. Struct sizes are checked before a field is read; outputs are written only
// once the whole result is ready, so a failure leaves them untouched.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <string_view>

#include "client/client.hpp"
#include "kcache/kcache.h"
#include "kcache_config.h"

struct kcache_client {
  explicit kcache_client(kcache::client::Config config) : impl(std::move(config)) {}
  kcache::client::Client impl;
};

namespace {

using kcache::Errc;

// The C codes are the negated wire statuses (kcache.h); a drift would misreport every error.
static_assert(KCACHE_ENOTFOUND == -static_cast<int>(Errc::not_found) &&
              KCACHE_ECOMPILE == -static_cast<int>(Errc::compile_error) &&
              KCACHE_EINVAL == -static_cast<int>(Errc::invalid_argument) &&
              KCACHE_EUNAVAILABLE == -static_cast<int>(Errc::unavailable) &&
              KCACHE_ETIMEDOUT == -static_cast<int>(Errc::timeout) &&
              KCACHE_ETOOLARGE == -static_cast<int>(Errc::too_large) &&
              KCACHE_EPERM == -static_cast<int>(Errc::permission_denied) &&
              KCACHE_EPROTO == -static_cast<int>(Errc::protocol) &&
              KCACHE_EVERSION == -static_cast<int>(Errc::unsupported_version) &&
              KCACHE_EOPCODE == -static_cast<int>(Errc::unknown_opcode) &&
              KCACHE_EIO == -static_cast<int>(Errc::io) &&
              KCACHE_EINTERNAL == -static_cast<int>(Errc::internal) &&
              KCACHE_EBUSY == -static_cast<int>(Errc::busy) &&
              KCACHE_EDISCONNECTED == -static_cast<int>(Errc::disconnected) &&
              KCACHE_ECOMPILER == -static_cast<int>(Errc::compiler_failure) &&
              KCACHE_ECORRUPT == -static_cast<int>(Errc::corrupt));
using kcache::Error;

// The stable ABI (LP64): is_directory took padding, nothing moved.
static_assert(sizeof(void*) != 8 || (sizeof(kcache_module) == 112 && offsetof(kcache_module, target) == 96 &&
                                     offsetof(kcache_module, is_directory) == 90 &&
                                     offsetof(kcache_module, fd) == 108));

template <class T>
bool sized(const T* s) noexcept {
  return s != nullptr && s->size >= sizeof(T);
}

char* copy_string(std::string_view s) noexcept {
  auto* p = static_cast<char*>(std::malloc(s.size() + 1));
  if (p == nullptr) return nullptr;
  std::memcpy(p, s.data(), s.size());
  p[s.size()] = '\0';
  return p;
}

int code_of(Errc e) noexcept {
  return -static_cast<int>(e);
}

// `err` is null or was checked with sized() by the caller.
int report(kcache_error* err, Errc code, std::string_view message,
           std::string_view log = {}) noexcept {
  if (err != nullptr) {
    kcache_error_clear(err);
    err->code = code_of(code);
    err->message = copy_string(message);
    err->log = log.empty() ? nullptr : copy_string(log);
  }
  return code_of(code);
}

int report(kcache_error* err, const Error& e) noexcept {
  return report(err, e.code, e.message, e.log);
}

template <class Body>
int guarded(kcache_error* err, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return report(err, Errc::internal, "out of memory");
  } catch (const std::exception& e) {
    return report(err, Errc::internal, e.what());
  } catch (...) {
    return report(err, Errc::internal, "unexpected exception");
  }
}

template <class T>
Error bad_size(const char* type, const T* s, const char* init) {
  return kcache::make_error(Errc::invalid_argument,
                            std::string(type) + ".size is " + std::to_string(s->size) +
                                ", expected at least " + std::to_string(sizeof(T)) +
                                ": initialize it with " + init + "()");
}

kcache::Result<kcache::client::GetParams> to_params(const kcache_request* r) {
  using kcache::make_error;
  if (r == nullptr) return make_error(Errc::invalid_argument, "request is NULL");
  if (!sized(r)) return bad_size("kcache_request", r, "kcache_request_init");
  if (r->name == nullptr || *r->name == '\0')
    return make_error(Errc::invalid_argument, "request has no module name");
  if (r->source == nullptr && r->source_size != 0)
    return make_error(Errc::invalid_argument,
                      "source is NULL but source_size is " + std::to_string(r->source_size));
  if (r->headers == nullptr && r->header_count != 0)
    return make_error(Errc::invalid_argument,
                      "headers is NULL but header_count is " + std::to_string(r->header_count));
  for (std::size_t i = 0; i < r->header_count; ++i) {
    if (r->headers[i].name == nullptr)
      return make_error(Errc::invalid_argument, "header " + std::to_string(i) + " has no name");
    if (r->headers[i].data == nullptr && r->headers[i].data_size != 0)
      return make_error(Errc::invalid_argument,
                        "header '" + std::string(r->headers[i].name) + "' has no data");
  }
  if (r->options == nullptr && r->option_count != 0)
    return make_error(Errc::invalid_argument,
                      "options is NULL but option_count is " + std::to_string(r->option_count));
  for (std::size_t i = 0; i < r->option_count; ++i)
    if (r->options[i] == nullptr)
      return make_error(Errc::invalid_argument, "option " + std::to_string(i) + " is NULL");
  if (r->device < -1)
    return make_error(Errc::invalid_argument,
                      "device " + std::to_string(r->device) + " is not a device index (-1: none)");
  if ((r->flags & ~KCACHE_GET_FD) != 0)
    return make_error(Errc::invalid_argument,
                      "unknown request flags " + std::to_string(r->flags & ~KCACHE_GET_FD));

  kcache::client::GetParams p;
  p.name = r->name;
  if (r->version != nullptr) p.version = r->version;
  if (r->target != nullptr) p.target = r->target;
  if (r->device >= 0) p.device = static_cast<std::uint32_t>(r->device);
  if (r->source != nullptr) p.source = std::string_view(r->source, r->source_size);
  p.headers = {r->headers, r->header_count};
  p.options = {r->options, r->option_count};
  if (r->system_json != nullptr) p.system = r->system_json;
  p.want_fd = (r->flags & KCACHE_GET_FD) != 0;
  return p;
}

kcache_origin to_origin(kcache::wire::Origin o) noexcept {
  switch (o) {
    case kcache::wire::Origin::provider:
      return KCACHE_ORIGIN_PROVIDER;
    case kcache::wire::Origin::hit:
      return KCACHE_ORIGIN_HIT;
    case kcache::wire::Origin::compiled:
      return KCACHE_ORIGIN_COMPILED;
    case kcache::wire::Origin::fallback:
      return KCACHE_ORIGIN_FALLBACK;
  }
  return KCACHE_ORIGIN_HIT;
}

std::chrono::milliseconds or_default(std::uint32_t value_ms, std::chrono::milliseconds fallback) {
  return value_ms == 0 ? fallback : std::chrono::milliseconds(value_ms);
}

}  // namespace

extern "C" {

void kcache_client_options_init(kcache_client_options* o) {
  if (o == nullptr) return;
  const kcache::client::Timeouts defaults;
  *o = kcache_client_options{};
  o->size = sizeof *o;
  o->connect_timeout_ms = static_cast<std::uint32_t>(defaults.connect.count());
  o->request_timeout_ms = static_cast<std::uint32_t>(defaults.request.count());
  o->compile_timeout_ms = static_cast<std::uint32_t>(defaults.compile.count());
}

void kcache_request_init(kcache_request* r) {
  if (r == nullptr) return;
  *r = kcache_request{};
  r->size = sizeof *r;
  r->device = -1;
}

void kcache_module_init(kcache_module* m) {
  if (m == nullptr) return;
  *m = kcache_module{};
  m->size = sizeof *m;
  m->origin = KCACHE_ORIGIN_HIT;
  m->fd = -1;
}

void kcache_error_init(kcache_error* e) {
  if (e == nullptr) return;
  *e = kcache_error{};
  e->size = sizeof *e;
}

void kcache_client_stats_init(kcache_client_stats* s) {
  if (s == nullptr) return;
  *s = kcache_client_stats{};
  s->size = sizeof *s;
}

void kcache_module_clear(kcache_module* m) {
  if (m == nullptr) return;
  std::free(m->path);
  std::free(m->target);
  if (m->fd >= 0) ::close(m->fd);
  kcache_module_init(m);
}

void kcache_error_clear(kcache_error* e) {
  if (e == nullptr) return;
  std::free(e->message);
  std::free(e->log);
  kcache_error_init(e);
}

void kcache_free(void* pointer) {
  std::free(pointer);
}

int kcache_client_new(const kcache_client_options* options, kcache_client** client) {
  return guarded(nullptr, [&]() -> int {
    if (client == nullptr) return KCACHE_EINVAL;
    kcache_client_options defaults;
    kcache_client_options_init(&defaults);
    if (options == nullptr) options = &defaults;
    if (!sized(options) || (options->flags & ~KCACHE_CLIENT_FALLBACK) != 0) return KCACHE_EINVAL;
    kcache::client::Config config;
    if (options->socket_path != nullptr) config.socket_path = options->socket_path;
    // 0 means "the default", so a zero-filled struct behaves like an initialized one.
    const kcache::client::Timeouts d;
    config.timeouts.connect = or_default(options->connect_timeout_ms, d.connect);
    config.timeouts.request = or_default(options->request_timeout_ms, d.request);
    config.timeouts.compile = or_default(options->compile_timeout_ms, d.compile);
    config.fallback = (options->flags & KCACHE_CLIENT_FALLBACK) != 0;
    *client = new kcache_client(std::move(config));
    return KCACHE_OK;
  });
}

void kcache_client_free(kcache_client* client) {
  delete client;
}

int kcache_get(kcache_client* client, const kcache_request* request, kcache_module* module,
               kcache_error* error) {
  if (error != nullptr && !sized(error)) return KCACHE_EINVAL;
  return guarded(error, [&]() -> int {
    if (client == nullptr) return report(error, Errc::invalid_argument, "client is NULL");
    if (module == nullptr) return report(error, Errc::invalid_argument, "module is NULL");
    if (!sized(module))
      return report(error, bad_size("kcache_module", module, "kcache_module_init"));
    auto params = to_params(request);
    if (!params.ok()) return report(error, params.error());
    auto result = client->impl.get(*params);
    if (!result.ok()) return report(error, result.error());

    const kcache::wire::ModuleReply& m = result->module;
    char* path = copy_string(m.path);
    char* target = copy_string(m.target);
    if (path == nullptr || target == nullptr) {
      std::free(path);
      std::free(target);
      return report(error, Errc::internal, "out of memory");
    }
    // Releases what a reused module held, so calling kcache_get in a loop does not leak.
    kcache_module_clear(module);
    module->path = path;
    module->target = target;
    module->module_size = m.size;
    m.digest.hex_to(module->digest);
    module->digest[32] = '\0';
    m.key.hex_to(module->key);
    module->key[32] = '\0';
    module->origin = to_origin(m.origin);
    module->fd = result->fd.release();
    module->is_directory = m.path_kind == kcache::wire::PathKind::directory ? 1 : 0;
    return KCACHE_OK;
  });
}

int kcache_control(kcache_client* client, const char* operation, const char* request_json,
                   char** reply_json, kcache_error* error) {
  if (error != nullptr && !sized(error)) return KCACHE_EINVAL;
  return guarded(error, [&]() -> int {
    if (client == nullptr) return report(error, Errc::invalid_argument, "client is NULL");
    if (operation == nullptr) return report(error, Errc::invalid_argument, "operation is NULL");
    if (reply_json == nullptr) return report(error, Errc::invalid_argument, "reply_json is NULL");
    auto reply = client->impl.control(operation, request_json ? request_json : "{}");
    if (!reply.ok()) return report(error, reply.error());
    char* out = copy_string(*reply);
    if (out == nullptr) return report(error, Errc::internal, "out of memory");
    *reply_json = out;
    return KCACHE_OK;
  });
}

int kcache_client_get_stats(kcache_client* client, kcache_client_stats* stats) {
  if (client == nullptr || !sized(stats)) return KCACHE_EINVAL;
  const kcache::client::Stats s = client->impl.stats();
#define KC_STATS_COPY(field, what) stats->field = s.field;
  KCACHE_CLIENT_STATS(KC_STATS_COPY)
#undef KC_STATS_COPY
  return KCACHE_OK;
}

const char* kcache_strerror(int code) {
  switch (code) {
    case KCACHE_OK:
      return "success";
    case KCACHE_ENOTFOUND:
      return "not found";
    case KCACHE_ECOMPILE:
      return "compile error";
    case KCACHE_EINVAL:
      return "invalid argument";
    case KCACHE_EUNAVAILABLE:
      return "compiler unavailable";
    case KCACHE_ETIMEDOUT:
      return "timed out";
    case KCACHE_ETOOLARGE:
      return "too large";
    case KCACHE_EPERM:
      return "permission denied";
    case KCACHE_EPROTO:
      return "protocol error";
    case KCACHE_EVERSION:
      return "unsupported protocol version";
    case KCACHE_EOPCODE:
      return "unknown operation";
    case KCACHE_EIO:
      return "i/o error";
    case KCACHE_EINTERNAL:
      return "internal error";
    case KCACHE_EBUSY:
      return "busy";
    case -static_cast<int>(Errc::need_source):
      return "source needed";
    case -static_cast<int>(Errc::in_progress):
      return "in progress";
    case KCACHE_EDISCONNECTED:
      return "disconnected";
    case KCACHE_ECOMPILER:
      return "compiler failure";
    case KCACHE_ECORRUPT:
      return "corrupt data";
    default:
      return "unknown error";
  }
}

const char* kcache_version(void) {
  return KCACHE_VERSION;
}

}  // extern "C"
