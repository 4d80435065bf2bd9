#include "mend/improve/cases.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "mend/base/memory_file_system.h"
#include "tests/support/status_matchers.h"

namespace mend::improve {
namespace {

using ::mend::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

TEST(ParseCasesJsonlTest, ParsesEveryField) {
  const auto cases = ParseCasesJsonl(
      R"({"id":"fix-1","task":"Fix the bug","workspace":"fixtures/bug","check_args":["--strict","-v"],"tags":["py","easy"]})",
      "suite");
  ASSERT_TRUE(cases.ok()) << cases.status();
  ASSERT_EQ(cases->size(), 1u);
  const Case& c = (*cases)[0];
  EXPECT_EQ(c.id, "fix-1");
  EXPECT_EQ(c.task, "Fix the bug");
  EXPECT_EQ(c.workspace, "suite/fixtures/bug");
  EXPECT_THAT(c.check_args, ElementsAre("--strict", "-v"));
  EXPECT_THAT(c.tags, ElementsAre("py", "easy"));
}

TEST(ParseCasesJsonlTest, OptionalFieldsDefaultAndIdsNameTheirLine) {
  const auto cases = ParseCasesJsonl("\n{\"task\":\"a\"}\r\n   \n{\"task\":\"b\"}", "");
  ASSERT_TRUE(cases.ok()) << cases.status();
  ASSERT_EQ(cases->size(), 2u);
  EXPECT_EQ((*cases)[0].id, "case-2");
  EXPECT_EQ((*cases)[1].id, "case-4");
  EXPECT_EQ((*cases)[0].workspace, "");
  EXPECT_THAT((*cases)[0].check_args, IsEmpty());
  EXPECT_THAT((*cases)[0].tags, IsEmpty());
}

TEST(ParseCasesJsonlTest, AbsoluteWorkspaceIsKept) {
  const auto cases = ParseCasesJsonl(R"({"task":"t","workspace":"/srv/fixture"})", "suite");
  ASSERT_TRUE(cases.ok()) << cases.status();
  EXPECT_EQ((*cases)[0].workspace, "/srv/fixture");
}

TEST(ParseCasesJsonlTest, NullOptionalMembersAreAbsent) {
  const auto cases = ParseCasesJsonl(R"({"task":"t","id":null,"tags":null,"check_args":null})", "");
  ASSERT_TRUE(cases.ok()) << cases.status();
  EXPECT_EQ((*cases)[0].id, "case-1");
}

struct BadLine {
  const char* text;
  const char* message;
};

class ParseCasesJsonlErrorTest : public ::testing::TestWithParam<BadLine> {};

TEST_P(ParseCasesJsonlErrorTest, IsInvalidArgumentNamingTheLine) {
  const std::string text = std::string("{\"task\":\"ok\"}\n") + GetParam().text + "\n";
  EXPECT_THAT(ParseCasesJsonl(text, ""),
              StatusIs(StatusCode::kInvalidArgument,
                       ::testing::AllOf(StartsWith("line 2: "), HasSubstr(GetParam().message))));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ParseCasesJsonlErrorTest,
    ::testing::Values(BadLine{"{\"task\":", "malformed JSON"},
                      BadLine{"[1,2]", "must be a JSON object"}, BadLine{"{\"id\":\"x\"}", "task"},
                      BadLine{"{\"task\":\"  \"}", "task is empty"},
                      BadLine{"{\"task\":3}", "task"},
                      BadLine{"{\"task\":\"t\",\"expected\":\"x\"}", "unknown key \"expected\""},
                      BadLine{"{\"task\":\"t\",\"id\":\"../x\"}", "invalid id"},
                      BadLine{"{\"task\":\"t\",\"id\":\".hidden\"}", "invalid id"},
                      BadLine{"{\"task\":\"t\",\"id\":\"\"}", "invalid id"},
                      BadLine{"{\"task\":\"t\",\"id\":\"a b\"}", "invalid id"},
                      BadLine{"{\"task\":\"t\",\"workspace\":\"\"}", "workspace is empty"},
                      BadLine{"{\"task\":\"t\",\"check_args\":\"-v\"}", "check_args"},
                      BadLine{"{\"task\":\"t\",\"tags\":[1]}", "tags must hold strings"},
                      BadLine{"{\"task\":\"t\",\"id\":\"case-1\"}",
                              "duplicate id \"case-1\" (first used on line 1)"},
                      BadLine{"{\"task\":\"\xff\"}", "malformed JSON"}));

TEST(ParseCasesJsonlTest, TooLongIdIsRejected) {
  const std::string text = R"({"task":"t","id":")" + std::string(kMaxCaseIdLength + 1, 'a') + "\"}";
  EXPECT_THAT(ParseCasesJsonl(text, ""), StatusIs(StatusCode::kInvalidArgument));
  const std::string longest = R"({"task":"t","id":")" + std::string(kMaxCaseIdLength, 'a') + "\"}";
  EXPECT_TRUE(ParseCasesJsonl(longest, "").ok());
}

TEST(ParseCasesJsonlTest, TextWithoutCasesIsInvalid) {
  EXPECT_THAT(ParseCasesJsonl("", ""), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseCasesJsonl("\n  \r\n", ""),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("no cases")));
}

TEST(LoadCasesFileTest, ResolvesWorkspacesAgainstTheFilesFolder) {
  MemoryFileSystem fs;
  MEND_ASSERT_OK(fs.CreateDirs("suite"));
  MEND_ASSERT_OK(
      WriteFileAtomically(fs, "suite/cases.jsonl", "{\"task\":\"t\",\"workspace\":\"fx/one\"}\n"));
  const auto cases = LoadCasesFile(fs, "suite/cases.jsonl");
  ASSERT_TRUE(cases.ok()) << cases.status();
  EXPECT_EQ((*cases)[0].workspace, "suite/fx/one");
}

TEST(LoadCasesFileTest, MissingFileIsNotFound) {
  MemoryFileSystem fs;
  EXPECT_THAT(LoadCasesFile(fs, "nope.jsonl"),
              StatusIs(StatusCode::kNotFound, HasSubstr("nope.jsonl")));
}

TEST(LoadCasesFileTest, ParseErrorsNameTheFileAndLine) {
  MemoryFileSystem fs;
  MEND_ASSERT_OK(WriteFileAtomically(fs, "c.jsonl", "{\"task\":\"t\"}\n{\"tsak\":\"t\"}\n"));
  EXPECT_THAT(LoadCasesFile(fs, "c.jsonl"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("c.jsonl: line 2: unknown key")));
}

}  // namespace
}  // namespace mend::improve
