// CompleteChatLine: what Tab offers in `mend chat`, without a terminal.
#include "cli/chat_completion.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mend/lessonq/job.h"

namespace mend::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<std::string> Texts(const std::vector<Completion>& completions) {
  std::vector<std::string> texts;
  for (const Completion& c : completions) texts.push_back(c.text);
  return texts;
}

lessonq::Job DeadLetter(const std::string& id, const std::string& task, const std::string& error) {
  lessonq::Job job;
  job.id = id;
  job.request = {task, "", "", "error"};
  job.last_error = error;
  return job;
}

const std::vector<lessonq::Job> kDead = {
    DeadLetter("9e2c00000000007a", "deploy the payments service\nwith migrations",
               "parse: no lesson block"),
    DeadLetter("9e3d0000000000bc", "write release notes", ""),
    DeadLetter("a3f80000000000bc", "edit main.go", "timeout"),
};

TEST(CompleteChatLineTest, SlashCommandsByPrefix) {
  EXPECT_THAT(Texts(CompleteChatLine("/re", {})), ElementsAre("/reflect", "/resume"));
  EXPECT_THAT(
      Texts(CompleteChatLine("/", {})),
      ElementsAre("/reflect", "/memory", "/config", "/pending", "/resume", "/help", "/quit"));
  EXPECT_THAT(CompleteChatLine("/q", {}), ElementsAre(Completion{"/quit", "/quit"}));
}

TEST(CompleteChatLineTest, SubcommandsOfReflectMemoryAndConfig) {
  EXPECT_THAT(Texts(CompleteChatLine("/reflect ", {})),
              ElementsAre("list", "failed", "drain", "retry", "purge"));
  EXPECT_THAT(Texts(CompleteChatLine("/reflect  f", {})), ElementsAre("failed"));
  EXPECT_THAT(Texts(CompleteChatLine("/reflect p", {})), ElementsAre("purge"));
  EXPECT_THAT(Texts(CompleteChatLine("/memory l", {})), ElementsAre("longterm"));
  EXPECT_THAT(Texts(CompleteChatLine("/config ", {})), ElementsAre("quality"));
}

TEST(CompleteChatLineTest, DeadLetterIdsWithPreview) {
  const std::vector<Completion> all = CompleteChatLine("/reflect retry ", kDead);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].text, "9e2c00000000007a");
  EXPECT_EQ(all[0].display,
            "9e2c00000000007a  deploy the payments service... \u2014 parse: no lesson block");
  EXPECT_EQ(all[1].display, "9e3d0000000000bc  write release notes");

  EXPECT_THAT(Texts(CompleteChatLine("/reflect purge 9e", kDead)),
              ElementsAre("9e2c00000000007a", "9e3d0000000000bc"));
  EXPECT_THAT(Texts(CompleteChatLine("/reflect purge a3", kDead)), ElementsAre("a3f80000000000bc"));
}

TEST(CompleteChatLineTest, NothingFits) {
  EXPECT_THAT(CompleteChatLine("hello", kDead), IsEmpty());
  EXPECT_THAT(CompleteChatLine("", kDead), IsEmpty());
  EXPECT_THAT(CompleteChatLine("/bogus ", kDead), IsEmpty());
  EXPECT_THAT(CompleteChatLine("/reflect list ", kDead), IsEmpty());
  EXPECT_THAT(CompleteChatLine("/reflect retry ff", kDead), IsEmpty());
  EXPECT_THAT(CompleteChatLine("/reflect retry 9e2c00000000007a ", kDead), IsEmpty());
  EXPECT_THAT(CompleteChatLine("/reflect x", kDead), IsEmpty());
  EXPECT_THAT(CompleteChatLine("/memory longterm ", kDead), IsEmpty());
}

}  // namespace
}  // namespace mend::cli
