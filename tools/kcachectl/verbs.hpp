// kcachectl/verbs.hpp — the verb table of kcachectl and what every verb is given.
//
// A verb is a name, a help line, setup() declaring its options and run() doing the work over
// libkcache's C++ API (never daemon internals). run() returns the exit code: 0 ok, 1 failure
// (the error printed as "kcachectl: <message>"), 2 usage error.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "kcache/kcache.hpp"

namespace CLI {
class App;
}

namespace kcachectl {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

// The global options, given to every verb.
struct Context {
  std::string socket;  // --socket; empty: $KCACHE_SOCKET, the system socket, the user socket
  bool json = false;   // --json: print one JSON document

  // A client of the daemon. `patience` (0: libkcache's defaults) bounds both the wait for a
  // reply and, once the daemon answered in_progress, the wait for the result.
  kcache::Result<kcache::Client> connect(
      std::chrono::milliseconds patience = std::chrono::milliseconds(0)) const {
    kcache::ClientOptions options;
    options.socket_path = socket;
    // An operator's tool reports the daemon's state; an in-process compile would hide it
    // (and its temp file would go with this process).
    options.fallback = false;
    options.request_timeout = patience;
    options.compile_timeout = patience;
    return kcache::Client::open(options);
  }
};

// How a verb declares its options. main.cpp implements it over CLI11, so CLI11 (a header
// that takes ~9 s to compile here) is compiled once instead of once per verb.
// Every option that takes a value takes the next argument even if it starts with '-', so
// `--option -lineinfo` and `--option=-lineinfo` are the same.
class Options {
 public:
  explicit Options(CLI::App& app) : app_(app) {}
  void add(const char* name, std::string& out, const char* help);
  void add_required(const char* name, std::string& out, const char* help);
  void add(const char* name, std::optional<int>& out, const char* help);
  // Repeatable: one value per occurrence, kept in order.
  void add_repeated(const char* name, std::vector<std::string>& out, const char* help);
  void exclusive(const char* a, const char* b);
  void add_flag(const char* name, bool& out, const char* help);
  // Positional arguments (named in capitals, "FILE"), each required, in declaration order:
  // add_positional takes one value, add_positionals all the remaining ones (at least one).
  void add_positional(const char* name, std::string& out, const char* help);
  void add_positionals(const char* name, std::vector<std::string>& out, const char* help);

 private:
  CLI::App& app_;
};

// A name with a space ("variant parse") is a sub-verb of the verb named by its first word,
// which comes earlier in the table as a group: setup and run null, a sub-verb required.
struct Verb {
  const char* name;
  const char* help;
  void (*setup)(Options&);
  int (*run)(const Context&);
};

void setup_status(Options&);
int run_status(const Context&);
void setup_ls(Options&);
int run_ls(const Context&);
void setup_get(Options&);
int run_get(const Context&);
void setup_verify(Options&);
int run_verify(const Context&);
void setup_gc(Options&);
int run_gc(const Context&);
void setup_evict(Options&);
int run_evict(const Context&);
void setup_providers(Options&);
int run_providers(const Context&);
void setup_prefetch(Options&);
int run_prefetch(const Context&);
void setup_devices(Options&);
int run_devices(const Context&);
// Local verbs over the target and variant model (no daemon).
void setup_variant_parse(Options&);
int run_variant_parse(const Context&);
void setup_variant_resolve(Options&);
int run_variant_resolve(const Context&);
void setup_arch_check(Options&);
int run_arch_check(const Context&);
void setup_arch_select(Options&);
int run_arch_select(const Context&);
void setup_inspect(Options&);
int run_inspect(const Context&);

inline constexpr Verb kVerbs[] = {
    {"status", "Show the daemon's state: cache, devices, counters, providers", setup_status,
     run_status},
    {"ls", "List the cache entries", setup_ls, run_ls},
    {"get", "Resolve, serve or compile a module; print its path", setup_get, run_get},
    {"verify", "Check (and repair) the cache objects and the index", setup_verify, run_verify},
    {"gc", "Collect garbage now: least recently served first, never within the grace period",
     setup_gc, run_gc},
    {"evict", "Remove entries by cache key or module name", setup_evict, run_evict},
    {"providers", "List the provider artifacts the daemon has seen, with state and reason",
     setup_providers, run_providers},
    {"prefetch", "Re-scan the provider roots and prefetch their modules now", setup_prefetch,
     run_prefetch},
    {"devices", "List the GPUs the daemon serves (index, name, arch, compile target, source)",
     setup_devices, run_devices},
    {"variant", "Build variant names: parse them, resolve them for a system", nullptr, nullptr},
    {"variant parse", "Print the fields of build variant names", setup_variant_parse,
     run_variant_parse},
    {"variant resolve", "Print the variants a system can use, best first", setup_variant_resolve,
     run_variant_resolve},
    {"arch", "GPU targets: compatibility with a device, selection", nullptr, nullptr},
    {"arch check", "Does a binary built for a target load on a device?", setup_arch_check,
     run_arch_check},
    {"arch select", "Which candidate target would be served on a device?", setup_arch_select,
     run_arch_select},
    {"inspect", "What GPU binary files were built for, read from their bytes", setup_inspect,
     run_inspect},
};

}  // namespace kcachectl
