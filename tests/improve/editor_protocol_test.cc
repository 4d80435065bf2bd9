#include "mend/improve/editor_protocol.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "tests/support/status_matchers.h"

namespace mend::improve {
namespace {

using ::mend::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string FileBlock(std::string_view path, std::string_view content) {
  return "<file path=\"" + std::string(path) + "\">\n" + std::string(content) + "</file>\n";
}

TEST(ParseEditorReplyTest, ParsesEditsAndRationale) {
  const std::string reply = "\n" + FileBlock("instructions.md", "Be brief.\n\nCheck twice.\n") +
                            "\n" + FileBlock("skills/triage.md", "---\nname: triage\n---\nx\n") +
                            "<rationale>\n  Two failures skipped the check.\n</rationale>\n";
  const auto parsed = ParseEditorReply(reply);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_THAT(parsed->edits,
              ElementsAre(FileEdit{"instructions.md", "Be brief.\n\nCheck twice.\n"},
                          FileEdit{"skills/triage.md", "---\nname: triage\n---\nx\n"}));
  EXPECT_EQ(parsed->rationale, "Two failures skipped the check.");
  EXPECT_THAT(parsed->refused, IsEmpty());
}

TEST(ParseEditorReplyTest, RationaleAloneIsAValidNoChangeReply) {
  const auto parsed = ParseEditorReply("<rationale>\nnothing to change\n</rationale>");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_THAT(parsed->edits, IsEmpty());
  EXPECT_EQ(parsed->rationale, "nothing to change");
}

TEST(ParseEditorReplyTest, CrLfLineEndsBecomeLf) {
  const auto parsed = ParseEditorReply("<file path=\"instructions.md\">\r\na\r\nb\r\n</file>\r\n");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_THAT(parsed->edits, ElementsAre(FileEdit{"instructions.md", "a\nb\n"}));
}

TEST(ParseEditorReplyTest, IndentedTagsAreAccepted) {
  const auto parsed = ParseEditorReply("  <file path=\"instructions.md\">\n  x\n  </file>  \n");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_THAT(parsed->edits, ElementsAre(FileEdit{"instructions.md", "  x\n"}));
}

TEST(ParseEditorReplyTest, TextThatOnlyResemblesATagIsContent) {
  const std::string content = "<filename> is a placeholder\n<rationales>\n  </files>\n";
  const auto parsed = ParseEditorReply(FileBlock("instructions.md", content));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_THAT(parsed->edits, ElementsAre(FileEdit{"instructions.md", content}));
}

struct RefusalCase {
  const char* path;
  EditRefusal refusal;
};

class EditorRefusalTest : public ::testing::TestWithParam<RefusalCase> {};

TEST_P(EditorRefusalTest, PathIsRefusedAndRecordedNeverEdited) {
  const std::string reply =
      FileBlock(GetParam().path, "payload\n") + FileBlock("instructions.md", "kept\n");
  const auto parsed = ParseEditorReply(reply);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_THAT(parsed->edits, ElementsAre(FileEdit{"instructions.md", "kept\n"}));
  ASSERT_EQ(parsed->refused.size(), 1u);
  EXPECT_EQ(parsed->refused[0].path, GetParam().path);
  EXPECT_EQ(parsed->refused[0].refusal, GetParam().refusal)
      << EditRefusalName(parsed->refused[0].refusal);
  EXPECT_THAT(parsed->refused[0].reason, HasSubstr(GetParam().path));
  EXPECT_EQ(RefusalForPath(GetParam().path), GetParam().refusal);
}

INSTANTIATE_TEST_SUITE_P(
    Paths, EditorRefusalTest,
    ::testing::Values(RefusalCase{"agent.toml", EditRefusal::kProtectedPath},
                      RefusalCase{"tools/x.toml", EditRefusal::kProtectedPath},
                      RefusalCase{"tools/x.md", EditRefusal::kProtectedPath},
                      RefusalCase{"limits.toml", EditRefusal::kProtectedPath},
                      RefusalCase{"INSTRUCTIONS.md", EditRefusal::kProtectedPath},
                      RefusalCase{"instructions.md.bak", EditRefusal::kProtectedPath},
                      RefusalCase{"notes.md", EditRefusal::kProtectedPath},
                      RefusalCase{"skills", EditRefusal::kProtectedPath},
                      RefusalCase{"../x.md", EditRefusal::kParentReference},
                      RefusalCase{"skills/../agent.toml", EditRefusal::kParentReference},
                      RefusalCase{"skills/..", EditRefusal::kParentReference},
                      RefusalCase{"/etc/passwd", EditRefusal::kAbsolutePath},
                      RefusalCase{"/instructions.md", EditRefusal::kAbsolutePath},
                      RefusalCase{"C:/x.md", EditRefusal::kAbsolutePath},
                      RefusalCase{"./instructions.md", EditRefusal::kNonCanonicalPath},
                      RefusalCase{"skills//x.md", EditRefusal::kNonCanonicalPath},
                      RefusalCase{"skills/", EditRefusal::kNonCanonicalPath},
                      RefusalCase{"skills\\x.md", EditRefusal::kNonCanonicalPath},
                      RefusalCase{"skills/a/b.md", EditRefusal::kNestedDirectory},
                      RefusalCase{"skills/x.txt", EditRefusal::kWrongExtension},
                      RefusalCase{"skills/x.md.txt", EditRefusal::kWrongExtension},
                      RefusalCase{"skills/.md", EditRefusal::kInvalidSkillName},
                      RefusalCase{"skills/.hidden.md", EditRefusal::kInvalidSkillName},
                      RefusalCase{"skills/Bad.md", EditRefusal::kInvalidSkillName},
                      RefusalCase{"skills/a b.md", EditRefusal::kInvalidSkillName},
                      RefusalCase{"skills/-x.md", EditRefusal::kInvalidSkillName}));

TEST(RefusalForPathTest, AllowsOnlyTheEditableSet) {
  EXPECT_EQ(RefusalForPath("instructions.md"), std::nullopt);
  EXPECT_EQ(RefusalForPath("skills/triage.md"), std::nullopt);
  EXPECT_EQ(RefusalForPath("skills/0_fix-it.md"), std::nullopt);
  EXPECT_EQ(RefusalForPath("skills/" + std::string(64, 'a') + ".md"), std::nullopt);
  EXPECT_EQ(RefusalForPath("skills/" + std::string(65, 'a') + ".md"),
            EditRefusal::kInvalidSkillName);
  EXPECT_EQ(RefusalForPath(""), EditRefusal::kNonCanonicalPath);
}

// Found by editor_reply_fuzz: "\xA3:x" was refused as a drive path from its raw bytes, but reported
// as "\uFFFD:x", which no rule calls absolute. Invalid UTF-8 is refused first, as non-canonical.
TEST(RefusalForPathTest, APathThatIsNotUtf8IsNonCanonical) {
  EXPECT_EQ(RefusalForPath("\xA3:tsuc//2ts.md"), EditRefusal::kNonCanonicalPath);
  EXPECT_EQ(RefusalForPath("skills/\xFF.md"), EditRefusal::kNonCanonicalPath);
  const auto parsed = ParseEditorReply(FileBlock("\xA3:skills.md", "text\n"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_THAT(parsed->edits, IsEmpty());
  ASSERT_EQ(parsed->refused.size(), 1u);
  EXPECT_EQ(parsed->refused[0].refusal, EditRefusal::kNonCanonicalPath);
  EXPECT_EQ(parsed->refused[0].path, "\xEF\xBF\xBD:skills.md");
}

TEST(ParseEditorReplyTest, InvalidUtf8ContentIsRefused) {
  const auto parsed = ParseEditorReply(FileBlock("skills/x.md", "bad \xFF byte\n"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_THAT(parsed->edits, IsEmpty());
  ASSERT_EQ(parsed->refused.size(), 1u);
  EXPECT_EQ(parsed->refused[0].refusal, EditRefusal::kInvalidContent);
}

TEST(ParseEditorReplyTest, OversizedContentIsRefused) {
  const std::string line(1023, 'x');
  std::string content;
  while (content.size() <= kMaxEditBytes) content += line + "\n";
  const auto parsed = ParseEditorReply(FileBlock("instructions.md", content));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_THAT(parsed->edits, IsEmpty());
  ASSERT_EQ(parsed->refused.size(), 1u);
  EXPECT_EQ(parsed->refused[0].refusal, EditRefusal::kTooLarge);
}

TEST(ParseEditorReplyTest, InvalidUtf8PathIsRecordedRepaired) {
  const auto parsed = ParseEditorReply(FileBlock("x\xFF.md", "a\n"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->refused.size(), 1u);
  EXPECT_EQ(parsed->refused[0].path, "x\xEF\xBF\xBD.md");
}

struct Malformed {
  const char* reply;
  const char* message;
};

class ParseEditorReplyErrorTest : public ::testing::TestWithParam<Malformed> {};

TEST_P(ParseEditorReplyErrorTest, IsInvalidArgument) {
  EXPECT_THAT(ParseEditorReply(GetParam().reply),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr(GetParam().message)));
}

INSTANTIATE_TEST_SUITE_P(
    Replies, ParseEditorReplyErrorTest,
    ::testing::Values(
        Malformed{"", "no <file> or <rationale> block"},
        Malformed{"\n \n", "no <file> or <rationale> block"},
        Malformed{"Sure! Here is the edit.", "line 1: text outside a block"},
        Malformed{"<file path=\"instructions.md\">\nx\n</file>\nDone.", "line 4: text outside"},
        Malformed{"<file path=\"instructions.md\">\nx\n", "opened on line 1 is not closed"},
        Malformed{"<rationale>\nx\n", "<rationale> block opened on line 1 is not closed"},
        Malformed{"</file>\n", "line 1: a closing tag without its opening"},
        Malformed{"</rationale>\n", "closing tag without its opening"},
        Malformed{"<file path='instructions.md'>\nx\n</file>\n", "line 1: malformed tag"},
        Malformed{"<file path=\"a.md\" mode=\"x\">\nx\n</file>\n", "malformed tag"},
        Malformed{"<file path=\"\">\nx\n</file>\n", "malformed tag"},
        Malformed{"<file>\nx\n</file>\n", "malformed tag"},
        Malformed{"<file path=\"instructions.md\">\nx\n</file >\n", "malformed tag"},
        Malformed{"<file path=\"instructions.md\">\n</file>\n",
                  "line 2: the <file> block is empty"},
        Malformed{"<file path=\"instructions.md\">\n \n\n</file>\n", "is empty"},
        Malformed{"<file path=\"instructions.md\">\nx\n<file path=\"skills/a.md\">\ny\n</file>\n",
                  "line 3: a tag inside the block opened on line 1"},
        Malformed{"<rationale>\n<file path=\"instructions.md\">\n</rationale>\n",
                  "a tag inside the block"},
        Malformed{"<file path=\"instructions.md\">\na\n</file>\n<file "
                  "path=\"instructions.md\">\nb\n</file>\n",
                  "line 4: a second block for \"instructions.md\""},
        Malformed{
            "<file path=\"agent.toml\">\na\n</file>\n<file path=\"agent.toml\">\nb\n</file>\n",
            "a second block for \"agent.toml\""},
        Malformed{"<rationale>\na\n</rationale>\n<rationale>\nb\n</rationale>\n",
                  "line 4: a second <rationale> block"}));

TEST(EditRefusalNameTest, NamesAreStable) {
  EXPECT_EQ(EditRefusalName(EditRefusal::kProtectedPath), "protected_path");
  EXPECT_EQ(EditRefusalName(EditRefusal::kParentReference), "parent_reference");
  EXPECT_EQ(EditRefusalName(EditRefusal::kTooLarge), "too_large");
}

}  // namespace
}  // namespace mend::improve
