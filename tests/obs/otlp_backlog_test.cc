// The OTLP exporter with observe.db as its durable copy: no span is lost to a collector's hiccup.
// A short run's exporter retries within its shutdown deadline; what it could not send waits in
// observe.db and the next exporter sends it; only spans older than the retention are dropped.
// Real HTTP on loopback (the curl transport against a collector that answers 503 once) and the
// scripted transport, on a ManualClock.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "mend/base/manual_clock.h"
#include "mend/obs/otlp.h"
#include "mend/obs/otlp_decode.h"
#include "mend/obs/span_store.h"
#include "tests/obs/fake_otlp_transport.h"
#include "tests/obs/span_test_util.h"
#include "tests/support/status_matchers.h"

namespace mend::obs {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::IsOkAndHolds;
using namespace std::chrono_literals;
using testing::At;
using testing::FakeTransport;
using testing::MakeSpan;
using testing::ZeroRandom;

// A collector on an ephemeral loopback port: answers 503 (no Retry-After) to the first
// `failures` requests, then 200, and keeps the spans of the requests it accepted.
class Collector {
 public:
  explicit Collector(int failures) : failures_(failures) {
    server_.Post("/v1/traces", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(mu_);
      ++requests_;
      cv_.notify_all();
      if (failures_ > 0) {
        --failures_;
        res.status = 503;
        return;
      }
      Result<std::vector<SpanData>> spans = DecodeOtlpTraces(req.body, OtlpProtocol::kHttpProtobuf);
      EXPECT_THAT(spans, IsOk());
      if (spans.ok()) accepted_.insert(accepted_.end(), spans->begin(), spans->end());
      res.status = 200;
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] {
      server_.listen_after_bind();
      listen_returned_ = true;
    });
  }
  ~Collector() {
    while (!server_.is_running() && !listen_returned_) std::this_thread::yield();
    server_.stop();
    thread_.join();
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1/traces"; }
  // Waits (real time, as a guard against a hang only) for the n-th request.
  bool WaitForRequests(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, 20s, [&] { return requests_ >= n; });
  }
  int requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  std::vector<std::string> accepted_names() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> names;
    for (const SpanData& span : accepted_) names.push_back(span.name);
    return names;
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::atomic<bool> listen_returned_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  int failures_;
  int requests_ = 0;
  std::vector<SpanData> accepted_;
};

class OtlpBacklogTest : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    auto store = SpanStore::Open(dir_ + "/observe.db");
    ASSERT_THAT(store, IsOk());
    store_ = std::move(store).value();
    // A short run's spans, as its writer stored them: waiting for export.
    for (int i = 1; i <= 3; ++i)
      spans_.push_back(MakeSpan(1, i, 0, "span " + std::to_string(i), "r-1", 0, i));
    MEND_ASSERT_OK(store_->Write(spans_, 0, OtlpExport::kAwait));
  }

  // An exporter of the process whose spans are spans_, on `transport`.
  OtlpExporterOptions Options(std::shared_ptr<OtlpTransport> transport) {
    OtlpExporterOptions options;
    options.url = "http://collector:4318/v1/traces";
    options.transport = std::move(transport);
    options.clock = &clock_;
    options.random = &random_;
    options.metrics = &metrics_;
    options.max_batch_spans = 10;
    options.schedule_delay = 1h;  // nothing is sent before the shutdown
    options.backlog = store_;
    return options;
  }

  std::unique_ptr<OtlpExporter> Start(OtlpExporterOptions options) {
    Result<std::unique_ptr<OtlpExporter>> e = OtlpExporter::Create(std::move(options));
    EXPECT_THAT(e, IsOk());
    return e.ok() ? std::move(e).value() : nullptr;
  }

  double Dropped(const std::string& reason) {
    return metrics_.counter_family("mend_otlp_spans_dropped_total", "", {"reason"})
        .WithLabels({reason})
        .value();
  }

  ManualClock clock_{At(10)};
  ZeroRandom random_;
  MetricsRegistry metrics_;
  std::shared_ptr<SpanStore> store_;
  std::vector<SpanData> spans_;
};

// The case with the real transport: the collector answers 503 once, the process exits.
TEST_F(OtlpBacklogTest, AShortRunsShutdownRetriesA503AndDeliversEverySpan) {
  Collector collector(1);
  OtlpExporterOptions options = Options(NewCurlOtlpTransport());
  options.url = collector.url();
  auto exporter = Start(options);
  ASSERT_NE(exporter, nullptr);
  for (const SpanData& span : spans_) exporter->OnEnd(span);
  std::thread stopper([&] { exporter->Shutdown(2s); });
  ASSERT_TRUE(collector.WaitForRequests(1));
  clock_.BlockUntilWaiters(2);  // the worker's backoff and the shutdown's deadline
  clock_.Advance(1s);
  stopper.join();
  EXPECT_EQ(collector.requests(), 2);
  EXPECT_THAT(collector.accepted_names(), ::testing::ElementsAre("span 1", "span 2", "span 3"));
  EXPECT_EQ(exporter->spans_exported(), 3u);
  EXPECT_EQ(exporter->spans_dropped(), 0u);
  EXPECT_THAT(store_->UnexportedCount(), IsOkAndHolds(0));  // marked exported in observe.db
}

// A collector down for the whole short run: the spans wait in observe.db, and the next process
// with an exporter sends them as soon as it starts.
TEST_F(OtlpBacklogTest, SpansAProcessCouldNotSendAreSentByTheNextOne) {
  // Down for the run's own attempt and for the exporter's last look at observe.db before exit.
  Collector collector(2);
  OtlpExporterOptions options = Options(NewCurlOtlpTransport());
  options.url = collector.url();
  options.max_retries = 0;  // the collector is down for good, as far as this process knows
  auto first = Start(options);
  ASSERT_NE(first, nullptr);
  for (const SpanData& span : spans_) first->OnEnd(span);
  first->Shutdown(2s);
  EXPECT_EQ(collector.requests(), 2);
  EXPECT_EQ(first->spans_exported(), 0u);
  EXPECT_EQ(first->spans_dropped(), 0u);
  EXPECT_EQ(first->spans_deferred(), 3u);
  EXPECT_THAT(store_->UnexportedCount(), IsOkAndHolds(3));
  first.reset();

  options.max_retries = 5;
  auto next = Start(options);
  ASSERT_NE(next, nullptr);
  ASSERT_TRUE(collector.WaitForRequests(3));
  next->Shutdown(2s);
  EXPECT_THAT(collector.accepted_names(), ::testing::ElementsAre("span 1", "span 2", "span 3"));
  EXPECT_EQ(next->spans_exported(), 3u);
  EXPECT_THAT(store_->UnexportedCount(), IsOkAndHolds(0));
  EXPECT_EQ(Dropped("expired"), 0.0);
}

TEST_F(OtlpBacklogTest, OnlySpansPastTheRetentionAreDroppedAndCounted) {
  auto transport = std::make_shared<FakeTransport>(&clock_);
  MEND_ASSERT_OK(store_
                     ->HandOver({{spans_[0].context.trace_id, spans_[0].context.span_id},
                                 {spans_[1].context.trace_id, spans_[1].context.span_id}})
                     .status());
  OtlpExporterOptions options = Options(transport);
  // Spans 1, 2 and 3 ended 9, 8 and 7 s before the exporter starts (At(10)): span 1 is too old.
  options.retention = 8500ms;
  auto exporter = Start(options);
  ASSERT_NE(exporter, nullptr);
  ASSERT_TRUE(transport->WaitForCalls(1));
  exporter->Shutdown(2s);
  EXPECT_EQ(Dropped("expired"), 1.0);  // span 1
  ASSERT_EQ(transport->calls().size(), 1u);
  Result<std::vector<SpanData>> sent =
      DecodeOtlpTraces(transport->calls()[0].body, OtlpProtocol::kHttpProtobuf);
  ASSERT_THAT(sent, IsOk());
  ASSERT_EQ(sent->size(), 1u);
  EXPECT_EQ((*sent)[0].name, "span 2");  // handed over and young enough
  // Span 3 still waits for its own process, which may yet send it.
  EXPECT_THAT(store_->UnexportedCount(), IsOkAndHolds(1));
}

TEST_F(OtlpBacklogTest, ASpanOfAProcessThatDiedIsSentOnceOrphaned) {
  auto transport = std::make_shared<FakeTransport>(&clock_);
  OtlpExporterOptions options = Options(transport);
  options.orphan_after = 8500ms;  // span 1 ended 9 s ago, spans 2 and 3 8 and 7 s ago
  auto exporter = Start(options);
  ASSERT_NE(exporter, nullptr);
  ASSERT_TRUE(transport->WaitForCalls(1));
  exporter->Shutdown(2s);
  Result<std::vector<SpanData>> sent =
      DecodeOtlpTraces(transport->calls()[0].body, OtlpProtocol::kHttpProtobuf);
  ASSERT_THAT(sent, IsOk());
  ASSERT_EQ(sent->size(), 1u);
  EXPECT_EQ((*sent)[0].name, "span 1");
  EXPECT_THAT(store_->UnexportedCount(), IsOkAndHolds(2));
}

// The exporter may deliver a span before the writer has stored it; its mark is kept and made once
// the span is there.
TEST_F(OtlpBacklogTest, AMarkThatCameBeforeTheWriteIsMadeAtExit) {
  auto transport = std::make_shared<FakeTransport>(&clock_);
  auto exporter = Start(Options(transport));
  ASSERT_NE(exporter, nullptr);
  SpanData late = MakeSpan(2, 1, 0, "late", "r-1", 0, 9);
  exporter->OnEnd(late);
  MEND_ASSERT_OK(exporter->Flush(1s));
  MEND_ASSERT_OK(store_->Write({late}, 0, OtlpExport::kAwait));  // the writer catches up
  EXPECT_THAT(store_->UnexportedCount(), IsOkAndHolds(4));
  exporter->Shutdown(2s);
  EXPECT_THAT(store_->UnexportedCount(), IsOkAndHolds(3));  // the three of SetUp, never sent here
}

// Without observe.db (it could not be opened) an undelivered span is dropped, as before.
TEST_F(OtlpBacklogTest, WithoutABacklogAFailedShutdownDrops) {
  auto transport = std::make_shared<FakeTransport>(&clock_);
  transport->Script(HttpReply{503, "60", ""});
  OtlpExporterOptions options = Options(transport);
  options.backlog = nullptr;
  auto exporter = Start(options);
  ASSERT_NE(exporter, nullptr);
  exporter->OnEnd(spans_[0]);
  exporter->Shutdown(2s);
  EXPECT_EQ(Dropped("shutdown"), 1.0);
  EXPECT_EQ(exporter->spans_deferred(), 0u);
}

}  // namespace
}  // namespace mend::obs
