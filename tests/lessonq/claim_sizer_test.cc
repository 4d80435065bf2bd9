#include "lessonq/claim_sizer.h"

#include <gtest/gtest.h>

#include <chrono>

namespace mend::lessonq {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(ClaimSizerTest, ClaimsOneJobUntilAnAttemptHasEnded) {
  ClaimSizer sizer(seconds(1), 64);
  EXPECT_EQ(sizer.Limit(), 1);
  sizer.Record(Duration::zero());
  EXPECT_EQ(sizer.Limit(), 64);
}

TEST(ClaimSizerTest, TakesAheadWhatTheWorkersStartWithinTheHorizon) {
  ClaimSizer sizer(seconds(1), 64);
  sizer.Record(milliseconds(100));
  EXPECT_EQ(sizer.Limit(), 10);
  sizer.Record(milliseconds(100));
  EXPECT_EQ(sizer.Limit(), 10);
  ClaimSizer fast(seconds(1), 64);
  fast.Record(milliseconds(1));
  EXPECT_EQ(fast.Limit(), 64);  // capped
}

TEST(ClaimSizerTest, SlowAttemptsClaimOneJobAtATime) {
  ClaimSizer sizer(seconds(1), 64);
  sizer.Record(seconds(5));
  EXPECT_EQ(sizer.Limit(), 1);
}

TEST(ClaimSizerTest, OneSlowAttemptAfterFastOnesShrinksTheNextClaim) {
  ClaimSizer sizer(seconds(1), 64);
  for (int i = 0; i < 20; ++i) sizer.Record(Duration::zero());
  ASSERT_EQ(sizer.Limit(), 64);
  sizer.Record(seconds(20));  // the mean becomes 5 s
  EXPECT_EQ(sizer.Limit(), 1);
  for (int i = 0; i < 40; ++i) sizer.Record(Duration::zero());
  EXPECT_EQ(sizer.Limit(), 64);  // and grows back as attempts are fast again
}

TEST(ClaimSizerTest, NoHorizonNeverTakesAhead) {
  ClaimSizer sizer(Duration::zero(), 64);
  sizer.Record(Duration::zero());
  EXPECT_EQ(sizer.Limit(), 1);
  ClaimSizer capped(seconds(1), 0);  // a cap below 1 counts as 1
  capped.Record(Duration::zero());
  EXPECT_EQ(capped.Limit(), 1);
}

}  // namespace
}  // namespace mend::lessonq
