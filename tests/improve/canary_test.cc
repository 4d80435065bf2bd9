#include "mend/improve/canary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "tests/support/status_matchers.h"

namespace mend::improve {
namespace {

using ::mend::testing::IsOkAndHolds;
using ::mend::testing::StatusIs;
using ::testing::DoubleNear;
using ::testing::HasSubstr;

// P(q_b > q_a) by integrating the densities on a fine grid (the midpoint rule on the joint
// density's CDF form): P = integral of f_b(x) * F_a(x) dx.
double Numeric(int a_alpha, int a_beta, int b_alpha, int b_beta) {
  auto density = [](double x, int alpha, int beta) {
    const double log_norm = std::lgamma(alpha + beta) - std::lgamma(alpha) - std::lgamma(beta);
    return std::exp(log_norm + (alpha - 1) * std::log(x) + (beta - 1) * std::log1p(-x));
  };
  const int steps = 200000;
  const double h = 1.0 / steps;
  double cdf_a = 0.0, total = 0.0;
  for (int i = 0; i < steps; ++i) {
    const double x = (i + 0.5) * h;
    cdf_a += density(x, a_alpha, a_beta) * h * 0.5;
    total += density(x, b_alpha, b_beta) * cdf_a * h;
    cdf_a += density(x, a_alpha, a_beta) * h * 0.5;
  }
  return total;
}

TEST(CanaryProbabilityTest, TheClosedFormMatchesNumericIntegration) {
  for (auto [aa, ab, ba, bb] :
       {std::tuple{1, 1, 1, 1}, std::tuple{3, 18, 9, 12}, std::tuple{21, 1, 1, 21},
        std::tuple{5, 5, 6, 4}, std::tuple{40, 160, 55, 145}}) {
    EXPECT_THAT(ProbabilityGreater(aa, ab, ba, bb),
                IsOkAndHolds(DoubleNear(Numeric(aa, ab, ba, bb), 1e-4)))
        << aa << " " << ab << " " << ba << " " << bb;
  }
}

TEST(CanaryProbabilityTest, EqualArmsAreEvenAndTheTwoOrdersAddUpToOne) {
  EXPECT_THAT(ProbabilityGreater(7, 13, 7, 13), IsOkAndHolds(DoubleNear(0.5, 1e-12)));
  Result<double> one = ProbabilityGreater(4, 17, 11, 9);
  Result<double> other = ProbabilityGreater(11, 9, 4, 17);
  ASSERT_TRUE(one.ok() && other.ok());
  EXPECT_NEAR(*one + *other, 1.0, 1e-12);
  EXPECT_THAT(ProbabilityGreater(0, 1, 1, 1), StatusIs(StatusCode::kInvalidArgument));
}

TEST(CanaryArmTest, TheArmDependsOnTheIdsOnlyAndFollowsThePercentage) {
  constexpr char kProposal[] = "imp-20261207T120000-0a1b2c3d";
  int taken = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::string run = "run-" + std::to_string(i);
    const bool arm = TakesProposal(kProposal, run, 10.0);
    EXPECT_EQ(TakesProposal(kProposal, run, 10.0), arm);  // a resume or a replica agrees
    taken += arm ? 1 : 0;
  }
  // 10 % of 20,000 is 2,000; the binomial's standard deviation is about 42.
  EXPECT_NEAR(taken, 2000, 200);
  // A run the proposal takes at 10 % it also takes at 50 %: raising the share keeps its runs.
  int kept = 0, other = 0;
  for (int i = 0; i < 2000; ++i) {
    const std::string run = "run-" + std::to_string(i);
    if (TakesProposal(kProposal, run, 10.0)) kept += TakesProposal(kProposal, run, 50.0) ? 0 : 1;
    other += TakesProposal("imp-20261207T120000-ffffffff", run, 10.0) !=
                     TakesProposal(kProposal, run, 10.0)
                 ? 1
                 : 0;
  }
  EXPECT_EQ(kept, 0);
  EXPECT_GT(other, 0);  // another proposal takes other runs
  EXPECT_FALSE(TakesProposal(kProposal, "run-1", 0.0));
  EXPECT_FALSE(TakesProposal(kProposal, "run-1", -5.0));
  EXPECT_TRUE(TakesProposal(kProposal, "run-1", 100.0));
}

ArmOutcomes Arm(int64_t runs, int64_t successes, double cost = 0.0) {
  ArmOutcomes arm;
  arm.runs = runs;
  arm.successes = successes;
  arm.cost_usd = cost;
  return arm;
}

TEST(CanaryOutcomeTest, EndedRunsCountAndOnlyCompletedRunsWithPassingChecksSucceed) {
  ArmOutcomes arm;
  EXPECT_FALSE(CountRun({store::RunStatus::kRunning, "", true, 0.5}, arm));
  EXPECT_FALSE(CountRun({store::RunStatus::kWaiting, "", true, 0.5}, arm));
  EXPECT_EQ(arm.runs, 0);
  EXPECT_TRUE(CountRun({store::RunStatus::kCompleted, "", true, 0.10}, arm));
  EXPECT_TRUE(CountRun({store::RunStatus::kCompleted, "", false, 0.20}, arm));
  EXPECT_TRUE(CountRun({store::RunStatus::kFailed, "MEND_RUN_NO_PROGRESS", true, 0.30}, arm));
  EXPECT_TRUE(CountRun({store::RunStatus::kFailed, "UNAVAILABLE", true, 0.40}, arm));
  EXPECT_TRUE(CountRun({store::RunStatus::kQuarantined, "UNAVAILABLE", true, 0.50}, arm));
  EXPECT_EQ(arm.runs, 5);
  EXPECT_EQ(arm.successes, 1);
  EXPECT_EQ(arm.completed, 2);
  EXPECT_EQ(arm.checks_failed, 1);
  EXPECT_EQ(arm.no_progress, 1);
  EXPECT_EQ(arm.failed, 1);
  EXPECT_EQ(arm.quarantined, 1);
  EXPECT_DOUBLE_EQ(arm.cost_usd, 1.5);
}

TEST(CanaryDecisionTest, NothingIsDecidedBeforeTheMinimum) {
  // 0 of 19 against 19 of 19 failed: overwhelming, but under 20 runs in an arm.
  Result<CanaryDecision> d = DecideCanary(Arm(19, 19), Arm(19, 0), CanaryRule{});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->verdict, CanaryVerdict::kContinue);
  EXPECT_GT(d->probability_worse, 0.999);
  EXPECT_THAT(d->reason, HasSubstr("fewer than 20 runs"));
}

TEST(CanaryDecisionTest, AProposalThatFailsMoreIsRolledBack) {
  // Baseline 2/20 failed, proposal 9/20: P(worse) is about 0.99.
  Result<CanaryDecision> d = DecideCanary(Arm(20, 18), Arm(20, 11), CanaryRule{});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->verdict, CanaryVerdict::kRollBack);
  EXPECT_GE(d->probability_worse, 0.95);
  EXPECT_THAT(d->reason, HasSubstr("baseline 2/20 failed, proposal 9/20 failed"));
}

TEST(CanaryDecisionTest, AProposalThatHelpsIsPromotedAfterTheMinimum) {
  // The worked example of docs/improve.md: baseline 8/20 failed, proposal 1/20.
  Result<CanaryDecision> d = DecideCanary(Arm(20, 12), Arm(20, 19), CanaryRule{});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->verdict, CanaryVerdict::kPromote);
  EXPECT_LE(d->probability_worse, 0.05);
}

TEST(CanaryDecisionTest, ANeutralProposalRunsToTheMaximumAndIsRolledBackUnproven) {
  CanaryRule rule;
  rule.max_runs = 60;
  Result<CanaryDecision> middle = DecideCanary(Arm(40, 30), Arm(40, 30), rule);
  ASSERT_TRUE(middle.ok());
  EXPECT_EQ(middle->verdict, CanaryVerdict::kContinue);
  EXPECT_NEAR(middle->probability_worse, 0.5, 1e-9);
  Result<CanaryDecision> end = DecideCanary(Arm(60, 45), Arm(60, 46), rule);
  ASSERT_TRUE(end.ok());
  EXPECT_EQ(end->verdict, CanaryVerdict::kRollBackUnproven);
  EXPECT_THAT(end->reason, HasSubstr("60 runs in each arm"));
}

TEST(CanaryDecisionTest, CostPerSuccessAboveTheGateRollsBackEvenWhenNotWorse) {
  // Same failure rate; the proposal's successes cost twice the baseline's (limit 1.5x).
  Result<CanaryDecision> d = DecideCanary(Arm(30, 27, 2.70), Arm(30, 27, 5.40), CanaryRule{});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->verdict, CanaryVerdict::kRollBack);
  EXPECT_DOUBLE_EQ(d->baseline_cost_per_success, 0.10);
  EXPECT_DOUBLE_EQ(d->proposal_cost_per_success, 0.20);
  EXPECT_THAT(d->reason, HasSubstr("cost per success"));
}

TEST(CanaryDecisionTest, InvalidRulesAndOutcomesAreRefused) {
  CanaryRule rule;
  rule.confidence = 0.5;
  EXPECT_THAT(DecideCanary(Arm(1, 1), Arm(1, 1), rule),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("confidence")));
  rule = CanaryRule{};
  rule.max_runs = 10;
  EXPECT_THAT(ValidateCanaryRule(rule),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("max_runs")));
  EXPECT_THAT(DecideCanary(Arm(5, 6), Arm(1, 1), CanaryRule{}),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("baseline")));
  EXPECT_THAT(DecideCanary(Arm(5, 5), Arm(1, 1, -1.0), CanaryRule{}),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("proposal")));
  EXPECT_EQ(CanaryVerdictName(CanaryVerdict::kRollBackUnproven), "roll_back_unproven");
}

}  // namespace
}  // namespace mend::improve
