// The connection life cycle: handshake, timeouts, reconnects.
#include <atomic>
#include <thread>

#include "client_test.hpp"

namespace kcache::test {
namespace {

using std::chrono::steady_clock;

Handler reply_module(std::string path = "/cache/objects/ab/module.cubin") {
  return [path](Session& s, const wire::FrameHeader& h, std::string_view) {
    s.reply(h, module_payload(path));
  };
}

TEST_F(ClientTest, HandshakeSendsHelloFirstThenServesTheRequest) {
  daemon.set_handler(reply_module());
  kcache_client* c = client();
  auto req = make_request("vector_add");
  CModule mod;
  ASSERT_EQ(kcache_get(c, &req, &mod.m, nullptr), KCACHE_OK);

  const auto hellos = daemon.hellos();
  ASSERT_EQ(hellos.size(), 1u);  // decode_hello_request accepted it: magic and versions present
  EXPECT_EQ(hellos[0].proto_min, 1u);
  EXPECT_EQ(hellos[0].proto_max, 1u);
  ASSERT_EQ(daemon.gets().size(), 1u);
  EXPECT_EQ(daemon.gets()[0].name, "vector_add");
  EXPECT_STREQ(mod.m.path, "/cache/objects/ab/module.cubin");
}

TEST_F(ClientTest, ClientCreationDoesNotConnect) {
  client();
  std::this_thread::sleep_for(Ms(50));
  EXPECT_EQ(daemon.connections(), 0);
}

TEST_F(ClientTest, HelloRejectedWithUnsupportedVersionIsEversion) {
  daemon.set_hello_error(make_error(Errc::unsupported_version, "fake speaks only v7"));
  kcache_client* c = client(200);
  auto req = make_request("m");
  CModule mod;
  CError err;
  EXPECT_EQ(kcache_get(c, &req, &mod.m, &err.e), KCACHE_EVERSION);
  EXPECT_EQ(err.message(), "fake speaks only v7");
}

TEST_F(ClientTest, SuccessfulRequestsReuseOneConnection) {
  daemon.set_handler(reply_module());
  kcache_client* c = client();
  for (int i = 0; i < 5; ++i) {
    auto req = make_request("m");
    CModule mod;
    ASSERT_EQ(kcache_get(c, &req, &mod.m, nullptr), KCACHE_OK);
  }
  EXPECT_EQ(daemon.connections(), 1);
  EXPECT_EQ(stats_of(c).connects, 1u);
  EXPECT_EQ(stats_of(c).requests, 5u);
}

TEST_F(ClientTest, InProgressSwitchesTheWaitToTheCompileTimeout) {
  // The final reply comes 400 ms after an immediate in_progress: past the 100 ms request
  // timeout, within the 5 s compile timeout.
  daemon.set_handler([](Session& s, const wire::FrameHeader& h, std::string_view) {
    s.reply(h, error_payload(Errc::in_progress, "compiling"), wire::kFlagInterim);
    std::this_thread::sleep_for(Ms(400));
    s.reply(h, module_payload("/objects/compiled.cubin", "sm_90a", wire::Origin::compiled));
  });
  kcache_client* c = client(2000, 100, 5000);
  auto req = make_request("slow");
  CModule mod;
  CError err;
  const auto start = steady_clock::now();
  ASSERT_EQ(kcache_get(c, &req, &mod.m, &err.e), KCACHE_OK) << err.message();
  EXPECT_GE(elapsed_ms(start), 400);
  EXPECT_EQ(mod.m.origin, KCACHE_ORIGIN_COMPILED);
  EXPECT_STREQ(mod.m.path, "/objects/compiled.cubin");
}

TEST_F(ClientTest, RequestTimeoutFiresWhenTheDaemonIsSilent) {
  std::atomic<bool> answer{false};
  daemon.set_handler([&](Session& s, const wire::FrameHeader& h, std::string_view) {
    if (answer) s.reply(h, module_payload("/objects/late.cubin"));
  });
  kcache_client* c = client(2000, 150, 5000);
  auto req = make_request("m");
  CModule mod;
  CError err;
  const auto start = steady_clock::now();
  EXPECT_EQ(kcache_get(c, &req, &mod.m, &err.e), KCACHE_ETIMEDOUT);
  const auto took = elapsed_ms(start);
  EXPECT_GE(took, 150);
  EXPECT_LT(took, 2000);
  EXPECT_EQ(err.e.code, KCACHE_ETIMEDOUT);
  EXPECT_NE(err.message().find("request timeout (150 ms)"), std::string::npos) << err.message();
  EXPECT_EQ(stats_of(c).timeouts, 1u);

  // The timed-out connection may still get that reply: it is discarded, not reused.
  answer = true;
  ASSERT_EQ(kcache_get(c, &req, &mod.m, &err.e), KCACHE_OK);
  EXPECT_EQ(daemon.connections(), 2);
}

TEST_F(ClientTest, CompileTimeoutFiresAfterInProgress) {
  daemon.set_handler([](Session& s, const wire::FrameHeader& h, std::string_view) {
    s.reply(h, error_payload(Errc::in_progress, "compiling"), wire::kFlagInterim);
  });
  kcache_client* c = client(2000, 5000, 200);
  auto req = make_request("m");
  CModule mod;
  CError err;
  const auto start = steady_clock::now();
  EXPECT_EQ(kcache_get(c, &req, &mod.m, &err.e), KCACHE_ETIMEDOUT);
  EXPECT_GE(elapsed_ms(start), 200);
  EXPECT_LT(elapsed_ms(start), 4000);  // well before the 5 s request timeout
  EXPECT_NE(err.message().find("compile timeout (200 ms)"), std::string::npos) << err.message();
}

TEST_F(ClientTest, ReconnectsByItselfAfterADaemonRestart) {
  daemon.set_handler(reply_module());
  kcache_client* c = client();
  auto req = make_request("m");
  CModule mod;
  ASSERT_EQ(kcache_get(c, &req, &mod.m, nullptr), KCACHE_OK);

  daemon.stop();
  daemon.start();
  CError err;
  ASSERT_EQ(kcache_get(c, &req, &mod.m, &err.e), KCACHE_OK) << err.message();
  EXPECT_EQ(daemon.connections(), 2);
  EXPECT_EQ(stats_of(c).connects, 2u);
  EXPECT_EQ(stats_of(c).reconnects, 1u);
}

TEST_F(ClientTest, ConnectRetriesUntilTheDaemonComesBack) {
  daemon.set_handler(reply_module());
  kcache_client* c = client(3000);
  daemon.stop();  // the socket is gone: connect() sees ENOENT until start()
  std::thread restart([&] {
    std::this_thread::sleep_for(Ms(300));
    daemon.start();
  });
  auto req = make_request("m");
  CModule mod;
  CError err;
  const auto start = steady_clock::now();
  const int rc = kcache_get(c, &req, &mod.m, &err.e);
  restart.join();
  ASSERT_EQ(rc, KCACHE_OK) << err.message();
  EXPECT_GE(elapsed_ms(start), 250);
}

TEST_F(ClientTest, ConnectTimeoutReportsDisconnectedNamingThePath) {
  daemon.stop();
  kcache_client* c = client(150);
  auto req = make_request("m");
  CModule mod;
  CError err;
  const auto start = steady_clock::now();
  EXPECT_EQ(kcache_get(c, &req, &mod.m, &err.e), KCACHE_EDISCONNECTED);
  EXPECT_GE(elapsed_ms(start), 150);
  EXPECT_LT(elapsed_ms(start), 2000);
  EXPECT_NE(err.message().find(daemon.path()), std::string::npos) << err.message();
  EXPECT_NE(err.message().find("150 ms"), std::string::npos) << err.message();
}

TEST_F(ClientTest, BrokenConnectionIsRetriedExactlyOnce) {
  daemon.set_handler([](Session& s, const wire::FrameHeader&, std::string_view) { s.hang_up(); });
  kcache_client* c = client();
  auto req = make_request("m");
  CModule mod;
  CError err;
  EXPECT_EQ(kcache_get(c, &req, &mod.m, &err.e), KCACHE_EDISCONNECTED);
  EXPECT_EQ(daemon.gets().size(), 2u);
  EXPECT_EQ(daemon.connections(), 2);
  EXPECT_EQ(stats_of(c).reconnects, 1u);
}

TEST_F(ClientTest, ErrorReplyKeepsTheConnection) {
  daemon.set_handler([](Session& s, const wire::FrameHeader& h, std::string_view) {
    s.reply(h, error_payload(Errc::not_found, "no module 'm'"));
  });
  kcache_client* c = client();
  auto req = make_request("m");
  CModule mod;
  EXPECT_EQ(kcache_get(c, &req, &mod.m, nullptr), KCACHE_ENOTFOUND);
  EXPECT_EQ(kcache_get(c, &req, &mod.m, nullptr), KCACHE_ENOTFOUND);
  EXPECT_EQ(daemon.connections(), 1);
}

TEST_F(ClientTest, ReplyForAnotherRequestIdIsAProtocolError) {
  daemon.set_handler([](Session& s, const wire::FrameHeader& h, std::string_view) {
    wire::FrameHeader wrong = h;
    wrong.request_id += 1000;
    s.reply(wrong, module_payload("/objects/x.cubin"));
  });
  kcache_client* c = client();
  auto req = make_request("m");
  CModule mod;
  CError err;
  EXPECT_EQ(kcache_get(c, &req, &mod.m, &err.e), KCACHE_EPROTO);
  EXPECT_EQ(mod.m.path, nullptr);
}

}  // namespace
}  // namespace kcache::test
