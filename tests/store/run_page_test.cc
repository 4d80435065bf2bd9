#include "mend/store/run_page.h"

#include <chrono>
#include <string>

#include "tests/support/status_matchers.h"

namespace mend::store {
namespace {

using ::mend::testing::StatusIs;

TEST(RunCursorTest, TextRoundTripsAndNeedsNoQuoting) {
  RunCursor cursor{Time(std::chrono::nanoseconds(1'700'000'000'123'456'789)),
                   std::string("run-7.heal_x 'y'%\n\xff\0:", 21)};
  const std::string text = FormatRunCursor(cursor);
  EXPECT_EQ(text, "1700000000123456789:run-7.heal_x%20%27y%27%25%0A%FF%00%3A");
  Result<RunCursor> back = ParseRunCursor(text);
  MEND_ASSERT_OK(back);
  EXPECT_EQ(*back, cursor);
  EXPECT_EQ(FormatRunCursor(RunCursor{Time(), "r1"}), "0:r1");
  EXPECT_EQ(ParseRunCursor("0:r1")->id, "r1");
}

TEST(RunCursorTest, AnythingElseIsInvalidArgument) {
  for (const char* bad :
       {"", ":r1", "17:", "17", "17-r1", "x17:r1", "-1:r1", "17:r 1", " 17:r1", "17:r1 ", "17:r%2",
        "17:r%zz", "17:r%2a", "17:%41", "17:a/b", "99999999999999999999:r1"}) {
    EXPECT_THAT(ParseRunCursor(bad), StatusIs(StatusCode::kInvalidArgument)) << bad;
  }
}

TEST(PendingQueryTest, LimitsAndStatusesAreChecked) {
  PendingQuery query;
  MEND_EXPECT_OK(ValidatePendingQuery(query));
  EXPECT_EQ(query.limit, 20u);
  query.limit = 0;
  EXPECT_THAT(ValidatePendingQuery(query), StatusIs(StatusCode::kInvalidArgument));
  query.limit = kMaxPendingPageSize + 1;
  EXPECT_THAT(ValidatePendingQuery(query), StatusIs(StatusCode::kInvalidArgument));
  query.limit = kMaxPendingPageSize;
  query.statuses = {RunStatus::kRunning, RunStatus::kWaiting, RunStatus::kFailed,
                    RunStatus::kQuarantined};
  MEND_EXPECT_OK(ValidatePendingQuery(query));
  query.statuses.push_back(RunStatus::kCompleted);
  EXPECT_THAT(ValidatePendingQuery(query), StatusIs(StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace mend::store
