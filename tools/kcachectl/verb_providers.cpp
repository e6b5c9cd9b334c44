// kcachectl providers — every provider the daemon has seen, with its state and reason.
#include <iostream>

#include "output.hpp"
#include "verbs.hpp"

namespace kcachectl {

namespace {

std::string targets_text(const Json& targets) {
  if (!targets.is_array() || targets.empty()) return "-";
  std::string out;
  for (const Json& t : targets) out += (out.empty() ? "" : ",") + text(t);
  return out;
}

void print_providers(const Json& doc) {
  const Json& providers = field(doc, "providers");
  if (!providers.is_array() || providers.empty()) {
    const Json& roots = field(doc, "roots");
    std::cout << (roots.is_array() && !roots.empty() ? "no providers under the provider roots\n"
                                                     : "no provider roots configured\n");
    return;
  }
  std::vector<std::vector<std::string>> rows{
      {"KIND", "NAME", "VERSION", "BACKEND", "TARGETS", "MODULES", "STATE", "PATH"}};
  for (const Json& p : providers)
    rows.push_back({text(field(p, "kind")), text(field(p, "name")), text(field(p, "version")),
                    text(field(p, "backend")),
                    targets_text(field(p, "targets")), text(field(p, "modules")),
                    text(field(p, "state")), text(field(p, "path"))});
  print_table(rows);
  print_shown_of(doc, "providers", "providers_total", "providers_truncated", "providers");
  // Reasons can be long: one line each under the table.
  for (const Json& p : providers) {
    const std::string reason = text(field(p, "reason"));
    if (!reason.empty() && reason != "-")
      std::cout << text(field(p, "path")) << ": " << reason << '\n';
  }
}

}  // namespace

void setup_providers(Options&) {}

int run_providers(const Context& ctx) {
  auto doc = ask(ctx, "providers");
  if (!doc.ok()) return fail(doc.error());
  if (ctx.json)
    print_json(*doc);
  else
    print_providers(*doc);
  return kExitOk;
}

}  // namespace kcachectl
