// contain.hpp — the exception boundary. Nothing thrown may cross a libuv callback (C frames:
// unwinding through them ends the process), a thread's entry or a pool job.
//
// Contract: `contain(where, fn)` runs fn and returns true, or — when something escapes fn —
// logs one error line naming `where` and what was thrown, counts it (contained_exceptions(),
// shown as `internal_errors` in status) and returns false. It never throws. A caller that
// owes someone an answer (a request, a waiter) gives one when it returns false.
#pragma once

#include <cstdint>
#include <exception>
#include <string_view>
#include <utility>

namespace kcache::daemon {

std::uint64_t contained_exceptions() noexcept;
void note_contained(std::string_view where, std::exception_ptr what) noexcept;

template <class Fn>
bool contain(std::string_view where, Fn&& fn) noexcept {
  try {
    std::forward<Fn>(fn)();
    return true;
  } catch (...) {
    note_contained(where, std::current_exception());
    return false;
  }
}

}  // namespace kcache::daemon
