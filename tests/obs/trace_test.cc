#include "mend/obs/trace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "mend/base/manual_clock.h"
#include "tests/support/status_matchers.h"

namespace mend::obs {
namespace {

using ::mend::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::SizeIs;

class TraceTest : public ::testing::Test {
 protected:
  TraceTest() : random_(7), tracer_(TracerOptions{&clock_, &random_}) {
    tracer_.AddProcessor(sink_);
  }

  ManualClock clock_{Time{} + std::chrono::seconds(1'700'000'000)};
  SeededRandom random_;
  std::shared_ptr<MemorySpanProcessor> sink_ = std::make_shared<MemorySpanProcessor>();
  Tracer tracer_;
};

TEST(TraceparentTest, ParsesAndFormatsVersion00) {
  Result<SpanContext> parsed =
      ParseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const SpanContext& c = *parsed;
  EXPECT_EQ(c.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(c.span_id, "00f067aa0ba902b7");
  EXPECT_EQ(c.flags, 1);
  EXPECT_EQ(FormatTraceparent(c), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
}

TEST(TraceparentTest, LaterVersionsMayAppendFields) {
  Result<SpanContext> c =
      ParseTraceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-extra");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->flags, 0);
}

TEST(TraceparentTest, RejectsMalformedValues) {
  for (std::string_view bad : {
           "",
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
           "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",  // upper case
           "00-00000000000000000000000000000000-00f067aa0ba902b7-01",  // zero trace id
           "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",  // zero span id
           "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  // version ff
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x",
           "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
           "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-zz",
       }) {
    EXPECT_THAT(ParseTraceparent(bad), StatusIs(StatusCode::kInvalidArgument)) << bad;
  }
}

TEST_F(TraceTest, ChildrenShareTheTraceAndNameTheirParent) {
  Span root = tracer_.StartSpan("invoke_agent", SpanStart{.run_id = "r1"});
  SpanContext root_ctx = root.context();
  ASSERT_TRUE(root_ctx.valid());
  {
    ActiveSpanScope scope(root);
    clock_.Advance(std::chrono::milliseconds(5));
    Span child = StartSpan("chat");
    child.SetAttribute("gen_ai.usage.input_tokens", int64_t{12});
    clock_.Advance(std::chrono::milliseconds(20));
  }
  root.SetOk();
  root.End();
  root.End();  // idempotent
  std::vector<SpanData> spans = sink_->spans();
  ASSERT_THAT(spans, SizeIs(2));
  const SpanData& chat = spans[0];
  EXPECT_EQ(chat.name, "chat");
  EXPECT_EQ(chat.context.trace_id, root_ctx.trace_id);
  EXPECT_EQ(chat.parent_span_id, root_ctx.span_id);
  EXPECT_EQ(chat.run_id, "r1");  // inherited from the parent
  EXPECT_EQ(chat.end - chat.start, std::chrono::milliseconds(20));
  EXPECT_EQ(spans[1].parent_span_id, "");
  EXPECT_EQ(spans[1].status, SpanStatus::kOk);
  EXPECT_EQ(spans[1].end - spans[1].start, std::chrono::milliseconds(25));
  ASSERT_NE(FindAttribute(spans[1].attributes, "mend.run.id"), nullptr);
}

TEST_F(TraceTest, WithoutAnActiveSpanStartSpanRecordsNothing) {
  Span span = StartSpan("orphan");
  EXPECT_FALSE(span.recording());
  span.SetAttribute("k", "v").AddEvent("e").SetError("x", "y");
  span.End();
  EXPECT_THAT(sink_->spans(), SizeIs(0));
}

TEST_F(TraceTest, RootSpanJoinsAGivenTrace) {
  std::string trace = NewTraceId(random_);
  tracer_.StartSpan("resume", SpanStart{.trace_id = trace}).End();
  ASSERT_THAT(sink_->spans(), SizeIs(1));
  EXPECT_EQ(sink_->spans()[0].context.trace_id, trace);
  EXPECT_EQ(sink_->spans()[0].parent_span_id, "");
}

TEST_F(TraceTest, ErrorStatusWins) {
  Span span = tracer_.StartSpan("execute_tool");
  span.SetError("MEND_NO_PROGRESS", "stopped");
  span.SetOk();
  span.End();
  const SpanData d = sink_->spans()[0];
  EXPECT_EQ(d.status, SpanStatus::kError);
  EXPECT_EQ(d.status_message, "stopped");
  EXPECT_EQ(std::get<std::string>(*FindAttribute(d.attributes, "error.type")), "MEND_NO_PROGRESS");
}

TEST_F(TraceTest, SecretsAreRedactedEverywhere) {
  tracer_.AddRedactor("sk-secret");
  Span span = tracer_.StartSpan("call sk-secret");
  span.SetAttribute("a", "key=sk-secret;")
      .SetAttribute("list", std::vector<std::string>{"sk-secret"})
      .AddEvent("heal.action", {{"reason", std::string("saw sk-secret")}})
      .SetError("", "failed with sk-secret");
  span.End();
  const SpanData d = sink_->spans()[0];
  EXPECT_EQ(d.name, "call [REDACTED]");
  EXPECT_EQ(std::get<std::string>(*FindAttribute(d.attributes, "a")), "key=[REDACTED];");
  EXPECT_THAT(std::get<std::vector<std::string>>(*FindAttribute(d.attributes, "list")),
              ElementsAre("[REDACTED]"));
  EXPECT_EQ(std::get<std::string>(*FindAttribute(d.events[0].attributes, "reason")),
            "saw [REDACTED]");
  EXPECT_EQ(d.status_message, "failed with [REDACTED]");
}

TEST_F(TraceTest, ContentIsRecordedOnlyWhenCaptured) {
  Span span = tracer_.StartSpan("chat");
  span.SetContent("gen_ai.output.messages", "hello");
  span.End();
  EXPECT_EQ(FindAttribute(sink_->spans()[0].attributes, "gen_ai.output.messages"), nullptr);

  Tracer capturing(TracerOptions{&clock_, &random_, /*capture_content=*/true});
  auto sink = std::make_shared<MemorySpanProcessor>();
  capturing.AddProcessor(sink);
  capturing.StartSpan("chat").SetContent("gen_ai.output.messages", "hello");
  ASSERT_THAT(sink->spans(), SizeIs(1));
  EXPECT_NE(FindAttribute(sink->spans()[0].attributes, "gen_ai.output.messages"), nullptr);
}

TEST_F(TraceTest, AttributesKeepTheirTypes) {
  Span span = tracer_.StartSpan("types");
  span.SetAttribute("b", true)
      .SetAttribute("d", 0.25)
      .SetAttribute("i", int64_t{1} << 40)
      .SetAttribute("n", 3)
      .SetAttribute("s", std::string("x"))
      .SetAttribute("c", "y");
  span.End();
  const SpanData d = sink_->spans()[0];
  EXPECT_EQ(std::get<bool>(*FindAttribute(d.attributes, "b")), true);
  EXPECT_EQ(std::get<double>(*FindAttribute(d.attributes, "d")), 0.25);
  EXPECT_EQ(std::get<int64_t>(*FindAttribute(d.attributes, "i")), int64_t{1} << 40);
  EXPECT_EQ(std::get<int64_t>(*FindAttribute(d.attributes, "n")), 3);
  EXPECT_EQ(std::get<std::string>(*FindAttribute(d.attributes, "s")), "x");
  EXPECT_EQ(std::get<std::string>(*FindAttribute(d.attributes, "c")), "y");
}

TEST_F(TraceTest, SpansAfterShutdownAreNotDelivered) {
  tracer_.Shutdown(std::chrono::seconds(1));
  tracer_.StartSpan("late").End();
  EXPECT_THAT(sink_->spans(), SizeIs(0));
}

TEST(SpanIdTest, IdsAreHexAndNonZero) {
  SeededRandom random(1);
  EXPECT_TRUE(IsSpanIdHex(NewTraceId(random), 32));
  EXPECT_TRUE(IsSpanIdHex(NewSpanId(random), 16));
  EXPECT_FALSE(IsSpanIdHex("0000000000000000", 16));
  EXPECT_FALSE(IsSpanIdHex("abc", 3 + 1));
}

}  // namespace
}  // namespace mend::obs
