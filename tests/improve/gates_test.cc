#include "mend/improve/gates.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tests/support/status_matchers.h"

namespace mend::improve {
namespace {

using ::mend::testing::StatusIs;
using ::testing::HasSubstr;

// Runs from a pattern: 'P' passes, 'F' fails; every run costs `cost`.
std::vector<RunScore> Runs(std::string_view pattern, double cost = 1.0) {
  std::vector<RunScore> runs;
  for (char c : pattern) runs.push_back({c == 'P', c == 'P' ? 1.0 : 0.0, cost});
  return runs;
}

CaseScores Case(std::string id, std::string_view before, std::string_view after,
                bool held_out = false) {
  return {std::move(id), held_out, Runs(before), Runs(after)};
}

GateDecision MustDecide(const std::vector<CaseScores>& cases, const GateOptions& options = {}) {
  Result<GateDecision> d = Decide(cases, options);
  EXPECT_TRUE(d.ok()) << d.status().message();
  return d.ok() ? *d : GateDecision{};
}

CaseVerdict VerdictOf(std::string_view before, std::string_view after) {
  return MustDecide({Case("c", before, after)}).cases.at(0).verdict;
}

TEST(GatesTest, MarginIsAStrictMajorityOfTheRuns) {
  EXPECT_EQ(VerdictMargin(1), 1);
  EXPECT_EQ(VerdictMargin(2), 2);
  EXPECT_EQ(VerdictMargin(3), 2);
  EXPECT_EQ(VerdictMargin(4), 3);
  EXPECT_EQ(VerdictMargin(5), 3);
}

TEST(GatesTest, VerdictsFollowTheMargin) {
  EXPECT_EQ(VerdictOf("FFF", "PPP"), CaseVerdict::kBetter);
  EXPECT_EQ(VerdictOf("FFF", "PPF"), CaseVerdict::kBetter);
  EXPECT_EQ(VerdictOf("PFF", "PPF"), CaseVerdict::kSame);
  EXPECT_EQ(VerdictOf("PPP", "PFF"), CaseVerdict::kWorse);
  EXPECT_EQ(VerdictOf("PPF", "PFF"), CaseVerdict::kSame);
  EXPECT_EQ(VerdictOf("FF", "PP"), CaseVerdict::kBetter);
  EXPECT_EQ(VerdictOf("FF", "PF"), CaseVerdict::kSame);
  EXPECT_EQ(VerdictOf("PP", "FF"), CaseVerdict::kWorse);
  EXPECT_EQ(VerdictOf("FFFF", "PPPF"), CaseVerdict::kBetter);
  EXPECT_EQ(VerdictOf("FFFF", "PPFF"), CaseVerdict::kSame);
}

TEST(GatesTest, ACaseThatPassesHalfTheTimeInBothArmsIsTheSame) {
  EXPECT_EQ(VerdictOf("PFPF", "FPFP"), CaseVerdict::kSame);
  EXPECT_EQ(VerdictOf("PPFF", "FFPP"), CaseVerdict::kSame);
  EXPECT_EQ(VerdictOf("PF", "FP"), CaseVerdict::kSame);
}

TEST(GatesTest, OneNoisyRunNeitherMakesNorBlocksAProposal) {
  // A single flipped run in an otherwise identical case is not a difference, either way.
  const GateDecision makes = MustDecide({Case("a", "FFF", "PFF"), Case("b", "PPP", "PPP")});
  EXPECT_EQ(makes.outcome, GateOutcome::kNoImprovement);
  const GateDecision blocks = MustDecide({Case("a", "FFF", "PPP"), Case("b", "PPP", "PPF")});
  EXPECT_EQ(blocks.outcome, GateOutcome::kProposal);
}

TEST(GatesTest, BetterTrainingCaseAndNothingWorseIsAProposal) {
  const GateDecision d = MustDecide({Case("a", "FFF", "PPP"), Case("b", "PPF", "PPF", true)});
  EXPECT_EQ(d.outcome, GateOutcome::kProposal);
  EXPECT_FALSE(d.refused_by.has_value());
  EXPECT_EQ(d.reason, "1 training case is better and none is worse");
  ASSERT_EQ(d.cases.size(), 2u);
  EXPECT_EQ(d.cases[0].case_id, "a");
  EXPECT_EQ(d.cases[0].runs, 3);
  EXPECT_EQ(d.cases[0].baseline_passes, 0);
  EXPECT_EQ(d.cases[0].candidate_passes, 3);
  EXPECT_TRUE(d.cases[1].held_out);
  EXPECT_EQ(d.cases[1].verdict, CaseVerdict::kSame);
}

TEST(GatesTest, NoBetterCaseIsNoImprovement) {
  const GateDecision d = MustDecide({Case("a", "PPP", "PPP"), Case("b", "FFF", "FFF")});
  EXPECT_EQ(d.outcome, GateOutcome::kNoImprovement);
  EXPECT_FALSE(d.refused_by.has_value());
  EXPECT_EQ(d.reason, "no training case is better");
}

TEST(GatesTest, ABetterHeldOutCaseAloneIsNoImprovement) {
  const GateDecision d = MustDecide({Case("a", "PPP", "PPP"), Case("h", "FFF", "PPP", true)});
  EXPECT_EQ(d.cases[1].verdict, CaseVerdict::kBetter);
  EXPECT_EQ(d.outcome, GateOutcome::kNoImprovement);
}

TEST(GatesTest, AWorseHeldOutCaseRejectsNamingIt) {
  const GateDecision d = MustDecide({Case("a", "FFF", "PPP"), Case("h", "PPP", "FFP", true)});
  EXPECT_EQ(d.outcome, GateOutcome::kRejected);
  EXPECT_EQ(d.refused_by, Gate::kWorseCase);
  EXPECT_EQ(d.reason, "worse on h (held-out)");
}

TEST(GatesTest, TheWorseGateNamesEveryWorseCaseAndComesBeforeTheOthers) {
  // No better case and a cost blow-up too: the worse gate is the one reported.
  std::vector<CaseScores> cases = {Case("a", "PPP", "FFF"), Case("b", "PPP", "PPP"),
                                   Case("c", "PPF", "FFF")};
  for (RunScore& r : cases[1].candidate) r.cost_usd = 100.0;
  const GateDecision d = MustDecide(cases);
  EXPECT_EQ(d.outcome, GateOutcome::kRejected);
  EXPECT_EQ(d.refused_by, Gate::kWorseCase);
  EXPECT_EQ(d.reason, "worse on a, c");
}

TEST(GatesTest, CostPerSuccessfulRunCountsEveryRunOverPassingRuns) {
  std::vector<CaseScores> cases = {Case("a", "FFPP", "PPPP"), Case("h", "PPPP", "PPPP", true)};
  const GateDecision d = MustDecide(cases);
  EXPECT_DOUBLE_EQ(d.baseline_cost.total_usd, 8.0);
  EXPECT_EQ(d.baseline_cost.runs, 8);
  EXPECT_EQ(d.baseline_cost.passes, 6);
  EXPECT_DOUBLE_EQ(*d.baseline_cost.per_success_usd, 8.0 / 6.0);
  EXPECT_DOUBLE_EQ(*d.candidate_cost.per_success_usd, 1.0);
  EXPECT_DOUBLE_EQ(*d.cost_limit_usd, 8.0 / 6.0 * 1.5);
}

// Baseline: 4 runs at $0.5, 1 passing -> $2 per success; limit with +50% is $3.
std::vector<CaseScores> CostCase(double candidate_run_cost) {
  CaseScores c{"a", false, Runs("FFFP", 0.5), Runs("PPPP", candidate_run_cost)};
  return {c};
}

TEST(GatesTest, CostExactlyAtTheLimitPasses) {
  const GateDecision d = MustDecide(CostCase(3.0));
  EXPECT_DOUBLE_EQ(*d.cost_limit_usd, 3.0);
  EXPECT_EQ(d.outcome, GateOutcome::kProposal);
}

TEST(GatesTest, CostAtTheLimitAfterRoundingInTheSumPasses) {
  // Baseline: $0.1 per success. Candidate: (0.1 + 0.1 + 0.1) / 3, which is 0.1 on paper but a
  // hair above it in binary floating point.
  CaseScores c{"a",
               false,
               {{false, 0, 0.0}, {false, 0, 0.0}, {true, 1, 0.1}},
               {{true, 1, 0.1}, {true, 1, 0.1}, {true, 1, 0.1}}};
  GateOptions options;
  options.max_cost_increase = 0.0;
  const GateDecision d = MustDecide({c}, options);
  ASSERT_TRUE(d.candidate_cost.per_success_usd.has_value());
  EXPECT_GT(*d.candidate_cost.per_success_usd, *d.cost_limit_usd);
  EXPECT_EQ(d.outcome, GateOutcome::kProposal) << d.reason;
}

TEST(GatesTest, CostJustAboveTheLimitIsRejected) {
  const GateDecision d = MustDecide(CostCase(3.0 + 1e-6));
  EXPECT_EQ(d.outcome, GateOutcome::kRejected);
  EXPECT_EQ(d.refused_by, Gate::kCost);
  EXPECT_THAT(d.reason, HasSubstr("above the limit $3"));
}

TEST(GatesTest, MaxCostIncreaseIsHonoured) {
  GateOptions options;
  options.max_cost_increase = 1.0;  // limit $4
  EXPECT_EQ(MustDecide(CostCase(4.0), options).outcome, GateOutcome::kProposal);
  EXPECT_EQ(MustDecide(CostCase(4.01), options).outcome, GateOutcome::kRejected);
  options.max_cost_increase = 0.0;  // limit $2
  EXPECT_EQ(MustDecide(CostCase(2.0), options).outcome, GateOutcome::kProposal);
  EXPECT_EQ(MustDecide(CostCase(2.01), options).outcome, GateOutcome::kRejected);
}

TEST(GatesTest, ABaselineThatNeverPassedHasNoCostLimit) {
  CaseScores c{"a", false, Runs("FFF", 1.0), Runs("PPP", 50.0)};
  const GateDecision d = MustDecide({c});
  EXPECT_FALSE(d.baseline_cost.per_success_usd.has_value());
  EXPECT_FALSE(d.cost_limit_usd.has_value());
  EXPECT_EQ(d.outcome, GateOutcome::kProposal);
}

TEST(GatesTest, ACandidateThatNeverPassedHasNoCostPerSuccess) {
  const GateDecision d = MustDecide({Case("a", "FFF", "FFF")});
  EXPECT_FALSE(d.candidate_cost.per_success_usd.has_value());
  EXPECT_EQ(d.outcome, GateOutcome::kNoImprovement);
}

TEST(GatesTest, RepeatsMayDifferBetweenCases) {
  const GateDecision d = MustDecide({Case("a", "FF", "PP"), Case("b", "PPPPP", "PPFFF")});
  EXPECT_EQ(d.cases[0].verdict, CaseVerdict::kBetter);
  EXPECT_EQ(d.cases[1].verdict, CaseVerdict::kWorse);
}

TEST(GatesTest, SingleRunsAreAllowedOnlyWhenAskedFor) {
  EXPECT_THAT(Decide({Case("a", "F", "P")}, {}), StatusIs(StatusCode::kInvalidArgument));
  GateOptions options;
  options.min_repeats = 1;
  const GateDecision d = MustDecide({Case("a", "F", "P")}, options);
  EXPECT_EQ(d.outcome, GateOutcome::kProposal);
}

TEST(GatesTest, BadInputIsInvalidArgument) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_THAT(Decide({}, {}), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(Decide({Case("", "FF", "PP")}, {}), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(Decide({Case("a", "FF", "PP"), Case("a", "FF", "FF")}, {}),
              StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(Decide({Case("a", "FF", "PPP")}, {}), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(Decide({Case("a", "", "")}, {}), StatusIs(StatusCode::kInvalidArgument));
  for (double bad : {-1.0, nan, inf}) {
    CaseScores c = Case("a", "FF", "PP");
    c.candidate[1].cost_usd = bad;
    EXPECT_THAT(Decide({c}, {}), StatusIs(StatusCode::kInvalidArgument)) << bad;
    GateOptions options;
    options.max_cost_increase = bad;
    EXPECT_THAT(Decide({Case("a", "FF", "PP")}, options), StatusIs(StatusCode::kInvalidArgument));
  }
  CaseScores c = Case("a", "FF", "PP");
  c.baseline[0].score = nan;
  EXPECT_THAT(Decide({c}, {}), StatusIs(StatusCode::kInvalidArgument));
  GateOptions zero;
  zero.min_repeats = 0;
  EXPECT_THAT(Decide({Case("a", "FF", "PP")}, zero), StatusIs(StatusCode::kInvalidArgument));
}

TEST(GatesTest, NamesAreStable) {
  EXPECT_EQ(GateOutcomeName(GateOutcome::kProposal), "proposal");
  EXPECT_EQ(GateOutcomeName(GateOutcome::kNoImprovement), "no_improvement");
  EXPECT_EQ(GateOutcomeName(GateOutcome::kRejected), "rejected");
  EXPECT_EQ(GateName(Gate::kWorseCase), "worse_case");
  EXPECT_EQ(GateName(Gate::kCost), "cost");
  EXPECT_EQ(CaseVerdictName(CaseVerdict::kBetter), "better");
  EXPECT_EQ(CaseVerdictName(CaseVerdict::kWorse), "worse");
  EXPECT_EQ(CaseVerdictName(CaseVerdict::kSame), "same");
}

}  // namespace
}  // namespace mend::improve
