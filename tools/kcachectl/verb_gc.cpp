// kcachectl gc — asks the daemon to collect garbage now (admin).
#include <iostream>

#include "common/units.hpp"
#include "output.hpp"
#include "verbs.hpp"

namespace kcachectl {

namespace {

struct GcArgs {
  std::string max_size;
  std::string max_age;
  bool dry_run = false;
} g_args;

// A collection of a large cache can take a while after the daemon's in_progress.
constexpr std::chrono::minutes kGcTimeout{30};

}  // namespace

void setup_gc(Options& o) {
  o.add("--max-size", g_args.max_size,
        "Collect down to this size, e.g. 10G, 512M (default: the low watermark)");
  o.add("--max-age", g_args.max_age, "Also remove entries not served for this long, e.g. 30d, 12h");
  o.add_flag("--dry-run", g_args.dry_run, "Report what would be removed; change nothing");
}

int run_gc(const Context& ctx) {
  Json request = Json::object();
  if (!g_args.max_size.empty()) {
    auto size = kcache::parse_size(g_args.max_size);
    if (!size.ok()) return usage("--max-size: " + size.error().message);
    request["max_size"] = *size;
  }
  if (!g_args.max_age.empty()) {
    auto age = kcache::parse_duration(g_args.max_age);
    if (!age.ok()) return usage("--max-age: " + age.error().message);
    request["max_age_s"] = std::chrono::duration_cast<std::chrono::seconds>(*age).count();
  }
  request["dry_run"] = g_args.dry_run;
  auto doc = ask(ctx, "gc", request, kGcTimeout);
  if (!doc.ok()) return fail(doc.error());
  if (ctx.json) {
    print_json(*doc);
    return kExitOk;
  }
  const bool dry = field(*doc, "dry_run").is_boolean() && field(*doc, "dry_run").get<bool>();
  std::cout << (dry ? "would remove " : "removed ") << text(field(*doc, "removed_entries"))
            << " entries (" << size_text(field(*doc, "freed_bytes")) << "); "
            << text(field(*doc, "remaining_entries")) << " entries ("
            << size_text(field(*doc, "remaining_bytes")) << ") "
            << (dry ? "would remain" : "remain") << '\n';
  return kExitOk;
}

}  // namespace kcachectl
