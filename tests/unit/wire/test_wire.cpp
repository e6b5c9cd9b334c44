// The frame and field codec, including what hostile peers send.
#include <gtest/gtest.h>

#include "wire/fields.hpp"
#include "wire/frame.hpp"
#include "wire/messages.hpp"

namespace kcache::wire {
namespace {

std::string frame_of(Opcode op, const std::string& payload, std::uint32_t id = 7) {
  std::string out;
  append_frame(out, static_cast<std::uint16_t>(op), 0, id, payload);
  return out;
}

TEST(Wire, GetRequestRoundTrips) {
  GetRequest r;
  r.name = "axpy";
  r.version = "0.6.18+cu130";
  r.target = "sm_90a";
  r.source = std::string("src\0with nul", 12);
  r.headers = {{"a.h", "A"}, {"b.h", ""}};
  r.options = {"-lineinfo", ""};
  r.key = digest_of(std::string_view("k"));
  r.flags = kGetWantFd;
  r.device = 3;
  std::string payload;
  encode(payload, r);
  auto back = decode_get_request(payload);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->name, r.name);
  EXPECT_EQ(back->version, r.version);
  EXPECT_EQ(back->target, r.target);
  EXPECT_EQ(*back->source, *r.source);
  EXPECT_EQ(back->headers, r.headers);
  EXPECT_EQ(back->options, r.options);
  EXPECT_EQ(*back->key, *r.key);
  EXPECT_EQ(back->flags, r.flags);
  EXPECT_EQ(*back->device, 3u);
}

TEST(Wire, ReaderSplitsAStreamIntoFrames) {
  FrameReader reader;
  const std::string stream = frame_of(Opcode::status, "a") + frame_of(Opcode::list, "bc", 8);
  // Byte by byte: frames appear only when complete.
  int seen = 0;
  for (char c : stream) {
    ASSERT_TRUE(reader.feed(std::string_view(&c, 1)).ok());
    while (true) {
      auto f = reader.next();
      ASSERT_TRUE(f.ok());
      if (!f->has_value()) break;
      ++seen;
      if (seen == 1) {
        EXPECT_EQ((*f)->payload, "a");
      }
      if (seen == 2) {
        EXPECT_EQ((*f)->payload, "bc");
        EXPECT_EQ((*f)->header.request_id, 8u);
      }
    }
  }
  EXPECT_EQ(seen, 2);
}

TEST(Wire, OversizedHeaderIsRejectedBeforeThePayload) {
  FrameReader reader(1024);
  std::string header(kHeaderSize, '\0');
  encode_header({0xffffffffu, 2, 0, 1}, header.data());
  ASSERT_TRUE(reader.feed(header).ok());
  auto f = reader.next();
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().code, Errc::too_large);
  auto again = reader.next();
  ASSERT_FALSE(again.ok());  // stays failed
  EXPECT_EQ(again.error().code, Errc::protocol);
  EXPECT_EQ(again.error().message, "frame stream already failed");
}

TEST(Wire, TruncatedFieldIsAProtocolError) {
  std::string payload;
  FieldWriter(payload).str(Tag::name, "abcdef");
  payload.resize(payload.size() - 2);
  auto r = decode_get_request(payload);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::protocol);
  EXPECT_NE(r.error().message.find("field 'name' claims 6 bytes but only 4 remain"), std::string::npos)
      << r.error().message;
}

TEST(Wire, DuplicateSingularFieldIsRejected) {
  std::string payload;
  FieldWriter w(payload);
  w.str(Tag::name, "a");
  w.str(Tag::name, "b");
  auto r = decode_get_request(payload);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::protocol);
  EXPECT_EQ(r.error().message, "duplicate field 'name'");
}

TEST(Wire, WrongIntegerWidthIsRejected) {
  std::string payload;
  FieldWriter w(payload);
  w.str(Tag::name, "a");
  w.u16(Tag::device, 1);  // device is u32
  auto r = decode_get_request(payload);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::protocol);
  EXPECT_EQ(r.error().message, "field 'device' (u32) has 2 bytes, expected 4");
}

// The def's type column holds in every message, also for fields a message does not read.
TEST(Wire, TypesFromTheDefAreEnforcedForEveryField) {
  std::string payload;
  FieldWriter w(payload);
  w.str(Tag::name, "a");
  w.u32(Tag::size, 1);  // size is u64; a get request has no size field
  auto r = decode_get_request(payload);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::protocol);
  EXPECT_EQ(r.error().message, "field 'size' (u64) has 4 bytes, expected 8");
}

TEST(Wire, HeaderDataWithoutNameIsRejected) {
  std::string payload;
  FieldWriter w(payload);
  w.str(Tag::name, "a");
  w.bytes(Tag::header_data, "x");
  auto orphan = decode_get_request(payload);
  ASSERT_FALSE(orphan.ok());
  EXPECT_EQ(orphan.error().code, Errc::protocol);
  EXPECT_EQ(orphan.error().message, "header_data without header_name");
  std::string dangling;
  FieldWriter d(dangling);
  d.str(Tag::name, "a");
  d.str(Tag::header_name, "x.h");
  auto unpaired = decode_get_request(dangling);
  ASSERT_FALSE(unpaired.ok());
  EXPECT_EQ(unpaired.error().code, Errc::protocol);
  EXPECT_EQ(unpaired.error().message, "header_name without header_data");
}

TEST(Wire, UnknownTagsAreSkipped) {
  std::string payload;
  FieldWriter w(payload);
  w.str(Tag::name, "a");
  w.str(static_cast<Tag>(999), "from the future");
  auto r = decode_get_request(payload);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->name, "a");
}

TEST(Wire, MissingNameIsRejected) {
  std::string payload;
  FieldWriter(payload).str(Tag::target, "sm_90a");
  auto r = decode_get_request(payload);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::protocol);
  EXPECT_EQ(r.error().message, "missing required field 'name'");
}

TEST(Wire, ErrorRepliesDecodeToTheirStatusMessageAndLog) {
  std::string payload;
  encode_error(payload, make_error(Errc::compile_error, "failed", "line 1: error"));
  auto r = decode_module_reply(payload);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::compile_error);
  EXPECT_EQ(r.error().message, "failed");
  EXPECT_EQ(r.error().log, "line 1: error");
}

TEST(Wire, HelloNeedsTheMagic) {
  std::string payload;
  FieldWriter w(payload);
  w.u32(Tag::proto_min, 1);
  w.u32(Tag::proto_max, 1);
  auto r = decode_hello_request(payload);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::protocol);
  EXPECT_EQ(r.error().message, "hello without the 'kcache' magic");
  std::string good;
  encode(good, HelloRequest{});
  EXPECT_TRUE(decode_hello_request(good).ok());
}

TEST(Wire, OpcodeTableComesFromTheSchema) {
  const auto info = opcode_info(0x0012);
  ASSERT_TRUE(info.has_value());
  EXPECT_STREQ(info->name, "verify");
  EXPECT_EQ(info->permission, Permission::admin);
  EXPECT_FALSE(opcode_info(0x7777).has_value());
}

}  // namespace
}  // namespace kcache::wire
