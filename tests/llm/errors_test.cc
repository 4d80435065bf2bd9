#include "llm/errors.h"

#include <gtest/gtest.h>

#include "tests/support/status_matchers.h"

namespace mend::llm {
namespace {

using ::mend::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

const Time kNow = std::chrono::system_clock::from_time_t(784111777);  // 1994-11-06 08:49:37 UTC

HttpResponse Response(int status, std::string body, std::string content_type = "application/json") {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  r.content_type = std::move(content_type);
  return r;
}

struct Case {
  int http;
  StatusCode code;
  ErrorClass cls;
};

TEST(HttpErrorToStatusTest, MapsEveryStatusToCodeAndClass) {
  const Case cases[] = {
      {400, StatusCode::kInvalidArgument, ErrorClass::kPermanent},
      {401, StatusCode::kUnauthenticated, ErrorClass::kAuth},
      {403, StatusCode::kPermissionDenied, ErrorClass::kAuth},
      {404, StatusCode::kNotFound, ErrorClass::kPermanent},
      {408, StatusCode::kDeadlineExceeded, ErrorClass::kTransient},
      {409, StatusCode::kUnavailable, ErrorClass::kTransient},
      {413, StatusCode::kFailedPrecondition, ErrorClass::kPermanent},
      {422, StatusCode::kInvalidArgument, ErrorClass::kPermanent},
      {429, StatusCode::kResourceExhausted, ErrorClass::kTransient},
      {500, StatusCode::kUnavailable, ErrorClass::kTransient},
      {502, StatusCode::kUnavailable, ErrorClass::kTransient},
      {503, StatusCode::kUnavailable, ErrorClass::kTransient},
      {504, StatusCode::kUnavailable, ErrorClass::kTransient},
      {529, StatusCode::kUnavailable, ErrorClass::kTransient},
      {418, StatusCode::kFailedPrecondition, ErrorClass::kPermanent},
  };
  for (const Case& c : cases) {
    Status s = HttpErrorToStatus(
        "openai", Response(c.http, R"({"error":{"message":"boom","type":"x"}})"), kNow);
    EXPECT_THAT(s, StatusIs(c.code)) << c.http;
    EXPECT_EQ(ClassOf(s), c.cls) << c.http;
    EXPECT_EQ(IsRetryable(s), c.cls == ErrorClass::kTransient) << c.http;
    EXPECT_EQ(s.detail_code(), "http_" + std::to_string(c.http));
    EXPECT_EQ(s.message(), "openai HTTP " + std::to_string(c.http) + ": boom");
  }
}

TEST(HttpErrorToStatusTest, ContextLengthIsPermanentWithDetail) {
  Status s = HttpErrorToStatus(
      "openai",
      Response(400, R"({"error":{"message":"too long","code":"context_length_exceeded"}})"), kNow);
  EXPECT_THAT(s, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_EQ(s.detail_code(), "context_length_exceeded");
  EXPECT_EQ(ClassOf(s), ErrorClass::kPermanent);

  Status anthropic =
      HttpErrorToStatus("anthropic",
                        Response(400,
                                 R"({"type":"error","error":{"type":"invalid_request_error",
                   "message":"prompt is too long: 210000 tokens > 200000 maximum"}})"),
                        kNow);
  EXPECT_EQ(anthropic.detail_code(), "context_length_exceeded");
}

TEST(HttpErrorToStatusTest, InsufficientQuotaIsPermanent) {
  HttpResponse r =
      Response(429, R"({"error":{"message":"quota","type":"insufficient_quota","code":null}})");
  r.retry_after = "5";
  Status s = HttpErrorToStatus("openai", r, kNow);
  EXPECT_THAT(s, StatusIs(StatusCode::kResourceExhausted));
  EXPECT_EQ(ClassOf(s), ErrorClass::kPermanent);
  EXPECT_FALSE(IsRetryable(s));
  EXPECT_EQ(s.detail_code(), "insufficient_quota");
}

TEST(HttpErrorToStatusTest, RetryAfterSecondsAndDate) {
  HttpResponse r = Response(429, R"({"error":{"message":"slow down"}})");
  r.retry_after = "7";
  EXPECT_EQ(HttpErrorToStatus("openai", r, kNow).retry_after(), std::chrono::seconds(7));
  r.status = 503;
  r.retry_after = "Sun, 06 Nov 1994 08:50:07 GMT";
  EXPECT_EQ(HttpErrorToStatus("openai", r, kNow).retry_after(), std::chrono::seconds(30));
  r.retry_after = "garbage";
  EXPECT_EQ(HttpErrorToStatus("openai", r, kNow).retry_after(), std::nullopt);
}

// Found by fuzz/provider_response_fuzz: years outside Time's range overflowed the conversion.
TEST(ParseRetryAfterTest, DatesBeyondTimesRangeArePastOrCapped) {
  EXPECT_EQ(ParseRetryAfter("Wed, 21 Oct 215 07:28:00 GMT", kNow), std::chrono::milliseconds(0));
  EXPECT_EQ(ParseRetryAfter("Fri, 31 Dec 9999 23:59:59 GMT", kNow), std::chrono::hours(1));
}

TEST(ParseRetryAfterTest, CapsAbsurdValuesAndPastDates) {
  EXPECT_EQ(ParseRetryAfter("999999999999", kNow), std::chrono::hours(1));
  EXPECT_EQ(ParseRetryAfter("86400", kNow), std::chrono::hours(1));
  EXPECT_EQ(ParseRetryAfter("Sat, 05 Nov 1994 08:49:37 GMT", kNow), std::chrono::milliseconds(0));
  EXPECT_EQ(ParseRetryAfter(" 0 ", kNow), std::chrono::milliseconds(0));
  EXPECT_EQ(ParseRetryAfter("-3", kNow), std::nullopt);
  EXPECT_EQ(ParseRetryAfter("", kNow), std::nullopt);
}

TEST(HttpErrorToStatusTest, HtmlBodyIsDescribedAndTruncated) {
  std::string html = "<html><body><h1>502 Bad Gateway</h1>" + std::string(500, 'x') + "</html>";
  Status s = HttpErrorToStatus("openai", Response(502, html, "text/html"), kNow);
  EXPECT_THAT(s, StatusIs(StatusCode::kUnavailable,
                          HasSubstr("HTTP 502 with a non-JSON body (text/html): <html>")));
  EXPECT_LT(s.message().size(), 200u);
}

TEST(HttpErrorToStatusTest, ProviderMessageIsSanitizedAndTruncated) {
  std::string msg = "bad \xff\xfe bytes\n" + std::string(1000, 'y');
  Status s =
      HttpErrorToStatus("openai", Response(400, R"({"error":{"message":")" + msg + R"("}})"), kNow);
  EXPECT_THAT(s, StatusIs(StatusCode::kInvalidArgument, HasSubstr("bad \xEF\xBF\xBD")));
  EXPECT_THAT(std::string(s.message()), Not(HasSubstr("\n")));
  EXPECT_LT(s.message().size(), 360u);
}

TEST(HttpErrorToStatusTest, PlainStringErrorShapes) {
  EXPECT_THAT(
      HttpErrorToStatus("openai", Response(404, R"({"error":"model 'x' not found"})"), kNow),
      StatusIs(StatusCode::kNotFound, HasSubstr("model 'x' not found")));
  EXPECT_THAT(HttpErrorToStatus("openai", Response(500, R"({"detail":"kaput"})"), kNow),
              StatusIs(StatusCode::kUnavailable, HasSubstr("kaput")));
  EXPECT_THAT(HttpErrorToStatus("openai", Response(500, "", ""), kNow),
              StatusIs(StatusCode::kUnavailable, HasSubstr("empty body")));
}

TEST(RedactSecretTest, RemovesSecretAndKeepsDetails) {
  Status s = ResourceExhaustedError("key sk-test-SECRET-1234 is slow; sk-test-SECRET-1234")
                 .WithDetailCode("http_429")
                 .WithRetryAfter(std::chrono::seconds(2))
                 .WithClass(ErrorClass::kPermanent);
  Status r = RedactSecret(s, "sk-test-SECRET-1234");
  EXPECT_EQ(r.message(), "key [redacted] is slow; [redacted]");
  EXPECT_EQ(r.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(r.detail_code(), "http_429");
  EXPECT_EQ(r.retry_after(), std::chrono::seconds(2));
  EXPECT_EQ(ClassOf(r), ErrorClass::kPermanent);
}

}  // namespace
}  // namespace mend::llm
