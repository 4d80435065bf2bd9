#include "mend/improve/card.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "mend/improve/proposal_diff.h"

namespace mend::improve {
namespace {

std::vector<RunScore> Runs(std::string_view pattern, double cost) {
  std::vector<RunScore> runs;
  for (char c : pattern) runs.push_back({c == 'P', c == 'P' ? 1.0 : 0.0, cost});
  return runs;
}

GateDecision MustDecide(const std::vector<CaseScores>& cases) {
  Result<GateDecision> d = Decide(cases, GateOptions{});
  EXPECT_TRUE(d.ok());
  return d.ok() ? *d : GateDecision{};
}

TEST(FormatImproveResultTest, Proposal) {
  ImproveResult result;
  result.decision = MustDecide({{"fix-1", false, Runs("FFF", 0.01), Runs("PPP", 0.01)},
                                {"summarise-readme", true, Runs("PPF", 0.01), Runs("PPP", 0.01)}});
  result.rationale = "The agent answered before running the tests.";
  result.diffs.push_back({"instructions.md", UnifiedDiff("instructions.md", "Fix bugs.\n",
                                                         "Fix bugs.\nRun the tests first.\n")});
  result.refused_edits.push_back(
      {"agent.toml", EditRefusal::kProtectedPath, "agent.toml is not an editable file"});
  EXPECT_EQ(FormatImproveResult(result),
            R"(improve: proposal
  1 training case is better and none is worse

cases (passing runs out of K; a verdict needs a difference of a strict majority of K)
  case              split     before  after  verdict
  fix-1             training  0/3     3/3    better
  summarise-readme  held-out  2/3     3/3    same

cost per successful run
  before: $0.0300
  after:  $0.0100
  limit:  $0.0450 (+50%)

rationale
The agent answered before running the tests.

changes
--- a/instructions.md
+++ b/instructions.md
@@ -1 +1,2 @@
 Fix bugs.
+Run the tests first.

refused edits (never applied)
  agent.toml: protected_path - agent.toml is not an editable file
)");
}

TEST(FormatImproveResultTest, RejectedByAWorseHeldOutCase) {
  ImproveResult result;
  result.decision = MustDecide({{"a", false, Runs("FF", 0.5), Runs("PP", 0.5)},
                                {"h", true, Runs("PP", 0.5), Runs("FF", 0.5)}});
  EXPECT_EQ(FormatImproveResult(result),
            R"(improve: rejected by gate worse_case
  worse on h (held-out)

cases (passing runs out of K; a verdict needs a difference of a strict majority of K)
  case  split     before  after  verdict
  a     training  0/2     2/2    better
  h     held-out  2/2     0/2    worse

cost per successful run
  before: $1.0000
  after:  $1.0000
  limit:  $1.5000 (+50%)
)");
}

TEST(FormatImproveResultTest, NoPassingBaselineHasNoLimit) {
  ImproveResult result;
  result.decision = MustDecide({{"a", false, Runs("FF", 0.5), Runs("FF", 0.5)}});
  EXPECT_EQ(FormatImproveResult(result),
            R"(improve: no_improvement
  no training case is better

cases (passing runs out of K; a verdict needs a difference of a strict majority of K)
  case  split     before  after  verdict
  a     training  0/2     0/2    same

cost per successful run
  before: n/a (no run passed)
  after:  n/a (no run passed)
  limit:  none (the baseline never passed)
)");
}

TEST(FormatImproveResultTest, SmallCostsKeepEnoughDigitsToBeCompared) {
  // Per success: before 0.0001, after 0.000045 (a cheaper fix), limit 0.00015.
  ImproveResult result;
  result.decision = MustDecide({{"a", false, Runs("FP", 0.00005), Runs("PP", 0.000045)}});
  const std::string card = FormatImproveResult(result);
  EXPECT_NE(card.find("cost per successful run\n"
                      "  before: $0.0001000\n"
                      "  after:  $0.0000450\n"
                      "  limit:  $0.0001500 (+50%)\n"),
            std::string::npos)
      << card;
}

TEST(FormatImproveResultTest, CostsShareTheDecimalsOfTheSmallest) {
  ImproveResult result;
  result.decision.baseline_cost.per_success_usd = 0.0002;
  result.decision.candidate_cost.per_success_usd = 0.000045;
  result.decision.cost_limit_usd = 0.0001;
  const std::string card = FormatImproveResult(result);
  EXPECT_NE(card.find("  before: $0.0002000\n"
                      "  after:  $0.0000450\n"
                      "  limit:  $0.0001000 (+50%)\n"),
            std::string::npos)
      << card;
}

TEST(FormatImproveResultTest, IdenticalCandidatesAreNamed) {
  ImproveResult result;
  result.decision = MustDecide({{"a", false, Runs("FF", 0.5), Runs("PP", 0.5)}});
  result.identical.push_back({1, 2, 1, 1, 1});
  result.identical.push_back({2, 1, 3, 1, 4});
  const std::string card = FormatImproveResult(result);
  EXPECT_NE(
      card.find("\nidentical candidates (evaluated once)\n"
                "  round 1 candidate 2: the same files as candidate-1 (round 1 candidate 1)\n"
                "  round 2 candidate 1: the same files as candidate-3 (round 1 candidate 4)\n"),
      std::string::npos)
      << card;
}

TEST(FormatImproveResultTest, ControlCharactersFromTheModelAreEscaped) {
  ImproveResult result;
  result.decision = MustDecide({{"a", false, Runs("FF", 0.5), Runs("FF", 0.5)}});
  result.rationale = "red \x1b[31mtext\x1b[0m\tok";
  result.refused_edits.push_back({"x\ry", EditRefusal::kProtectedPath, "no\x07"});
  const std::string card = FormatImproveResult(result);
  EXPECT_EQ(card.find('\x1b'), std::string::npos);
  EXPECT_NE(card.find("red \\x1B[31mtext\\x1B[0m\tok\n"), std::string::npos) << card;
  EXPECT_NE(card.find("  x\\x0Dy: protected_path - no\\x07\n"), std::string::npos) << card;
}

}  // namespace
}  // namespace mend::improve
