// docs/protocol.md against schema/wire_v1.def: the opcode, tag and status tables of the page
// are the def's, row for row, so the prose cannot drift from the protocol.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "kcache/result.hpp"
#include "wire/protocol.hpp"

namespace kcache::wire {
namespace {

std::string protocol_md() {
  std::ifstream in(std::string(KCACHE_SOURCE_DIR) + "/docs/protocol.md");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every match of `row` in the page, as its captured groups joined by '|'.
std::set<std::string> rows(const std::string& doc, const std::regex& row) {
  std::set<std::string> out;
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), row); it != std::sregex_iterator(); ++it) {
    std::string joined;
    for (std::size_t i = 1; i < it->size(); ++i) joined += (i > 1 ? "|" : "") + (*it)[i].str();
    out.insert(joined);
  }
  return out;
}

std::string hex4(std::uint16_t v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%04x", v);
  return buf;
}

const char* permission_name(Permission p) {
  switch (p) {
    case Permission::anyone: return "anyone";
    case Permission::admin: return "admin";
    case Permission::worker: return "worker";
  }
  return "?";
}

TEST(ProtocolDoc, OpcodeTableIsTheDefs) {
  std::set<std::string> def;
  for (const OpcodeInfo& op : all_opcodes())
    def.insert(std::string(op.name) + "|" + hex4(static_cast<std::uint16_t>(op.opcode)) + "|" +
               permission_name(op.permission));
  const auto doc = rows(protocol_md(), std::regex(R"(\n\| `(\w+)` \| (0x[0-9a-f]{4}) \| (\w+) \|)"));
  EXPECT_EQ(doc, def);
}

TEST(ProtocolDoc, TagTableIsTheDefs) {
  std::set<std::string> def;
  for (const TagInfo& t : all_tags())
    def.insert(std::string(t.name) + "|" + std::to_string(static_cast<std::uint16_t>(t.tag)) + "|" +
               field_type_name(t.type));
  const auto doc = rows(protocol_md(), std::regex(R"(\n\| `(\w+)` \| (\d+) \| (\w+) \|)"));
  EXPECT_EQ(doc, def);
}

TEST(ProtocolDoc, StatusTableIsTheDefs) {
  std::set<std::string> def;
#define KC_STATUS(name, value) \
  if ((value) != 0) def.insert(std::to_string(value) + "|" #name);
#include "wire_v1.def"
#undef KC_STATUS
  const auto doc = rows(protocol_md(), std::regex(R"(\n\| (\d+) `(\w+)` \|)"));
  EXPECT_EQ(doc, def);
}

TEST(ProtocolDoc, NamesAreKnownAtRunTime) {
  EXPECT_EQ(tag_name(static_cast<std::uint16_t>(Tag::key)), "key");
  EXPECT_EQ(tag_name(999), "tag 999");
  ASSERT_TRUE(tag_info(static_cast<std::uint16_t>(Tag::device)).has_value());
  EXPECT_EQ(tag_info(static_cast<std::uint16_t>(Tag::device))->type, FieldType::u32);
  EXPECT_STREQ(opcode_name(Opcode::reload), "reload");
}

}  // namespace
}  // namespace kcache::wire
