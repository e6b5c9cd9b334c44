// stats.hpp — the daemon's monotone counters (DESIGN §8 `stats`), persisted across restarts.
//
// Contract: loop thread only. `for_each` visits every counter with its stable name (the JSON
// key and the SQLite counters row); `load` takes values from the index at start-up.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace kcache::daemon {

struct Stats {
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
  std::uint64_t compiles = 0;
  std::uint64_t compile_failures = 0;
  std::uint64_t provider_hits = 0;
  std::uint64_t dedup_waits = 0;
  std::uint64_t evictions = 0;
  std::uint64_t compile_timeouts = 0;   // compiles killed at compile.timeout
  std::uint64_t compiler_crashes = 0;   // workers that died on a signal mid-compile
  std::uint64_t failure_cache_hits = 0; // askers answered from a recent failure, no compile
  std::uint64_t compile_ms_sum = 0;     // wall time of every compile, worker start to result
  std::uint64_t compile_ms_max = 0;
  std::uint64_t client_fallbacks = 0;   // in-process compiles clients reported (report op)
  std::uint64_t corrupt_objects = 0;    // stored objects the scrubber found damaged
  std::uint64_t changed_objects = 0;    // hits not served: the file changed since publish

  template <class F>
  void for_each(F&& f) const {
    visit(*this, f);
  }

  void load(const std::map<std::string, std::int64_t>& values) {
    visit(*this, [&](const char* name, std::uint64_t& slot) {
      const auto it = values.find(name);
      if (it != values.end() && it->second >= 0) slot = static_cast<std::uint64_t>(it->second);
    });
  }

 private:
  // One list of (name, member) for reading and writing alike.
  template <class Self, class F>
  static void visit(Self& s, F&& f) {
    f("hits", s.hits);
    f("misses", s.misses);
    f("compiles", s.compiles);
    f("compile_failures", s.compile_failures);
    f("provider_hits", s.provider_hits);
    f("dedup_waits", s.dedup_waits);
    f("evictions", s.evictions);
    f("compile_timeouts", s.compile_timeouts);
    f("compiler_crashes", s.compiler_crashes);
    f("failure_cache_hits", s.failure_cache_hits);
    f("compile_ms_sum", s.compile_ms_sum);
    f("compile_ms_max", s.compile_ms_max);
    f("client_fallbacks", s.client_fallbacks);
    f("corrupt_objects", s.corrupt_objects);
    f("changed_objects", s.changed_objects);
  }
};

}  // namespace kcache::daemon
