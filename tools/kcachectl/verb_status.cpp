// kcachectl status — the daemon's status document, for humans or verbatim as JSON.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include "output.hpp"
#include "verbs.hpp"

namespace kcachectl {

namespace {

void print_devices(const Json& devices) {
  if (!devices.is_array() || devices.empty()) {
    std::cout << "Devices:    none\n";
    return;
  }
  std::cout << "Devices:\n";
  std::vector<std::vector<std::string>> rows{
      {"INDEX", "BACKEND", "NAME", "ARCH", "TARGET", "SOURCE"}};
  for (const Json& d : devices)
    rows.push_back({text(field(d, "index")), text(field(d, "backend")), text(field(d, "name")),
                    text(field(d, "arch")), text(field(d, "compile_target")),
                    text(field(d, "source"))});
  print_table(rows, "  ");
}

void print_compilers(const Json& compilers) {
  if (!compilers.is_array() || compilers.empty()) return;
  std::cout << "Compilers:\n";
  std::vector<std::vector<std::string>> rows;
  for (const Json& c : compilers) {
    const bool available = field(c, "available").is_boolean() && field(c, "available").get<bool>();
    rows.push_back({text(field(c, "backend")), available ? "available" : "unavailable",
                    text(field(c, available ? "identity" : "error"))});
  }
  print_table(rows, "  ");
}

void print_providers(const Json& providers) {
  if (!providers.is_array() || providers.empty()) {
    std::cout << "Providers:  none\n";
    return;
  }
  std::cout << "Providers:\n";
  std::vector<std::vector<std::string>> rows{{"NAME", "VERSION", "STATE", "PATH", "REASON"}};
  for (const Json& p : providers)
    rows.push_back({text(field(p, "name")), text(field(p, "version")), text(field(p, "state")),
                    text(field(p, "path")), text(field(p, "reason"))});
  print_table(rows, "  ");
}

std::string ms_text(const Json& ms) {
  if (!ms.is_number_unsigned()) return "-";
  const auto v = ms.get<std::uint64_t>();
  if (v < 1000) return std::to_string(v) + " ms";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(v) / 1000.0);
  return buf;
}

void print_status(const Json& s) {
  const Json& uptime = field(s, "uptime_s");
  const Json& cache = field(s, "cache");
  const Json& stats = field(s, "stats");
  const auto stat = [&](const char* key) { return text(field(stats, key)); };

  std::cout << "Version:    kcached " << text(field(s, "version")) << " (pid "
            << text(field(s, "pid")) << ")\n";
  std::cout << "Uptime:     "
            << (uptime.is_number()
                    ? duration_text(static_cast<std::uint64_t>(std::max(0.0, uptime.get<double>())))
                    : "-")
            << '\n';
  std::cout << "Socket:     " << text(field(s, "socket")) << '\n';
  std::cout << "Cache:      " << text(field(s, "cache_dir")) << '\n';
  std::cout << "            " << size_text(field(cache, "bytes")) << " in "
            << text(field(cache, "entries")) << " entries, max "
            << size_text(field(cache, "max_size")) << '\n';
  print_devices(field(s, "devices"));
  print_compilers(field(s, "compilers"));
  std::cout << "Requests:   " << stat("hits") << " hits, " << stat("misses") << " misses, "
            << stat("provider_hits") << " provider hits, " << stat("dedup_waits")
            << " dedup waits\n";
  std::cout << "Compiles:   " << stat("compiles") << " done, " << stat("compile_failures")
            << " failed, " << text(field(s, "inflight_compiles")) << " in flight\n";
  std::cout << "            " << stat("compile_timeouts") << " timed out, "
            << stat("compiler_crashes") << " crashed, " << stat("failure_cache_hits")
            << " answered from recent failures, " << stat("client_fallbacks")
            << " client fallbacks\n";
  std::cout << "            compile time " << ms_text(field(stats, "compile_ms_sum")) << " total, "
            << ms_text(field(stats, "compile_ms_max")) << " longest\n";
  std::cout << "Evictions:  " << stat("evictions") << '\n';
  if (const Json& internal = field(s, "internal_errors"); internal.is_number() && internal != 0)
    std::cout << "Warning:    " << text(internal)
              << " internal errors contained (a kcached bug: see its log)\n";
  print_providers(field(s, "providers"));
  print_shown_of(s, "providers", "providers_total", "providers_truncated", "providers", "  ");
  const Json& prefetch = field(s, "prefetch");
  if (prefetch.is_object())
    std::cout << "Prefetch:   " << text(field(prefetch, "done")) << " done ("
              << size_text(field(prefetch, "bytes")) << "), " << text(field(prefetch, "failed"))
              << " failed, " << text(field(prefetch, "running")) << " running, "
              << text(field(prefetch, "queued")) << " queued\n";
}

}  // namespace

void setup_status(Options&) {}

int run_status(const Context& ctx) {
  auto doc = ask(ctx, "status");
  if (!doc.ok()) return fail(doc.error());
  if (ctx.json)
    print_json(*doc);
  else
    print_status(*doc);
  return kExitOk;
}

}  // namespace kcachectl
