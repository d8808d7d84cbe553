// report/printable.hpp: the program's names made safe for tables, CSV and terminals.
#include "report/printable.hpp"

#include <gtest/gtest.h>

namespace tasklens::report {
namespace {

TEST(Printable, PlainTextAndValidUtf8StayAsTheyAre) {
  EXPECT_EQ(printable("fib.c:12"), "fib.c:12");
  EXPECT_EQ(printable("<img src=x onerror=alert(2)>"), "<img src=x onerror=alert(2)>");
  EXPECT_EQ(printable("r\xc3\xa9gion \xe2\x82\xac \xf0\x9f\x98\x80"),
            "r\xc3\xa9gion \xe2\x82\xac \xf0\x9f\x98\x80");  // é, €, an emoji
  EXPECT_EQ(printable(""), "");
}

TEST(Printable, ControlCharactersAreEscaped) {
  EXPECT_EQ(printable("\x1b[2J\abad"), "\\x1b[2J\\x07bad");
  EXPECT_EQ(printable("a\nb\tc\rd"), "a\\x0ab\\x09c\\x0dd");
  EXPECT_EQ(printable(std::string("nul\0x", 5)), "nul\\x00x");
  EXPECT_EQ(printable("del\x7f"), "del\\x7f");
}

TEST(Printable, BytesOfNoValidSequenceAreEscaped) {
  EXPECT_EQ(printable("bad\xff"), "bad\\xff");
  EXPECT_EQ(printable("cut \xc3"), "cut \\xc3");                     // a lead byte at the end
  EXPECT_EQ(printable("\xc3x"), "\\xc3x");                           // a lead byte without follower
  EXPECT_EQ(printable("\x80"), "\\x80");                             // a lone continuation byte
  EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf");                    // overlong '/'
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a UTF-16 surrogate
  EXPECT_EQ(printable("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
}

}  // namespace
}  // namespace tasklens::report
