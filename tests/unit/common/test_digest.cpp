#include "common/digest.hpp"

#include <gtest/gtest.h>

namespace kcache {
namespace {

TEST(Digest, HexMatchesXxhsumH2) {
  // `printf hello | xxhsum -H2` prints b5e9c1ad071b3e7fc779cfaa5e523818.
  EXPECT_EQ(digest_of(std::string_view("hello")).hex(), "b5e9c1ad071b3e7fc779cfaa5e523818");
}

TEST(Digest, StreamingEqualsOneShot) {
  Hasher h;
  h.update("hel");
  h.update("lo");
  EXPECT_EQ(h.finish(), digest_of(std::string_view("hello")));
}

TEST(Digest, ParsesItsOwnHexAndRejectsJunk) {
  const Digest128 d = digest_of(std::string_view("kcache"));
  auto parsed = parse_digest_hex(d.hex());
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(*parsed, d);
  EXPECT_FALSE(parse_digest_hex("abc").ok());
  EXPECT_FALSE(parse_digest_hex(std::string(31, '0') + "g").ok());
  EXPECT_EQ(parse_digest_hex("xyz").error().code, Errc::invalid_argument);
}

TEST(Digest, BytesRoundTrip) {
  const Digest128 d = digest_of(std::string_view("round trip"));
  const auto b = d.bytes();
  EXPECT_EQ(Digest128::from_bytes(b), d);
}

}  // namespace
}  // namespace kcache
