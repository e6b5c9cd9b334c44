// daemon_fixture.hpp — runs the just-built kcached for a test (STYLE 10).
//
// Each test gets a private temp directory with the cache, the socket and a NOTIFY_SOCKET the
// fixture owns: start() waits for READY=1 from the daemon (never a bare sleep), stop() sends
// SIGTERM and checks the exit status. The directory is removed after a passing test and kept
// (its path printed) after a failing one, with the daemon's log in it.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gtest_backend.hpp"
#include "kcache/kcache.hpp"
#include "notify_reader.hpp"

namespace kcache::test {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// The value of a precondition's Result, or this test's failure: it throws, and GoogleTest reports
// the exception as the failure of this one test and goes on with the next (Result::value() on
// an error would abort the whole binary). `what` names the step in the message.
template <class T>
T must(Result<T> r, std::string_view what) {
  if (!r.ok()) throw std::runtime_error(std::string(what) + ": " + r.error().message);
  return std::move(r).value();
}

// This process's environment (less NOTIFY_SOCKET) with `extra` ("NAME=value") applied: each name
// once, the last entry of `extra` that names it winning (getenv would see only the first, and
// Python's os.environ only the last, of duplicates).
std::vector<std::string> environment_with(const std::vector<std::string>& extra);

// Runs a program with arguments, capturing stdout and stderr; extra_env is "NAME=value".
CommandResult run_command(const std::vector<std::string>& argv,
                          const std::vector<std::string>& extra_env = {});

// argv that runs kcachectl as uid/gid 65534 (nobody/nogroup) without supplementary groups,
// talking to `socket`, then `args`. It runs copies of kcachectl and libkcache in a directory
// anyone may read (made once per process): the build tree may not be reachable by another
// uid (a checkout under /root is not).
std::vector<std::string> kcachectl_as_nobody(const std::string& socket,
                                             const std::vector<std::string>& args);

class DaemonFixture : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // Starts kcached with the fixture's paths plus `extra_args`; waits for READY=1.
  void start(const std::vector<std::string>& extra_args = {},
             const std::vector<std::string>& extra_env = {});
  // SIGTERM, then waits; returns the exit status (expects a clean exit unless told).
  int stop();
  // Waits for the daemon to exit on its own; its exit status, or -1 if it still runs after
  // `timeout` (then it keeps running and stop() ends it).
  int wait_exit(std::chrono::milliseconds timeout);
  // Starts the daemon again with the last arguments after it died (a SIGKILL by the test).
  void start_again() { start(last_args_, last_env_); }
  void restart(const std::vector<std::string>& extra_args = {}) {
    stop();
    start(extra_args.empty() ? last_args_ : extra_args, last_env_);
  }

  CommandResult kcachectl(const std::vector<std::string>& args);
  nlohmann::json status();
  std::uint64_t stat(const char* counter) { return status()["stats"][counter].get<std::uint64_t>(); }
  Client client(std::chrono::milliseconds request_timeout = std::chrono::milliseconds(30000));
  // Waits until the daemon's log holds `needle`; false (naming it) if it did not in `timeout`.
  ::testing::AssertionResult wait_for_log(const std::string& needle,
                                          std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // A plain socket connected to the daemon, for tests that speak the raw protocol.
  int raw_connect() const;
  // Waits until the start-up reconcile has run.
  void wait_reconciled();
  // Reads the notify socket until a message holds `needle` (after READY=1: STATUS=,
  // WATCHDOG=1, RELOADING=1…); returns that message, or "" when none came in time.
  std::string wait_notify(std::string_view needle,
                          std::chrono::milliseconds timeout = std::chrono::seconds(10));

  std::string dir_;
  std::string cache_dir_;
  std::string socket_;
  std::string log_path_;
  pid_t pid_ = -1;
  bool discover_devices_ = false;  // true: no default --devices (the test exercises discovery)
  std::string ready_message_;      // the notification that carried READY=1

  // Prepended to kcached's argv; must exec its arguments so the pid stays the daemon's.
  std::vector<std::string> launcher_;

 private:
  std::string notify_path_;
  std::unique_ptr<NotifyReader> notify_;
  std::vector<std::string> last_args_;
  std::vector<std::string> last_env_;
};

// Requests the suite's compile backend serves (test_backend.hpp: NVRTC, else hiprtc, else the
// compiler double): for tests of the cache rather than of one compiler. `salt` makes a
// distinct module (and so a distinct key); the request targets backend().target.
std::string module_source(int salt = 0);
Request module_request(std::string_view name, std::string_view source);
// Compiles module_source(salt) as `name` ("m<salt>" when empty) through `c`; a failure is this
// test's failure (must()).
Module compile_module(Client& c, int salt, std::string name = {});

// A small CUDA kernel; `salt` makes a distinct module (and so a distinct key).
std::string cuda_source(int salt = 0);
// A compile request for `target` (views only: `name` and `source` must outlive the request —
// literals, strings declared before it, or temporaries within the same full expression).
Request cuda_request(std::string_view name, std::string_view source,
                     std::string_view target = "sm_90a");
std::string hip_source(int salt = 0);
bool is_elf_with_machine(const std::string& path, int machine);
std::string read_file(const std::string& path);

}  // namespace kcache::test
