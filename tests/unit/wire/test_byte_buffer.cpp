// ByteBuffer: growth keeps the bytes, moves hand the mapping over, release gives it back.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>

#include "wire/byte_buffer.hpp"
#include "wire/frame.hpp"

namespace kcache::wire {
namespace {

TEST(ByteBuffer, GrowingKeepsWhatItHolds) {
  ByteBuffer buf;
  EXPECT_EQ(buf.capacity(), 0u);
  ASSERT_TRUE(buf.reserve(100).ok());
  ASSERT_GE(buf.capacity(), 100u);
  std::memcpy(buf.data(), "kernel bytes", 12);
  const char* before = buf.data();
  // Far past the first mapping: mremap may move it, the bytes must come along.
  ASSERT_TRUE(buf.reserve(64u << 20).ok());
  EXPECT_GE(buf.capacity(), 64u << 20);
  EXPECT_EQ(std::string(buf.data(), 12), "kernel bytes");
  buf.data()[(64u << 20) - 1] = 'z';  // the whole capacity is writable
  (void)before;
}

TEST(ByteBuffer, ReserveAtLeastDoubles) {
  ByteBuffer buf;
  ASSERT_TRUE(buf.reserve(1u << 20).ok());
  const std::size_t first = buf.capacity();
  ASSERT_TRUE(buf.reserve(first + 1).ok());
  EXPECT_GE(buf.capacity(), 2 * first);
  const std::size_t second = buf.capacity();
  ASSERT_TRUE(buf.reserve(10).ok());  // never shrinks
  EXPECT_EQ(buf.capacity(), second);
}

TEST(ByteBuffer, MoveHandsTheMappingOver) {
  ByteBuffer a;
  ASSERT_TRUE(a.reserve(4096).ok());
  std::memcpy(a.data(), "abc", 3);
  ByteBuffer b(std::move(a));
  EXPECT_EQ(a.capacity(), 0u);  // NOLINT(bugprone-use-after-move): the moved-from state is the contract
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_EQ(std::string(b.data(), 3), "abc");
  ByteBuffer c;
  ASSERT_TRUE(c.reserve(8192).ok());
  c = std::move(b);
  EXPECT_EQ(std::string(c.data(), 3), "abc");
  EXPECT_EQ(b.capacity(), 0u);  // NOLINT(bugprone-use-after-move)
}

TEST(ByteBuffer, ReleaseGivesTheMappingBackAndStaysUsable) {
  ByteBuffer buf;
  ASSERT_TRUE(buf.reserve(1u << 20).ok());
  buf.release();
  EXPECT_EQ(buf.capacity(), 0u);
  EXPECT_EQ(buf.data(), nullptr);
  ASSERT_TRUE(buf.reserve(10).ok());
  buf.data()[0] = 'x';
}

TEST(ByteBuffer, AnImpossibleSizeIsAnErrorAndLosesNothing) {
  ByteBuffer buf;
  ASSERT_TRUE(buf.reserve(16).ok());
  std::memcpy(buf.data(), "keep", 4);
  const auto huge = buf.reserve(SIZE_MAX - 1);
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.error().code, Errc::too_large);
  const auto unmappable = buf.reserve(std::size_t{1} << 62);
  ASSERT_FALSE(unmappable.ok());
  EXPECT_NE(unmappable.error().message.find("cannot map"), std::string::npos);
  EXPECT_EQ(std::string(buf.data(), 4), "keep");
}

TEST(ByteBuffer, AReaderGivesUpALargeBufferOnceIdle) {
  FrameReader reader(128u << 20);
  std::string frame;
  append_frame(frame, static_cast<std::uint16_t>(Opcode::status), 0, 1, std::string(8u << 20, 'x'));
  ASSERT_TRUE(reader.feed(frame).ok());
  auto f = reader.next();
  ASSERT_TRUE(f.ok() && f->has_value());
  EXPECT_EQ((*f)->payload.size(), 8u << 20);
  EXPECT_EQ(reader.buffered(), 0u);
  auto space = reader.prepare(1024);
  ASSERT_TRUE(space.ok());
  EXPECT_LT(space->size(), 2u << 20);  // the 8 MiB mapping went back
}

}  // namespace
}  // namespace kcache::wire
