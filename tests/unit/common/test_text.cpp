// common/text.hpp: which bytes are UTF-8, how the rest is shown, which names are refused.
#include "common/text.hpp"

#include <gtest/gtest.h>

#include <string>

namespace kcache {
namespace {

TEST(Text, WellFormedUtf8IsValidAndEveryIllFormedShapeIsNot) {
  EXPECT_TRUE(utf8_valid(""));
  EXPECT_TRUE(utf8_valid("axpy_f16"));
  EXPECT_TRUE(utf8_valid("r\xc3\xa9sum\xc3\xa9"));     // é
  EXPECT_TRUE(utf8_valid("\xe2\x82\xac"));              // €
  EXPECT_TRUE(utf8_valid("\xf0\x9f\x9a\x80"));          // U+1F680
  EXPECT_TRUE(utf8_valid("\xf4\x8f\xbf\xbf"));          // U+10FFFF
  EXPECT_FALSE(utf8_valid("\xff"));                     // never a UTF-8 byte
  EXPECT_FALSE(utf8_valid("\xc3"));                     // cut short
  EXPECT_FALSE(utf8_valid("\xc0\xaf"));                 // overlong '/'
  EXPECT_FALSE(utf8_valid("\xe0\x80\xaf"));             // overlong, three bytes
  EXPECT_FALSE(utf8_valid("\xed\xa0\x80"));             // a surrogate (U+D800)
  EXPECT_FALSE(utf8_valid("\xf4\x90\x80\x80"));         // past U+10FFFF
  EXPECT_FALSE(utf8_valid("\x80"));                     // a lone continuation byte
  EXPECT_FALSE(utf8_valid("ok\xe2\x82"));               // cut short at the end
}

TEST(Text, PrintableEscapesEachBadByteAndControlCharacterAndKeepsTheRest) {
  EXPECT_EQ(printable("axpy"), "axpy");
  EXPECT_EQ(printable("r\xc3\xa9sum\xc3\xa9"), "r\xc3\xa9sum\xc3\xa9");
  EXPECT_EQ(printable("a\xff" "b"), "a\\xffb");
  EXPECT_EQ(printable("line\nforged: ok"), "line\\x0aforged: ok");
  EXPECT_EQ(printable("\x1b[31mred"), "\\x1b[31mred");
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");
  EXPECT_EQ(printable(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(printable("\x7f"), "\\x7f");
  // Whatever goes in, what comes out is valid UTF-8 without control characters.
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  const std::string shown = printable(all);
  EXPECT_TRUE(utf8_valid(shown));
  for (char c : shown) EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 || c == 0x7f);
}

TEST(Text, LabelsMustBeUtf8WithoutControlCharactersAndTheErrorShowsThemEscaped) {
  EXPECT_TRUE(check_label("module name", "batch_prefill_f16").ok());
  EXPECT_TRUE(check_label("module name", "noyau_\xc3\xa9").ok());
  auto bad = check_label("module name", "m\xff");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, Errc::invalid_argument);
  EXPECT_EQ(bad.error().message, "module name 'm\\xff' is not valid UTF-8");
  auto newline = check_label("header name", "a\nb.cuh");
  ASSERT_FALSE(newline.ok());
  EXPECT_EQ(newline.error().message, "header name 'a\\x0ab.cuh' contains a control character");
}

}  // namespace
}  // namespace kcache
