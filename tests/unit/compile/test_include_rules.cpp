// Include directives a request's source and headers may hold (compile/include_rules.hpp):
// only relative names without '..', as literals; every spelling that hides a directive is
// still seen.
#include <gtest/gtest.h>

#include <string>

#include "compile/include_rules.hpp"

namespace kcache {
namespace {

Status check_source(const std::string& source) {
  wire::GetRequest r;
  r.name = "m";
  r.source = source;
  return check_include_directives(r);
}

TEST(IncludeRules, RelativeLiteralIncludesPass) {
  for (const char* good :
       {"#include \"lib/scale.h\"\n", "#include <cuda_fp16.h>\n", "  #  include \"a.h\"\n",
        "#include_next <x.h>\n", "#define X 1\n#if __has_include(\"a.h\")\n#endif\n",
        "int x;  // not a directive: #include MACRO\n",
        "const char* s = \"/etc/shadow\";\n", "#pragma unroll\n", "#line 3 \"/tmp/x.cu\"\n"}) {
    EXPECT_TRUE(check_source(good).ok()) << good << check_source(good).error().message;
  }
}

TEST(IncludeRules, AbsoluteParentAndHomePathsAreRefusedNamingTheDirective) {
  for (const char* bad :
       {"#include \"/etc/shadow\"\n", "#include </etc/shadow>\n", "#include \"../../etc/passwd\"\n",
        "#include \"a/../../b.h\"\n", "#include \"~root/.ssh/id_rsa\"\n", "#import \"/etc/x\"\n",
        "#embed \"/etc/shadow\"\n", "#include_next </etc/x>\n"}) {
    const auto refused = check_source(bad);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.error().code, Errc::invalid_argument);
    EXPECT_NE(refused.error().message.find("source: '#"), std::string::npos) << refused.error().message;
  }
}

TEST(IncludeRules, HiddenSpellingsOfADirectiveAreStillSeen) {
  for (const char* bad : {
           "#inc\\\nlude \"/etc/shadow\"\n",                // a line continuation inside the name
           "%:include \"/etc/shadow\"\n",                    // the digraph for #
           "/* a */ # /* b */ include /* c */ \"/etc/x\"\n", // comments are spaces
           "/* starts\n ends */ #include \"/etc/x\"\n",      // after a comment spanning lines
           "auto s = R\"x(\n/*\n)x\";\n#include \"/etc/x\"\n// */\n",  // a raw string's /*
           "#\\\ninclude \"/etc/x\"\n",
       }) {
    EXPECT_FALSE(check_source(bad).ok()) << bad;
  }
}

TEST(IncludeRules, ComputedIncludesAndProbesAreRefused) {
  EXPECT_FALSE(check_source("#define P \"/etc/shadow\"\n#include P\n").ok());
  EXPECT_FALSE(check_source("#if __has_include(\"/etc/shadow\")\n#endif\n").ok());
  EXPECT_FALSE(check_source("#if __has_include_next(</root/x>)\n#endif\n").ok());
  EXPECT_FALSE(check_source("#if __has_include(P)\n#endif\n").ok());
  EXPECT_FALSE(check_source("#pragma GCC dependency \"/etc/shadow\"\n").ok());
  EXPECT_FALSE(check_source("_Pragma(\"GCC dependency \\\"/etc/shadow\\\"\")\n").ok());
  EXPECT_FALSE(check_source("#include \"unterminated\n").ok());
}

TEST(IncludeRules, RequestHeadersAreCheckedByNameAndContent) {
  wire::GetRequest r;
  r.name = "m";
  r.source = "#include \"a.h\"\n";
  r.headers = {{"a.h", "#include \"/etc/shadow\"\n"}};
  auto refused = check_include_directives(r);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("header 'a.h'"), std::string::npos) << refused.error().message;
  r.headers = {{"/etc/a.h", "int x;\n"}};
  EXPECT_FALSE(check_include_directives(r).ok()) << "an absolute header name";
  r.headers = {{"../a.h", "int x;\n"}};
  EXPECT_FALSE(check_include_directives(r).ok()) << "a header name with '..'";
  r.headers = {{"sub/a.h", "int x;\n"}};
  EXPECT_TRUE(check_include_directives(r).ok());
}

}  // namespace
}  // namespace kcache
