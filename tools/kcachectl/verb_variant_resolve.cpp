// kcachectl variant resolve — which of the given build variants a system can use, best first.
//
// Runs locally over libclient/src/variant (no daemon). The system is given fact by fact
// (--cpu, --os, --backend, …) or as one `--system key=value,…` description, never both.
// Variants are printed exactly as given; a name given twice counts once. An invalid name is
// rejected with the parser's message as its reason (the daemon skips a malformed provider
// the same way), and in the human form it is also reported on stderr.
#include <algorithm>
#include <iostream>

#include "output.hpp"
#include "variant/resolve.hpp"
#include "verbs.hpp"

namespace kcachectl {

namespace {

struct ResolveArgs {
  std::string system;
  std::string cpu, os, backend, torch, cxx11_abi, python_abi, tvm_ffi, macos;
  bool trace = false;
  std::vector<std::string> variants;
} args;

kcache::Result<std::optional<kcache::VersionMM>> version_flag(const char* flag,
                                                              const std::string& value) {
  if (value.empty()) return std::optional<kcache::VersionMM>{};
  auto v = kcache::parse_version_mm(value);
  if (!v)
    return kcache::make_error(kcache::Errc::invalid_argument,
                              std::string(flag) + " expects a version X.Y, got '" + value + "'");
  return v;
}

// The system from the per-fact flags; every message names the flag at fault.
kcache::Result<kcache::SystemInfo> system_from_flags() {
  using kcache::Errc;
  const std::pair<const char*, const std::string*> required[] = {
      {"--cpu", &args.cpu}, {"--os", &args.os}, {"--backend", &args.backend}};
  for (const auto& [flag, value] : required)
    if (value->empty())
      return kcache::make_error(Errc::invalid_argument,
                                std::string(flag) + " is required (or give --system)");
  kcache::SystemInfo sys;
  sys.cpu = args.cpu;
  sys.os = args.os;
  auto backend = kcache::parse_backend_spec(args.backend);
  if (!backend.ok())
    return kcache::make_error(Errc::invalid_argument, "--backend: " + backend.error().message);
  sys.backend = backend->backend;
  sys.backend_version = backend->version;
  KC_TRY_ASSIGN(sys.torch, version_flag("--torch", args.torch));
  KC_TRY_ASSIGN(sys.tvm_ffi, version_flag("--tvm-ffi", args.tvm_ffi));
  KC_TRY_ASSIGN(sys.macos, version_flag("--macos", args.macos));
  if (args.cxx11_abi == "yes") {
    sys.torch_cxx = kcache::CxxAbi::cxx11;
  } else if (args.cxx11_abi == "no") {
    sys.torch_cxx = kcache::CxxAbi::cxx98;
  } else if (!args.cxx11_abi.empty()) {
    return kcache::make_error(Errc::invalid_argument,
                              "--cxx11-abi expects yes or no, got '" + args.cxx11_abi + "'");
  }
  if (args.python_abi == "abi3t") {
    sys.free_threaded = true;
  } else if (!args.python_abi.empty() && args.python_abi != "abi3") {
    return kcache::make_error(Errc::invalid_argument,
                              "--python-abi expects abi3 or abi3t, got '" + args.python_abi + "'");
  }
  return sys;
}

kcache::Result<kcache::SystemInfo> system_from_args() {
  if (args.system.empty()) return system_from_flags();
  for (const std::string* fact : {&args.cpu, &args.os, &args.backend, &args.torch, &args.cxx11_abi,
                                  &args.python_abi, &args.tvm_ffi, &args.macos})
    if (!fact->empty())
      return kcache::make_error(kcache::Errc::invalid_argument,
                                "--system excludes the per-fact options (--cpu, --os, …)");
  return kcache::parse_system_spec(args.system);
}

struct Candidate {
  std::string given;  // exactly as on the command line
  std::optional<kcache::Variant> variant;
  std::string reason;  // rejection reason; empty when accepted
};

}  // namespace

void setup_variant_resolve(Options& o) {
  o.add("--system", args.system,
        "The whole system as cpu=x86_64,os=linux,torch=2.10,cxx=cxx11,backend=cuda-12.8,"
        "python=gil|free-threaded,tvm-ffi=0.1,macos=26.0 (instead of the options below)");
  o.add("--cpu", args.cpu, "System CPU, e.g. x86_64, aarch64 (required without --system)");
  o.add("--os", args.os, "System OS, e.g. linux, darwin (required without --system)");
  o.add("--backend", args.backend,
        "System backend: cuda-X.Y, rocm-X.Y, xpu-X.Y, cann-X.Y, cpu, metal, neuron, tpu");
  o.add("--torch", args.torch, "Torch version X.Y (none: no Torch)");
  o.add("--cxx11-abi", args.cxx11_abi, "yes|no: whether Torch uses the C++11 ABI (linux)");
  o.add("--python-abi", args.python_abi, "abi3 (GIL build, default) or abi3t (free-threaded)");
  o.add("--tvm-ffi", args.tvm_ffi, "tvm-ffi version X.Y");
  o.add("--macos", args.macos, "macOS version X.Y");
  o.add_flag("--trace", args.trace, "Also print each rejected variant with its reason");
  o.add_positionals("VARIANT", args.variants, "Build variant names, as found in build/");
}

int run_variant_resolve(const Context& ctx) {
  auto sys = system_from_args();
  if (!sys.ok()) return usage(sys.error().message);

  std::vector<Candidate> candidates;
  std::vector<kcache::Variant> parsed;
  for (const std::string& name : args.variants) {
    if (std::any_of(candidates.begin(), candidates.end(),
                    [&](const Candidate& c) { return c.given == name; }))
      continue;
    auto v = kcache::parse_variant(name);
    if (v.ok()) {
      parsed.push_back(*v);
      candidates.push_back({name, *v, kcache::variant_rejection(*v, *sys)});
    } else {
      candidates.push_back({name, std::nullopt, v.error().message});
      if (!ctx.json) std::cerr << "kcachectl: warning: " << v.error().message << '\n';
    }
  }

  // The library orders distinct variants; names that parse equal (a legacy name and its
  // dotted twin) are printed together, in command-line order.
  std::vector<std::string> accepted;
  for (const kcache::Variant& best : kcache::resolve_variants(parsed, *sys).accepted)
    for (const Candidate& c : candidates)
      if (c.variant == best) accepted.push_back(c.given);

  if (ctx.json) {
    Json rejected = Json::array();
    for (const Candidate& c : candidates)
      if (!c.reason.empty()) rejected.push_back({{"variant", c.given}, {"reason", c.reason}});
    print_json({{"accepted", accepted}, {"rejected", rejected}});
  } else {
    for (const std::string& name : accepted) std::cout << name << '\n';
    if (args.trace)
      for (const Candidate& c : candidates)
        if (!c.reason.empty()) std::cout << "rejected " << c.given << ": " << c.reason << '\n';
    if (accepted.empty())
      std::cerr << "kcachectl: no variant is accepted for this system"
                << (args.trace ? "" : " (--trace shows why)") << '\n';
  }
  return accepted.empty() ? kExitFailure : kExitOk;
}

}  // namespace kcachectl
