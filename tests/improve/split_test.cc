#include "mend/improve/split.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "tests/support/status_matchers.h"

namespace mend::improve {
namespace {

using ::mend::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<Case> MakeCases(int n) {
  std::vector<Case> cases;
  for (int i = 0; i < n; ++i) {
    Case c;
    c.id = "c" + std::to_string(i);
    c.task = "task " + std::to_string(i);
    cases.push_back(c);
  }
  return cases;
}

std::vector<std::string> Ids(const std::vector<Case>& cases) {
  std::vector<std::string> ids;
  for (const Case& c : cases) ids.push_back(c.id);
  return ids;
}

TEST(SplitCasesTest, HoldsOutTheRoundedFractionAndRecordsItsInputs) {
  const Split split = SplitCases(MakeCases(10), 0.25, 7);
  EXPECT_EQ(split.held_out.size(), 3u);  // 2.5 rounds up
  EXPECT_EQ(split.training.size(), 7u);
  EXPECT_EQ(split.held_out_fraction, 0.25);
  EXPECT_EQ(split.seed, 7u);
}

TEST(SplitCasesTest, HeldOutCasesNeverAppearInTraining) {
  const std::vector<Case> cases = MakeCases(40);
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    const Split split = SplitCases(cases, 0.3, seed);
    const std::vector<std::string> training_ids = Ids(split.training);
    std::set<std::string> training(training_ids.begin(), training_ids.end());
    std::set<std::string> all = training;
    for (const Case& c : split.held_out) {
      EXPECT_EQ(training.count(c.id), 0u) << c.id << " seed " << seed;
      all.insert(c.id);
    }
    EXPECT_EQ(all.size(), cases.size());
    EXPECT_EQ(split.training.size() + split.held_out.size(), cases.size());
  }
}

TEST(SplitCasesTest, SameSeedSameSplitAndOtherSeedsDiffer) {
  const std::vector<Case> cases = MakeCases(30);
  const Split a = SplitCases(cases, 0.3, 42);
  const Split b = SplitCases(cases, 0.3, 42);
  EXPECT_EQ(Ids(a.held_out), Ids(b.held_out));
  EXPECT_EQ(Ids(a.training), Ids(b.training));
  bool some_differs = false;
  for (std::uint64_t seed = 43; seed < 53; ++seed) {
    some_differs = some_differs || Ids(SplitCases(cases, 0.3, seed).held_out) != Ids(a.held_out);
  }
  EXPECT_TRUE(some_differs);
}

TEST(SplitCasesTest, FollowsTheDocumentedRule) {
  // SHA-256 of "1:c0".."1:c5" (as `printf '1:c0' | sha256sum` prints) starts with 15, e2, 69, 62,
  // 7f and 3a, so the three smallest keys belong to c0, c5 and c3; the lists keep input order.
  // A change here changes every recorded split.
  const Split split = SplitCases(MakeCases(6), 0.5, 1);
  EXPECT_THAT(Ids(split.held_out), ElementsAre("c0", "c3", "c5"));
  EXPECT_THAT(Ids(split.training), ElementsAre("c1", "c2", "c4"));
}

TEST(SplitCasesTest, InputOrderDoesNotChangeMembershipAndIsKept) {
  std::vector<Case> cases = MakeCases(20);
  const Split forward = SplitCases(cases, 0.4, 9);
  std::reverse(cases.begin(), cases.end());
  const Split backward = SplitCases(cases, 0.4, 9);
  std::vector<std::string> reversed_held = Ids(backward.held_out);
  std::reverse(reversed_held.begin(), reversed_held.end());
  EXPECT_EQ(Ids(forward.held_out), reversed_held);
}

TEST(SplitCasesTest, AlwaysKeepsOneTrainingCase) {
  EXPECT_EQ(SplitCases(MakeCases(1), 0.9, 1).training.size(), 1u);
  EXPECT_THAT(SplitCases(MakeCases(1), 0.9, 1).held_out, IsEmpty());
  EXPECT_EQ(SplitCases(MakeCases(2), 0.99, 1).training.size(), 1u);
  EXPECT_EQ(SplitCases(MakeCases(2), 0.99, 1).held_out.size(), 1u);
}

TEST(SplitCasesTest, ZeroFractionAndNoCases) {
  EXPECT_THAT(SplitCases(MakeCases(5), 0.0, 1).held_out, IsEmpty());
  const Split empty = SplitCases({}, 0.5, 1);
  EXPECT_THAT(empty.training, IsEmpty());
  EXPECT_THAT(empty.held_out, IsEmpty());
}

TEST(CheckedSplitCasesTest, RejectsFractionsOutsideTheRange) {
  for (double bad : {-0.1, 1.0, 1.5, std::numeric_limits<double>::quiet_NaN()}) {
    EXPECT_THAT(CheckedSplitCases(MakeCases(3), bad, 1), StatusIs(StatusCode::kInvalidArgument))
        << bad;
  }
  EXPECT_TRUE(CheckedSplitCases(MakeCases(3), 0.0, 1).ok());
  EXPECT_TRUE(CheckedSplitCases(MakeCases(3), 0.99, 1).ok());
}

TEST(CheckedSplitCasesTest, RejectsDuplicateIds) {
  std::vector<Case> cases = MakeCases(3);
  cases[2].id = cases[0].id;
  EXPECT_THAT(CheckedSplitCases(cases, 0.3, 1),
              StatusIs(StatusCode::kInvalidArgument, ::testing::HasSubstr("\"c0\"")));
}

TEST(CheckedSplitCasesTest, MatchesSplitCases) {
  const auto checked = CheckedSplitCases(MakeCases(12), 0.25, 5);
  ASSERT_TRUE(checked.ok()) << checked.status();
  EXPECT_EQ(Ids(checked->held_out), Ids(SplitCases(MakeCases(12), 0.25, 5).held_out));
}

}  // namespace
}  // namespace mend::improve
