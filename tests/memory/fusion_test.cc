#include "memory/fusion.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace mend::memory {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<std::string> Ids(const std::vector<FusedScore>& fused) {
  std::vector<std::string> ids;
  for (const auto& f : fused) ids.push_back(f.id);
  return ids;
}

TEST(FuseReciprocalRankTest, SumsReciprocalRanksAcrossLists) {
  auto fused = FuseReciprocalRank({{{"a", "b", "c"}, 1.0}, {{"b", "d"}, 1.0}}, 60);
  ASSERT_EQ(fused.size(), 4u);
  EXPECT_THAT(Ids(fused), ElementsAre("b", "a", "d", "c"));
  EXPECT_DOUBLE_EQ(fused[0].score, 1.0 / 62 + 1.0 / 61);
  EXPECT_DOUBLE_EQ(fused[1].score, 1.0 / 61);
  EXPECT_DOUBLE_EQ(fused[2].score, 1.0 / 62);
  EXPECT_DOUBLE_EQ(fused[3].score, 1.0 / 63);
}

TEST(FuseReciprocalRankTest, WeightsScaleVotes) {
  auto fused = FuseReciprocalRank({{{"a"}, 0.5}, {{"b"}, 2.0}}, 10);
  EXPECT_THAT(Ids(fused), ElementsAre("b", "a"));
  EXPECT_DOUBLE_EQ(fused[0].score, 2.0 / 11);
  EXPECT_DOUBLE_EQ(fused[1].score, 0.5 / 11);
}

TEST(FuseReciprocalRankTest, HeavierSecondListOverturnsFirst) {
  auto fused = FuseReciprocalRank({{{"a", "b"}, 1.0}, {{"b", "a"}, 3.0}}, 1);
  EXPECT_THAT(Ids(fused), ElementsAre("b", "a"));
  EXPECT_DOUBLE_EQ(fused[0].score, 1.0 / 3 + 3.0 / 2);
  EXPECT_DOUBLE_EQ(fused[1].score, 1.0 / 2 + 3.0 / 3);
}

TEST(FuseReciprocalRankTest, TiesAreOrderedById) {
  auto fused = FuseReciprocalRank({{{"zeta", "beta"}, 1.0}, {{"alpha", "gamma"}, 1.0}}, 60);
  EXPECT_THAT(Ids(fused), ElementsAre("alpha", "zeta", "beta", "gamma"));
}

TEST(FuseReciprocalRankTest, DuplicateInOneListVotesOnceAtBestRank) {
  auto fused = FuseReciprocalRank({{{"a", "b", "a"}, 1.0}}, 60);
  ASSERT_EQ(fused.size(), 2u);
  EXPECT_EQ(fused[0].id, "a");
  EXPECT_DOUBLE_EQ(fused[0].score, 1.0 / 61);
}

TEST(FuseReciprocalRankTest, NoListsGiveNothing) {
  EXPECT_THAT(FuseReciprocalRank({}), IsEmpty());
  EXPECT_THAT(FuseReciprocalRank({{{}, 1.0}}), IsEmpty());
}

// Candidates 0 and 1 are near-duplicates; 2 is different but slightly less relevant.
double NearDuplicates(size_t i, size_t j) {
  if (i == j) return 1.0;
  return (i <= 1 && j <= 1) ? 0.95 : 0.1;
}

TEST(SelectDiverseTest, PrefersDiverseItemOverNearDuplicate) {
  EXPECT_THAT(SelectDiverse({0.9, 0.85, 0.7}, 2, 0.5, NearDuplicates), ElementsAre(0, 2));
  EXPECT_THAT(SelectDiverse({0.9, 0.85, 0.7}, 3, 0.5, NearDuplicates), ElementsAre(0, 2, 1));
}

TEST(SelectDiverseTest, LambdaOneIsPureRelevanceOrder) {
  EXPECT_THAT(SelectDiverse({0.9, 0.85, 0.7}, 3, 1.0, NearDuplicates), ElementsAre(0, 1, 2));
  EXPECT_THAT(SelectDiverse({0.2, 0.8, 0.5}, 3, 1.0, NearDuplicates), ElementsAre(1, 2, 0));
}

TEST(SelectDiverseTest, CapsAtNAndAtCandidateCount) {
  EXPECT_THAT(SelectDiverse({0.9, 0.8, 0.7}, 1, 0.7, NearDuplicates), ElementsAre(0));
  EXPECT_THAT(SelectDiverse({0.9, 0.8}, 5, 0.7, NearDuplicates), ElementsAre(0, 1));
  EXPECT_THAT(SelectDiverse({}, 3, 0.7, NearDuplicates), IsEmpty());
  EXPECT_THAT(SelectDiverse({0.9}, 0, 0.7, NearDuplicates), IsEmpty());
}

TEST(SelectDiverseTest, EqualScoresKeepTheEarlierCandidate) {
  auto none = [](size_t, size_t) { return 0.0; };
  EXPECT_THAT(SelectDiverse({0.5, 0.5, 0.5}, 3, 0.7, none), ElementsAre(0, 1, 2));
}

TEST(SelectDiverseTest, ComparesOnlyAgainstPickedItems) {
  std::vector<std::pair<size_t, size_t>> calls;
  auto record = [&](size_t i, size_t j) {
    calls.emplace_back(i, j);
    return 0.0;
  };
  SelectDiverse({0.9, 0.8, 0.7}, 2, 0.5, record);
  for (const auto& [picked, other] : calls) {
    EXPECT_NE(picked, other);
    EXPECT_EQ(picked == 0 || picked == 1, true);
  }
  EXPECT_FALSE(calls.empty());
}

}  // namespace
}  // namespace mend::memory
