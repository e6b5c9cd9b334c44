// kcache_get: key-only lookups, learned targets, fd passing, errors and outputs.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dirent.h>
#include <cstring>

#include "client_test.hpp"
#include "common/cache_key.hpp"
#include "common/fd.hpp"

namespace kcache::test {
namespace {

constexpr std::string_view kSource = "extern \"C\" __global__ void k() {}";
constexpr std::string_view kIdentity = "nvrtc 13.0 (test)";  // FakeDaemon::default_hello()

// Key-only lookups miss (need_source); full requests compile.
void miss_then_compile(Session& s, const wire::FrameHeader& h, std::string_view payload) {
  const auto get = wire::decode_get_request(payload);
  if (!get.ok() || !get->source) {
    s.reply(h, error_payload(Errc::need_source, "key not in the index"));
    return;
  }
  const std::string target = get->target == "10.0a" ? "sm_100a" : "sm_90a";
  s.reply(h, module_payload("/objects/compiled.cubin", target, wire::Origin::compiled));
}

void hit(Session& s, const wire::FrameHeader& h, std::string_view payload) {
  const auto get = wire::decode_get_request(payload);
  const std::string target = get.ok() && get->target == "10.0a" ? "sm_100a" : "sm_90a";
  s.reply(h, module_payload("/objects/hit.cubin", target));
}

Digest128 expected_key(std::string_view target, std::string_view identity = kIdentity) {
  KeyInput in;
  in.backend = "cuda";
  in.target = target;
  in.compiler = identity;
  in.options = {"-lineinfo", "--std=c++17"};
  in.name = "k";
  in.source = kSource;
  in.headers = {{"b.h", "int b;"}, {"a.h", "int a;"}};
  return compute_cache_key(in);
}

struct SourceRequest {
  kcache_header headers[2] = {{"b.h", "int b;", 6}, {"a.h", "int a;", 6}};
  const char* options[2] = {"-lineinfo", "--std=c++17"};
  kcache_request r = make_request("k");
  SourceRequest() {
    r.source = kSource.data();
    r.source_size = kSource.size();
    r.headers = headers;
    r.header_count = 2;
    r.options = options;
    r.option_count = 2;
  }
};

TEST_F(ClientTest, DeviceRequestSendsKeyOnlyLookupThenTheSourceOnNeedSource) {
  daemon.set_handler(miss_then_compile);
  kcache_client* c = client();
  SourceRequest sr;
  sr.r.device = 0;
  CModule mod;
  CError err;
  ASSERT_EQ(kcache_get(c, &sr.r, &mod.m, &err.e), KCACHE_OK) << err.message();
  EXPECT_EQ(mod.m.origin, KCACHE_ORIGIN_COMPILED);

  const auto gets = daemon.gets();
  ASSERT_EQ(gets.size(), 2u);
  // First: name, canonical target and key; the source, headers and options stay home.
  EXPECT_FALSE(gets[0].source.has_value());
  EXPECT_TRUE(gets[0].headers.empty());
  EXPECT_TRUE(gets[0].options.empty());
  EXPECT_EQ(gets[0].target, "sm_90a");
  ASSERT_TRUE(gets[0].key.has_value());
  EXPECT_EQ(*gets[0].key, expected_key("sm_90a"));
  // Then the full request, as the caller gave it, on the same connection.
  ASSERT_TRUE(gets[1].source.has_value());
  EXPECT_EQ(*gets[1].source, kSource);
  EXPECT_EQ(gets[1].device, 0u);
  EXPECT_FALSE(gets[1].key.has_value());
  ASSERT_EQ(gets[1].headers.size(), 2u);
  EXPECT_EQ(gets[1].headers[0], (wire::NamedHeader{"b.h", "int b;"}));
  EXPECT_EQ(gets[1].options, (std::vector<std::string>{"-lineinfo", "--std=c++17"}));
  EXPECT_EQ(daemon.connections(), 1);
  EXPECT_EQ(stats_of(c).key_lookups, 1u);
  EXPECT_EQ(stats_of(c).need_source, 1u);
}

TEST_F(ClientTest, KeyOnlyHitNeverSendsTheSource) {
  daemon.set_handler(hit);
  kcache_client* c = client();
  SourceRequest sr;
  sr.r.target = "sm_90a";  // listed by hello: already canonical
  CModule mod;
  ASSERT_EQ(kcache_get(c, &sr.r, &mod.m, nullptr), KCACHE_OK);
  const auto gets = daemon.gets();
  ASSERT_EQ(gets.size(), 1u);
  EXPECT_FALSE(gets[0].source.has_value());
  EXPECT_EQ(gets[0].key, expected_key("sm_90a"));
  EXPECT_EQ(stats_of(c).need_source, 0u);
}

TEST_F(ClientTest, LearnsTheCanonicalTargetFromAReply) {
  daemon.set_handler(hit);
  kcache_client* c = client();
  SourceRequest sr;
  sr.r.target = "10.0a";  // not a local device: the client cannot know its canonical form
  CModule mod;
  ASSERT_EQ(kcache_get(c, &sr.r, &mod.m, nullptr), KCACHE_OK);
  ASSERT_EQ(kcache_get(c, &sr.r, &mod.m, nullptr), KCACHE_OK);

  const auto gets = daemon.gets();
  ASSERT_EQ(gets.size(), 2u);
  EXPECT_TRUE(gets[0].source.has_value());
  EXPECT_EQ(gets[0].target, "10.0a");
  EXPECT_FALSE(gets[0].key.has_value());
  EXPECT_FALSE(gets[1].source.has_value());
  EXPECT_EQ(gets[1].target, "sm_100a");
  EXPECT_EQ(gets[1].key, expected_key("sm_100a"));
}

TEST_F(ClientTest, ForgetsLearnedTargetsWhenTheDaemonsHelloChanges) {
  daemon.set_handler(hit);
  kcache_client* c = client();
  SourceRequest sr;
  sr.r.target = "10.0a";
  CModule mod;
  ASSERT_EQ(kcache_get(c, &sr.r, &mod.m, nullptr), KCACHE_OK);  // learns 10.0a → sm_100a

  daemon.stop();
  auto upgraded = FakeDaemon::default_hello();
  upgraded.compilers[0].identity = "nvrtc 13.1 (test)";
  daemon.set_hello(upgraded);
  daemon.start();
  // The pooled connection is dead; the retry meets the new hello and forgets 10.0a.
  ASSERT_EQ(kcache_get(c, &sr.r, &mod.m, nullptr), KCACHE_OK);
  ASSERT_EQ(kcache_get(c, &sr.r, &mod.m, nullptr), KCACHE_OK);  // relearned: key-only

  const auto gets = daemon.gets();
  ASSERT_EQ(gets.size(), 3u);
  EXPECT_TRUE(gets[1].source.has_value());
  EXPECT_FALSE(gets[1].key.has_value());
  EXPECT_FALSE(gets[2].source.has_value());
  EXPECT_EQ(gets[2].key, expected_key("sm_100a", "nvrtc 13.1 (test)"));
  EXPECT_EQ(stats_of(c).reconnects, 1u);
}

TEST_F(ClientTest, NoKeyOnlyLookupWithoutACompilerForTheBackend) {
  auto hello = FakeDaemon::default_hello();
  hello.compilers.clear();
  daemon.set_hello(hello);
  daemon.set_handler(hit);
  kcache_client* c = client();
  SourceRequest sr;
  sr.r.device = 0;
  CModule mod;
  ASSERT_EQ(kcache_get(c, &sr.r, &mod.m, nullptr), KCACHE_OK);
  const auto gets = daemon.gets();
  ASSERT_EQ(gets.size(), 1u);
  EXPECT_TRUE(gets[0].source.has_value());
  EXPECT_FALSE(gets[0].key.has_value());
  EXPECT_EQ(stats_of(c).key_lookups, 0u);
}

TEST_F(ClientTest, NoKeyOnlyLookupWithoutTheDaemonsCapability) {
  auto hello = FakeDaemon::default_hello();
  hello.capabilities = wire::kCapFdPassing;
  daemon.set_hello(hello);
  daemon.set_handler(hit);
  kcache_client* c = client();
  SourceRequest sr;
  sr.r.device = 0;
  CModule mod;
  ASSERT_EQ(kcache_get(c, &sr.r, &mod.m, nullptr), KCACHE_OK);
  ASSERT_EQ(daemon.gets().size(), 1u);
  EXPECT_TRUE(daemon.gets()[0].source.has_value());
}

TEST_F(ClientTest, PassedFdArrivesInTheModuleAndReadsTheBytes) {
  const std::string file = dir.file("module.cubin");
  {
    Fd out(::open(file.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0444));
    ASSERT_TRUE(out.valid());
    ASSERT_TRUE(write_all(out.get(),
                          "\x7f"
                          "ELF module bytes",
                          17)
                    .ok());
  }
  daemon.set_handler([&](Session& s, const wire::FrameHeader& h, std::string_view payload) {
    const auto get = wire::decode_get_request(payload);
    Fd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
    const bool asked = get.ok() && (get->flags & wire::kGetWantFd) != 0;
    s.reply(h, module_payload(file), 0, asked ? fd.get() : -1);
  });
  kcache_client* c = client();
  auto req = make_request("m");
  req.flags = KCACHE_GET_FD;
  CModule mod;
  ASSERT_EQ(kcache_get(c, &req, &mod.m, nullptr), KCACHE_OK);
  ASSERT_GE(mod.m.fd, 0);
  EXPECT_NE(::fcntl(mod.m.fd, F_GETFD) & FD_CLOEXEC, 0);
  auto bytes = read_whole_file(mod.m.fd);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, std::string("\x7f"
                                "ELF module bytes",
                                17));
}

int open_fd_count() {
  int n = 0;
  DIR* d = ::opendir("/proc/self/fd");
  while (::readdir(d) != nullptr) ++n;
  ::closedir(d);
  return n;
}

TEST_F(ClientTest, FdTheCallerDidNotAskForIsClosed) {
  const std::string file = dir.file("stray");
  Fd keep(::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  daemon.set_handler([&](Session& s, const wire::FrameHeader& h, std::string_view) {
    s.reply(h, module_payload(file), 0, keep.get());
  });
  kcache_client* c = client();
  auto req = make_request("m");
  CModule mod;
  ASSERT_EQ(kcache_get(c, &req, &mod.m, nullptr), KCACHE_OK);  // connects
  const int before = open_fd_count();
  for (int i = 0; i < 10; ++i) ASSERT_EQ(kcache_get(c, &req, &mod.m, nullptr), KCACHE_OK);
  EXPECT_EQ(open_fd_count(), before);
  EXPECT_EQ(mod.m.fd, -1);
}

TEST_F(ClientTest, WithoutAPassedFdTheClientOpensThePath) {
  const std::string file = dir.file("plain.cubin");
  { Fd out(::open(file.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0444)); }
  daemon.set_handler([&](Session& s, const wire::FrameHeader& h, std::string_view) {
    s.reply(h, module_payload(file));
  });
  kcache_client* c = client();
  auto req = make_request("m");
  req.flags = KCACHE_GET_FD;
  CModule mod;
  ASSERT_EQ(kcache_get(c, &req, &mod.m, nullptr), KCACHE_OK);
  ASSERT_GE(mod.m.fd, 0);
  struct stat a {
  }, b{};
  ASSERT_EQ(::fstat(mod.m.fd, &a), 0);
  ASSERT_EQ(::stat(file.c_str(), &b), 0);
  EXPECT_EQ(a.st_ino, b.st_ino);
}

TEST_F(ClientTest, CompileErrorMapsToEcompileWithMessageAndLog) {
  daemon.set_handler([](Session& s, const wire::FrameHeader& h, std::string_view) {
    s.reply(h, error_payload(Errc::compile_error, "nvrtc rejected 'k'",
                             "k.cu(1): error: expected a ';'"));
  });
  kcache_client* c = client();
  SourceRequest sr;
  CModule mod;
  CError err;
  EXPECT_EQ(kcache_get(c, &sr.r, &mod.m, &err.e), KCACHE_ECOMPILE);
  EXPECT_EQ(err.e.code, KCACHE_ECOMPILE);
  EXPECT_EQ(err.message(), "nvrtc rejected 'k'");
  EXPECT_EQ(err.log(), "k.cu(1): error: expected a ';'");
}

TEST_F(ClientTest, DaemonStatusesMapToTheirNegativeCodes) {
  std::atomic<int> status{0};
  daemon.set_handler([&](Session& s, const wire::FrameHeader& h, std::string_view) {
    s.reply(h, error_payload(static_cast<Errc>(status.load()), "scripted"));
  });
  kcache_client* c = client();
  auto req = make_request("m");
  for (Errc e : {Errc::not_found, Errc::invalid_argument, Errc::unavailable, Errc::too_large,
                 Errc::permission_denied, Errc::busy, Errc::compiler_failure, Errc::corrupt}) {
    status = static_cast<int>(e);
    CModule mod;
    CError err;
    EXPECT_EQ(kcache_get(c, &req, &mod.m, &err.e), -static_cast<int>(e)) << errc_name(e);
    EXPECT_EQ(err.message(), "scripted");
    EXPECT_EQ(err.e.log, nullptr);
  }
}

TEST_F(ClientTest, OutputsAreUntouchedOnFailure) {
  daemon.set_handler([](Session& s, const wire::FrameHeader& h, std::string_view) {
    s.reply(h, error_payload(Errc::not_found, "nothing"));
  });
  kcache_client* c = client();
  auto req = make_request("m");
  CModule mod;
  kcache_module before;
  std::memcpy(&before, &mod.m, sizeof before);
  EXPECT_EQ(kcache_get(c, &req, &mod.m, nullptr), KCACHE_ENOTFOUND);
  EXPECT_EQ(std::memcmp(&before, &mod.m, sizeof before), 0);
}

TEST_F(ClientTest, ErrorIsUntouchedOnSuccess) {
  daemon.set_handler([](Session& s, const wire::FrameHeader& h, std::string_view) {
    s.reply(h, module_payload("/objects/ok.cubin"));
  });
  kcache_client* c = client();
  auto req = make_request("m");
  CModule mod;
  CError err;
  kcache_error before;
  std::memcpy(&before, &err.e, sizeof before);
  ASSERT_EQ(kcache_get(c, &req, &mod.m, &err.e), KCACHE_OK);
  EXPECT_EQ(std::memcmp(&before, &err.e, sizeof before), 0);
  EXPECT_EQ(mod.m.module_size, 4096u);
  EXPECT_EQ(std::string(mod.m.digest), digest_of(std::string("/objects/ok.cubin")).hex());
  EXPECT_EQ(std::string(mod.m.key), digest_of(std::string("key of /objects/ok.cubin")).hex());
  EXPECT_STREQ(mod.m.target, "sm_90a");
  EXPECT_EQ(mod.m.origin, KCACHE_ORIGIN_HIT);
}

TEST_F(ClientTest, ADirectoryReplySaysSo) {
  const auto reply_with = [&](wire::PathKind kind) {
    daemon.set_handler([kind](Session& s, const wire::FrameHeader& h, std::string_view) {
      wire::ModuleReply m;
      m.path = "/objects/ab/x.tree/tree";
      m.path_kind = kind;
      m.target = "sm_90a";
      std::string payload;
      wire::encode(payload, m);
      s.reply(h, payload);
    });
  };
  reply_with(wire::PathKind::directory);
  kcache_client* c = client();
  auto req = make_request("org/kernel");
  CModule mod;
  ASSERT_EQ(kcache_get(c, &req, &mod.m, nullptr), KCACHE_OK);
  EXPECT_EQ(mod.m.is_directory, 1);
  EXPECT_STREQ(mod.m.path, "/objects/ab/x.tree/tree");
  reply_with(wire::PathKind::file);
  ASSERT_EQ(kcache_get(c, &req, &mod.m, nullptr), KCACHE_OK);
  EXPECT_EQ(mod.m.is_directory, 0);
}

TEST_F(ClientTest, RequestLargerThanTheDaemonsFrameLimitIsNotSent) {
  auto hello = FakeDaemon::default_hello();
  hello.max_frame = 1024;
  daemon.set_hello(hello);
  kcache_client* c = client();
  const std::string big(4096, 'x');
  auto req = make_request("m");
  req.source = big.data();
  req.source_size = big.size();
  req.target = "sm_75";  // unknown to the client: a full request
  CModule mod;
  CError err;
  EXPECT_EQ(kcache_get(c, &req, &mod.m, &err.e), KCACHE_ETOOLARGE);
  EXPECT_NE(err.message().find("1024"), std::string::npos) << err.message();
  EXPECT_TRUE(daemon.gets().empty());
}

TEST_F(ClientTest, InvalidRequestsAreRejectedBeforeAnyConnection) {
  kcache_client* c = client();
  CModule mod;
  CError err;
  auto nameless = make_request(nullptr);
  EXPECT_EQ(kcache_get(c, &nameless, &mod.m, &err.e), KCACHE_EINVAL);
  EXPECT_NE(err.message().find("name"), std::string::npos);

  kcache_request zeroed{};
  zeroed.name = "m";
  EXPECT_EQ(kcache_get(c, &zeroed, &mod.m, &err.e), KCACHE_EINVAL);
  EXPECT_NE(err.message().find("kcache_request_init"), std::string::npos) << err.message();

  auto dangling = make_request("m");
  dangling.source_size = 10;
  EXPECT_EQ(kcache_get(c, &dangling, &mod.m, &err.e), KCACHE_EINVAL);

  auto bad_flags = make_request("m");
  bad_flags.flags = 0x80;
  EXPECT_EQ(kcache_get(c, &bad_flags, &mod.m, &err.e), KCACHE_EINVAL);

  kcache_error small{};
  EXPECT_EQ(kcache_get(c, &bad_flags, &mod.m, &small), KCACHE_EINVAL);
  EXPECT_EQ(small.message, nullptr);  // an unsized error struct is never written
  EXPECT_EQ(daemon.connections(), 0);
}

}  // namespace
}  // namespace kcache::test
