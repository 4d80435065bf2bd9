#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "mend/obs/otlp.h"
#include "tests/support/status_matchers.h"

namespace mend::obs {
namespace {

using ::mend::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pair;

TEST(OtlpHeadersTest, ParsesPairsTrimsAndPercentDecodes) {
  Result<std::vector<HttpHeader>> h =
      ParseOtlpHeaders(" api-key = s%3Dcr%2Ct ,x-tenant=a b,, Authorization=Bearer%20tok ");
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_THAT(*h, ElementsAre(Pair("api-key", "s=cr,t"), Pair("x-tenant", "a b"),
                              Pair("Authorization", "Bearer tok")));
  EXPECT_THAT(*ParseOtlpHeaders(""), ElementsAre());
  EXPECT_THAT(*ParseOtlpHeaders("a="), ElementsAre(Pair("a", "")));
  EXPECT_THAT(*ParseOtlpHeaders("a=b=c"), ElementsAre(Pair("a", "b=c")));
}

TEST(OtlpHeadersTest, RejectsMalformedMembersWithoutEchoingValues) {
  EXPECT_THAT(ParseOtlpHeaders("a=1,novalue"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("member 2 has no '='")));
  EXPECT_THAT(ParseOtlpHeaders("=secret"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseOtlpHeaders("bad name=x"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseOtlpHeaders("k=sec%zzret"),
              StatusIs(StatusCode::kInvalidArgument, Not(HasSubstr("sec"))));
  EXPECT_THAT(ParseOtlpHeaders("k=abc%4"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseOtlpHeaders("k=a%0D%0AInjected: 1"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("control character")));
}

TEST(OtlpTracesUrlTest, AppendsTheTracesPathOnlyWhenThereIsNone) {
  EXPECT_EQ(*OtlpTracesUrl("http://collector:4318"), "http://collector:4318/v1/traces");
  EXPECT_EQ(*OtlpTracesUrl("http://collector:4318/"), "http://collector:4318/v1/traces");
  EXPECT_EQ(*OtlpTracesUrl("https://h/?x=1"), "https://h/v1/traces?x=1");
  EXPECT_EQ(*OtlpTracesUrl("https://h/custom/path"), "https://h/custom/path");
  EXPECT_EQ(*OtlpTracesUrl("http://u:p@h:1/v1/traces"), "http://u:p@h:1/v1/traces");
}

TEST(OtlpTracesUrlTest, RejectsWhatIsNotAnHttpUrl) {
  for (const char* bad :
       {"", "collector:4318", "ftp://h", "http://", "http://:4318/x", "http://h/a b"}) {
    EXPECT_THAT(OtlpTracesUrl(bad), StatusIs(StatusCode::kInvalidArgument)) << bad;
  }
}

TEST(OtlpProtocolTest, ParsesBothProtocols) {
  EXPECT_EQ(*ParseOtlpProtocol("http/protobuf"), OtlpProtocol::kHttpProtobuf);
  EXPECT_EQ(*ParseOtlpProtocol("http/json"), OtlpProtocol::kHttpJson);
  EXPECT_THAT(ParseOtlpProtocol("grpc"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_EQ(OtlpContentType(OtlpProtocol::kHttpJson), "application/json");
  EXPECT_EQ(OtlpContentType(OtlpProtocol::kHttpProtobuf), "application/x-protobuf");
}

TEST(RetryAfterTest, ParsesSecondsAndHttpDates) {
  const Time now = std::chrono::system_clock::from_time_t(784111777);  // 06 Nov 1994 08:49:37
  EXPECT_EQ(ParseRetryAfter("120", now), std::chrono::seconds(120));
  EXPECT_EQ(ParseRetryAfter(" 0 ", now), std::chrono::seconds(0));
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:49:47 GMT", now), std::chrono::seconds(10));
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:00:00 GMT", now), Duration::zero());
  EXPECT_EQ(ParseRetryAfter("soon", now), std::nullopt);
  EXPECT_EQ(ParseRetryAfter("-5", now), std::nullopt);
  EXPECT_EQ(ParseRetryAfter("", now), std::nullopt);
  // Beyond what a nanosecond time point holds: a very long wait, not an overflow.
  EXPECT_GT(ParseRetryAfter("Fri, 31 Dec 9999 23:59:59 GMT", now).value(),
            std::chrono::hours(24 * 365));
}

// The same overflow as llm's ParseRetryAfter, found there by fuzz/provider_response_fuzz: a date
// long before what a nanosecond time point holds.
TEST(RetryAfterTest, FarPastDateIsNoWaitNotAnOverflow) {
  const Time now = std::chrono::system_clock::from_time_t(784111777);
  EXPECT_EQ(ParseRetryAfter("Wed, 21 Oct 215 07:28:00 GMT", now), Duration::zero());
}

}  // namespace
}  // namespace mend::obs
