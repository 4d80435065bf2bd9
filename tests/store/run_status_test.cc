#include <gtest/gtest.h>

#include "mend/store/checkpoint_store.h"
#include "tests/support/status_matchers.h"

namespace mend::store {
namespace {

using ::mend::testing::StatusIs;

constexpr RunStatus kAll[] = {RunStatus::kRunning, RunStatus::kWaiting, RunStatus::kCompleted,
                              RunStatus::kFailed, RunStatus::kQuarantined};

TEST(RunStatusTest, NamesRoundTrip) {
  for (RunStatus s : kAll) {
    Result<RunStatus> parsed = ParseRunStatus(RunStatusName(s));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, s);
  }
  EXPECT_EQ(RunStatusName(RunStatus::kQuarantined), "quarantined");
  EXPECT_THAT(ParseRunStatus("Running"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseRunStatus(""), StatusIs(StatusCode::kInvalidArgument));
}

TEST(RunStatusTest, TransitionTable) {
  using S = RunStatus;
  // [from][to] in kAll order: running, waiting, completed, failed, quarantined.
  constexpr bool kAllowed[5][5] = {
      {true, true, true, true, true},      // running
      {true, true, false, false, false},   // waiting
      {false, false, true, false, false},  // completed
      {true, false, false, true, true},    // failed
      {true, false, false, false, true},   // quarantined
  };
  for (int from = 0; from < 5; ++from) {
    for (int to = 0; to < 5; ++to) {
      Status s = CheckRunTransition(kAll[from], kAll[to]);
      EXPECT_EQ(s.ok(), kAllowed[from][to])
          << RunStatusName(kAll[from]) << " -> " << RunStatusName(kAll[to]);
      if (!s.ok()) {
        EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
      }
    }
  }
  EXPECT_TRUE(CheckRunTransition(S::kCompleted, S::kCompleted).ok());
}

}  // namespace
}  // namespace mend::store
