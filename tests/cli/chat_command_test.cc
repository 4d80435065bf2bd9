// `mend chat`'s slash commands, in process on a real temporary home with a scripted model.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/cli/cli_home_test.h"

namespace mend::cli {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

class ChatCommandTest : public CliHomeTest {
 protected:
  void SetUp() override {
    CliHomeTest::SetUp();
    Write(agent_ + "/agent.toml", "name = \"helper\"\ntools = []\n");
    Write(agent_ + "/instructions.md", "Help the user.\n");
    Script(R"([])");
  }
};

TEST_F(ChatCommandTest, HelpListsEverySlashCommand) {
  ASSERT_EQ(MendWithModel({"chat", agent_}, "/help\n/quit\n"), 0) << err();
  EXPECT_THAT(
      out(), AllOf(HasSubstr("/help "), HasSubstr("/pending "), HasSubstr("/resume <run-id> "),
                   HasSubstr("/memory longterm "), HasSubstr("/config quality "),
                   HasSubstr("/reflect "), HasSubstr("/reflect retry <id> "), HasSubstr("/quit ")));
  EXPECT_THAT(err(), Not(HasSubstr("unknown chat command")));
  // Each command on a line of its own, with what it does.
  EXPECT_THAT(out(), HasSubstr("\n  /pending "));
}

TEST_F(ChatCommandTest, AnUnknownCommandPointsToHelp) {
  ASSERT_EQ(MendWithModel({"chat", agent_}, "/bogus\n/quit\n"), 0) << err();
  EXPECT_THAT(err(), HasSubstr("mend: unknown chat command /bogus; /help lists the commands\n"));
}

}  // namespace
}  // namespace mend::cli
