#include "mend/base/utf8.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace mend {
namespace {

const std::vector<std::string>& MultiByteSamples() {
  static const std::vector<std::string> samples = {
      "Não há lição sem erro: ação, coração, pão.",  // Portuguese (2-byte)
      "مرحبا بالعالم، هذا اختبار",                   // Arabic (2-byte)
      "日本語のテキスト",                            // CJK (3-byte)
      "ok 🙂 fine 👩‍💻 done 🇧🇷",      // emoji (4-byte, ZWJ, flags)
      "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80z",      // 1, 2, 3, 4 bytes in a row
  };
  return samples;
}

TEST(Utf8Test, DecodesEachSequenceLength) {
  EXPECT_EQ(DecodeUtf8Rune("A").code_point, U'A');
  EXPECT_EQ(DecodeUtf8Rune("\xC3\xA9").code_point, U'\u00E9');
  EXPECT_EQ(DecodeUtf8Rune("\xE2\x82\xAC").code_point, U'\u20AC');
  const Utf8Rune grin = DecodeUtf8Rune("\xF0\x9F\x98\x80");
  EXPECT_EQ(grin.code_point, U'\U0001F600');
  EXPECT_EQ(grin.size, 4u);
  EXPECT_TRUE(grin.valid);
  EXPECT_EQ(DecodeUtf8Rune("").size, 0u);
}

TEST(Utf8Test, ValidTextIsValid) {
  for (const std::string& s : MultiByteSamples()) EXPECT_TRUE(IsValidUtf8(s)) << s;
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("\xF4\x8F\xBF\xBF"));  // U+10FFFF
}

TEST(Utf8Test, RejectsMalformedSequences) {
  const std::vector<std::string> bad = {
      "\x80",              // stray continuation
      "\xC3",              // truncated 2-byte
      "\xE2\x82",          // truncated 3-byte
      "\xC0\xAF",          // overlong '/'
      "\xE0\x80\xAF",      // overlong 3-byte
      "\xF0\x80\x80\xAF",  // overlong 4-byte
      "\xED\xA0\x80",      // surrogate U+D800
      "\xED\xBF\xBF",      // surrogate U+DFFF
      "\xF4\x90\x80\x80",  // above U+10FFFF
      "\xFF",              // never valid
      "abc\xC3(",          // lead followed by ASCII
  };
  for (const std::string& s : bad) EXPECT_FALSE(IsValidUtf8(s)) << testing::PrintToString(s);
}

TEST(Utf8Test, SanitizeReplacesEachInvalidByte) {
  EXPECT_EQ(SanitizeUtf8("a\xFF"
                         "b"),
            "a\uFFFDb");
  EXPECT_EQ(SanitizeUtf8("\xC0\xAF"), "\uFFFD\uFFFD");            // overlong
  EXPECT_EQ(SanitizeUtf8("\xED\xA0\x80"), "\uFFFD\uFFFD\uFFFD");  // surrogate
  EXPECT_EQ(SanitizeUtf8("x\xE2\x82"), "x\uFFFD\uFFFD");          // truncated at the end
}

TEST(Utf8Test, SanitizeWithoutNulReplacesNulBytesAndInvalidBytes) {
  EXPECT_EQ(SanitizeUtf8WithoutNul(std::string("a\0b\xff", 4)),
            "a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD");
  EXPECT_EQ(SanitizeUtf8WithoutNul("caf\xC3\xA9"), "caf\xC3\xA9");
  EXPECT_EQ(SanitizeUtf8WithoutNul(""), "");
}

TEST(Utf8Test, SanitizeLeavesValidTextUnchanged) {
  for (const std::string& s : MultiByteSamples()) EXPECT_EQ(SanitizeUtf8(s), s);
  EXPECT_TRUE(IsValidUtf8(SanitizeUtf8("\xF0\x9F\x98 \xED\xBF\xBF \x80\x80")));
}

TEST(Utf8Test, TruncateBytesNeverSplitsACodePoint) {
  for (const std::string& s : MultiByteSamples()) {
    for (std::size_t max = 0; max <= s.size() + 1; ++max) {
      const std::string cut = TruncateUtf8Bytes(s, max);
      EXPECT_LE(cut.size(), max);
      EXPECT_TRUE(IsValidUtf8(cut)) << s << " at " << max;
      EXPECT_EQ(s.compare(0, cut.size(), cut), 0);
      // The cut is the longest possible: at most three bytes short of the limit.
      EXPECT_GE(cut.size() + 3, std::min(max, s.size()));
    }
  }
}

TEST(Utf8Test, TruncateBytesKeepsWholeSequences) {
  const std::string s = "a\xF0\x9F\x98\x80";
  EXPECT_EQ(TruncateUtf8Bytes(s, 1), "a");
  EXPECT_EQ(TruncateUtf8Bytes(s, 4), "a");
  EXPECT_EQ(TruncateUtf8Bytes(s, 5), s);
  EXPECT_EQ(TruncateUtf8Bytes("\x80\x80\x80\x80\x80", 2), "\x80\x80");
}

TEST(Utf8Test, TruncateCharsCountsCodePoints) {
  EXPECT_EQ(TruncateUtf8Chars("ação", 2), "aç");
  EXPECT_EQ(TruncateUtf8Chars("🙂🙂🙂", 2), "🙂🙂");
  EXPECT_EQ(TruncateUtf8Chars("abc", 10), "abc");
  EXPECT_EQ(TruncateUtf8Chars("abc", 0), "");
  // An invalid byte counts as one unit, as a Go rune loop sees it.
  EXPECT_EQ(TruncateUtf8Chars("\xFF"
                              "ab",
                              2),
            "\xFF"
            "a");
}

TEST(Utf8Test, TruncateCharsYieldsValidPrefixAtEveryCount) {
  for (const std::string& s : MultiByteSamples()) {
    const std::size_t total = CountUtf8Chars(s);
    for (std::size_t n = 0; n <= total + 1; ++n) {
      const std::string cut = TruncateUtf8Chars(s, n);
      EXPECT_TRUE(IsValidUtf8(cut));
      EXPECT_EQ(CountUtf8Chars(cut), std::min(n, total));
      EXPECT_EQ(s.compare(0, cut.size(), cut), 0);
    }
  }
}

TEST(Utf8Test, CountsCodePoints) {
  EXPECT_EQ(CountUtf8Chars("ação"), 4u);
  EXPECT_EQ(CountUtf8Chars("a\xF0\x9F\x98\x80z"), 3u);
  EXPECT_EQ(CountUtf8Chars("\xE2\x82"), 2u);
}

TEST(Utf8Test, AppendEncodesAndReplacesSurrogates) {
  std::string out;
  AppendUtf8(U'\U0001F600', out);
  AppendUtf8(0xD800, out);
  AppendUtf8(0x110000, out);
  EXPECT_EQ(out, "\xF0\x9F\x98\x80\uFFFD\uFFFD");
}

TEST(Utf8Test, CollapseWhitespaceJoinsFieldsWithOneSpace) {
  EXPECT_EQ(CollapseWhitespace("  a \t\n b\r\n\nc  "), "a b c");
  EXPECT_EQ(CollapseWhitespace("não\u00A0há\u3000erro"), "não há erro");
  EXPECT_EQ(CollapseWhitespace(" \n\t "), "");
  EXPECT_EQ(CollapseWhitespace("x\xFFy  z"), "x\xFFy z");
}

TEST(Utf8Test, TrimRemovesUnicodeSpaceAtBothEnds) {
  EXPECT_EQ(Trim("  hi there \n"), "hi there");
  EXPECT_EQ(Trim("\u2003ação\u00A0"), "ação");
  EXPECT_EQ(Trim(" \t "), "");
  EXPECT_EQ(Trim(""), "");
}

TEST(Utf8Test, ToLowerRuneIsTheSimpleUnicodeMapping) {
  EXPECT_EQ(ToLowerRune('Q'), U'q');
  EXPECT_EQ(ToLowerRune('q'), U'q');
  EXPECT_EQ(ToLowerRune(U'\u0130'), U'i');               // İ: the simple mapping, not i + dot
  EXPECT_EQ(ToLowerRune(U'\u0100'), U'\u0101');          // Ā: a capital of an alternating run
  EXPECT_EQ(ToLowerRune(U'\u0101'), U'\u0101');          // ā: its small letter stays
  EXPECT_EQ(ToLowerRune(U'\u1E9E'), U'\u00DF');          // capital sharp s
  EXPECT_EQ(ToLowerRune(U'\u2C6F'), U'\u0250');          // turned A
  EXPECT_EQ(ToLowerRune(U'\U00010400'), U'\U00010428');  // Deseret
  EXPECT_EQ(ToLowerRune(U'\u00D7'), U'\u00D7');          // multiplication sign: not a letter
  EXPECT_EQ(ToLowerRune(U'\u4E2D'), U'\u4E2D');          // no case
}

TEST(Utf8Test, ToLowerUtf8ReplacesInvalidBytesLikeGo) {
  EXPECT_EQ(ToLowerUtf8("ÀB\xffΣ"), "àb\uFFFDσ");
  EXPECT_EQ(ToLowerUtf8(""), "");
}

TEST(Utf8Test, ToLowerAsciiLeavesNonAsciiAlone) {
  EXPECT_EQ(ToLowerAscii("Go, REFACTOR-Large"), "go, refactor-large");
  EXPECT_EQ(ToLowerAscii("ÁÇÃO"), "ÁÇÃo");
}

}  // namespace
}  // namespace mend
