// kcachectl — a thin client of kcached's documented control operations (docs/kcachectl.md).
//
// main() parses the global options (--socket, --json, accepted before or after the verb),
// lets each verb of the table declare its options, and runs the one given.
#include <CLI/CLI.hpp>

#include <string>

#include "verbs.hpp"

namespace kcachectl {

void Options::add(const char* name, std::string& out, const char* help) {
  app_.add_option(name, out, help);
}

void Options::add_required(const char* name, std::string& out, const char* help) {
  app_.add_option(name, out, help)->required();
}

void Options::add(const char* name, std::optional<int>& out, const char* help) {
  app_.add_option_function<int>(
      name, [&out](const int& value) { out = value; }, help);
}

void Options::add_repeated(const char* name, std::vector<std::string>& out, const char* help) {
  // One value per occurrence: `--option a b` is an error, not two options.
  app_.add_option(name, out, help)->allow_extra_args(false);
}

void Options::exclusive(const char* a, const char* b) {
  app_.get_option(a)->excludes(app_.get_option(b));
}

}  // namespace kcachectl

int main(int argc, char** argv) {
  using namespace kcachectl;
  CLI::App app{"Control and query kcached, the per-host GPU kernel module cache.", "kcachectl"};
  Context ctx;
  app.add_option("--socket", ctx.socket,
                 "Daemon socket (default: $KCACHE_SOCKET, /run/kcache/kcache.sock, "
                 "$XDG_RUNTIME_DIR/kcache.sock)");
  app.add_flag("--json", ctx.json, "Print one JSON document");
  app.require_subcommand(1);
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return std::string("kcachectl: ") + e.what() + "\nRun 'kcachectl --help' for usage.\n";
  });
  for (const Verb& verb : kVerbs) {
    CLI::App* sub = app.add_subcommand(verb.name, verb.help);
    sub->fallthrough();  // global options also after the verb, like systemctl
    Options options(*sub);
    verb.setup(options);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help is a "parse error" with exit code 0; every other one is a usage error.
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  for (const Verb& verb : kVerbs)
    if (app.got_subcommand(verb.name)) return verb.run(ctx);
  return kExitUsage;  // unreachable: require_subcommand(1)
}
