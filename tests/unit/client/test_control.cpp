// kcache_control, the library's static API and one handle shared by many threads.
#include <atomic>
#include <set>
#include <thread>

#include "client_test.hpp"
#include "kcache_config.h"

namespace kcache::test {
namespace {

TEST_F(ClientTest, ControlRoundTripsJsonThroughTheOperationsOpcode) {
  daemon.set_handler([](Session& s, const wire::FrameHeader& h, std::string_view payload) {
    const auto json = wire::decode_json_request(payload);
    if (h.opcode == static_cast<std::uint16_t>(wire::Opcode::status) && json.ok() &&
        *json == R"({"verbose":true})")
      s.reply(h, json_payload(R"({"version":"0.1.0","uptime_s":12})"));
    else
      s.reply(h, error_payload(Errc::invalid_argument, "unexpected control request"));
  });
  kcache_client* c = client();
  char* reply = nullptr;
  CError err;
  ASSERT_EQ(kcache_control(c, "status", R"({"verbose":true})", &reply, &err.e), KCACHE_OK)
      << err.message();
  EXPECT_STREQ(reply, R"({"version":"0.1.0","uptime_s":12})");
  kcache_free(reply);
}

TEST_F(ClientTest, ControlWithoutJsonSendsAnEmptyObject) {
  daemon.set_handler([](Session& s, const wire::FrameHeader& h, std::string_view payload) {
    const auto json = wire::decode_json_request(payload);
    s.reply(h, json_payload(json.ok() ? "{\"got\":" + *json + "}" : "null"));
  });
  kcache_client* c = client();
  char* reply = nullptr;
  ASSERT_EQ(kcache_control(c, "list", nullptr, &reply, nullptr), KCACHE_OK);
  EXPECT_STREQ(reply, R"({"got":{}})");
  EXPECT_EQ(daemon.requests().at(0).header.opcode, static_cast<std::uint16_t>(wire::Opcode::list));
  kcache_free(reply);
}

TEST_F(ClientTest, UnknownControlOperationIsEinvalNamingIt) {
  kcache_client* c = client();
  char* reply = nullptr;
  CError err;
  EXPECT_EQ(kcache_control(c, "frobnicate", "{}", &reply, &err.e), KCACHE_EINVAL);
  EXPECT_NE(err.message().find("'frobnicate'"), std::string::npos) << err.message();
  EXPECT_NE(err.message().find("status"), std::string::npos) << err.message();
  EXPECT_EQ(reply, nullptr);
  EXPECT_EQ(daemon.connections(), 0);
}

TEST_F(ClientTest, DataPlaneOpcodesAreNotControlOperations) {
  kcache_client* c = client();
  char* reply = nullptr;
  for (const char* op : {"hello", "get", "compile"}) {
    CError err;
    EXPECT_EQ(kcache_control(c, op, "{}", &reply, &err.e), KCACHE_EINVAL) << op;
  }
  EXPECT_EQ(daemon.connections(), 0);
}

TEST_F(ClientTest, ControlErrorCarriesTheDaemonsCode) {
  daemon.set_handler([](Session& s, const wire::FrameHeader& h, std::string_view) {
    s.reply(h, error_payload(Errc::permission_denied, "verify needs root or the daemon's user"));
  });
  kcache_client* c = client();
  char* reply = nullptr;
  CError err;
  EXPECT_EQ(kcache_control(c, "verify", "{}", &reply, &err.e), KCACHE_EPERM);
  EXPECT_EQ(err.message(), "verify needs root or the daemon's user");
  EXPECT_EQ(reply, nullptr);
}

TEST_F(ClientTest, QueriesAreRetriedAfterAHangUpButAdminOperationsAreNot) {
  daemon.set_handler([](Session& s, const wire::FrameHeader&, std::string_view) { s.hang_up(); });
  kcache_client* c = client();
  char* reply = nullptr;
  EXPECT_EQ(kcache_control(c, "status", "{}", &reply, nullptr), KCACHE_EDISCONNECTED);
  EXPECT_EQ(daemon.requests().size(), 2u);
  EXPECT_EQ(kcache_control(c, "verify", "{}", &reply, nullptr), KCACHE_EDISCONNECTED);
  EXPECT_EQ(daemon.requests().size(), 3u);
}

TEST_F(ClientTest, SixteenThreadsShareOneClientHandle) {
  daemon.set_handler([](Session& s, const wire::FrameHeader& h, std::string_view payload) {
    const auto get = wire::decode_get_request(payload);
    s.reply(h, module_payload("/objects/" + (get.ok() ? get->name : "?")));
  });
  kcache_client* c = client();
  constexpr int kThreads = 16, kEach = 64;
  std::atomic<int> wrong{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        const std::string name = "m" + std::to_string(t) + "-" + std::to_string(i);
        auto req = make_request(name.c_str());
        CModule mod;
        if (kcache_get(c, &req, &mod.m, nullptr) != KCACHE_OK)
          ++failed;
        else if (std::string(mod.m.path) != "/objects/" + name)
          ++wrong;  // a reply meant for another thread
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failed, 0);
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(daemon.gets().size(), static_cast<std::size_t>(kThreads * kEach));
  EXPECT_LE(daemon.connections(), kThreads);
  const auto s = stats_of(c);
  EXPECT_EQ(s.requests, static_cast<std::uint64_t>(kThreads * kEach));
  EXPECT_EQ(s.connects, static_cast<std::uint64_t>(daemon.connections()));
}

TEST(ClientApi, StrerrorNamesEveryCodeDistinctly) {
  std::set<std::string> seen;
  for (int code : {KCACHE_OK, KCACHE_ENOTFOUND, KCACHE_ECOMPILE, KCACHE_EINVAL, KCACHE_EUNAVAILABLE,
                   KCACHE_ETIMEDOUT, KCACHE_ETOOLARGE, KCACHE_EPERM, KCACHE_EPROTO, KCACHE_EVERSION,
                   KCACHE_EOPCODE, KCACHE_EIO, KCACHE_EINTERNAL, KCACHE_EBUSY, KCACHE_EDISCONNECTED,
                   KCACHE_ECOMPILER, KCACHE_ECORRUPT}) {
    const std::string text = kcache_strerror(code);
    EXPECT_NE(text, "unknown error") << code;
    EXPECT_TRUE(seen.insert(text).second) << "duplicate text for " << code;
  }
  EXPECT_STREQ(kcache_strerror(-9999), "unknown error");
}

TEST(ClientApi, VersionIsTheProjectVersion) {
  EXPECT_STREQ(kcache_version(), KCACHE_VERSION);
}

TEST(ClientApi, OptionsInitSetsTheDocumentedDefaults) {
  kcache_client_options o;
  kcache_client_options_init(&o);
  EXPECT_EQ(o.size, sizeof o);
  EXPECT_EQ(o.socket_path, nullptr);
  EXPECT_EQ(o.connect_timeout_ms, 2000u);
  EXPECT_EQ(o.request_timeout_ms, 10000u);
  EXPECT_EQ(o.compile_timeout_ms, 300000u);
  EXPECT_EQ(o.flags, 0u);
}

TEST(ClientApi, ClientNewRejectsReservedFlagsAndUnsizedOptions) {
  kcache_client_options o;
  kcache_client_options_init(&o);
  o.flags = KCACHE_CLIENT_FALLBACK << 1;  // the first flag not defined
  kcache_client* c = nullptr;
  EXPECT_EQ(kcache_client_new(&o, &c), KCACHE_EINVAL);
  o.flags = 0;
  o.size = 4;
  EXPECT_EQ(kcache_client_new(&o, &c), KCACHE_EINVAL);
  EXPECT_EQ(c, nullptr);
  EXPECT_EQ(kcache_client_new(nullptr, &c), KCACHE_OK);  // defaults
  kcache_client_free(c);
}

TEST(ClientApi, ModuleClearReleasesAndReinitializes) {
  kcache_module m;
  kcache_module_init(&m);
  EXPECT_EQ(m.fd, -1);
  EXPECT_EQ(m.path, nullptr);
  kcache_module_clear(&m);  // clearing an empty module is harmless
  kcache_module_clear(nullptr);
  EXPECT_EQ(m.size, sizeof m);
  EXPECT_EQ(m.fd, -1);
}

}  // namespace
}  // namespace kcache::test
