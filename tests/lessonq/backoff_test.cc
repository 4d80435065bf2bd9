#include "lessonq/backoff.h"

#include <gtest/gtest.h>

#include <chrono>

#include "mend/base/random.h"

namespace mend::lessonq {
namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

TEST(RetryDelayTest, GrowsExponentiallyWithoutJitter) {
  const BackoffPolicy policy{seconds(1), minutes(5), 2.0, 0.0};
  EXPECT_EQ(RetryDelay(policy, 1, 0.7), Duration(seconds(1)));
  EXPECT_EQ(RetryDelay(policy, 2, 0.7), Duration(seconds(2)));
  EXPECT_EQ(RetryDelay(policy, 3, 0.7), Duration(seconds(4)));
  EXPECT_EQ(RetryDelay(policy, 5, 0.7), Duration(seconds(16)));
}

TEST(RetryDelayTest, IsCappedAtMaxDelay) {
  const BackoffPolicy policy{seconds(1), minutes(5), 2.0, 0.0};
  EXPECT_EQ(RetryDelay(policy, 9, 0.0), Duration(seconds(256)));
  EXPECT_EQ(RetryDelay(policy, 10, 0.0), Duration(minutes(5)));
  EXPECT_EQ(RetryDelay(policy, 5000, 0.0), Duration(minutes(5)));
}

TEST(RetryDelayTest, AttemptsBelowOneCountAsTheFirst) {
  const BackoffPolicy policy{milliseconds(250), minutes(5), 3.0, 0.0};
  EXPECT_EQ(RetryDelay(policy, 0, 0.5), Duration(milliseconds(250)));
  EXPECT_EQ(RetryDelay(policy, 2, 0.5), Duration(milliseconds(750)));
}

TEST(RetryDelayTest, JitterScalesTheCappedDelay) {
  const BackoffPolicy policy{seconds(1), seconds(10), 2.0, 0.2};
  EXPECT_EQ(RetryDelay(policy, 3, 0.0), Duration(milliseconds(3200)));
  EXPECT_EQ(RetryDelay(policy, 3, 0.5), Duration(seconds(4)));
  EXPECT_EQ(RetryDelay(policy, 10, 0.0), Duration(seconds(8)));  // cap first, then jitter
}

TEST(RetryDelayTest, JitteredDelaysStayWithinBoundsAndVary) {
  const BackoffPolicy policy{seconds(1), minutes(5), 2.0, 0.2};
  SeededRandom random(42);
  Duration lowest = Duration::max();
  Duration highest = Duration::min();
  for (int i = 0; i < 1000; ++i) {
    const Duration d = RetryDelay(policy, 4, random.Uniform01());
    EXPECT_GE(d, Duration(milliseconds(6400)));
    EXPECT_LE(d, Duration(milliseconds(9600)));
    lowest = std::min(lowest, d);
    highest = std::max(highest, d);
  }
  EXPECT_LT(lowest, Duration(milliseconds(7000)));
  EXPECT_GT(highest, Duration(milliseconds(9000)));
}

}  // namespace
}  // namespace mend::lessonq
