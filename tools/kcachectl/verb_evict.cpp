// kcachectl evict — removes entries by cache key or by module name (admin).
#include <iostream>

#include "output.hpp"
#include "verbs.hpp"

namespace kcachectl {

namespace {

struct EvictArgs {
  std::string key;
  std::string name;
  bool force = false;
} g_args;

}  // namespace

void setup_evict(Options& o) {
  o.add("KEY", g_args.key, "The cache key (32 hex digits, as `kcachectl ls --json` shows)");
  o.add("--name", g_args.name, "Remove every entry of this module name instead");
  o.add_flag("--force", g_args.force, "Also remove entries served within the grace period");
  o.exclusive("KEY", "--name");
}

int run_evict(const Context& ctx) {
  if (g_args.key.empty() == g_args.name.empty()) return usage("evict needs a KEY or --name NAME");
  Json request{{"force", g_args.force}};
  if (!g_args.key.empty())
    request["key"] = g_args.key;
  else
    request["name"] = g_args.name;
  auto doc = ask(ctx, "evict", request);
  if (!doc.ok()) return fail(doc.error());
  const auto count = [&](const char* f) {
    const Json& v = field(*doc, f);
    return v.is_number_unsigned() ? v.get<std::uint64_t>() : 0;
  };
  if (ctx.json)
    print_json(*doc);
  else
    std::cout << "removed " << count("removed_entries") << " entries ("
              << size_text(field(*doc, "freed_bytes")) << ")"
              << (count("skipped_in_grace") > 0
                      ? "; " + std::to_string(count("skipped_in_grace")) +
                            " served within the grace period were kept (--force removes them)"
                      : std::string())
              << '\n';
  if (count("removed_entries") > 0) return kExitOk;
  if (!ctx.json) {
    if (count("skipped_in_grace") == 0)
      std::cerr << "kcachectl: no entry named '" << g_args.name << "'\n";
    else
      std::cerr << "kcachectl: nothing evicted\n";
  }
  return kExitFailure;
}

}  // namespace kcachectl
