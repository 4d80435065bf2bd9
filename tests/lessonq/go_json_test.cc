#include "lessonq/go_json.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace mend::lessonq {
namespace {

std::string GoJson(std::string_view s) {
  std::string out;
  AppendGoJsonString(s, out);
  return out;
}

// Each expectation is what Go 1.19's json.Marshal returns for the same Go string.
TEST(GoJsonTest, EveryInvalidByteIsOneReplacement) {
  EXPECT_EQ(GoJson(""), R"("")");
  EXPECT_EQ(GoJson("\x80"), R"("\ufffd")");                      // stray continuation byte
  EXPECT_EQ(GoJson("ok\xe2\x82"), R"("ok\ufffd\ufffd")");        // truncated at the end
  EXPECT_EQ(GoJson("\xed\xa0\x80"), R"("\ufffd\ufffd\ufffd")");  // a surrogate
  EXPECT_EQ(GoJson("\xc0\x80"), R"("\ufffd\ufffd")");            // an overlong NUL
  EXPECT_EQ(GoJson("\xf4\x90\x80\x80"), R"("\ufffd\ufffd\ufffd\ufffd")");  // above U+10FFFF
  EXPECT_EQ(GoJson("\xf0\x9f\x99"), R"("\ufffd\ufffd\ufffd")");            // a cut emoji
}

TEST(GoJsonTest, ControlBytesQuotesAndSlash) {
  EXPECT_EQ(GoJson(std::string("\x00\x1f\x7f\"\\/", 6)), "\"\\u0000\\u001f\x7f\\\"\\\\/\"");
  EXPECT_EQ(GoJson("\b\f\n\r\t"), R"("\u0008\u000c\n\r\t")");
}

TEST(GoJsonTest, HtmlAndLineSeparatorsAreEscapedValidTextIsNot) {
  EXPECT_EQ(GoJson("<a href=\"x\">&amp;</a>"),
            R"("\u003ca href=\"x\"\u003e\u0026amp;\u003c/a\u003e")");
  EXPECT_EQ(GoJson("\u2028\u2029\u2027\u202a"), "\"\\u2028\\u2029\u2027\u202a\"");
  EXPECT_EQ(GoJson("ação 大 🙂 \ufffd"), "\"ação 大 🙂 \ufffd\"");
}

}  // namespace
}  // namespace mend::lessonq
