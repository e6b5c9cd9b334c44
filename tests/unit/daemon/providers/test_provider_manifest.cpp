// The provider manifest grammar (providers/manifest.hpp) and the provider key.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>

#include "providers/manifest.hpp"
#include "providers/provider_key.hpp"
#include "providers/system_json.hpp"

namespace kcache::providers {
namespace {

using nlohmann::json;

json valid() {
  return json::parse(R"({
    "format": 1, "name": "flashinfer-cubins", "package": "flashinfer", "version": "0.6.18+cu130",
    "backend": "cuda-13.0", "variant": "torch-2.14-cuda-13.0-abi3-x86_64-linux",
    "targets": ["sm_90a", "10.0f"],
    "modules": [
      {"name": "gemm", "file": "sm_90a/gemm.cubin.zst", "target": "9.0a", "size": 1024,
       "digest": "0123456789abcdef0123456789abcdef", "compression": "zstd"},
      {"name": "gemm", "file": "sm_100f/gemm.cubin", "target": "sm_100f", "size": 2048,
       "digest": "fedcba9876543210fedcba9876543210", "compression": "none"}
    ]})");
}

std::string reason_for(const json& doc) {
  auto m = parse_manifest(doc);
  EXPECT_FALSE(m.ok());
  return m.ok() ? std::string() : m.error().message;
}

TEST(ProviderManifest, ParsesAndNormalizesTargets) {
  auto m = parse_manifest(valid());
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->name, "flashinfer-cubins");
  EXPECT_EQ(m->version, "0.6.18+cu130");
  EXPECT_EQ(m->backend_kind, Backend::cuda);
  ASSERT_TRUE(m->variant.has_value());
  EXPECT_EQ(m->variant->str(), "torch-2.14-cuda-13.0-abi3-x86_64-linux");
  ASSERT_EQ(m->targets.size(), 2u);
  EXPECT_EQ(m->targets[1].str(), "sm_100f");
  ASSERT_EQ(m->modules.size(), 2u);
  EXPECT_EQ(m->modules[0].target.str(), "sm_90a");
  EXPECT_EQ(m->modules[0].compression, Compression::zstd);
  EXPECT_EQ(m->modules[1].size, 2048u);
}

TEST(ProviderManifest, RoundTripsThroughItsWriter) {
  auto m = parse_manifest(valid());
  ASSERT_TRUE(m.ok());
  auto again = parse_manifest(json::parse(manifest_to_json(*m)));
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(manifest_to_json(*again), manifest_to_json(*m));
}

TEST(ProviderManifest, RejectsAnUnknownFormatBeforeAnythingElse) {
  json doc = valid();
  doc["format"] = 2;
  doc["new_field"] = true;
  EXPECT_NE(reason_for(doc).find("unsupported manifest format 2"), std::string::npos);
}

TEST(ProviderManifest, RejectsPathsThatLeaveTheDirectory) {
  for (const char* path : {"../evil.cubin", "sm_90a/../../evil", "/etc/passwd", "a//b", "./a",
                           "a\\b"}) {
    json doc = valid();
    doc["modules"][0]["file"] = path;
    const std::string why = reason_for(doc);
    EXPECT_NE(why.find("modules[0] ('gemm'): file"), std::string::npos) << path << ": " << why;
  }
  EXPECT_EQ(check_relative_path("sm_90a/gemm.cubin"), "");
  EXPECT_NE(check_relative_path("../x").find(".."), std::string::npos);
  EXPECT_NE(check_relative_path("/x").find("absolute"), std::string::npos);
}

TEST(ProviderManifest, RejectsEachMalformedField) {
  const auto with = [](auto&& change) {
    json doc = valid();
    change(doc);
    return reason_for(doc);
  };
  EXPECT_NE(with([](json& d) { d.erase("version"); }).find("'version' is missing"), std::string::npos);
  EXPECT_NE(with([](json& d) { d["backend"] = "cuda13"; }).find("cuda-X.Y"), std::string::npos);
  EXPECT_NE(with([](json& d) { d["variant"] = "torch-npu"; }).find("torch-cann"), std::string::npos);
  EXPECT_NE(with([](json& d) { d["targets"].push_back("gfx942"); }).find("backend"), std::string::npos);
  EXPECT_NE(with([](json& d) { d["targets"].push_back("9.0a"); }).find("listed twice"), std::string::npos);
  EXPECT_NE(with([](json& d) { d["modules"][0]["target"] = "sm_80"; }).find("not in the provider's 'targets'"),
            std::string::npos);
  EXPECT_NE(with([](json& d) { d["modules"][0]["size"] = 0; }).find("'size'"), std::string::npos);
  EXPECT_NE(with([](json& d) { d["modules"][0]["size"] = 1.5; }).find("'size'"), std::string::npos);
  EXPECT_NE(with([](json& d) { d["modules"][0]["digest"] = "0123456789ABCDEF0123456789ABCDEF"; })
                .find("lowercase"),
            std::string::npos);
  EXPECT_NE(with([](json& d) { d["modules"][0]["compression"] = "gzip"; }).find("compression"),
            std::string::npos);
  EXPECT_NE(with([](json& d) { d["modules"][1]["target"] = "sm_90a"; }).find("a second module"),
            std::string::npos);
  EXPECT_NE(with([](json& d) { d["modules"][0]["extra"] = 1; }).find("unknown key 'extra'"),
            std::string::npos);
  EXPECT_NE(with([](json& d) { d["modules"] = json::array(); }).find("non-empty"), std::string::npos);
  EXPECT_NE(with([](json& d) { d["name"] = "a\nb"; }).find("control character"), std::string::npos);
}

// schema/provider-manifest.schema.json is the published contract; the parser must agree with
// it on which keys exist, which are required, and the closed sets (format, compression).
TEST(ProviderManifest, AgreesWithThePublishedSchema) {
  std::ifstream in(std::string(KCACHE_SOURCE_DIR) + "/schema/provider-manifest.schema.json");
  ASSERT_TRUE(in) << "schema file missing";
  const json schema = json::parse(in);
  const json& item = schema["properties"]["modules"]["items"];
  EXPECT_FALSE(schema["additionalProperties"].get<bool>());
  EXPECT_FALSE(item["additionalProperties"].get<bool>());
  EXPECT_EQ(schema["properties"]["format"]["const"], kManifestFormat);
  EXPECT_EQ(item["properties"]["compression"]["enum"], json({"none", "zstd"}));

  const auto check = [](const json& object_schema, const std::function<json&(json&)>& at,
                        const std::string& where) {
    const std::set<std::string> required = object_schema["required"].get<std::set<std::string>>();
    for (const auto& [key, unused] : object_schema["properties"].items()) {
      json doc = valid();
      ASSERT_TRUE(at(doc).contains(key)) << where << key << " is not in the test manifest";
      at(doc).erase(key);
      auto m = parse_manifest(doc);
      if (required.contains(key)) {
        ASSERT_FALSE(m.ok()) << where << key << " is required by the schema";
        EXPECT_NE(m.error().message.find("'" + key + "'"), std::string::npos) << m.error().message;
      } else {
        EXPECT_TRUE(m.ok()) << where << key << " is optional in the schema: " << m.error().message;
      }
    }
    for (const std::string& key : required)
      EXPECT_TRUE(object_schema["properties"].contains(key)) << where << key;
    // Every key the test manifest carries is one the schema describes.
    json doc = valid();
    for (const auto& [key, unused] : at(doc).items())
      EXPECT_TRUE(object_schema["properties"].contains(key)) << where << key << " not in the schema";
  };
  check(schema, [](json& d) -> json& { return d; }, "manifest: ");
  check(item, [](json& d) -> json& { return d["modules"][0]; }, "module: ");

  // The documented limits hold at their edges.
  json doc = valid();
  doc["modules"][0]["size"] = item["properties"]["size"]["maximum"].get<std::uint64_t>();
  EXPECT_TRUE(parse_manifest(doc).ok());
  doc["modules"][0]["size"] = item["properties"]["size"]["maximum"].get<std::uint64_t>() + 1;
  EXPECT_FALSE(parse_manifest(doc).ok());
  doc = valid();
  doc["name"] = std::string(schema["properties"]["name"]["maxLength"].get<std::size_t>(), 'n');
  EXPECT_TRUE(parse_manifest(doc).ok());
  doc["name"] = std::string(schema["properties"]["name"]["maxLength"].get<std::size_t>() + 1, 'n');
  EXPECT_FALSE(parse_manifest(doc).ok());
}

TEST(ProviderKey, EveryFieldChangesTheKey) {
  const Digest128 digest = digest_of(std::string_view("module bytes"));
  const ProviderKeyInput base{"fi", "flashinfer", "0.6.18+cu130", "", "gemm", "sm_90a", digest};
  const Digest128 key = compute_provider_key(base);
  EXPECT_EQ(compute_provider_key(base), key);
  auto changed = [&](auto&& change) {
    ProviderKeyInput in = base;
    change(in);
    return compute_provider_key(in);
  };
  EXPECT_NE(changed([](auto& in) { in.provider = "fj"; }), key);
  EXPECT_NE(changed([](auto& in) { in.package = "flashinfer2"; }), key);
  EXPECT_NE(changed([](auto& in) { in.version = "0.6.18+cu134"; }), key);
  EXPECT_NE(changed([](auto& in) { in.variant = "torch-cuda"; }), key);
  EXPECT_NE(changed([](auto& in) { in.module = "gemm2"; }), key);
  EXPECT_NE(changed([](auto& in) { in.target = "sm_90"; }), key);
  EXPECT_NE(changed([&](auto& in) { in.digest = digest_of(std::string_view("other")); }), key);
  // Length prefixes: moving bytes between adjacent fields is a different key.
  EXPECT_NE(changed([](auto& in) { in.provider = "fifl"; in.package = "ashinfer"; }), key);
}

TEST(ProviderKey, IsTheDocumentedEncoding) {
  // docs/providers.md: u64 LE length + bytes for each field, tag first, digest as 32 hex.
  const Digest128 digest = digest_of(std::string_view("x"));
  std::string encoded;
  for (std::string_view s : {std::string_view(kProviderKeyFormat), std::string_view("p"),
                             std::string_view("pkg"), std::string_view("1.0"), std::string_view(""),
                             std::string_view("m"), std::string_view("sm_90a")}) {
    for (int i = 0; i < 8; ++i) encoded.push_back(static_cast<char>((s.size() >> (8 * i)) & 0xff));
    encoded += s;
  }
  const std::string hex = digest.hex();
  for (int i = 0; i < 8; ++i) encoded.push_back(static_cast<char>((hex.size() >> (8 * i)) & 0xff));
  encoded += hex;
  EXPECT_EQ(compute_provider_key({"p", "pkg", "1.0", "", "m", "sm_90a", digest}),
            digest_of(std::string_view(encoded)));
}

TEST(SystemJson, MapsOntoTheSystemSpec) {
  auto sys = parse_system_json(
      R"({"cpu":"x86_64","os":"linux","torch":"2.10","cxx":"cxx11","backend":"cuda-12.8","python":"gil"})");
  ASSERT_TRUE(sys.ok()) << sys.error().message;
  EXPECT_EQ(sys->str(), "cpu=x86_64,os=linux,torch=2.10,cxx=cxx11,backend=cuda-12.8,python=gil");
  EXPECT_FALSE(parse_system_json("not json").ok());
  EXPECT_FALSE(parse_system_json(R"(["cpu"])").ok());
  EXPECT_FALSE(parse_system_json(R"({"cpu":"x86_64","os":"linux","backend":"cuda-12.8","gpu":"h100"})").ok());
  EXPECT_FALSE(parse_system_json(R"({"cpu":"x86_64","os":"linux"})").ok());  // backend required
  EXPECT_FALSE(parse_system_json(R"({"cpu":"x86_64,os=mac","os":"linux","backend":"cpu"})").ok());
  EXPECT_FALSE(parse_system_json(R"({"cpu":1,"os":"linux","backend":"cpu"})").ok());
}

}  // namespace
}  // namespace kcache::providers
