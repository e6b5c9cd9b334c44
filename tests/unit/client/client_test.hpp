// tests/unit/client/client_test.hpp — the fixture of libkcache's tests: a private temp dir,
// a scripted FakeDaemon listening in it, and C API handles that are freed on teardown.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "fake_daemon.hpp"
#include "kcache/kcache.h"

namespace kcache::test {

// C structs with their *_init/_clear done by scope.
struct CModule {
  kcache_module m;
  CModule() { kcache_module_init(&m); }
  ~CModule() { kcache_module_clear(&m); }
  CModule(const CModule&) = delete;
  CModule& operator=(const CModule&) = delete;
};

struct CError {
  kcache_error e;
  CError() { kcache_error_init(&e); }
  ~CError() { kcache_error_clear(&e); }
  CError(const CError&) = delete;
  CError& operator=(const CError&) = delete;
  std::string message() const { return e.message ? e.message : ""; }
  std::string log() const { return e.log ? e.log : ""; }
};

inline kcache_request make_request(const char* name) {
  kcache_request r;
  kcache_request_init(&r);
  r.name = name;
  return r;
}

inline kcache_client_stats stats_of(kcache_client* c) {
  kcache_client_stats s;
  kcache_client_stats_init(&s);
  EXPECT_EQ(kcache_client_get_stats(c, &s), KCACHE_OK);
  return s;
}

using Ms = std::chrono::milliseconds;

inline long long elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration_cast<Ms>(std::chrono::steady_clock::now() - since).count();
}

class ClientTest : public ::testing::Test {
 protected:
  void SetUp() override { daemon.start(); }

  // A client of the fake daemon; freed by the fixture.
  kcache_client* client(std::uint32_t connect_ms = 2000, std::uint32_t request_ms = 5000,
                        std::uint32_t compile_ms = 10000) {
    kcache_client_options o;
    kcache_client_options_init(&o);
    o.socket_path = daemon.path().c_str();
    o.connect_timeout_ms = connect_ms;
    o.request_timeout_ms = request_ms;
    o.compile_timeout_ms = compile_ms;
    kcache_client* c = nullptr;
    EXPECT_EQ(kcache_client_new(&o, &c), KCACHE_OK);
    clients_.emplace_back(c);
    return c;
  }

  TempDir dir;
  FakeDaemon daemon{dir.file("kcache.sock")};

 private:
  struct Free {
    void operator()(kcache_client* c) const { kcache_client_free(c); }
  };
  std::vector<std::unique_ptr<kcache_client, Free>> clients_;
};

}  // namespace kcache::test
