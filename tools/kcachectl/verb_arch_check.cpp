// kcachectl arch check — does a binary built for one target load on a device, and how well.
//
// Runs locally over libclient/src/arch (no daemon). The verdict is the output: "compatible
// (<class>)" exits 0, "incompatible: <reason>" exits 1. A target or device that does not
// parse is a failure (exit 1) with the parser's message on stderr, not a verdict.
#include <iostream>

#include "arch/compat.hpp"
#include "output.hpp"
#include "verbs.hpp"

namespace kcachectl {

namespace {

struct CheckArgs {
  std::string target;
  std::string device;
} args;

}  // namespace

void setup_arch_check(Options& o) {
  o.add_positional("BINARY_TARGET", args.target,
                   "What the binary was built for: sm_90a, 9.0a, gfx90a:xnack-");
  o.add_positional("DEVICE", args.device,
                   "The device: a capability (10.3), a CUDA target (sm_103a) or an AMD target "
                   "ID (gfx942:sramecc+:xnack-)");
}

int run_arch_check(const Context& ctx) {
  auto target = kcache::parse_target(args.target);
  if (!target.ok()) return fail(target.error());
  auto device = kcache::parse_device(args.device);
  if (!device.ok()) return fail(device.error());
  const kcache::Compatibility c = kcache::check_compatible(*target, *device);
  if (ctx.json) {
    print_json({
        {"target", target->str()},
        {"device", device->str()},
        {"compatible", c.compatible},
        {"class", c.compatible ? Json(kcache::match_class_name(c.match)) : Json()},
        {"reason", c.compatible ? Json() : Json(c.reason)},
    });
  } else if (c.compatible) {
    std::cout << "compatible (" << kcache::match_class_name(c.match) << ")\n";
  } else {
    std::cout << "incompatible: " << c.reason << '\n';
  }
  return c.compatible ? kExitOk : kExitFailure;
}

}  // namespace kcachectl
