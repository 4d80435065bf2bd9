#include "mend/base/retry_after.h"

#include <gtest/gtest.h>

namespace mend {
namespace {

// 1994-11-06T08:49:37Z, the RFC's example date.
const Time kNow = std::chrono::system_clock::from_time_t(784111777);
constexpr auto kHour = std::chrono::hours(1);

TEST(RetryAfterTest, DeltaSecondsAndDates) {
  EXPECT_EQ(ParseRetryAfter("120", kNow, kHour), std::chrono::seconds(120));
  EXPECT_EQ(ParseRetryAfter(" 0 ", kNow, kHour), Duration::zero());
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:49:47 GMT", kNow, kHour),
            std::chrono::seconds(10));
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:00:00 GMT", kNow, kHour), Duration::zero());
}

TEST(RetryAfterTest, LongWaitsAreTheLongestWithoutOverflow) {
  EXPECT_EQ(ParseRetryAfter("7200", kNow, kHour), kHour);
  EXPECT_EQ(ParseRetryAfter("99999999999999999999", kNow, kHour), kHour);
  EXPECT_EQ(ParseRetryAfter("Fri, 31 Dec 9999 23:59:59 GMT", kNow, kHour), kHour);
  EXPECT_EQ(ParseRetryAfter("Mon, 01 Jan 0215 00:00:00 GMT", kNow, kHour), Duration::zero());
}

TEST(RetryAfterTest, AnythingElseIsNothing) {
  for (const char* bad : {"", "  ", "soon", "-5", "1.5", "5s", "Sun, 06 Nov 1994 08:49:47",
                          "06 Nov 1994 08:49:47 GMT"}) {
    EXPECT_EQ(ParseRetryAfter(bad, kNow, kHour), std::nullopt) << bad;
  }
}

}  // namespace
}  // namespace mend
