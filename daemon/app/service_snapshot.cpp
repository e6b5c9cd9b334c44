#include "app/service_snapshot.hpp"

#include <cstdio>

#include "common/units.hpp"
#include "app/daemon.hpp"

namespace kcache::daemon {

ServiceSnapshot ServiceSnapshot::of(Daemon& d) {
  ServiceSnapshot s;
  s.entries = d.cache().catalog().size();
  s.bytes = d.cache().catalog().bytes();
  s.max_size = d.config().max_size;
  const Stats& st = d.stats();
  s.hits = st.hits;
  s.misses = st.misses;
  s.compiles = st.compiles;
  s.provider_hits = st.provider_hits;
  s.evictions = st.evictions;
  s.inflight_compiles = d.compiles().inflight();
  return s;
}

std::string ServiceSnapshot::summary() const {
  const std::uint64_t served = hits + provider_hits;
  const std::uint64_t asked = served + misses;
  std::string rate = "-";
  if (asked > 0) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * static_cast<double>(served) /
                                                 static_cast<double>(asked));
    rate = buf;
  }
  return std::to_string(entries) + " entries, " + format_size(bytes) + " of " +
         format_size(max_size) + ", hit rate " + rate + " (" + std::to_string(served) +
         " served from cache, " + std::to_string(misses) + " misses), " +
         std::to_string(inflight_compiles) + " compiling";
}

}  // namespace kcache::daemon
