#include "loop/contain.hpp"

#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdio>
#include <string>

#include "common/text.hpp"

namespace kcache::daemon {

namespace {
std::atomic<std::uint64_t> g_contained{0};

std::string describe(const std::exception_ptr& what) {
  try {
    std::rethrow_exception(what);
  } catch (const std::exception& e) {
    return printable(e.what());
  } catch (...) {
    return "an exception of unknown type";
  }
}
}  // namespace

std::uint64_t contained_exceptions() noexcept { return g_contained.load(std::memory_order_relaxed); }

void note_contained(std::string_view where, std::exception_ptr what) noexcept {
  g_contained.fetch_add(1, std::memory_order_relaxed);
  try {
    spdlog::error("internal error in {} (contained; the daemon goes on): {}", where, describe(what));
  } catch (...) {
    // Logging itself failed (out of memory): the count above still tells the operator.
    std::fputs("kcached: internal error (contained), and logging it failed\n", stderr);
  }
}

}  // namespace kcache::daemon
