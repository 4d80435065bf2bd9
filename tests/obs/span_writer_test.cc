#include "mend/obs/span_writer.h"

#include <thread>

#include "mend/base/manual_clock.h"
#include "tests/obs/fault_vfs.h"
#include "tests/obs/span_test_util.h"
#include "tests/support/status_matchers.h"

namespace mend::obs {
namespace {

using ::mend::testing::IsOkAndHolds;
using ::mend::testing::StatusIs;
using testing::MakeSpan;

constexpr Duration kLong = std::chrono::hours(24);

class SpanWriterTest : public testing::TempDirTest {
 protected:
  void OpenStore(const std::string& vfs = "") {
    auto store = SpanStore::Open(dir_ + "/observe.db", vfs);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
  }
  std::unique_ptr<BatchSpanWriter> Writer(size_t buffer, size_t batch, Duration delay) {
    return std::make_unique<BatchSpanWriter>(store_, BatchSpanWriterOptions{.clock = &clock_,
                                                                            .metrics = &metrics_,
                                                                            .buffer_spans = buffer,
                                                                            .batch_spans = batch,
                                                                            .max_delay = delay});
  }
  // Span `i` of trace 1.
  static SpanData Nth(int i) { return MakeSpan(1, i, 0, "execute_tool t", "r", i, i + 1); }
  size_t Stored() {
    auto spans = store_->SpansOfTrace(std::string(31, '0') + "1");
    EXPECT_TRUE(spans.ok()) << spans.status().ToString();
    return spans.ok() ? spans->size() : 0;
  }
  double CounterValue(const char* name) { return metrics_.counter(name, "").value(); }
  Time Far() { return clock_.Now() + kLong; }

  ManualClock clock_;
  MetricsRegistry metrics_;
  std::shared_ptr<SpanStore> store_;
};

TEST_F(SpanWriterTest, FullBatchIsWrittenWithoutWaitingForTheDelay) {
  OpenStore();
  auto writer = Writer(100, 4, kLong);
  for (int i = 1; i <= 4; ++i) writer->OnEnd(Nth(i));
  ASSERT_TRUE(writer->WaitForHandled(4, Far()));
  EXPECT_EQ(Stored(), 4u);
  EXPECT_EQ(writer->written(), 4u);
  EXPECT_EQ(CounterValue("mend_trace_spans_written_total"), 4);
}

TEST_F(SpanWriterTest, PartialBatchWaitsForMaxDelay) {
  OpenStore();
  auto writer = Writer(100, 50, std::chrono::seconds(1));
  writer->OnEnd(Nth(1));
  writer->OnEnd(Nth(2));
  // Neither a full batch nor a flush nor the delay: nothing can have been written.
  EXPECT_FALSE(writer->WaitForHandled(1, clock_.Now()));
  clock_.Advance(std::chrono::seconds(1));
  ASSERT_TRUE(writer->WaitForHandled(2, Far()));
  EXPECT_EQ(Stored(), 2u);
}

TEST_F(SpanWriterTest, FullBufferDropsAndCountsAndPersistsTheCount) {
  OpenStore();
  auto writer = Writer(4, 50, kLong);
  for (int i = 1; i <= 6; ++i) writer->OnEnd(Nth(i));
  EXPECT_EQ(writer->dropped(), 2u);
  EXPECT_EQ(CounterValue("mend_trace_spans_dropped_total"), 2);
  EXPECT_THAT(store_->dropped_spans(), IsOkAndHolds(0));
  MEND_ASSERT_OK(writer->Flush(std::chrono::seconds(1)));
  EXPECT_EQ(Stored(), 4u);
  EXPECT_THAT(store_->dropped_spans(), IsOkAndHolds(2));
}

TEST_F(SpanWriterTest, FlushOutOfTimeIsDeadlineExceeded) {
  OpenStore();
  auto writer = Writer(100, 50, kLong);
  writer->OnEnd(Nth(1));
  // With no time at all the writer cannot have run: the flush holds the lock it needs.
  EXPECT_THAT(writer->Flush(Duration(0)), StatusIs(StatusCode::kDeadlineExceeded));
  MEND_EXPECT_OK(writer->Flush(std::chrono::seconds(1)));
  EXPECT_EQ(Stored(), 1u);
}

TEST_F(SpanWriterTest, FlushWithNothingQueuedIsOk) {
  OpenStore();
  auto writer = Writer(100, 50, kLong);
  MEND_EXPECT_OK(writer->Flush(std::chrono::seconds(1)));
}

TEST_F(SpanWriterTest, ShutdownWritesWhatIsQueuedAndDropsLaterSpans) {
  OpenStore();
  auto writer = Writer(100, 50, kLong);
  writer->OnEnd(Nth(1));
  writer->Shutdown(std::chrono::seconds(1));
  EXPECT_EQ(Stored(), 1u);
  writer->OnEnd(Nth(2));
  EXPECT_EQ(writer->dropped(), 1u);
  EXPECT_THAT(writer->Flush(std::chrono::seconds(1)), StatusIs(StatusCode::kFailedPrecondition));
  writer->Shutdown(std::chrono::seconds(1));  // idempotent
}

TEST_F(SpanWriterTest, ConcurrentProducersLoseNothingThatFits) {
  OpenStore();
  auto writer = Writer(10'000, 64, kLong);
  std::vector<std::thread> producers;
  for (int t = 0; t < 4; ++t) {
    producers.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) writer->OnEnd(Nth(1 + t * 500 + i));
    });
  }
  for (std::thread& p : producers) p.join();
  MEND_ASSERT_OK(writer->Flush(std::chrono::seconds(1)));
  EXPECT_EQ(Stored(), 2000u);
  EXPECT_EQ(writer->dropped(), 0u);
}

class SpanWriterFaultTest : public SpanWriterTest {
 protected:
  void SetUp() override {
    SpanWriterTest::SetUp();
    faults_ = &testing::RegisterFaultVfs();
    faults_->Reset();
  }
  void TearDown() override {
    faults_->Reset();
    SpanWriterTest::TearDown();
  }
  testing::FaultVfs* faults_ = nullptr;
};

TEST_F(SpanWriterFaultTest, FailedWritesAreCountedAndLaterSpansWritten) {
  OpenStore(testing::kFaultVfsName);
  auto writer = Writer(100, 2, kLong);
  faults_->fail_writes = true;
  writer->OnEnd(Nth(1));  // the producing side has nothing to fail: OnEnd returns nothing
  writer->OnEnd(Nth(2));
  ASSERT_TRUE(writer->WaitForHandled(2, Far()));
  EXPECT_GT(faults_->writes.load(), 0);
  EXPECT_EQ(writer->write_errors(), 1u);
  EXPECT_EQ(writer->dropped(), 2u);
  EXPECT_EQ(CounterValue("mend_trace_write_errors_total"), 1);
  EXPECT_EQ(CounterValue("mend_trace_spans_dropped_total"), 2);

  faults_->fail_writes = false;
  writer->OnEnd(Nth(3));
  writer->OnEnd(Nth(4));
  ASSERT_TRUE(writer->WaitForHandled(4, Far()));
  EXPECT_EQ(writer->written(), 2u);
  auto spans = store_->SpansOfTrace(std::string(31, '0') + "1");
  ASSERT_TRUE(spans.ok()) << spans.status().ToString();
  ASSERT_EQ(spans->size(), 2u);
  EXPECT_EQ((*spans)[0], Nth(3));
  EXPECT_THAT(store_->dropped_spans(), IsOkAndHolds(2));
}

TEST_F(SpanWriterFaultTest, FailedOpenIsAnError) {
  faults_->fail_opens = true;
  EXPECT_THAT(SpanStore::Open(dir_ + "/observe.db", testing::kFaultVfsName),
              StatusIs(StatusCode::kInternal));
}

}  // namespace
}  // namespace mend::obs
