// kcache/result.hpp — errors as values, shared by libkcache, kcached and kcachectl.
//
// Contract:
//  * `Errc` is the one error vocabulary of the project. Its numeric values are the wire
//    protocol's status codes (schema/wire_v1.def) and, negated, the C API's KCACHE_E* codes.
//  * `Result<T>` holds either a T or an `Error` (code, message, optional compiler log).
//    Callers must look at it ([[nodiscard]]); value() on an error aborts.
//  * `KC_TRY(expr)` returns the error of a failed Result<...> from the enclosing function;
//    `KC_TRY_ASSIGN(decl, expr)` also binds the value on success.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace kcache {

enum class Errc : std::uint16_t {
  ok = 0,
  not_found = 1,          // no provider, no cache entry, no source to compile
  compile_error = 2,      // the compiler rejected the source; Error::log has its log
  invalid_argument = 3,   // a request or option that can never succeed as given
  unavailable = 4,        // a needed library or facility is missing (NVRTC not loadable…)
  timeout = 5,            // a connect, request or compile deadline passed
  too_large = 6,          // a size or count limit was exceeded; the message names it
  permission_denied = 7,  // the caller may not perform this operation
  protocol = 8,           // malformed or out-of-order frames
  unsupported_version = 9,
  unknown_opcode = 10,
  io = 11,                // an errno-level failure; the message carries strerror
  internal = 12,          // a bug or an invariant broken; never expected
  busy = 13,              // a quota is exhausted; retry later
  need_source = 14,       // wire only: a key-only lookup missed, resend with the source
  in_progress = 15,       // wire only: interim answer, the request waits on a compile
  disconnected = 16,      // client only: the daemon cannot be reached
  compiler_failure = 17,  // the compiler process crashed or was killed
  corrupt = 18,           // data failed an integrity check (digest, ELF, schema)
};

// A stable lowercase name for a code, e.g. "not_found" (used in JSON and logs).
constexpr const char* errc_name(Errc code) noexcept {
  switch (code) {
    case Errc::ok: return "ok";
    case Errc::not_found: return "not_found";
    case Errc::compile_error: return "compile_error";
    case Errc::invalid_argument: return "invalid_argument";
    case Errc::unavailable: return "unavailable";
    case Errc::timeout: return "timeout";
    case Errc::too_large: return "too_large";
    case Errc::permission_denied: return "permission_denied";
    case Errc::protocol: return "protocol_error";
    case Errc::unsupported_version: return "unsupported_version";
    case Errc::unknown_opcode: return "unknown_opcode";
    case Errc::io: return "io_error";
    case Errc::internal: return "internal";
    case Errc::busy: return "busy";
    case Errc::need_source: return "need_source";
    case Errc::in_progress: return "in_progress";
    case Errc::disconnected: return "disconnected";
    case Errc::compiler_failure: return "compiler_failure";
    case Errc::corrupt: return "corrupt";
  }
  return "unknown";
}

struct Error {
  Errc code = Errc::internal;
  std::string message;  // one line, human readable, names the bad input or limit
  std::string log;      // compiler log for compile errors; empty otherwise
};

inline Error make_error(Errc code, std::string message, std::string log = {}) {
  return Error{code, std::move(message), std::move(log)};
}

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }

  T& value() & { check(); return std::get<0>(v_); }
  const T& value() const& { check(); return std::get<0>(v_); }
  T&& value() && { check(); return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const& { return std::get<1>(v_); }
  Error&& error() && { return std::get<1>(std::move(v_)); }

 private:
  void check() const {
    if (!ok()) std::abort();  // a bug: value() on an error
  }
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), failed_(true) {}  // NOLINT(google-explicit-constructor)

  bool ok() const noexcept { return !failed_; }
  explicit operator bool() const noexcept { return ok(); }
  const Error& error() const& { return error_; }
  Error&& error() && { return std::move(error_); }

 private:
  Error error_;
  bool failed_ = false;
};

using Status = Result<void>;

}  // namespace kcache

#define KC_CONCAT_INNER(a, b) a##b
#define KC_CONCAT(a, b) KC_CONCAT_INNER(a, b)

// Propagates the error of `expr` (a Result) to the caller.
#define KC_TRY(expr) KC_TRY_IMPL(KC_CONCAT(kc_try_result_, __COUNTER__), expr)
#define KC_TRY_IMPL(tmp, expr)                  \
  do {                                          \
    auto&& tmp = (expr);                        \
    if (!tmp.ok()) return std::move(tmp).error(); \
  } while (0)

// `KC_TRY_ASSIGN(auto x, f())` binds the value of f() to x or returns its error.
#define KC_TRY_ASSIGN(decl, expr) KC_TRY_ASSIGN_IMPL(KC_CONCAT(kc_try_tmp_, __COUNTER__), decl, expr)
#define KC_TRY_ASSIGN_IMPL(tmp, decl, expr) \
  auto tmp = (expr);                        \
  if (!tmp.ok()) return std::move(tmp).error(); \
  decl = std::move(tmp).value()
