#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <deque>
#include <thread>

#include "mend/base/manual_clock.h"
#include "mend/obs/otlp.h"
#include "tests/obs/fake_otlp_transport.h"
#include "tests/obs/otlp_sample.h"
#include "tests/obs/proto_reader.h"
#include "tests/support/status_matchers.h"

namespace mend::obs {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::StatusIs;
using namespace std::chrono_literals;

using testing::FakeTransport;
using testing::ZeroRandom;

HttpReply Status(int status, std::string retry_after = "") {
  return HttpReply{status, std::move(retry_after), ""};
}

class OtlpExporterTest : public ::testing::Test {
 protected:
  OtlpExporterTest() : transport_(std::make_shared<FakeTransport>(&clock_)) {
    options_.url = "http://collector:4318/v1/traces";
    options_.headers = {{"x-api-key", "k"}};
    options_.transport = transport_;
    options_.clock = &clock_;
    options_.random = &random_;
    options_.metrics = &metrics_;
    options_.max_batch_spans = 1;
    options_.initial_backoff = 1s;
    options_.max_backoff = 30s;
    options_.schedule_delay = 1h;
  }

  std::unique_ptr<OtlpExporter> Start() {
    Result<std::unique_ptr<OtlpExporter>> e = OtlpExporter::Create(options_);
    EXPECT_TRUE(e.ok()) << e.status();
    return std::move(e).value();
  }

  // Lets the worker reach its backoff wait, then moves time on by `d`.
  void AdvanceWhenWaiting(Duration d) {
    clock_.BlockUntilWaiters(1);
    clock_.Advance(d);
  }

  double Dropped(const std::string& reason) {
    return metrics_.counter_family("mend_otlp_spans_dropped_total", "", {"reason"})
        .WithLabels({reason})
        .value();
  }

  ManualClock clock_;
  ZeroRandom random_;
  MetricsRegistry metrics_;
  std::shared_ptr<FakeTransport> transport_;
  OtlpExporterOptions options_;
  SpanData span_ = testing::SampleSpans()[1];
};

TEST_F(OtlpExporterTest, FlushSendsQueuedSpansAsOneProtobufRequest) {
  options_.max_batch_spans = 10;
  auto exporter = Start();
  for (int i = 0; i < 3; ++i) exporter->OnEnd(span_);
  EXPECT_THAT(exporter->Flush(1s), IsOk());
  const std::vector<FakeTransport::Call> calls = transport_->calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].content_type, "application/x-protobuf");
  EXPECT_EQ(calls[0].headers, options_.headers);
  EXPECT_EQ(calls[0].timeout, options_.timeout);
  std::optional<testing::ProtoMessage> request = testing::ParseProto(calls[0].body);
  ASSERT_TRUE(request.has_value());
  EXPECT_EQ(testing::Fields(testing::Sub(testing::Sub(*request, 1), 2), 2).size(), 3u);
  EXPECT_EQ(exporter->spans_exported(), 3u);
  EXPECT_EQ(exporter->spans_dropped(), 0u);
  EXPECT_THAT(metrics_.status(), IsOk());
}

TEST_F(OtlpExporterTest, JsonProtocolSendsJson) {
  options_.protocol = OtlpProtocol::kHttpJson;
  auto exporter = Start();
  exporter->OnEnd(span_);
  EXPECT_THAT(exporter->Flush(1s), IsOk());
  ASSERT_EQ(transport_->calls().size(), 1u);
  EXPECT_EQ(transport_->calls()[0].content_type, "application/json");
  EXPECT_EQ(transport_->calls()[0].body, EncodeOtlpJson(options_.resource, {span_}));
}

TEST_F(OtlpExporterTest, A503ThenA200DeliversOnce) {
  transport_->Script(Status(503));
  auto exporter = Start();
  exporter->OnEnd(span_);
  ASSERT_TRUE(transport_->WaitForCalls(1));
  AdvanceWhenWaiting(500ms);
  ASSERT_TRUE(transport_->WaitForCalls(2));
  EXPECT_THAT(exporter->Flush(1s), IsOk());
  const std::vector<FakeTransport::Call> calls = transport_->calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].body, calls[1].body);
  EXPECT_EQ(calls[1].at - calls[0].at, 500ms);  // base 1s, jitter drew the bottom of its half
  EXPECT_EQ(exporter->spans_exported(), 1u);
  EXPECT_EQ(exporter->export_failures(), 1u);
  EXPECT_EQ(exporter->spans_dropped(), 0u);
}

TEST_F(OtlpExporterTest, A429WaitsForItsRetryAfterSeconds) {
  transport_->Script(Status(429, "7"));
  auto exporter = Start();
  exporter->OnEnd(span_);
  ASSERT_TRUE(transport_->WaitForCalls(1));
  AdvanceWhenWaiting(6s);
  AdvanceWhenWaiting(1s);
  ASSERT_TRUE(transport_->WaitForCalls(2));
  const std::vector<FakeTransport::Call> calls = transport_->calls();
  EXPECT_EQ(calls[1].at - calls[0].at, 7s);
  EXPECT_THAT(exporter->Flush(1s), IsOk());
  EXPECT_EQ(exporter->spans_exported(), 1u);
}

TEST_F(OtlpExporterTest, A503RetryAfterDateIsHonouredAndCappedByMaxBackoff) {
  options_.max_backoff = 10s;
  transport_->Script(Status(503, "Fri, 31 Dec 9999 23:59:59 GMT"));
  auto exporter = Start();
  exporter->OnEnd(span_);
  ASSERT_TRUE(transport_->WaitForCalls(1));
  AdvanceWhenWaiting(10s);
  ASSERT_TRUE(transport_->WaitForCalls(2));
  const std::vector<FakeTransport::Call> calls = transport_->calls();
  EXPECT_EQ(calls[1].at - calls[0].at, 10s);
}

TEST_F(OtlpExporterTest, BackoffDoublesUpToTheMaximum) {
  options_.max_backoff = 4s;
  options_.max_retries = 5;
  for (int i = 0; i < 4; ++i) transport_->Script(UnavailableError("connection refused"));
  auto exporter = Start();
  exporter->OnEnd(span_);
  size_t made = 0;
  for (Duration d : {500ms, 1000ms, 2000ms, 2000ms}) {
    ASSERT_TRUE(transport_->WaitForCalls(++made));
    AdvanceWhenWaiting(d);
  }
  ASSERT_TRUE(transport_->WaitForCalls(5));
  const std::vector<FakeTransport::Call> calls = transport_->calls();
  EXPECT_EQ(calls[1].at - calls[0].at, 500ms);
  EXPECT_EQ(calls[2].at - calls[1].at, 1s);
  EXPECT_EQ(calls[3].at - calls[2].at, 2s);
  EXPECT_EQ(calls[4].at - calls[3].at, 2s);
  EXPECT_THAT(exporter->Flush(1s), IsOk());
  EXPECT_EQ(exporter->export_failures(), 4u);
  EXPECT_EQ(exporter->spans_exported(), 1u);
}

TEST_F(OtlpExporterTest, A400DropsTheBatchWithoutRetrying) {
  transport_->Script(Status(400));
  auto exporter = Start();
  exporter->OnEnd(span_);
  EXPECT_THAT(exporter->Flush(1s), StatusIs(StatusCode::kUnavailable));
  EXPECT_EQ(transport_->calls().size(), 1u);
  EXPECT_EQ(Dropped("rejected"), 1.0);
  EXPECT_EQ(exporter->export_failures(), 1u);
  EXPECT_EQ(exporter->spans_exported(), 0u);
}

TEST_F(OtlpExporterTest, GivesUpAfterMaxRetries) {
  options_.max_retries = 2;
  for (int i = 0; i < 3; ++i) transport_->Script(Status(502));
  auto exporter = Start();
  exporter->OnEnd(span_);
  ASSERT_TRUE(transport_->WaitForCalls(1));
  AdvanceWhenWaiting(30s);
  ASSERT_TRUE(transport_->WaitForCalls(2));
  AdvanceWhenWaiting(30s);
  ASSERT_TRUE(transport_->WaitForCalls(3));
  EXPECT_THAT(exporter->Flush(1s), StatusIs(StatusCode::kUnavailable));
  EXPECT_EQ(transport_->calls().size(), 3u);
  EXPECT_EQ(Dropped("retries_exhausted"), 1.0);
}

TEST_F(OtlpExporterTest, AFullQueueDropsAndCounts) {
  options_.queue_capacity = 2;
  options_.max_batch_spans = 100;
  auto exporter = Start();
  for (int i = 0; i < 5; ++i) exporter->OnEnd(span_);
  EXPECT_EQ(Dropped("queue_full"), 3.0);
  EXPECT_THAT(exporter->Flush(1s), IsOk());
  EXPECT_EQ(exporter->spans_exported(), 2u);
  EXPECT_NE(
      metrics_.RenderPrometheus().find("mend_otlp_spans_dropped_total{reason=\"queue_full\"} 3"),
      std::string::npos);
}

TEST_F(OtlpExporterTest, ShutdownCancelsAHangingRequestAtItsDeadline) {
  transport_->Hang();
  options_.queue_capacity = 100;
  auto exporter = Start();
  exporter->OnEnd(span_);
  ASSERT_TRUE(transport_->WaitForCalls(1));
  for (int i = 0; i < 10; ++i) exporter->OnEnd(span_);  // never blocks on the hanging request
  std::thread stopper([&] { exporter->Shutdown(5s); });
  AdvanceWhenWaiting(5s);
  stopper.join();
  EXPECT_EQ(Dropped("shutdown"), 11.0);
  exporter->OnEnd(span_);
  EXPECT_EQ(Dropped("shutdown"), 12.0);
  EXPECT_EQ(exporter->spans_exported(), 0u);
}

TEST_F(OtlpExporterTest, ShutdownSendsWhatIsQueuedWhenTheCollectorAnswers) {
  options_.max_batch_spans = 4;
  auto exporter = Start();
  for (int i = 0; i < 10; ++i) exporter->OnEnd(span_);
  exporter->Shutdown(5s);
  EXPECT_EQ(exporter->spans_exported(), 10u);
  EXPECT_EQ(transport_->calls().size(), 3u);
}

// A short run's spans, all still queued when the process exits, and a collector that answers
// 503 once: the shutdown retries within its deadline and the spans arrive.
TEST_F(OtlpExporterTest, ShutdownRetriesA503) {
  options_.max_batch_spans = 10;  // nothing is sent before the shutdown
  transport_->Script(Status(503, "0"));
  auto exporter = Start();
  for (int i = 0; i < 3; ++i) exporter->OnEnd(span_);
  exporter->Shutdown(2s);
  EXPECT_EQ(transport_->calls().size(), 2u);
  EXPECT_EQ(exporter->spans_exported(), 3u);
  EXPECT_EQ(exporter->spans_dropped(), 0u);
}

TEST_F(OtlpExporterTest, ShutdownRetriesWithinItsDeadline) {
  options_.max_batch_spans = 10;  // nothing is sent before the shutdown
  transport_->Script(Status(503));
  auto exporter = Start();
  for (int i = 0; i < 3; ++i) exporter->OnEnd(span_);
  std::thread stopper([&] { exporter->Shutdown(2s); });
  ASSERT_TRUE(transport_->WaitForCalls(1));
  clock_.BlockUntilWaiters(2);  // the worker's backoff and the shutdown's deadline
  clock_.Advance(500ms);
  stopper.join();
  const std::vector<FakeTransport::Call> calls = transport_->calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[1].at - calls[0].at, 500ms);
  EXPECT_EQ(calls[0].body, calls[1].body);
  EXPECT_EQ(exporter->spans_exported(), 3u);
  EXPECT_EQ(exporter->spans_dropped(), 0u);
  EXPECT_EQ(Dropped("shutdown"), 0.0);
}

TEST_F(OtlpExporterTest, ShutdownHonoursRetryAfterWithinItsDeadline) {
  options_.max_batch_spans = 10;
  transport_->Script(Status(503, "1"));
  auto exporter = Start();
  exporter->OnEnd(span_);
  std::thread stopper([&] { exporter->Shutdown(2s); });
  ASSERT_TRUE(transport_->WaitForCalls(1));
  clock_.BlockUntilWaiters(2);
  clock_.Advance(1s);
  stopper.join();
  const std::vector<FakeTransport::Call> calls = transport_->calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[1].at - calls[0].at, 1s);
  EXPECT_EQ(exporter->spans_exported(), 1u);
}

TEST_F(OtlpExporterTest, ShutdownGivesUpAtOnceWhenTheRetryWouldMissItsDeadline) {
  options_.max_batch_spans = 10;
  transport_->Script(Status(503, "5"));
  auto exporter = Start();
  exporter->OnEnd(span_);
  // No clock advance: a shutdown that waited for the retry would never return.
  exporter->Shutdown(2s);
  EXPECT_EQ(transport_->calls().size(), 1u);
  EXPECT_EQ(Dropped("shutdown"), 1.0);  // no backlog: nothing keeps the span
  EXPECT_EQ(exporter->spans_exported(), 0u);
}

TEST_F(OtlpExporterTest, CreateRejectsIncompleteOptions) {
  OtlpExporterOptions bad = options_;
  bad.transport = nullptr;
  EXPECT_THAT(OtlpExporter::Create(bad), StatusIs(StatusCode::kInvalidArgument));
  bad = options_;
  bad.url = "";
  EXPECT_THAT(OtlpExporter::Create(bad), StatusIs(StatusCode::kInvalidArgument));
  bad = options_;
  bad.queue_capacity = 0;
  EXPECT_THAT(OtlpExporter::Create(bad), StatusIs(StatusCode::kInvalidArgument));
  bad = options_;
  bad.max_backoff = 1ms;
  EXPECT_THAT(OtlpExporter::Create(bad), StatusIs(StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace mend::obs
