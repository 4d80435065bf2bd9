#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mend/llm/scripted_provider.h"
#include "mend/reflexion/hooks.h"
#include "tests/support/status_matchers.h"

namespace mend::reflexion {
namespace {

using ::mend::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr std::string_view kTask = "What is the capital of Australia?";
constexpr std::string_view kDraft = "The capital of Australia is Sydney.";

llm::ScriptedStep Say(std::string text) { return llm::ScriptedStep{.text = std::move(text)}; }

struct Fixture {
  agent::RunInfo run{"run-1", std::string(kTask), nullptr, ""};
  agent::RunOutcome outcome;
  Fixture() {
    outcome.run = &run;
    outcome.output = std::string(kDraft);
  }
};

std::string UserText(const llm::CompletionRequest& request) {
  return request.messages.size() == 2 ? request.messages[1].content : "";
}

TEST(VerifyHookTest, ConsistentVerdictSetsTheFlagFalse) {
  llm::ScriptedProvider provider({Say("1. Which city is the capital of Australia?\n"),
                                  Say("1. Canberra"), Say("<verdict>consistent</verdict>")});
  VerifyHook hook(provider, VerifyOptions{});
  EXPECT_EQ(hook.name(), "verify");
  Fixture f;
  MEND_ASSERT_OK(hook.AfterRun(f.outcome));
  EXPECT_EQ(f.outcome.flags.at("verified_with_discrepancy"), false);
  EXPECT_EQ(f.outcome.output, kDraft);
  EXPECT_EQ(provider.requests().size(), 3u);
}

TEST(VerifyHookTest, DiscrepancyFlagsAndTheAnswerStaysWithoutReplace) {
  llm::ScriptedProvider provider(
      {Say("Questions:\n1. Which city is the capital of Australia?\n2) Is Sydney the capital?\n"
           "- When was Canberra founded?\n* extra question over the cap\n"),
       Say("1. Canberra\n2. No\n3. 1913"),
       Say("<verdict>Discrepancy</verdict><revised>The capital is Canberra.</revised>")});
  VerifyOptions options;
  options.model = "checker";
  VerifyHook hook(provider, options);
  Fixture f;
  MEND_ASSERT_OK(hook.AfterRun(f.outcome));
  EXPECT_TRUE(f.outcome.Flag("verified_with_discrepancy"));
  EXPECT_EQ(f.outcome.output, kDraft);

  std::vector<llm::CompletionRequest> calls = provider.requests();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].model, "checker");
  EXPECT_THAT(calls[0].messages[0].content, HasSubstr("up to 3"));
  EXPECT_THAT(UserText(calls[0]), HasSubstr(std::string(kDraft)));
  // Call 2 answers from the task and the questions alone: the draft is not shown.
  EXPECT_EQ(UserText(calls[1]), "TASK:\n" + std::string(kTask) +
                                    "\n\nQUESTIONS:\n1. Which city is the capital of Australia?\n"
                                    "2. Is Sydney the capital?\n3. When was Canberra founded?\n");
  EXPECT_THAT(UserText(calls[1]), Not(HasSubstr("Sydney.")));
  EXPECT_THAT(UserText(calls[2]), HasSubstr(std::string(kDraft)));
  EXPECT_THAT(UserText(calls[2]), HasSubstr("INDEPENDENT ANSWERS:\n1. Canberra\n2. No\n3. 1913"));
}

TEST(VerifyHookTest, ReplaceAnswerUsesTheRevision) {
  llm::ScriptedProvider provider({Say("Is Sydney the capital?"), Say("No, Canberra is."),
                                  Say("<verdict>discrepancy</verdict>\n<revised>\n"
                                      "The capital of Australia is Canberra.\n</revised>")});
  VerifyOptions options;
  options.replace_answer = true;
  VerifyHook hook(provider, options);
  Fixture f;
  MEND_ASSERT_OK(hook.AfterRun(f.outcome));
  EXPECT_TRUE(f.outcome.Flag("verified_with_discrepancy"));
  EXPECT_EQ(f.outcome.output, "The capital of Australia is Canberra.");
}

TEST(VerifyHookTest, ReplaceWithoutRevisionKeepsTheOutput) {
  llm::ScriptedProvider provider(
      {Say("Is Sydney the capital?"), Say("No."), Say("<verdict>discrepancy</verdict>")});
  VerifyOptions options;
  options.replace_answer = true;
  VerifyHook hook(provider, options);
  Fixture f;
  MEND_ASSERT_OK(hook.AfterRun(f.outcome));
  EXPECT_TRUE(f.outcome.Flag("verified_with_discrepancy"));
  EXPECT_EQ(f.outcome.output, kDraft);
}

TEST(VerifyHookTest, UnparsableVerdictIsInvalidAndSetsNoFlag) {
  llm::ScriptedProvider provider(
      {Say("Is Sydney the capital?"), Say("No."), Say("<verdict>probably fine</verdict>")});
  VerifyHook hook(provider, VerifyOptions{});
  Fixture f;
  EXPECT_THAT(hook.AfterRun(f.outcome),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("<verdict>")));
  EXPECT_THAT(f.outcome.flags, IsEmpty());
}

TEST(VerifyHookTest, NoQuestionsStopsAfterOneCall) {
  llm::ScriptedProvider provider({Say("\n  \n1.\n")});
  VerifyHook hook(provider, VerifyOptions{});
  Fixture f;
  MEND_ASSERT_OK(hook.AfterRun(f.outcome));
  EXPECT_THAT(f.outcome.flags, IsEmpty());
  EXPECT_EQ(provider.requests().size(), 1u);
}

TEST(VerifyHookTest, FailedRunsAndEmptyOutputsAreLeftAlone) {
  llm::ScriptedProvider provider({});
  VerifyHook hook(provider, VerifyOptions{});
  Fixture failed;
  failed.outcome.error = InternalError("boom");
  MEND_ASSERT_OK(hook.AfterRun(failed.outcome));
  Fixture empty;
  empty.outcome.output = "";
  MEND_ASSERT_OK(hook.AfterRun(empty.outcome));
  EXPECT_THAT(provider.requests(), IsEmpty());
}

TEST(VerifyHookTest, ProviderErrorIsReturned) {
  llm::ScriptedProvider provider(
      {Say("Is Sydney the capital?"), llm::ScriptedStep{.error = UnavailableError("503")}});
  VerifyHook hook(provider, VerifyOptions{});
  Fixture f;
  EXPECT_THAT(hook.AfterRun(f.outcome), StatusIs(StatusCode::kUnavailable));
  EXPECT_THAT(f.outcome.flags, IsEmpty());
}

TEST(RefineHookTest, HighScoreLeavesEverythingAlone) {
  llm::ScriptedProvider provider({Say("<score>8</score><critique>fine</critique>")});
  RefineHook hook(provider, RefineOptions{});
  EXPECT_EQ(hook.name(), "refine");
  Fixture f;
  MEND_ASSERT_OK(hook.AfterRun(f.outcome));
  EXPECT_THAT(f.outcome.flags, IsEmpty());
  EXPECT_EQ(f.outcome.output, kDraft);
  EXPECT_EQ(provider.requests().size(), 1u);
}

TEST(RefineHookTest, ScoreAtThresholdIsNotLow) {
  llm::ScriptedProvider provider({Say("<score> 6/10 </score>")});
  RefineHook hook(provider, RefineOptions{});
  Fixture f;
  MEND_ASSERT_OK(hook.AfterRun(f.outcome));
  EXPECT_THAT(f.outcome.flags, IsEmpty());
}

TEST(RefineHookTest, LowScoreFlagsAndReplacesWithTheRevision) {
  llm::ScriptedProvider provider(
      {Say("<score>3</score><critique>Sydney is wrong; the capital is Canberra.</critique>"),
       Say("<revised>The capital of Australia is Canberra.</revised>")});
  RefineHook hook(provider, RefineOptions{});
  Fixture f;
  MEND_ASSERT_OK(hook.AfterRun(f.outcome));
  EXPECT_TRUE(f.outcome.Flag("refine_low_quality"));
  EXPECT_EQ(f.outcome.output, "The capital of Australia is Canberra.");
  std::vector<llm::CompletionRequest> calls = provider.requests();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_THAT(UserText(calls[1]), HasSubstr(std::string(kDraft)));
  EXPECT_THAT(UserText(calls[1]), HasSubstr("Sydney is wrong; the capital is Canberra."));
}

TEST(RefineHookTest, LowScoreWithoutReplaceKeepsTheOutput) {
  llm::ScriptedProvider provider({Say("<score>2</score><critique>bad</critique>")});
  RefineOptions options;
  options.replace_answer = false;
  RefineHook hook(provider, options);
  Fixture f;
  MEND_ASSERT_OK(hook.AfterRun(f.outcome));
  EXPECT_TRUE(f.outcome.Flag("refine_low_quality"));
  EXPECT_EQ(f.outcome.output, kDraft);
  EXPECT_EQ(provider.requests().size(), 1u);
}

TEST(RefineHookTest, EmptyRevisionKeepsTheOutput) {
  llm::ScriptedProvider provider(
      {Say("<score>1</score><critique>bad</critique>"), Say("I cannot improve this.")});
  RefineHook hook(provider, RefineOptions{});
  Fixture f;
  MEND_ASSERT_OK(hook.AfterRun(f.outcome));
  EXPECT_TRUE(f.outcome.Flag("refine_low_quality"));
  EXPECT_EQ(f.outcome.output, kDraft);
}

TEST(RefineHookTest, UnparsableScoreIsInvalid) {
  for (std::string reply : {"no score at all", "<score>eleven</score>", "<score>0</score>",
                            "<score>11</score>", "<score>7", "<score>5 stars</score>"}) {
    llm::ScriptedProvider provider({Say(reply)});
    RefineHook hook(provider, RefineOptions{});
    Fixture f;
    EXPECT_THAT(hook.AfterRun(f.outcome), StatusIs(StatusCode::kInvalidArgument)) << reply;
    EXPECT_THAT(f.outcome.flags, IsEmpty()) << reply;
  }
}

TEST(RefineHookTest, FailedRunsAreLeftAlone) {
  llm::ScriptedProvider provider({});
  RefineHook hook(provider, RefineOptions{});
  Fixture f;
  f.outcome.error = UnavailableError("x");
  MEND_ASSERT_OK(hook.AfterRun(f.outcome));
  EXPECT_THAT(provider.requests(), IsEmpty());
}

}  // namespace
}  // namespace mend::reflexion
