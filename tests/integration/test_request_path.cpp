// The core request path through the real daemon: compile, hit, single-flight, restart.
#include <sys/stat.h>
#include <unistd.h>

#include <optional>
#include <thread>

#include "daemon_fixture.hpp"

namespace kcache::test {
namespace {

constexpr int kEmAmdgpu = 224;

using RequestPath = DaemonFixture;

TEST_F(RequestPath, CompilesWithTheSuitesBackendThenServesAHit) {
  start();
  Client c = client();
  const std::string src = module_source();
  Request r;
  r.name = "axpy";
  r.target = backend().target;
  r.source = src;

  auto first = c.get(r);
  ASSERT_TRUE(first.ok()) << first.error().message << "\n" << first.error().log;
  EXPECT_EQ(first->origin, Origin::compiled);
  EXPECT_EQ(first->target, backend().target);
  EXPECT_TRUE(is_elf_with_machine(first->path, backend().elf_machine)) << first->path;
  EXPECT_EQ(first->path.rfind(cache_dir_ + "/objects/", 0), 0u);
  struct stat st {};
  ASSERT_EQ(::stat(first->path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0444u);
  EXPECT_EQ(static_cast<std::uint64_t>(st.st_size), first->size);

  auto second = c.get(r);
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(second->origin, Origin::hit);
  EXPECT_EQ(second->path, first->path);
  EXPECT_EQ(second->key, first->key);

  EXPECT_EQ(stat("compiles"), 1u);
  EXPECT_EQ(stat("misses"), 1u);
  EXPECT_EQ(stat("hits"), 1u);
}

TEST_F(RequestPath, TargetSpellingsShareOneEntry) {
  start({}, compiler_double_env());  // CUDA spellings: NVRTC, or the double standing in
  Client c = client();
  const std::string src = cuda_source(7);
  Request r;
  r.name = "axpy";
  r.source = src;
  r.target = "9.0a";
  auto a = c.get(r);
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->target, "sm_90a");
  r.target = "sm90a";
  auto b = c.get(r);
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(b->origin, Origin::hit);
  r.target = {};
  r.device = 0;  // the fixture's device 0 is sm_90a
  auto d = c.get(r);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->origin, Origin::hit);
  EXPECT_EQ(d->key, a->key);
  EXPECT_EQ(stat("compiles"), 1u);
}

TEST_F(RequestPath, HipCompilesToAnAmdCodeObject) {
  KC_REQUIRE_HIPRTC();
  start();
  Client c = client();
  const std::string src = hip_source();
  Request r;
  r.name = "scale";
  r.target = "gfx90a";
  r.source = src;
  auto m = c.get(r);
  ASSERT_TRUE(m.ok()) << m.error().message << "\n" << m.error().log;
  EXPECT_TRUE(is_elf_with_machine(m->path, kEmAmdgpu)) << m->path;
  EXPECT_NE(m->path.find(".hsaco"), std::string::npos);
}

// The compile takes 300 ms (the compiler double's KCACHE_FAKE_SLOW), so the askers overlap
// it for certain: one compiles, the others join it, none compiles again.
TEST_F(RequestPath, ConcurrentAskersShareOneCompile) {
  start({}, compiler_double_env());
  Client c = client();
  const std::string src = "// KCACHE_FAKE_SLOW\n" + cuda_source(42);
  constexpr int kAskers = 16;
  std::vector<std::thread> threads;
  std::vector<std::optional<Result<Module>>> results(kAskers);
  for (int i = 0; i < kAskers; ++i) {
    threads.emplace_back([&, i] {
      Request r;
      r.name = "shared";
      r.target = "sm_90a";
      r.source = src;
      results[i] = c.get(r);
    });
  }
  for (auto& t : threads) t.join();
  std::string path;
  for (const auto& slot : results) {
    ASSERT_TRUE(slot.has_value());
    const Result<Module>& r = *slot;
    ASSERT_TRUE(r.ok()) << r.error().message;
    if (path.empty()) path = r->path;
    EXPECT_EQ(r->path, path);
  }
  const auto s = status()["stats"];
  EXPECT_EQ(s["compiles"].get<int>(), 1) << s.dump();
  // Everyone either waited on the one compile or came after it, and some did wait.
  EXPECT_EQ(s["misses"].get<int>() + s["hits"].get<int>(), kAskers) << s.dump();
  EXPECT_EQ(s["dedup_waits"].get<int>(), s["misses"].get<int>() - 1) << s.dump();
  EXPECT_GT(s["dedup_waits"].get<int>(), 0) << "the askers never overlapped: " << s.dump();
}

TEST_F(RequestPath, RestartServesTheEntryAsAHitAndKeepsCounters) {
  start();
  std::string key;
  {
    Client c = client();
    const std::string src = module_source(3);
    Request r;
    r.name = "persist";
    r.target = backend().target;
    r.source = src;
    auto m = c.get(r);
    ASSERT_TRUE(m.ok()) << m.error().message;
    key = m->key;
  }
  restart();
  Client c = client();
  const std::string src = module_source(3);
  Request r;
  r.name = "persist";
  r.target = backend().target;
  r.source = src;
  auto m = c.get(r);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->origin, Origin::hit);
  EXPECT_EQ(m->key, key);
  EXPECT_EQ(stat("compiles"), 1u);  // persisted across the restart
  EXPECT_EQ(stat("hits"), 1u);
}

TEST_F(RequestPath, ClientRidesOutADaemonRestart) {
  start();
  Client c = client();
  const std::string src = module_source(11);
  Request r;
  r.name = "ride";
  r.target = backend().target;
  r.source = src;
  ASSERT_TRUE(c.get(r).ok());
  restart();
  auto m = c.get(r);  // the pooled connection is dead: the client reconnects by itself
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->origin, Origin::hit);
}

TEST_F(RequestPath, CompileErrorCarriesTheCompilerLog) {
  start();
  Client c = client();
  Request r;
  r.name = "broken";
  r.target = backend().target;
  const std::string broken = backend().broken_source();
  r.source = broken;
  auto m = c.get(r);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, Errc::compile_error);
  EXPECT_NE(m.error().log.find("error"), std::string::npos) << m.error().log;
  EXPECT_EQ(stat("compile_failures"), 1u);
}

TEST_F(RequestPath, HeadersAreIncludedByNameAndPartOfTheKey) {
  start();
  Client c = client();
  const std::string src = "#include \"scale.h\"\nextern \"C\" __global__ void k(float* y) { y[0] *= SCALE; }\n";
  const std::string h1 = "#define SCALE 2.0f\n";
  const std::string h2 = "#define SCALE 3.0f\n";
  Header hdr{"scale.h", h1};
  Request r;
  r.name = "with_header";
  r.target = backend().target;
  r.source = src;
  r.headers = std::span<const Header>(&hdr, 1);
  auto a = c.get(r);
  ASSERT_TRUE(a.ok()) << a.error().message << a.error().log;
  hdr.data = h2;
  auto b = c.get(r);
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_NE(a->key, b->key);
  EXPECT_EQ(b->origin, Origin::compiled);
}

TEST_F(RequestPath, FdPassingGivesTheModuleBytes) {
  start();
  Client c = client();
  const std::string src = module_source(5);
  Request r;
  r.name = "fd";
  r.target = backend().target;
  r.source = src;
  r.want_fd = true;
  auto m = c.get(r);
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_TRUE(m->fd.valid());
  std::string bytes(m->size, '\0');
  ASSERT_EQ(::pread(m->fd.get(), bytes.data(), bytes.size(), 0), static_cast<ssize_t>(m->size));
  EXPECT_EQ(bytes, read_file(m->path));
}

TEST_F(RequestPath, BadRequestsGetClearErrors) {
  start();
  Client c = client();
  const std::string src = cuda_source();
  Request r;
  r.name = "x";
  r.source = src;
  r.target = "sm_1200";
  auto bad_target = c.get(r);
  ASSERT_FALSE(bad_target.ok());
  EXPECT_EQ(bad_target.error().code, Errc::invalid_argument);
  EXPECT_NE(bad_target.error().message.find("sm_1200"), std::string::npos);

  r.target = {};
  r.device = 9;
  auto bad_device = c.get(r);
  ASSERT_FALSE(bad_device.ok());
  EXPECT_NE(bad_device.error().message.find("device index 9"), std::string::npos);

  r.device.reset();
  r.target = backend().target;
  const std::string_view opts[] = {"-o", "/tmp/out.cubin"};
  r.options = opts;
  auto bad_option = c.get(r);
  ASSERT_FALSE(bad_option.ok());
  EXPECT_NE(bad_option.error().message.find("'-o'"), std::string::npos);

  r.options = {};
  r.source = {};
  auto nothing = c.get(r);
  ASSERT_FALSE(nothing.ok());
  EXPECT_EQ(nothing.error().code, Errc::not_found);
}

TEST_F(RequestPath, MissingCompilerIsReportedWhileHitsAndOtherBackendsWork) {
  start({}, {"KCACHE_NVRTC_LIBRARY=/nonexistent/libnvrtc.so.13"});
  Client c = client();
  const std::string src = cuda_source();
  Request r;
  r.name = "no_nvrtc";
  r.target = "sm_90a";
  r.source = src;
  auto m = c.get(r);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, Errc::unavailable);
  EXPECT_NE(m.error().message.find("NVRTC not available (tried /nonexistent/libnvrtc.so.13"),
            std::string::npos)
      << m.error().message;
  const auto s = status();
  EXPECT_FALSE(s["compilers"][0]["available"].get<bool>());
}

}  // namespace
}  // namespace kcache::test
