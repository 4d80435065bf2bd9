#include "mend/base/time_format.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/status_matchers.h"

namespace mend {
namespace {

using ::mend::testing::StatusIs;
using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::nanoseconds;
using std::chrono::seconds;

// 2006-01-02T15:04:05Z, the reference instant of Go's time package.
Time Reference() { return Time(seconds{1136214245}); }

TEST(FormatRfc3339Test, FormatsUtcWithZ) {
  EXPECT_EQ(FormatRfc3339(Time()), "1970-01-01T00:00:00Z");
  EXPECT_EQ(FormatRfc3339(Reference()), "2006-01-02T15:04:05Z");
  EXPECT_EQ(FormatRfc3339Seconds(Reference()), "2006-01-02T15:04:05Z");
}

TEST(FormatRfc3339Test, TrimsTrailingZerosOfTheFraction) {
  EXPECT_EQ(FormatRfc3339(Reference() + milliseconds{500}), "2006-01-02T15:04:05.5Z");
  EXPECT_EQ(FormatRfc3339(Reference() + nanoseconds{120}), "2006-01-02T15:04:05.00000012Z");
  EXPECT_EQ(FormatRfc3339(Reference() + nanoseconds{999999999}), "2006-01-02T15:04:05.999999999Z");
  EXPECT_EQ(FormatRfc3339Seconds(Reference() + nanoseconds{999999999}), "2006-01-02T15:04:05Z");
}

TEST(FormatRfc3339Test, HandlesTimesBeforeTheEpoch) {
  EXPECT_EQ(FormatRfc3339(Time() - milliseconds{1}), "1969-12-31T23:59:59.999Z");
  EXPECT_EQ(FormatRfc3339(Time(seconds{-86400LL * 365})), "1969-01-01T00:00:00Z");
}

TEST(ParseRfc3339Test, ParsesUtc) {
  EXPECT_EQ(ParseRfc3339("2006-01-02T15:04:05Z").value(), Reference());
  EXPECT_EQ(ParseRfc3339("2006-01-02t15:04:05z").value(), Reference());
  EXPECT_EQ(ParseRfc3339("2006-01-02T15:04:05.25Z").value(), Reference() + milliseconds{250});
  EXPECT_EQ(ParseRfc3339("2006-01-02T15:04:05.000000001Z").value(), Reference() + nanoseconds{1});
}

TEST(ParseRfc3339Test, NormalisesOffsetsToUtc) {
  EXPECT_EQ(ParseRfc3339("2006-01-02T08:04:05-07:00").value(), Reference());
  EXPECT_EQ(ParseRfc3339("2006-01-03T00:34:05+09:30").value(), Reference());
  EXPECT_EQ(ParseRfc3339("2006-01-02T15:04:05+00:00").value(), Reference());
  EXPECT_EQ(FormatRfc3339(ParseRfc3339("2024-12-31T23:30:00-01:00").value()),
            "2025-01-01T00:30:00Z");
}

TEST(ParseRfc3339Test, RoundTripsFormattedTimes) {
  const std::vector<Time> times = {
      Time(),
      Reference(),
      Reference() + nanoseconds{123456789},
      Time(seconds{951782400}),  // 2000-02-29
      Time() - nanoseconds{1},
      Time(seconds{4102444799}) + nanoseconds{1},  // 2099-12-31T23:59:59
  };
  for (const Time t : times) {
    const std::string text = FormatRfc3339(t);
    EXPECT_EQ(ParseRfc3339(text).value(), t) << text;
  }
}

TEST(ParseRfc3339Test, HandlesLeapYears) {
  EXPECT_EQ(FormatRfc3339(ParseRfc3339("2024-02-29T12:00:00Z").value()), "2024-02-29T12:00:00Z");
  EXPECT_EQ(FormatRfc3339(ParseRfc3339("2000-02-29T00:00:00Z").value()), "2000-02-29T00:00:00Z");
  EXPECT_THAT(ParseRfc3339("2023-02-29T00:00:00Z"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseRfc3339("1900-02-29T00:00:00Z"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_EQ(
      ParseRfc3339("2024-03-01T00:00:00Z").value() - ParseRfc3339("2024-02-28T00:00:00Z").value(),
      hours{48});
}

TEST(ParseRfc3339Test, RejectsInvalidInput) {
  const std::vector<std::string> bad = {
      "",
      "2006-01-02",
      "2006-01-02T15:04:05",              // no zone
      "2006-01-02 15:04:05Z",             // space separator
      "2006-02-30T00:00:00Z",             // no such day
      "2006-13-01T00:00:00Z",             // month 13
      "2006-00-01T00:00:00Z",             // month 0
      "2006-01-00T00:00:00Z",             // day 0
      "2006-01-02T24:00:00Z",             // hour 24
      "2006-01-02T15:60:00Z",             // minute 60
      "2006-01-02T15:04:60Z",             // leap second
      "2006-01-02T15:04:05.Z",            // empty fraction
      "2006-01-02T15:04:05.1234567891Z",  // ten fraction digits
      "2006-01-02T15:04:05+0700",         // offset without colon
      "2006-01-02T15:04:05+24:00",        // offset hour out of range
      "2006-01-02T15:04:05Z ",            // trailing text
      "06-01-02T15:04:05Z",
      "2006-1-02T15:04:05Z",
      "+006-01-02T15:04:05Z",
      "9999-12-31T23:59:59Z",  // beyond what Time holds
      "0001-01-01T00:00:00Z",
      // Found by chatcli_import_fuzz: enough fraction digits overflowed the fraction before its
      // length was checked (UBSan reports it in the asan preset).
      "2026-03-01T10:00:00.1239223372036854775808456789+02:00",
  };
  for (const std::string& s : bad) {
    EXPECT_THAT(ParseRfc3339(s), StatusIs(StatusCode::kInvalidArgument)) << s;
  }
}

TEST(ParseDurationTest, ParsesGoDurations) {
  EXPECT_EQ(ParseDuration("30s").value(), seconds{30});
  EXPECT_EQ(ParseDuration("5m").value(), minutes{5});
  EXPECT_EQ(ParseDuration("1h30m").value(), minutes{90});
  EXPECT_EQ(ParseDuration("250ms").value(), milliseconds{250});
  EXPECT_EQ(ParseDuration("168h").value(), hours{168});
  EXPECT_EQ(ParseDuration("1.5h").value(), minutes{90});
  EXPECT_EQ(ParseDuration(".5s").value(), milliseconds{500});
  EXPECT_EQ(ParseDuration("1.s").value(), seconds{1});
  EXPECT_EQ(ParseDuration("0").value(), milliseconds{0});
  EXPECT_EQ(ParseDuration("+2s").value(), seconds{2});
  EXPECT_EQ(ParseDuration("-1m30s").value(), seconds{-90});
  EXPECT_EQ(ParseDuration("1h2m3s4ms").value(), milliseconds{3723004});
}

TEST(ParseDurationTest, ADayIsTwentyFourHours) {
  EXPECT_EQ(ParseDuration("30d").value(), hours{24 * 30});
  EXPECT_EQ(ParseDuration("1d12h").value(), hours{36});
  EXPECT_EQ(ParseDuration("0.5d").value(), hours{12});
  EXPECT_EQ(ParseDuration("-2d").value(), hours{-48});
  EXPECT_EQ(ParseDuration("106751d").value(), hours{24 * 106751});
  // FormatDuration stays Go's: days are written as hours, and read back exactly.
  EXPECT_EQ(FormatDuration(ParseDuration("30d").value()), "720h0m0s");
}

TEST(ParseDurationTest, TruncatesBelowAMillisecond) {
  EXPECT_EQ(ParseDuration("1500us").value(), milliseconds{1});
  EXPECT_EQ(ParseDuration("2000\xC2\xB5s").value(), milliseconds{2});
  EXPECT_EQ(ParseDuration("3000\xCE\xBCs").value(), milliseconds{3});
  EXPECT_EQ(ParseDuration("999999ns").value(), milliseconds{0});
  EXPECT_EQ(ParseDuration("-1999us").value(), milliseconds{-1});
}

TEST(ParseDurationTest, RejectsInvalidInput) {
  const std::vector<std::string> bad = {"",     "s",      "10",       "d",
                                        "1dd",  "1D",     "106752d",  "1 h",
                                        " 1h",  "1h ",    "-",        ".",
                                        ".s",   "1.2.3s", "h1",       "1hh",
                                        "--1s", "1e3s",   "3000000h", "9223372036854775808ns"};
  for (const std::string& s : bad) {
    EXPECT_THAT(ParseDuration(s), StatusIs(StatusCode::kInvalidArgument)) << s;
  }
}

TEST(ParseDurationTest, AcceptsTheExtremes) {
  EXPECT_EQ(ParseDuration("2562047h").value(), hours{2562047});
  EXPECT_EQ(ParseDuration("-9223372036854775808ns").value(), milliseconds{-9223372036854});
}

TEST(FormatDurationTest, FormatsLikeGo) {
  EXPECT_EQ(FormatDuration(milliseconds{0}), "0s");
  EXPECT_EQ(FormatDuration(milliseconds{250}), "250ms");
  EXPECT_EQ(FormatDuration(milliseconds{1500}), "1.5s");
  EXPECT_EQ(FormatDuration(milliseconds{1050}), "1.05s");
  EXPECT_EQ(FormatDuration(seconds{30}), "30s");
  EXPECT_EQ(FormatDuration(seconds{90}), "1m30s");
  EXPECT_EQ(FormatDuration(minutes{90}), "1h30m0s");
  EXPECT_EQ(FormatDuration(hours{168}), "168h0m0s");
  EXPECT_EQ(FormatDuration(hours{1} + milliseconds{1}), "1h0m0.001s");
  EXPECT_EQ(FormatDuration(milliseconds{-90000}), "-1m30s");
  EXPECT_EQ(FormatDuration(milliseconds{-5}), "-5ms");
}

TEST(FormatDurationTest, RoundTripsThroughParse) {
  const std::vector<milliseconds> values = {
      milliseconds{0},     milliseconds{1},        milliseconds{999},     milliseconds{1001},
      milliseconds{-1234}, milliseconds{86400000}, milliseconds{3723004}, hours{2562047},
      milliseconds::min(), milliseconds::max(),    milliseconds{-59999}};
  for (const milliseconds d : values) {
    if (d == milliseconds::min() || d == milliseconds::max()) {
      // Beyond Go's nanosecond range: formatting must still work, parsing reports the overflow.
      EXPECT_THAT(ParseDuration(FormatDuration(d)), StatusIs(StatusCode::kInvalidArgument));
      continue;
    }
    EXPECT_EQ(ParseDuration(FormatDuration(d)).value(), d) << FormatDuration(d);
  }
}

}  // namespace
}  // namespace mend
