// kcachectl arch select — which of the candidate targets kcache would serve on a device.
//
// Runs locally over libclient/src/arch (no daemon). Prints the chosen target exactly as
// given, or "none" (exit 1: the daemon would compile for the device instead). A candidate
// that does not parse is not eligible: its reason is the parser's message (in the human
// form it is also reported on stderr). A device that does not parse is a failure (exit 1).
#include <iostream>

#include "arch/select.hpp"
#include "output.hpp"
#include "verbs.hpp"

namespace kcachectl {

namespace {

struct SelectArgs {
  std::string device;
  std::vector<std::string> targets;
} args;

}  // namespace

void setup_arch_select(Options& o) {
  o.add_positional("DEVICE", args.device,
                   "The device: a capability (10.3), a CUDA target (sm_103a) or an AMD target ID");
  o.add_positionals("TARGET", args.targets, "Candidate binary targets: sm_100a, gfx942, …");
}

int run_arch_select(const Context& ctx) {
  auto device = kcache::parse_device(args.device);
  if (!device.ok()) return fail(device.error());

  // select_best sees only the candidates that parse; `index[k]` maps its k back to argv.
  std::vector<kcache::Target> targets;
  std::vector<std::size_t> index;
  std::vector<std::string> parse_errors(args.targets.size());
  for (std::size_t i = 0; i < args.targets.size(); ++i) {
    auto t = kcache::parse_target(args.targets[i]);
    if (t.ok()) {
      targets.push_back(*t);
      index.push_back(i);
    } else {
      parse_errors[i] = t.error().message;
      if (!ctx.json) std::cerr << "kcachectl: warning: " << t.error().message << '\n';
    }
  }
  const kcache::Selection s = kcache::select_best(targets, *device);
  const std::optional<std::size_t> chosen =
      s.chosen ? std::optional<std::size_t>(index[*s.chosen]) : std::nullopt;

  if (ctx.json) {
    Json candidates = Json::array();
    for (std::size_t i = 0; i < args.targets.size(); ++i)
      candidates.push_back({{"target", args.targets[i]},
                            {"compatible", false},
                            {"class", nullptr},
                            {"reason", parse_errors[i]}});
    for (std::size_t k = 0; k < index.size(); ++k) {
      const kcache::Compatibility& v = s.verdicts[k];
      Json& c = candidates[index[k]];
      c["compatible"] = v.compatible;
      c["class"] = v.compatible ? Json(kcache::match_class_name(v.match)) : Json();
      c["reason"] = v.compatible ? Json() : Json(v.reason);
    }
    print_json({{"device", device->str()},
                {"selected", chosen ? Json(args.targets[*chosen]) : Json()},
                {"candidates", candidates}});
  } else {
    std::cout << (chosen ? args.targets[*chosen] : std::string("none")) << '\n';
  }
  return chosen ? kExitOk : kExitFailure;
}

}  // namespace kcachectl
