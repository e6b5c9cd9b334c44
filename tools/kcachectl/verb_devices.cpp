// kcachectl devices — the daemon's device table: what `--device I` in a request means.
#include <iostream>

#include "output.hpp"
#include "verbs.hpp"

namespace kcachectl {

namespace {

void print_devices(const Json& doc) {
  const Json& devices = field(doc, "devices");
  if (!devices.is_array() || devices.empty()) {
    std::cout << "no devices: requests must name a target (start kcached with --devices to "
                 "declare some)\n";
    return;
  }
  std::vector<std::vector<std::string>> rows{
      {"INDEX", "BACKEND", "NAME", "ARCH", "TARGET", "SOURCE", "UUID"}};
  for (const Json& d : devices)
    rows.push_back({text(field(d, "index")), text(field(d, "backend")), text(field(d, "name")),
                    text(field(d, "arch")), text(field(d, "compile_target")),
                    text(field(d, "source")), text(field(d, "uuid"))});
  print_table(rows);
}

}  // namespace

void setup_devices(Options&) {}

int run_devices(const Context& ctx) {
  auto doc = ask(ctx, "devices");
  if (!doc.ok()) return fail(doc.error());
  if (ctx.json)
    print_json(*doc);
  else
    print_devices(*doc);
  return kExitOk;
}

}  // namespace kcachectl
