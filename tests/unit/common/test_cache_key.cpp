#include "common/cache_key.hpp"

#include <gtest/gtest.h>

namespace kcache {
namespace {

KeyInput base() {
  KeyInput in;
  in.backend = "cuda";
  in.target = "sm_90a";
  in.compiler = "nvrtc 13.0 (libnvrtc.so.13 1@1)";
  in.options = {"-lineinfo", "--use_fast_math"};
  in.name = "axpy";
  in.source = "__global__ void k() {}";
  in.headers = {{"a.h", "#define A 1"}, {"b.h", "#define B 2"}};
  return in;
}

// The documented encoding (cache_key.hpp), written out by hand: u64 LE length + bytes of each
// string, counts before lists, headers sorted by name.
std::string documented_encoding() {
  std::string out;
  auto u64 = [&](std::uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
  };
  auto str = [&](std::string_view s) {
    u64(s.size());
    out.append(s);
  };
  str("kcache-key-v1");
  str("cuda");
  str("sm_90a");
  str("nvrtc 13.0 (libnvrtc.so.13 1@1)");
  u64(2);
  str("-lineinfo");
  str("--use_fast_math");
  str("axpy");
  str("__global__ void k() {}");
  u64(2);
  str("a.h");
  str("#define A 1");
  str("b.h");
  str("#define B 2");
  return out;
}

TEST(CacheKey, IsXxh3OfTheDocumentedEncoding) {
  EXPECT_EQ(compute_cache_key(base()), digest_of(documented_encoding()));
  // Frozen: keys name entries of caches already on disk, so the format may not drift.
  EXPECT_EQ(compute_cache_key(base()).hex(), "389cfc58c9ff8dfa23022c512e380ee5");
}

TEST(CacheKey, HeaderOrderDoesNotMatter) {
  KeyInput a = base();
  KeyInput b = base();
  std::swap(b.headers[0], b.headers[1]);
  EXPECT_EQ(compute_cache_key(a), compute_cache_key(b));
}

TEST(CacheKey, OptionOrderMatters) {
  KeyInput b = base();
  std::swap(b.options[0], b.options[1]);
  EXPECT_NE(compute_cache_key(base()), compute_cache_key(b));
}

TEST(CacheKey, EveryFieldChangesTheKey) {
  const Digest128 k = compute_cache_key(base());
  auto changed = [&](auto mutate) {
    KeyInput in = base();
    mutate(in);
    return compute_cache_key(in) != k;
  };
  EXPECT_TRUE(changed([](KeyInput& in) { in.backend = "hip"; }));
  EXPECT_TRUE(changed([](KeyInput& in) { in.target = "sm_90"; }));
  EXPECT_TRUE(changed([](KeyInput& in) { in.compiler = "nvrtc 13.1 (libnvrtc.so.13 1@1)"; }));
  EXPECT_TRUE(changed([](KeyInput& in) { in.options.pop_back(); }));
  EXPECT_TRUE(changed([](KeyInput& in) { in.name = "axpy2"; }));
  EXPECT_TRUE(changed([](KeyInput& in) { in.source = "__global__ void k(){}"; }));
  EXPECT_TRUE(changed([](KeyInput& in) { in.headers[0].data = "#define A 2"; }));
  EXPECT_TRUE(changed([](KeyInput& in) { in.headers[0].name = "c.h"; }));
  EXPECT_TRUE(changed([](KeyInput& in) { in.headers.pop_back(); }));
}

TEST(CacheKey, LengthPrefixesPreventBoundaryAmbiguity) {
  // "ab" + "c" and "a" + "bc" must not collide, nor an option split in two.
  KeyInput a = base();
  KeyInput b = base();
  a.name = "ab";
  a.source = "c";
  b.name = "a";
  b.source = "bc";
  EXPECT_NE(compute_cache_key(a), compute_cache_key(b));
  KeyInput c = base();
  KeyInput d = base();
  c.options = {"-DX=1 -DY=2"};
  d.options = {"-DX=1", "-DY=2"};
  EXPECT_NE(compute_cache_key(c), compute_cache_key(d));
  KeyInput e = base();
  KeyInput f = base();
  e.options = {};
  e.name = "-lineinfo";
  f.options = {"-lineinfo"};
  f.name = "";
  EXPECT_NE(compute_cache_key(e), compute_cache_key(f));
}

TEST(CacheKey, MatchesTheDocumentedEncoding) {
  // The key format is a contract (DESIGN §3). This value was computed independently: the
  // length-prefixed encoding written by a Python script and hashed with `xxhsum -H2`.
  KeyInput in;
  in.backend = "cuda";
  in.target = "sm_90a";
  in.compiler = "nvrtc 13.0";
  in.options = {"-lineinfo"};
  in.name = "k";
  in.source = "x";
  in.headers = {{"h.h", "y"}};
  EXPECT_EQ(compute_cache_key(in).hex(), "a7c91bd3a39d90c0657a8218933d5b5c");
  EXPECT_EQ(kKeyFormat, "kcache-key-v1");
}

}  // namespace
}  // namespace kcache
