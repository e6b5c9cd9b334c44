// kcache-pack — builds provider directories and verifies them offline (docs/providers.md).
//
//   kcache-pack --name N --package P --version V --backend B [--variant VAR] --out DIR
//               [--compress zstd|none] [--level N] (TARGET=FILE | --target T FILE...)...
//   kcache-pack verify DIR [--json]
//
// Exit 0 ok, 1 failure (the reason on stderr), 2 usage.
#include <CLI/CLI.hpp>

#include <iostream>
#include <nlohmann/json.hpp>

#include "pack.hpp"
#include "providers/provider_verify.hpp"

namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

int usage(const std::string& message) {
  std::cerr << "kcache-pack: " << message << "\nRun 'kcache-pack --help' for usage.\n";
  return kExitUsage;
}

// The module list in command-line order: `TARGET=FILE`, or `--target T` then files.
kcache::Result<std::vector<kcache::pack::Input>> module_inputs(const std::vector<std::string>& args) {
  std::vector<kcache::pack::Input> out;
  std::string current;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--target") {
      if (i + 1 == args.size())
        return kcache::make_error(kcache::Errc::invalid_argument, "--target needs a value");
      current = args[++i];
    } else if (a.rfind("--target=", 0) == 0) {
      current = a.substr(9);
    } else if (a.rfind("-", 0) == 0) {
      return kcache::make_error(kcache::Errc::invalid_argument, "unknown option '" + a + "'");
    } else if (const auto eq = a.find('='); eq != std::string::npos) {
      out.push_back({a.substr(0, eq), a.substr(eq + 1)});
    } else if (!current.empty()) {
      out.push_back({current, a});
    } else {
      return kcache::make_error(kcache::Errc::invalid_argument,
                                "'" + a + "' has no target: write TARGET=FILE or --target T FILE");
    }
  }
  return out;
}

int run_verify(const std::string& dir, bool json) {
  const kcache::providers::VerifyReport report = kcache::providers::verify_provider(dir);
  const auto& p = report.provider;
  const std::string state(kcache::providers::provider_state_name(p.state));
  if (json) {
    nlohmann::json modules = nlohmann::json::array();
    for (const auto& m : report.modules)
      modules.push_back({{"name", m.name}, {"target", m.target}, {"ok", m.reason.empty()},
                         {"reason", m.reason}});
    nlohmann::json doc{{"path", dir}, {"ok", report.ok()}, {"state", state},
                       {"reason", p.reason}, {"modules", std::move(modules)}};
    if (p.manifest) {
      doc["name"] = p.manifest->name;
      doc["version"] = p.manifest->version;
    }
    std::cout << doc.dump(2) << "\n";
  } else {
    std::cout << dir << ": " << state << (p.reason.empty() ? "" : ": " + p.reason) << "\n";
    for (const auto& m : report.modules)
      std::cout << "  " << m.name << " " << m.target << ": "
                << (m.reason.empty() ? "ok" : m.reason) << "\n";
  }
  return report.ok() ? kExitOk : kExitFailure;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Build a kcache provider directory from cubins / AMD code objects, or verify one.",
               "kcache-pack"};
  kcache::pack::PackOptions o;
  std::string compression = "zstd";
  app.add_option("--name", o.name, "Provider name");
  app.add_option("--package", o.package, "Package the modules belong to");
  app.add_option("--version", o.version, "Full consumer version, e.g. 0.6.18+cu130");
  app.add_option("--backend", o.backend, "cuda-X.Y or rocm-X.Y");
  app.add_option("--variant", o.variant, "Build variant, e.g. torch-2.14-cuda-13.0-abi3-x86_64-linux");
  app.add_option("--out", o.out, "Provider directory to create (must not exist or be empty)");
  app.add_option("--compress", compression, "zstd (default) or none")
      ->check(CLI::IsMember({"zstd", "none"}));
  app.add_option("--level", o.level, "zstd level (default 3)")->check(CLI::Range(1, 22));
  app.allow_extras();  // TARGET=FILE and --target T FILE..., in order (module_inputs)
  app.footer("Modules: TARGET=FILE or --target TARGET FILE...; a module's name is its file name "
             "without the extension.");

  CLI::App* verify = app.add_subcommand("verify", "Validate a provider directory with kcached's rules");
  std::string verify_dir;
  bool json = false;
  verify->add_option("DIR", verify_dir, "Provider directory")->required();
  verify->add_flag("--json", json, "Print one JSON document");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  if (verify->parsed()) return run_verify(verify_dir, json);

  for (const auto* required : {"--name", "--package", "--version", "--backend", "--out"})
    if (app.get_option(required)->count() == 0) return usage(std::string(required) + " is required");
  auto inputs = module_inputs(app.remaining());
  if (!inputs.ok()) return usage(inputs.error().message);
  o.inputs = std::move(inputs).value();
  o.compress = compression == "zstd";
  auto manifest = kcache::pack::pack_provider(o);
  if (!manifest.ok()) {
    std::cerr << "kcache-pack: " << manifest.error().message << "\n";
    return manifest.error().code == kcache::Errc::invalid_argument ? kExitUsage : kExitFailure;
  }
  std::cout << o.out << ": " << manifest->modules.size() << " modules for "
            << manifest->targets.size() << " targets\n";
  return kExitOk;
}
