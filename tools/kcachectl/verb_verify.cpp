// kcachectl verify — asks the daemon to check (and repair) its objects and index.
#include <iostream>

#include "output.hpp"
#include "verbs.hpp"

namespace kcachectl {

namespace {

// Hashing a whole cache takes longer than a request usually may; the daemon answers
// in_progress first, and the report may take this long after it.
constexpr std::chrono::minutes kVerifyTimeout{30};

bool report_ok(const Json& report) {
  const Json& ok = field(report, "ok");
  return ok.is_boolean() && ok.get<bool>();
}

void print_report(const Json& report) {
  const Json& problems = field(report, "problems");
  if (problems.is_array()) {
    for (const Json& p : problems)
      std::cout << text(field(p, "kind")) << ' ' << text(field(p, "key")) << ' '
                << text(field(p, "path")) << ": " << text(field(p, "detail")) << '\n';
  }
  const std::size_t count = problems.is_array() ? problems.size() : 0;
  std::cout << "checked " << text(field(report, "checked_entries")) << " entries ("
            << size_text(field(report, "checked_bytes")) << "): " << count
            << (count == 1 ? " problem, " : " problems, ") << text(field(report, "repaired"))
            << " repaired; " << (report_ok(report) ? "ok" : "NOT ok") << '\n';
}

}  // namespace

void setup_verify(Options&) {}

int run_verify(const Context& ctx) {
  auto doc = ask(ctx, "verify", nullptr, kVerifyTimeout);
  if (!doc.ok()) return fail(doc.error());
  if (ctx.json)
    print_json(*doc);
  else
    print_report(*doc);
  return report_ok(*doc) ? kExitOk : kExitFailure;
}

}  // namespace kcachectl
