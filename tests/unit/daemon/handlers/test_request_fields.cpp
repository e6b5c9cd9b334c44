// request_fields.hpp and control_reply.hpp: control-request JSON as a hostile client sends it.
#include "handlers/request_fields.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "loop/contain.hpp"
#include "handlers/control_reply.hpp"
#include "wire/messages.hpp"

namespace kcache::daemon {
namespace {

using nlohmann::json;

TEST(RequestFields, AbsentAndNullFieldsGiveTheFallback) {
  const json doc = json::parse(R"({"limit": null})");
  const RequestFields f("list", doc);
  EXPECT_EQ(*f.text("name", "all"), "all");
  EXPECT_EQ(*f.count("limit", 7), 7u);
  EXPECT_FALSE(f.optional_count("limit")->has_value());
  EXPECT_TRUE(*f.flag("force", true));
}

TEST(RequestFields, WrongTypesAreRefusedNamingTheOperationTheFieldAndWhatCame) {
  const json doc = json::parse(R"({"name": 5, "limit": "x", "neg": -1, "real": 1.5, "force": 1})");
  const RequestFields f("list", doc);
  auto name = f.text("name");
  ASSERT_FALSE(name.ok());
  EXPECT_EQ(name.error().code, Errc::invalid_argument);
  EXPECT_EQ(name.error().message, "list: 'name' must be a string, not number");
  EXPECT_EQ(f.count("limit").error().message, "list: 'limit' must be a non-negative integer, not string");
  EXPECT_FALSE(f.count("neg").ok());
  EXPECT_FALSE(f.count("real").ok());
  EXPECT_EQ(f.flag("force").error().message, "list: 'force' must be true or false, not number");
}

TEST(RequestFields, CountsOverTheirLimitAreRefusedWithTheLimit) {
  const json doc = json::parse(R"({"max_age_s": 18446744073709551615})");
  auto n = RequestFields("gc", doc).count("max_age_s", 0, 1000);
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error().message, "gc: 'max_age_s' is 18446744073709551615, over the limit of 1000");
}

std::string request_payload(std::string_view text) {
  std::string out;
  wire::encode_json_request(out, text);
  return out;
}

TEST(ControlRequest, MalformedOutOfRangeAndUnknownFieldsAreRefusedWithoutThrowing) {
  for (const char* text : {"[1]", "{\"limit\": 1e400}", "{\"name\": \"\\ud800\"}", "{", "\"x\"",
                           "{\"name\": \"\xff\"}"}) {
    auto doc = control_request(request_payload(text), "list", {"name", "limit"});
    ASSERT_FALSE(doc.ok()) << text;
    EXPECT_EQ(doc.error().code, Errc::invalid_argument) << text;
    EXPECT_EQ(doc.error().message.rfind("list: ", 0), 0u) << doc.error().message;
  }
  auto typo = control_request(request_payload(R"({"limt": 3})"), "list", {"name", "limit"});
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.error().message, "list: unknown field 'limt' (it takes name, limit)");
  auto none = control_request(request_payload(R"({"x": 1})"), "status");
  EXPECT_EQ(none.error().message, "status: unknown field 'x' (it takes none)");
  EXPECT_TRUE(control_request(request_payload(""), "status").ok());
}

TEST(ControlText, StringsThatAreNotUtf8AreShownEscapedInsteadOfThrowing) {
  const json doc{{"entries", json::array({{{"name", "m\xff"}}})}, {"dir\xfe", "ok"}};
  const std::string text = control_text(doc);
  EXPECT_EQ(text, R"({"dir\\xfe":"ok","entries":[{"name":"m\\xff"}]})");
  EXPECT_FALSE(json::parse(text, nullptr, false).is_discarded());
  EXPECT_EQ(control_text(json{{"name", "plain"}}), R"({"name":"plain"})");
}

TEST(Contain, AnExceptionIsCountedAndStopsThereAndAReturnSaysSo) {
  const std::uint64_t before = contained_exceptions();
  EXPECT_TRUE(contain("test", [] {}));
  EXPECT_FALSE(contain("test", [] { throw std::runtime_error("boom"); }));
  EXPECT_FALSE(contain("test", [] { throw 42; }));
  EXPECT_FALSE(contain("test", [] { (void)json::parse("{").dump(); }));
  EXPECT_EQ(contained_exceptions(), before + 3);
}

}  // namespace
}  // namespace kcache::daemon
