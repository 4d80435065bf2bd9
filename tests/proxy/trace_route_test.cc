// Each proxied model call is a `chat` span with the GenAI attributes, joined to the client's
// trace, named by its conversation.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/proxy/proxy_fixture.h"

namespace mend::proxy {
namespace {

const obs::AttributeValue* Attr(const obs::SpanData& span, std::string_view key) {
  return obs::FindAttribute(span.attributes, key);
}

std::string Text(const obs::SpanData& span, std::string_view key) {
  const obs::AttributeValue* v = Attr(span, key);
  return v != nullptr && std::holds_alternative<std::string>(*v) ? std::get<std::string>(*v) : "";
}

int64_t Int(const obs::SpanData& span, std::string_view key) {
  const obs::AttributeValue* v = Attr(span, key);
  return v != nullptr && std::holds_alternative<int64_t>(*v) ? std::get<int64_t>(*v) : -1;
}

TEST_F(ProxyTest, AModelCallIsAChatSpanInTheClientsTrace) {
  Start();
  testing::FakeResponse answer;
  answer.text = "Done.";
  answer.input_tokens = 120;
  answer.output_tokens = 30;
  upstream_->Enqueue(answer);
  const std::string parent_trace = "0af7651916cd43dd8448eb211c80319c";
  Post("/v1/chat/completions",
       R"({"model":"gpt-4o","messages":[{"role":"user","content":"Fix the build"}]})",
       {{"traceparent", "00-" + parent_trace + "-b7ad6b7169203331-01"},
        {"X-Mend-Agent", "builder"},
        {"X-Mend-Session", "s-42"}});
  std::vector<obs::SpanData> spans = spans_->spans();
  ASSERT_EQ(spans.size(), 1u);
  const obs::SpanData& span = spans[0];
  EXPECT_EQ(span.name, "chat gpt-4o");
  EXPECT_EQ(span.kind, obs::SpanKind::kClient);
  EXPECT_EQ(span.context.trace_id, parent_trace);
  EXPECT_EQ(span.parent_span_id, "b7ad6b7169203331");
  EXPECT_EQ(Text(span, "gen_ai.operation.name"), "chat");
  EXPECT_EQ(Text(span, "gen_ai.provider.name"), "openai");
  EXPECT_EQ(Text(span, "gen_ai.request.model"), "gpt-4o");
  EXPECT_EQ(Int(span, "gen_ai.usage.input_tokens"), 120);
  EXPECT_EQ(Int(span, "gen_ai.usage.output_tokens"), 30);
  EXPECT_EQ(Text(span, "mend.agent"), "builder");
  EXPECT_EQ(Int(span, "http.response.status_code"), 200);
  EXPECT_FALSE(Text(span, "session.id").empty());
  EXPECT_EQ(span.run_id, "proxy-" + Text(span, "session.id"));
  EXPECT_EQ(span.status, obs::SpanStatus::kUnset);
  // The upstream was told the proxy's span as its parent, in the client's trace.
  const std::string sent = upstream_->requests().back().Header("traceparent");
  EXPECT_EQ(sent, "00-" + parent_trace + "-" + span.context.span_id + "-01");
}

TEST_F(ProxyTest, AnUpstreamErrorIsTheSpansError) {
  Start();
  testing::FakeResponse bad;
  bad.status = 400;
  upstream_->Enqueue(bad);
  Post("/v1/chat/completions", R"({"model":"m","messages":[{"role":"user","content":"x"}]})");
  std::vector<obs::SpanData> spans = spans_->spans();
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].status, obs::SpanStatus::kError);
  EXPECT_EQ(Int(spans[0], "http.response.status_code"), 400);
}

TEST_F(ProxyTest, AStreamedCallsSpanHasItsUsage) {
  Start();
  testing::FakeResponse answer;
  answer.text = "streamed";
  answer.input_tokens = 7;
  answer.output_tokens = 3;
  upstream_->Enqueue(answer);
  Reply reply = Post("/v1/chat/completions",
                     R"({"model":"m","stream":true,"stream_options":{"include_usage":true},)"
                     R"("messages":[{"role":"user","content":"x"}]})");
  ASSERT_EQ(reply.status, 200);
  std::vector<obs::SpanData> spans = spans_->spans();
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(Int(spans[0], "gen_ai.usage.input_tokens"), 7);
  EXPECT_EQ(Int(spans[0], "gen_ai.usage.output_tokens"), 3);
  EXPECT_EQ(spans[0].status, obs::SpanStatus::kUnset);
}

}  // namespace
}  // namespace mend::proxy
