// kcachectl prefetch — the daemon re-scans its provider roots and prefetches now (admin).
#include <iostream>

#include "output.hpp"
#include "verbs.hpp"

namespace kcachectl {

namespace {

// Decompressing and verifying a large provider takes longer than a request usually may; the
// daemon answers in_progress first, and the report may take this long after it.
constexpr std::chrono::minutes kPrefetchTimeout{30};

}  // namespace

void setup_prefetch(Options&) {}

int run_prefetch(const Context& ctx) {
  auto doc = ask(ctx, "prefetch", nullptr, kPrefetchTimeout);
  if (!doc.ok()) return fail(doc.error());
  if (ctx.json) {
    print_json(*doc);
  } else {
    std::size_t active = 0;
    const Json& providers = field(*doc, "providers");
    if (providers.is_array())
      for (const Json& p : providers) active += text(field(p, "state")) == "active" ? 1 : 0;
    std::cout << active << " active providers; prefetched " << text(field(*doc, "prefetched"))
              << " modules (" << size_text(field(*doc, "bytes")) << "), "
              << text(field(*doc, "failed")) << " failed\n";
  }
  const Json& failed = field(*doc, "failed");
  return failed.is_number() && failed.get<double>() > 0 ? kExitFailure : kExitOk;
}

}  // namespace kcachectl
