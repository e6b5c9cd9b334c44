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

 private:
  CLI::App& app_;
};

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

inline constexpr Verb kVerbs[] = {
    {"status", "Show the daemon's state: cache, devices, counters, providers", setup_status,
     run_status},
    {"ls", "List the cache entries", setup_ls, run_ls},
    {"get", "Resolve, serve or compile a module; print its path", setup_get, run_get},
    {"verify", "Check (and repair) the cache objects and the index", setup_verify, run_verify},
};

}  // namespace kcachectl
