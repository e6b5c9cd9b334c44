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

void Options::add_flag(const char* name, bool& out, const char* help) {
  app_.add_flag(name, out, help);
}

void Options::add_positional(const char* name, std::string& out, const char* help) {
  app_.add_option(name, out, help)->required();
}

void Options::add_positionals(const char* name, std::vector<std::string>& out, const char* help) {
  app_.add_option(name, out, help)->required();
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
    // "variant parse" is the sub-verb "parse" of the group "variant", declared before it.
    const std::string name = verb.name;
    const auto space = name.rfind(' ');
    CLI::App* parent =
        space == std::string::npos ? &app : app.get_subcommand(name.substr(0, space));
    CLI::App* sub = parent->add_subcommand(name.substr(space + 1), verb.help);  // npos + 1 == 0
    sub->fallthrough();  // global options also after the verb, like systemctl
    if (verb.run == nullptr) {
      sub->require_subcommand(1);  // a group: one of its sub-verbs must follow
      continue;
    }
    Options options(*sub);
    verb.setup(options);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help is a "parse error" with exit code 0; every other one is a usage error.
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  // The verb given is the path of the subcommands parsed, e.g. "variant parse".
  std::string given;
  for (const CLI::App* at = &app; !at->get_subcommands().empty();) {
    at = at->get_subcommands().front();
    given += (given.empty() ? "" : " ") + at->get_name();
  }
  for (const Verb& verb : kVerbs)
    if (verb.run != nullptr && given == verb.name) return verb.run(ctx);
  return kExitUsage;  // unreachable: every group requires a sub-verb
}
