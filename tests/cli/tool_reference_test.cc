// docs/tools.md is what the built-in tools' specs say, so the page cannot drift from them.
#include "cli/tool_reference.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "mend/agent/builtin_tools.h"
#include "tests/cli/cli_home_test.h"
#include "tests/cli/repository_file.h"

namespace mend::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ToolReferenceTest, DocsPageIsGeneratedFromTheSpecs) {
  Result<std::string> page = ToolReferenceMarkdown();
  MEND_ASSERT_OK(page);
  EXPECT_TRUE(ReadRepositoryFile("docs/tools.md") == *page)
      << "docs/tools.md is out of date: run `mend tool-reference > docs/tools.md` with the mend "
         "of this tree";
}

TEST(ToolReferenceTest, EveryBuiltinAndArgumentIsDocumented) {
  Result<std::string> page = ToolReferenceMarkdown();
  MEND_ASSERT_OK(page);
  for (const std::string& name : agent::BuiltinToolNames()) {
    EXPECT_THAT(*page, HasSubstr("\n## `" + name + "`\n")) << name;
  }
  EXPECT_THAT(*page, HasSubstr("| `old_string` | string | yes | not empty |"));
  EXPECT_THAT(*page, HasSubstr("| `new_string` | string | yes |"));
  EXPECT_THAT(*page, HasSubstr("| `offset` | integer | no | at least 1 | first line, 1-based |"));
  EXPECT_THAT(*page, HasSubstr("| `limit` | integer | no | at least 1 | number of lines |"));
  EXPECT_THAT(*page, HasSubstr("| `max_results` | integer | no | at least 1; at most 1000 |"));
  // The schema's own order, not the alphabet's.
  EXPECT_LT(page->find("| `path` | string | yes |"), page->find("| `offset` |"));
}

class ToolReferenceCommandTest : public CliHomeTest {};

TEST_F(ToolReferenceCommandTest, TheHiddenCommandPrintsThePageAndHelpLeavesItOut) {
  ASSERT_EQ(Mend({"tool-reference"}), 0) << err();
  EXPECT_EQ(out(), *ToolReferenceMarkdown());
  ASSERT_EQ(Mend({"--help"}), 0);
  EXPECT_THAT(out(), Not(HasSubstr("tool-reference")));
}

}  // namespace
}  // namespace mend::cli
