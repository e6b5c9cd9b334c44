// kcache/kcache.hpp, the C++ RAII layer, against the fake daemon.
#include <fcntl.h>
#include <unistd.h>

#include <array>

#include "client_test.hpp"
#include "common/fd.hpp"
#include "kcache/kcache.hpp"

namespace kcache::test {
namespace {

class CppClientTest : public ClientTest {
 protected:
  kcache::Client open() {
    ClientOptions o;
    o.socket_path = daemon.path();
    o.fallback = false;  // the scripted daemon's answers, not an in-process compile
    o.request_timeout = Ms(5000);
    auto c = kcache::Client::open(o);
    EXPECT_TRUE(c.ok());
    return std::move(c).value();
  }
};

TEST_F(CppClientTest, GetReturnsTheModuleWithAnOwnedFd) {
  const std::string file = dir.file("m.cubin");
  { Fd out(::open(file.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0444)); }
  daemon.set_handler([&](Session& s, const wire::FrameHeader& h, std::string_view) {
    Fd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
    s.reply(h, module_payload(file, "sm_90a", wire::Origin::provider), 0, fd.get());
  });
  const kcache::Client client = open();
  Request r;
  r.name = "m";
  r.device = 0;
  r.want_fd = true;
  auto m = client.get(r);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->path, file);
  EXPECT_EQ(m->target, "sm_90a");
  EXPECT_EQ(m->origin, Origin::provider);
  EXPECT_STREQ(origin_name(m->origin), "provider");
  EXPECT_EQ(m->size, 4096u);
  EXPECT_EQ(m->digest.size(), 32u);
  ASSERT_TRUE(m->fd.valid());
  const int raw = m->fd.get();
  { Module gone = std::move(m).value(); }
  EXPECT_EQ(::fcntl(raw, F_GETFD), -1);  // closed with its Module
}

TEST_F(CppClientTest, HeadersAndOptionsReachTheDaemonInOrder) {
  daemon.set_handler([](Session& s, const wire::FrameHeader& h, std::string_view) {
    s.reply(h, module_payload("/objects/x.cubin"));
  });
  const kcache::Client client = open();
  const std::array<Header, 2> headers{{{"z.h", "int z;"}, {"a.h", "int a;"}}};
  const std::array<std::string_view, 3> options{"-lineinfo", "-DN=4", "--use_fast_math"};
  Request r;
  r.name = "k";
  r.version = "0.6.18+cu130";
  r.target = "sm_75";  // unknown to the client: a full request
  r.source = "__global__ void k() {}";
  r.headers = headers;
  r.options = options;
  r.system_json = R"({"torch":"2.14"})";
  ASSERT_TRUE(client.get(r).ok());
  const auto gets = daemon.gets();
  ASSERT_EQ(gets.size(), 1u);
  EXPECT_EQ(gets[0].version, "0.6.18+cu130");
  EXPECT_EQ(gets[0].target, "sm_75");
  EXPECT_EQ(gets[0].system, R"({"torch":"2.14"})");
  EXPECT_EQ(gets[0].headers,
            (std::vector<wire::NamedHeader>{{"z.h", "int z;"}, {"a.h", "int a;"}}));
  EXPECT_EQ(gets[0].options, (std::vector<std::string>{"-lineinfo", "-DN=4", "--use_fast_math"}));
}

TEST_F(CppClientTest, ErrorsBecomeErrcWithMessageAndLog) {
  daemon.set_handler([](Session& s, const wire::FrameHeader& h, std::string_view) {
    s.reply(h, error_payload(Errc::compile_error, "bad source", "1: error"));
  });
  const kcache::Client client = open();
  Request r;
  r.name = "k";
  r.source = "oops";
  const auto m = client.get(r);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, Errc::compile_error);
  EXPECT_EQ(m.error().message, "bad source");
  EXPECT_EQ(m.error().log, "1: error");
}

TEST_F(CppClientTest, ControlReturnsTheReplyDocument) {
  daemon.set_handler([](Session& s, const wire::FrameHeader& h, std::string_view) {
    s.reply(h, json_payload(R"({"entries":[]})"));
  });
  const kcache::Client client = open();
  const auto reply = client.control("list");
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  EXPECT_EQ(*reply, R"({"entries":[]})");
  const auto bad = client.control("nope");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, Errc::invalid_argument);
  EXPECT_EQ(client.stats().requests, 1u);  // "nope" never reached the network
}

TEST(CppClient, MovedFromClientLeavesOneOwner) {
  auto a = kcache::Client::open();
  ASSERT_TRUE(a.ok());
  kcache_client* raw = a->c_handle();
  kcache::Client b = std::move(a).value();
  EXPECT_EQ(b.c_handle(), raw);
}

TEST(CppClient, UniqueFdClosesOnceAndReleases) {
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  {
    UniqueFd a(fds[0]);
    UniqueFd b = std::move(a);
    EXPECT_FALSE(a.valid());
    EXPECT_EQ(b.get(), fds[0]);
  }
  EXPECT_EQ(::fcntl(fds[0], F_GETFD), -1);
  UniqueFd c(fds[1]);
  EXPECT_EQ(c.release(), fds[1]);
  EXPECT_NE(::fcntl(fds[1], F_GETFD), -1);
  ::close(fds[1]);
}

}  // namespace
}  // namespace kcache::test
