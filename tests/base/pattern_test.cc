#include "mend/base/pattern.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "mend/base/utf8.h"

namespace mend {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

bool Matches(std::string_view pattern, std::string_view subject) {
  Result<Pattern> re = Pattern::Compile(pattern);
  EXPECT_TRUE(re.ok()) << pattern << ": " << re.status().message();
  return re.ok() && re->Search(subject);
}

std::string CompileError(std::string_view pattern) {
  Result<Pattern> re = Pattern::Compile(pattern);
  EXPECT_FALSE(re.ok()) << pattern;
  EXPECT_EQ(re.status().code(), StatusCode::kInvalidArgument);
  return std::string(re.status().message());
}

TEST(PatternTest, SearchesAnywhereAndHonoursAnchors) {
  EXPECT_TRUE(Matches("[0-9]+$", "abc123"));
  EXPECT_FALSE(Matches("^[0-9]+$", "abc123"));
  EXPECT_TRUE(Matches("^ab", "abc"));
  EXPECT_FALSE(Matches("^bc", "abc"));
  EXPECT_FALSE(Matches("c$", "abc\n"));
  EXPECT_TRUE(Matches("", "anything"));
}

TEST(PatternTest, KnowsTheEcmaScriptSyntaxThatSchemasUse) {
  EXPECT_TRUE(Matches(R"(^\d{4}-\d{2}-\d{2}$)", "2026-12-03"));
  EXPECT_FALSE(Matches(R"(^\d{4}-\d{2}-\d{2}$)", "2026-1-03"));
  EXPECT_TRUE(Matches(R"(^\w+@\w+\.com$)", "ana@example.com"));
  EXPECT_TRUE(Matches(R"(\bword\b)", "a word here"));
  EXPECT_FALSE(Matches(R"(\bword\b)", "swordfish"));
  EXPECT_TRUE(Matches(R"(^a\s+b$)", "a \t b"));
  EXPECT_TRUE(Matches("^(?:ab|cd){2,3}$", "abcdab"));
  EXPECT_FALSE(Matches("^(?:ab|cd){2,3}$", "ab"));
  EXPECT_TRUE(Matches("^a.*?b$", "axxb"));
  EXPECT_TRUE(Matches(R"(^[^/\\]+$)", "plain.txt"));
  EXPECT_FALSE(Matches(R"(^[^/\\]+$)", "dir/file"));
  EXPECT_TRUE(Matches(R"(^\/api\/v\d$)", "/api/v1"));
  EXPECT_FALSE(Matches("^abc$", "ABC"));
}

TEST(PatternTest, ReadsUnicodeEscapesAndCountsCodePoints) {
  EXPECT_TRUE(Matches(R"(^caf\u00e9$)", "café"));
  EXPECT_TRUE(Matches(R"(^[\u0600-\u06FF]+$)", "مرحبا"));
  EXPECT_FALSE(Matches(R"(^[\u0600-\u06FF]+$)", "hello"));
  // An escaped backslash before "u" is a backslash, not the start of an escape.
  EXPECT_TRUE(Matches(R"(^\\u0041$)", R"(\u0041)"));
  EXPECT_FALSE(Matches(R"(^\\u0041$)", "A"));
  EXPECT_TRUE(Matches("^.{3}$", "açã"));
  EXPECT_TRUE(Matches("^.{4}$", "🙂ok!"));
}

TEST(PatternTest, ReadsEcmaScriptNamedGroups) {
  EXPECT_TRUE(Matches(R"(^(?<year>\d{4})-(?<month>\d{2})$)", "2026-12"));
  EXPECT_FALSE(Matches(R"(^(?<year>\d{4})$)", "26"));
  // Inside a class the three characters are only characters.
  EXPECT_TRUE(Matches("^[(?<]+$", "(?<"));
  EXPECT_FALSE(Matches("^[(?<]+$", "(?P<"));
}

// The two places where RE2 reads a pattern otherwise than ECMAScript (pattern.h says so).
TEST(PatternTest, WhitespaceIsAsciiAndDotExcludesOnlyNewline) {
  EXPECT_TRUE(Matches(R"(^\s$)", "\t"));
  EXPECT_FALSE(Matches(R"(\s)", "\u00a0"));
  EXPECT_TRUE(Matches("^.$", "\r"));
  EXPECT_FALSE(Matches("^.$", "\n"));
}

TEST(PatternTest, SubjectsThatAreNotUtf8AreSearchedWithoutHarm) {
  EXPECT_TRUE(Matches("abc",
                      "\xff"
                      "abc\xfe"));
  EXPECT_FALSE(Matches("^.$", "\xff"));
  EXPECT_FALSE(Matches("^[^a]$", "\xff"));
  EXPECT_TRUE(Matches("^a", std::string("a\0b", 3)));
}

// Each of these makes a backtracking engine (std::regex, which mend used before) take time
// exponential or high-polynomial in the subject's length, or recurse once per character until the
// stack runs out. Run in linear time, each is one pass over a megabyte.
TEST(PatternTest, PatternsThatMakeBacktrackingExplodeRunInOnePass) {
  const std::string as(1 << 20, 'a');
  EXPECT_FALSE(Matches("(a*)*b", as));
  EXPECT_FALSE(Matches("^(a|a)*$", as + "!"));
  EXPECT_FALSE(Matches("^(a|aa)+c$", as));
  EXPECT_FALSE(Matches("a*a*a*a*a*a*a*a*a*a*b", as));
  // The shape of the tool_args_fuzz input that ran for more than 25 s on std::regex.
  EXPECT_FALSE(Matches(R"(^a(a*|b)*z+[-84](-[a-typez]+)*$)", as));
  EXPECT_TRUE(Matches("^(a|b)*$", as));
  EXPECT_TRUE(Matches("^.*$", std::string(8 << 20, 'x')));
}

TEST(PatternTest, BacktrackingFeaturesAreRefusedWithTheReason) {
  const auto unsupported = HasSubstr("backreferences and lookaround are not supported");
  EXPECT_THAT(CompileError(R"((a)\1)"),
              AllOf(HasSubstr("invalid pattern \"(a)\\\\1\""), unsupported));
  EXPECT_THAT(CompileError("a(?=b)"), unsupported);
  EXPECT_THAT(CompileError("a(?!b)"), unsupported);
  EXPECT_THAT(CompileError("(?<=a)b"), unsupported);
  EXPECT_THAT(CompileError("(?<!a)b"), unsupported);
  EXPECT_THAT(CompileError(R"((?<y>a)\k<y>)"), unsupported);
  EXPECT_THAT(CompileError("(?z)a"), Not(unsupported));
}

TEST(PatternTest, MalformedPatternsAreRefusedAndNamed) {
  EXPECT_THAT(CompileError("(unclosed"),
              AllOf(HasSubstr("invalid pattern \"(unclosed\""), HasSubstr("missing )")));
  EXPECT_THAT(CompileError("[a-"), HasSubstr("invalid pattern"));
  EXPECT_THAT(CompileError("a**"), HasSubstr("bad repetition operator"));
  EXPECT_THAT(CompileError("*a"), HasSubstr("no argument for repetition operator"));
  EXPECT_THAT(CompileError("a{1001}"), HasSubstr("invalid repetition size"));
  EXPECT_THAT(CompileError("trailing\\"), HasSubstr("trailing \\"));
  // A message about a pattern that is not UTF-8 is still valid UTF-8.
  const std::string message = CompileError("ab\xff(");
  EXPECT_TRUE(IsValidUtf8(message)) << message;
}

TEST(PatternTest, ProgramsBeyondTheMemoryBoundAreRefused) {
  // Nested counts multiply; RE2 refuses a total above 1000 while parsing.
  EXPECT_THAT(CompileError("((a{100}){100})"), HasSubstr("invalid repetition size"));
  // Every Unicode letter, a thousand times over: more program than RE2's few megabytes allow.
  EXPECT_THAT(CompileError(R"(\pL{1000})"), HasSubstr("pattern too large"));
}

TEST(PatternTest, OneCompiledPatternServesSeveralThreads) {
  Result<Pattern> re = Pattern::Compile(R"(^(\w+\s?)+$)");
  ASSERT_TRUE(re.ok());
  const Pattern copy = *re;
  std::vector<std::thread> threads;
  std::vector<int> found(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        found[t] += copy.Search("many words in a line " + std::to_string(i)) ? 1 : 0;
        found[t] += re->Search("not: this one") ? 1 : 0;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(found[t], 200);
}

}  // namespace
}  // namespace mend
