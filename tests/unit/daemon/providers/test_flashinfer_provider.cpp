// FlashInfer provider wheels: the shim's rules (entry points, manifest.json, architectures).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "providers/flashinfer_provider.hpp"
#include "providers/site_packages.hpp"

namespace kcache::providers {
namespace {

using nlohmann::json;

TEST(FlashInferArch, NormalizesAsTheShimDoes) {
  const std::pair<const char*, const char*> cases[] = {
      {"sm90a", "sm_90a"},         {"9.0a", "sm_90a"},        {"compute_120f", "sm_120f"},
      {"SM_100A", "sm_100a"},      {"8.0", "sm_80"},          {" sm_86 ", "sm_86"},
      {"sm100f", "sm_100f"},       {"12.1a", "sm_121a"},      {"sm_9_0", "sm_90"},
  };
  for (const auto& [in, out] : cases) {
    auto t = normalize_flashinfer_arch(in);
    ASSERT_TRUE(t.ok()) << in << ": " << t.error().message;
    EXPECT_EQ(t->str(), out) << in;
  }
  for (const char* bad : {"", "sm", "sm_9", "sm1000", "9.0b", "gfx942", "compute_sm_90", "sm_86a"}) {
    auto t = normalize_flashinfer_arch(bad);
    EXPECT_FALSE(t.ok()) << bad;
    if (!t.ok()) {
      EXPECT_NE(t.error().message.find(json(bad).dump()), std::string::npos) << t.error().message;
    }
  }
}

json manifest() {
  return {{"cuda_architectures", {"sm90a"}}, {"distribution", "flashinfer-jit-cache-sm90a"},
          {"modules", {"b", "a", "a"}},      {"provider_id", "ignored"},
          {"schema_version", 1},             {"version", "0.6.18+cu130"}};
}

TEST(FlashInferManifest, ReadsTheFieldsTheShimReadsAndCollapsesDuplicates) {
  auto m = parse_flashinfer_manifest(manifest());
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->distribution, "flashinfer-jit-cache-sm90a");
  EXPECT_EQ(m->version, "0.6.18+cu130");
  ASSERT_EQ(m->architectures.size(), 1u);
  EXPECT_EQ(m->architectures[0].str(), "sm_90a");
  EXPECT_EQ(m->modules, (std::vector<std::string>{"a", "b"}));
}

TEST(FlashInferManifest, RefusesWhatTheShimRefusesAndNamesIt) {
  const auto with = [](const char* key, json value) {
    json m = manifest();
    if (value.is_null()) m.erase(key);
    else m[key] = std::move(value);
    return m;
  };
  const std::pair<json, const char*> cases[] = {
      {json::array(), "not a JSON object"},
      {with("schema_version", 2), "unsupported schema_version 2"},
      {with("schema_version", "1"), "unsupported schema_version \"1\""},
      {with("schema_version", nullptr), "schema_version (missing)"},
      {with("version", nullptr), "is missing fields: version"},
      {with("modules", json::array()), "has no modules"},
      {with("cuda_architectures", json::array()), "has no CUDA architectures"},
      {with("cuda_architectures", {"sm_9x"}), "\"sm_9x\""},
      {with("modules", {"../etc"}), "\"../etc\" is not a single path component"},
      {with("modules", {"a/b"}), "is not a single path component"},
      {with("modules", {1}), "holds 1, not a string"},
      {with("distribution", ""), "'distribution' must be a non-empty string"},
  };
  for (const auto& [doc, reason] : cases) {
    auto m = parse_flashinfer_manifest(doc);
    ASSERT_FALSE(m.ok()) << doc.dump();
    EXPECT_NE(m.error().message.find(reason), std::string::npos)
        << doc.dump() << " -> " << m.error().message;
  }
  json all_missing{{"schema_version", 1}};
  auto m = parse_flashinfer_manifest(all_missing);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message.find("distribution, version, cuda_architectures, modules"),
            std::string::npos) << m.error().message;
}

TEST(EntryPoints, ReadsOneGroupAsImportlibMetadataDoes) {
  const char* text =
      "[console_scripts]\n"
      "sm90a = not.this:one\n"
      "\n"
      "# a comment\n"
      "[flashinfer.jit_cache.providers]\n"
      "sm90a = flashinfer_jit_cache.providers.sm90a:get_provider\n"
      "; another comment\n"
      "  sm100f=flashinfer_jit_cache.providers.sm100f:get_provider [extra]  \r\n"
      "bare = some.module\n"
      "[other]\n"
      "x = y:z\n";
  const auto eps = parse_entry_points(text, kFlashInferGroup);
  ASSERT_EQ(eps.size(), 3u);
  EXPECT_EQ(eps[0].name, "sm90a");
  EXPECT_EQ(eps[0].module, "flashinfer_jit_cache.providers.sm90a");
  EXPECT_EQ(eps[0].attr, "get_provider");
  EXPECT_EQ(eps[1].name, "sm100f");
  EXPECT_EQ(eps[1].module, "flashinfer_jit_cache.providers.sm100f");
  EXPECT_EQ(eps[1].attr, "get_provider");
  EXPECT_EQ(eps[2].module, "some.module");
  EXPECT_EQ(eps[2].attr, "");
  EXPECT_TRUE(parse_entry_points("", kFlashInferGroup).empty());
  EXPECT_TRUE(parse_entry_points("[flashinfer.jit_cache.providers", kFlashInferGroup).empty());
}

}  // namespace
}  // namespace kcache::providers
