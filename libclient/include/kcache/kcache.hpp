// kcache/kcache.hpp — a thin, header-only C++20 RAII layer over kcache/kcache.h.
//
// Contract:
//  * kcache::Client owns one kcache_client (move-only). Like the C handle it is thread-safe:
//    any number of threads may call get()/control() on one Client at once.
//  * Failures are values: Result<T> holding kcache::Error{code, message, log}, where
//    code == static_cast<Errc>(-KCACHE_E*). Nothing here throws except std::bad_alloc.
//  * Request holds views: everything it points to must outlive the get() call, nothing
//    longer. An empty string_view means "absent" (no version, no target, no source).
//    Options are a std::span<const std::string_view> (bring your own storage: an array or
//    a vector of views); headers a std::span<const Header>.
//  * Module owns its fd (UniqueFd): it is closed when the Module goes, unless released.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kcache/kcache.h"
#include "kcache/result.hpp"

namespace kcache {

// A move-only owner of a file descriptor (closed with ::close through the C API's rules).
class UniqueFd {
 public:
  UniqueFd() noexcept = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) reset(std::exchange(o.fd_, -1));
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const noexcept { return fd_; }
  bool valid() const noexcept { return fd_ >= 0; }
  explicit operator bool() const noexcept { return valid(); }
  int release() noexcept { return std::exchange(fd_, -1); }
  void reset(int fd = -1) noexcept {
    if (fd_ >= 0) {
      // Reuse the C API's close so this header needs no POSIX include.
      kcache_module m;
      kcache_module_init(&m);
      m.fd = fd_;
      kcache_module_clear(&m);
    }
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

enum class Origin : int {
  provider = KCACHE_ORIGIN_PROVIDER,  // served from a provider artifact
  hit = KCACHE_ORIGIN_HIT,            // already in the cache
  compiled = KCACHE_ORIGIN_COMPILED,  // compiled for this request (or joined that compile)
  fallback = KCACHE_ORIGIN_FALLBACK,  // compiled in this process: kcached unreachable or slow
};

// "provider", "hit" or "compiled", as in JSON and logs.
constexpr const char* origin_name(Origin origin) noexcept {
  switch (origin) {
    case Origin::provider:
      return "provider";
    case Origin::hit:
      return "hit";
    case Origin::compiled:
      return "compiled";
    case Origin::fallback:
      return "fallback";
  }
  return "unknown";
}

struct ClientOptions {
  std::string socket_path;                       // empty: $KCACHE_SOCKET, system, user socket
  std::chrono::milliseconds connect_timeout{0};  // 0: the library default (2 s)
  std::chrono::milliseconds request_timeout{0};  // 0: the library default (10 s)
  std::chrono::milliseconds compile_timeout{0};  // 0: the library default (300 s)
  // Compile in-process when kcached is unreachable or a timeout expires (KCACHE_CLIENT_FALLBACK).
  bool fallback = true;
};

struct Header {
  std::string_view name;  // the name the source #includes
  std::string_view data;
};

struct Request {
  std::string_view name;     // required
  std::string_view version;  // consumer's full version ("0.6.18+cu130"), or empty
  std::string_view target;   // explicit target ("sm_90a", "gfx942"), or empty to use device
  std::optional<int> device;
  std::string_view source;  // empty: lookup only (provider or cache entry)
  std::span<const Header> headers;
  std::span<const std::string_view> options;  // compiler options, in order
  std::string_view system_json;               // worker's variant facts, or empty
  bool want_fd = false;                       // also pass an open read-only fd
};

struct Module {
  std::string path;  // absolute path of the immutable module file
  std::uint64_t size = 0;
  std::string digest;  // XXH3-128 of the bytes, 32 hex digits
  std::string key;     // the cache key, 32 hex digits
  std::string target;  // resolved target
  Origin origin = Origin::hit;
  UniqueFd fd;  // valid with Request::want_fd
  bool is_directory = false;  // path is a directory (a kernels build variant), not a file
};

// kcache_client_stats without its size field (KCACHE_CLIENT_STATS says what each counts).
struct ClientStats {
#define KCACHE_STATS_FIELD_(field, what) std::uint64_t field = 0;
  KCACHE_CLIENT_STATS(KCACHE_STATS_FIELD_)
#undef KCACHE_STATS_FIELD_
};

namespace detail {

// Turns a filled kcache_error into an Error, freeing the C strings.
inline Error take_error(int code, kcache_error& e) {
  Error out{static_cast<Errc>(-code), e.message ? e.message : kcache_strerror(code),
            e.log ? e.log : ""};
  kcache_error_clear(&e);
  return out;
}

struct ErrorGuard {  // clears the C error struct on every path, exceptions included
  kcache_error e;
  ErrorGuard() noexcept { kcache_error_init(&e); }
  ~ErrorGuard() { kcache_error_clear(&e); }
  ErrorGuard(const ErrorGuard&) = delete;
  ErrorGuard& operator=(const ErrorGuard&) = delete;
};

}  // namespace detail

class Client {
 public:
  static Result<Client> open(const ClientOptions& options = {}) {
    kcache_client_options o;
    kcache_client_options_init(&o);
    if (!options.socket_path.empty()) o.socket_path = options.socket_path.c_str();
    const auto set = [](std::uint32_t& field, std::chrono::milliseconds value) {
      if (value.count() > 0) field = static_cast<std::uint32_t>(value.count());
    };
    set(o.connect_timeout_ms, options.connect_timeout);
    set(o.request_timeout_ms, options.request_timeout);
    set(o.compile_timeout_ms, options.compile_timeout);
    if (options.fallback) o.flags |= KCACHE_CLIENT_FALLBACK;
    kcache_client* handle = nullptr;
    const int rc = kcache_client_new(&o, &handle);
    if (rc != KCACHE_OK)
      return Error{
          static_cast<Errc>(-rc), std::string("cannot create client: ") + kcache_strerror(rc), {}};
    return Client(handle);
  }

  Result<Module> get(const Request& r) const {
    // The C API takes NUL-terminated strings: one arena holds copies of the short ones.
    std::size_t bytes =
        r.name.size() + r.version.size() + r.target.size() + r.system_json.size() + 4;
    for (const Header& h : r.headers) bytes += h.name.size() + 1;
    for (std::string_view o : r.options) bytes += o.size() + 1;
    std::string arena;
    arena.reserve(bytes);  // no reallocation below: the pointers stay valid
    const auto put = [&arena](std::string_view s) {
      const char* p = arena.data() + arena.size();
      arena.append(s);
      arena.push_back('\0');
      return p;
    };
    kcache_request c;
    kcache_request_init(&c);
    c.name = put(r.name);
    if (!r.version.empty()) c.version = put(r.version);
    if (!r.target.empty()) c.target = put(r.target);
    if (!r.system_json.empty()) c.system_json = put(r.system_json);
    if (r.device) c.device = *r.device;
    if (!r.source.empty()) {
      c.source = r.source.data();
      c.source_size = r.source.size();
    }
    std::vector<kcache_header> headers;
    headers.reserve(r.headers.size());
    for (const Header& h : r.headers)
      headers.push_back({put(h.name), h.data.data(), h.data.size()});
    std::vector<const char*> options;
    options.reserve(r.options.size());
    for (std::string_view o : r.options) options.push_back(put(o));
    c.headers = headers.data();
    c.header_count = headers.size();
    c.options = options.data();
    c.option_count = options.size();
    if (r.want_fd) c.flags |= KCACHE_GET_FD;

    kcache_module m;
    kcache_module_init(&m);
    detail::ErrorGuard err;
    const int rc = kcache_get(handle_.get(), &c, &m, &err.e);
    if (rc != KCACHE_OK) return detail::take_error(rc, err.e);
    // From here the C module is released on every path, exceptions included.
    struct Clear {
      kcache_module* m;
      ~Clear() { kcache_module_clear(m); }
    } clear{&m};
    Module out;
    out.fd.reset(std::exchange(m.fd, -1));
    out.path = m.path;
    out.size = m.module_size;
    out.digest = m.digest;
    out.key = m.key;
    out.target = m.target;
    out.origin = static_cast<Origin>(m.origin);
    out.is_directory = m.is_directory != 0;
    return out;
  }

  // A control operation ("status", "list", "verify", …) with a JSON request; the reply JSON.
  Result<std::string> control(std::string_view operation, std::string_view json = "{}") const {
    const std::string op(operation);
    const std::string request(json);
    char* reply = nullptr;
    detail::ErrorGuard err;
    const int rc = kcache_control(handle_.get(), op.c_str(), request.c_str(), &reply, &err.e);
    if (rc != KCACHE_OK) return detail::take_error(rc, err.e);
    const std::unique_ptr<char, decltype(&kcache_free)> owned(reply, &kcache_free);
    return std::string(reply);
  }

  ClientStats stats() const noexcept {
    kcache_client_stats s;
    kcache_client_stats_init(&s);
    kcache_client_get_stats(handle_.get(), &s);
    ClientStats out;
#define KCACHE_STATS_COPY_(field, what) out.field = s.field;
    KCACHE_CLIENT_STATS(KCACHE_STATS_COPY_)
#undef KCACHE_STATS_COPY_
    return out;
  }

  // The C handle, for code that mixes both APIs; still owned by this Client.
  kcache_client* c_handle() const noexcept { return handle_.get(); }

 private:
  struct Free {
    void operator()(kcache_client* c) const noexcept { kcache_client_free(c); }
  };
  explicit Client(kcache_client* handle) noexcept : handle_(handle) {}

  std::unique_ptr<kcache_client, Free> handle_;
};

}  // namespace kcache
