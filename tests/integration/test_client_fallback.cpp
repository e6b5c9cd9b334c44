// libkcache's in-process fallback: the daemon is stopped mid-run and the worker keeps getting
// modules, compiled in-process with the daemon's key and rules, outside the daemon's cache;
// the daemon hears of it once it is back.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <thread>
#include <utility>

#include "daemon_fixture.hpp"

namespace kcache::test {
namespace {

using namespace std::chrono_literals;

// The fallback compiles with NVRTC in this process, so the fixture points this process (and the
// daemon it starts, which inherits the environment) at the compiler double: it forwards to the
// real NVRTC where there is one and synthesizes cubins where there is not. The previous
// environment comes back after each test, so later tests see the suite's own backend.
class ClientFallback : public DaemonFixture {
 protected:
  void SetUp() override {
    DaemonFixture::SetUp();
    for (const std::string& entry : compiler_double_env()) {
      const std::string name = entry.substr(0, entry.find('='));
      const char* old = std::getenv(name.c_str());
      saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
      ::setenv(name.c_str(), entry.substr(name.size() + 1).c_str(), 1);
    }
  }
  void TearDown() override {
    for (const auto& [name, old] : saved_)
      old ? ::setenv(name.c_str(), old->c_str(), 1) : ::unsetenv(name.c_str());
    DaemonFixture::TearDown();
  }
  Client fallback_client() {
    ClientOptions o;
    o.socket_path = socket_;
    o.connect_timeout = 300ms;
    o.request_timeout = 30s;
    o.fallback = true;
    return must(Client::open(o), "opening a client");
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

mode_t mode_of(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_mode & 07777 : 0;
}

TEST_F(ClientFallback, DaemonStoppedMidRunCompilesInProcessAndTheDaemonHearsOfItAfter) {
  start();
  const std::string before = cuda_source(1);
  const std::string during = cuda_source(2);
  std::string fallback_path;
  {
    Client c = fallback_client();
    auto served = c.get(cuda_request("axpy", before));
    ASSERT_TRUE(served.ok()) << served.error().message;
    EXPECT_EQ(served->origin, Origin::compiled);

    stop();
    auto m = c.get(cuda_request("axpy", during));
    ASSERT_TRUE(m.ok()) << m.error().message;
    EXPECT_EQ(m->origin, Origin::fallback);
    EXPECT_EQ(m->target, "sm_90a");
    EXPECT_EQ(m->path.find(cache_dir_), std::string::npos) << m->path;
    EXPECT_TRUE(is_elf_with_machine(m->path, 190)) << m->path;
    EXPECT_EQ(mode_of(m->path), 0444u);
    const std::string dir = m->path.substr(0, m->path.rfind('/'));
    EXPECT_EQ(mode_of(dir), 0700u) << dir;
    fallback_path = m->path;

    // Asked again while the daemon is still down: the same file, no second compile.
    auto again = c.get(cuda_request("axpy", during));
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(again->path, m->path);
    EXPECT_EQ(c.stats().fallbacks, 1u);

    // Back up: the daemon serves, computes the same key, and is told of the fallback.
    start();
    std::this_thread::sleep_for(1100ms);  // past the client's retry-after for a down daemon
    auto back = c.get(cuda_request("axpy", during));
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(back->origin, Origin::compiled);
    EXPECT_EQ(back->key, m->key);
    EXPECT_EQ(read_file(back->path), read_file(fallback_path));
    EXPECT_EQ(stat("client_fallbacks"), 1u);
  }
  EXPECT_FALSE(::access(fallback_path.c_str(), F_OK) == 0) << "the client's files go with it";
}

TEST_F(ClientFallback, WhatTheDaemonRefusesTheFallbackRefusesToo) {
  start();
  Client c = fallback_client();
  stop();
  const std::string src = cuda_source(3);
  Request r = cuda_request("axpy", src);
  const std::string_view bad_options[] = {"-o", "/tmp/elsewhere"};
  r.options = bad_options;
  auto refused = c.get(r);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, Errc::invalid_argument);
  EXPECT_NE(refused.error().message.find("'-o' is not allowed"), std::string::npos)
      << refused.error().message;

  auto broken = c.get(cuda_request("broken", backend().broken_source()));
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.error().code, Errc::compile_error);
  EXPECT_FALSE(broken.error().log.empty());
}

TEST_F(ClientFallback, DeviceRequestsAndLookupsCannotFallBack) {
  start();
  Client c = fallback_client();
  stop();
  const std::string src = cuda_source(4);
  Request by_device;
  by_device.name = "axpy";
  by_device.device = 0;
  by_device.source = src;
  auto d = c.get(by_device);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().code, Errc::disconnected) << d.error().message;
  Request lookup;
  lookup.name = "axpy";
  lookup.target = "sm_90a";
  auto l = c.get(lookup);
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.error().code, Errc::disconnected) << l.error().message;
  EXPECT_EQ(c.stats().fallbacks, 0u);
}

TEST_F(ClientFallback, OffUnlessAskedInTheCApi) {
  start();
  kcache_client_options o;
  kcache_client_options_init(&o);
  o.socket_path = socket_.c_str();
  o.connect_timeout_ms = 300;
  kcache_client* c = nullptr;
  ASSERT_EQ(kcache_client_new(&o, &c), KCACHE_OK);
  stop();
  const std::string src = cuda_source(5);
  kcache_request r;
  kcache_request_init(&r);
  r.name = "axpy";
  r.target = "sm_90a";
  r.source = src.c_str();
  r.source_size = src.size();
  kcache_module m;
  kcache_module_init(&m);
  EXPECT_EQ(kcache_get(c, &r, &m, nullptr), KCACHE_EDISCONNECTED);
  kcache_client_free(c);

  o.flags = KCACHE_CLIENT_FALLBACK;
  ASSERT_EQ(kcache_client_new(&o, &c), KCACHE_OK);
  ASSERT_EQ(kcache_get(c, &r, &m, nullptr), KCACHE_OK);
  EXPECT_EQ(m.origin, KCACHE_ORIGIN_FALLBACK);
  kcache_module_clear(&m);
  kcache_client_free(c);
}

}  // namespace
}  // namespace kcache::test
