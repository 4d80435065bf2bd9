#include <gtest/gtest.h>

#include "tests/llm/llm_test_util.h"

namespace mend::llm {
namespace {

using ::mend::llm::test::ExpectNoSecret;
using ::mend::llm::test::HttpOptions;
using ::mend::llm::test::kSecretKey;
using ::mend::llm::test::MakeProvider;
using ::mend::llm::test::StartServer;
using ::mend::llm::test::UserAsks;
using ::mend::testing::FakeLlmServer;
using ::mend::testing::FakeResponse;
using ::mend::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

class OpenAiErrorsTest : public test::HttpProviderTest {
 protected:
  OpenAiErrorsTest() : HttpProviderTest("openai", "gpt-4o") {}
};

TEST_F(OpenAiErrorsTest, EveryHttpStatusMapsToCodeAndClass) {
  struct Case {
    int http;
    StatusCode code;
    ErrorClass cls;
  };
  const Case cases[] = {{400, StatusCode::kInvalidArgument, ErrorClass::kPermanent},
                        {401, StatusCode::kUnauthenticated, ErrorClass::kAuth},
                        {403, StatusCode::kPermissionDenied, ErrorClass::kAuth},
                        {404, StatusCode::kNotFound, ErrorClass::kPermanent},
                        {413, StatusCode::kFailedPrecondition, ErrorClass::kPermanent},
                        {422, StatusCode::kInvalidArgument, ErrorClass::kPermanent},
                        {429, StatusCode::kResourceExhausted, ErrorClass::kTransient},
                        {500, StatusCode::kUnavailable, ErrorClass::kTransient},
                        {502, StatusCode::kUnavailable, ErrorClass::kTransient},
                        {503, StatusCode::kUnavailable, ErrorClass::kTransient},
                        {504, StatusCode::kUnavailable, ErrorClass::kTransient}};
  for (const Case& c : cases) {
    FakeResponse r;
    r.status = c.http;
    r.error_message = "failure " + std::to_string(c.http);
    Status s = FailWith(r);
    const std::string hint =
        c.http == 401 ? "; the API key was refused: check MEND_API_KEY (or OPENAI_API_KEY)" : "";
    EXPECT_THAT(s, StatusIs(c.code, "openai HTTP " + std::to_string(c.http) + ": failure " +
                                        std::to_string(c.http) + hint));
    EXPECT_EQ(ClassOf(s), c.cls) << c.http;
    EXPECT_EQ(IsRetryable(s), c.cls == ErrorClass::kTransient) << c.http;
    EXPECT_EQ(s.detail_code(), "http_" + std::to_string(c.http));
  }
}

TEST_F(OpenAiErrorsTest, RateLimitCarriesRetryAfter) {
  FakeResponse r;
  r.status = 429;
  r.retry_after_seconds = 3;
  Status s = FailWith(r);
  EXPECT_THAT(s, StatusIs(StatusCode::kResourceExhausted));
  EXPECT_EQ(s.retry_after(), std::chrono::seconds(3));
  r.status = 503;
  r.retry_after_seconds = 11;
  EXPECT_EQ(FailWith(r).retry_after(), std::chrono::seconds(11));
}

TEST_F(OpenAiErrorsTest, QuotaAndContextLengthArePermanent) {
  FakeResponse quota;
  quota.status = 429;
  quota.error_type = "insufficient_quota";
  Status q = FailWith(quota);
  EXPECT_THAT(q, StatusIs(StatusCode::kResourceExhausted));
  EXPECT_EQ(ClassOf(q), ErrorClass::kPermanent);
  EXPECT_FALSE(IsRetryable(q));

  FakeResponse context;
  context.status = 400;
  context.error_type = "context_length_exceeded";
  Status c = FailWith(context);
  EXPECT_THAT(c, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_EQ(c.detail_code(), "context_length_exceeded");
  EXPECT_FALSE(IsRetryable(c));
}

TEST_F(OpenAiErrorsTest, WrongKeyIsAuthAndNeverEchoed) {
  server_->RequireApiKey("sk-other-key");
  Status s = provider_->Complete(UserAsks("hi")).status();
  ExpectNoSecret(s);
  EXPECT_THAT(s, StatusIs(StatusCode::kUnauthenticated, HasSubstr("Incorrect API key")));
  EXPECT_EQ(ClassOf(s), ErrorClass::kAuth);
}

TEST_F(OpenAiErrorsTest, A401WithoutAKeySaysWhichVariableToSet) {
  ProviderOptions keyless = options_;
  keyless.api_key.clear();
  std::unique_ptr<LlmProvider> provider = MakeProvider(keyless);
  ASSERT_NE(provider, nullptr);
  server_->RequireApiKey(kSecretKey);
  Status s = provider->Complete(UserAsks("hi")).status();
  EXPECT_THAT(s,
              StatusIs(StatusCode::kUnauthenticated,
                       HasSubstr("; no API key was sent: set MEND_API_KEY (or OPENAI_API_KEY)")));
  EXPECT_EQ(s.detail_code(), "http_401");
  EXPECT_EQ(ClassOf(s), ErrorClass::kAuth);
}

TEST_F(OpenAiErrorsTest, KeyEchoedByServerIsRedacted) {
  FakeResponse r;
  r.status = 401;
  r.error_message = std::string("Incorrect API key provided: ") + kSecretKey;
  Status s = FailWith(r);
  EXPECT_THAT(s, StatusIs(StatusCode::kUnauthenticated, HasSubstr("[redacted]")));
  EXPECT_THAT(std::string(s.message()), Not(HasSubstr(kSecretKey)));
}

TEST_F(OpenAiErrorsTest, MalformedBodiesAreTransient) {
  EXPECT_THAT(FailWith(Fault(FakeResponse::Fault::kMalformedJson)),
              StatusIs(StatusCode::kUnavailable, HasSubstr("not JSON")));
  EXPECT_THAT(FailWith(Fault(FakeResponse::Fault::kEmptyBody)),
              StatusIs(StatusCode::kUnavailable, HasSubstr("empty body")));
  EXPECT_THAT(FailWith(Fault(FakeResponse::Fault::kTruncatedBody)),
              StatusIs(StatusCode::kUnavailable));
  EXPECT_THAT(FailWith(Fault(FakeResponse::Fault::kDropConnection)),
              StatusIs(StatusCode::kUnavailable));
  FakeResponse no_choices;
  no_choices.raw_body = R"({"id":"x","choices":[]})";
  EXPECT_THAT(FailWith(no_choices), StatusIs(StatusCode::kUnavailable, HasSubstr("no choices")));
  FakeResponse not_object;
  not_object.raw_body = R"([1,2,3])";
  EXPECT_THAT(FailWith(not_object), StatusIs(StatusCode::kUnavailable));
  FakeResponse wrong_types;
  wrong_types.raw_body = R"({"choices":[{"message":{"content":42,"tool_calls":"x"}}],
                             "usage":{"prompt_tokens":"many","completion_tokens":1e300}})";
  server_->Enqueue(wrong_types);
  Result<Completion> c = provider_->Complete(UserAsks("hi"));
  MEND_ASSERT_OK(c);  // tolerated: fields of the wrong type are treated as absent
  EXPECT_EQ(c->text, "");
  EXPECT_EQ(c->usage.input_tokens, 0);
}

TEST_F(OpenAiErrorsTest, HtmlErrorPageIsDescribed) {
  Status s = FailWith(Fault(FakeResponse::Fault::kHtmlErrorPage, 502));
  EXPECT_THAT(
      s, StatusIs(StatusCode::kUnavailable, HasSubstr("HTTP 502 with a non-JSON body (text/html")));
  EXPECT_TRUE(IsRetryable(s));
  EXPECT_THAT(FailWith(Fault(FakeResponse::Fault::kHtmlErrorPage, 403)),
              StatusIs(StatusCode::kPermissionDenied));
}

TEST_F(OpenAiErrorsTest, OversizedResponseIsRefused) {
  options_.max_response_bytes = 64 << 10;
  auto p = MakeProvider(options_);
  FakeResponse r = Fault(FakeResponse::Fault::kOversizedBody);
  r.oversize_bytes = 1 << 20;
  Status s = FailWith(*p, r);
  EXPECT_THAT(s, StatusIs(StatusCode::kUnavailable, HasSubstr("larger than the limit")));
  EXPECT_EQ(s.detail_code(), "response_too_large");
  // The next, normal-sized answer on the same provider still works.
  MEND_EXPECT_OK(p->Complete(UserAsks("again")));
}

TEST_F(OpenAiErrorsTest, ConnectionRefusedIsTransient) {
  int closed_port = 0;
  {
    auto other = FakeLlmServer::Start();
    MEND_ASSERT_OK(other);
    closed_port = (*other)->port();
  }
  options_.base_url = "http://127.0.0.1:" + std::to_string(closed_port);
  auto p = MakeProvider(options_);
  Result<Completion> c = p->Complete(UserAsks("hi"));
  EXPECT_THAT(c, StatusIs(StatusCode::kUnavailable));
  EXPECT_TRUE(IsRetryable(c.status()));
  ExpectNoSecret(c.status());
}

TEST_F(OpenAiErrorsTest, TotalTimeoutIsDeadlineExceeded) {
  options_.timeout = std::chrono::milliseconds(200);
  auto p = MakeProvider(options_);
  FakeResponse slow;
  slow.latency = std::chrono::seconds(2);
  Status s = FailWith(*p, slow);
  EXPECT_THAT(s, StatusIs(StatusCode::kDeadlineExceeded));
  EXPECT_TRUE(IsRetryable(s));
}

TEST_F(OpenAiErrorsTest, UserInfoInBaseUrlIsNotInMessages) {
  int closed_port = 0;
  {
    auto other = FakeLlmServer::Start();
    MEND_ASSERT_OK(other);
    closed_port = (*other)->port();
  }
  options_.base_url = "http://user:hunter2@127.0.0.1:" + std::to_string(closed_port);
  auto p = MakeProvider(options_);
  Result<Completion> c = p->Complete(UserAsks("hi"));
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), Not(HasSubstr("hunter2")));
}

TEST(OpenAiKeepAliveTest, SequentialCompletionsReuseOneConnection) {
  auto server = StartServer();
  auto p = MakeProvider(HttpOptions("openai", *server, "gpt-4o"));
  for (int i = 0; i < 5; ++i) MEND_ASSERT_OK(p->Complete(UserAsks("hi")));
  EXPECT_EQ(server->connection_count(), 1);
  auto requests = server->requests();
  for (const auto& r : requests) EXPECT_EQ(r.connection_id, requests[0].connection_id);
}

TEST(OpenAiKeepAliveTest, ReuseOffOpensAConnectionPerRequest) {
  auto server = StartServer();
  ProviderOptions options = HttpOptions("openai", *server, "gpt-4o");
  options.reuse_connections = false;
  auto p = MakeProvider(options);
  for (int i = 0; i < 5; ++i) MEND_ASSERT_OK(p->Complete(UserAsks("hi")));
  EXPECT_EQ(server->connection_count(), 5);
}

}  // namespace
}  // namespace mend::llm
