#include "compile/request_rules.hpp"

#include <gtest/gtest.h>

namespace kcache::daemon {
namespace {

wire::GetRequest request() {
  wire::GetRequest r;
  r.name = "m";
  r.source = "x";
  return r;
}

TEST(RequestLimits, EachLimitIsNamedWhenExceeded) {
  RequestLimits l;
  l.max_source = 4;
  l.max_headers = 1;
  l.max_options = 1;
  l.max_option_length = 3;
  l.max_name = 5;
  auto r = request();
  r.source = "12345";
  EXPECT_NE(check_request_limits(r, l).error().message.find("limits.max_source"), std::string::npos);
  r = request();
  r.headers = {{"a", ""}, {"b", ""}};
  EXPECT_NE(check_request_limits(r, l).error().message.find("limits.max_headers"), std::string::npos);
  r = request();
  r.options = {"-a", "-b"};
  EXPECT_NE(check_request_limits(r, l).error().message.find("limits.max_options"), std::string::npos);
  r = request();
  r.options = {"-abcd"};
  EXPECT_EQ(check_request_limits(r, l).error().code, Errc::too_large);
  r = request();
  r.name = "toolong";
  EXPECT_EQ(check_request_limits(r, l).error().code, Errc::too_large);
}

TEST(RequestLimits, NamesAreOpaqueButNeverEmptyOrNul) {
  RequestLimits l;
  auto r = request();
  r.name = "../../etc/passwd";  // opaque: fine, never used as a path
  EXPECT_TRUE(check_request_limits(r, l).ok());
  r.name = std::string("a\0b", 3);
  EXPECT_EQ(check_request_limits(r, l).error().code, Errc::invalid_argument);
  r.name = "";
  EXPECT_EQ(check_request_limits(r, l).error().code, Errc::invalid_argument);
}

TEST(RequestLimits, DuplicateOrUnnamedHeadersAreRejected) {
  RequestLimits l;
  auto r = request();
  r.headers = {{"a.h", "1"}, {"a.h", "2"}};
  EXPECT_EQ(check_request_limits(r, l).error().code, Errc::invalid_argument);
  r.headers = {{"", "1"}};
  EXPECT_EQ(check_request_limits(r, l).error().code, Errc::invalid_argument);
}

}  // namespace
}  // namespace kcache::daemon
