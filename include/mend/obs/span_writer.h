#pragma once

// BatchSpanWriter, the SpanProcessor that writes finished spans to observe.db from a background
// thread, in batches; what does not fit its buffer is dropped and counted, never waited for
// (docs/observe.md). Thread-safe.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "mend/base/clock.h"
#include "mend/obs/metrics.h"
#include "mend/obs/span_store.h"
#include "mend/obs/trace.h"

namespace mend::obs {

/// How a BatchSpanWriter buffers and batches.
struct BatchSpanWriterOptions {
  Clock* clock = nullptr;  ///< required; batch delays and Flush timeouts
  /// Where the counters mend_trace_spans_written_total, mend_trace_spans_dropped_total and
  /// mend_trace_write_errors_total live; nullptr: a registry of the writer's own.
  MetricsRegistry* metrics = nullptr;
  size_t buffer_spans = 8192;  ///< observe.buffer_spans: spans waiting at most; more are dropped
  /// A batch is written when this many spans wait, or when the oldest waited max_delay. A buffer
  /// smaller than a batch is written on max_delay (or Flush) only.
  size_t batch_spans = 512;
  Duration max_delay = std::chrono::seconds(1);  ///< see batch_spans
  /// kAwait when this process exports over OTLP: the spans written wait in observe.db until the
  /// exporter marks them sent (SpanStore::Write).
  OtlpExport otlp = OtlpExport::kNone;
};

/// A SpanProcessor that writes finished spans to a SpanStore from a background thread.
///
/// OnEnd copies the span into a bounded buffer and returns: it never waits for I/O. A span that
/// does not fit is dropped and counted. Batches are written one transaction each; a failing write
/// never reaches the run: its spans are counted as dropped (and the write as an error) and the
/// writer carries on with the next batch. Dropped spans are added to the store's persisted total
/// (SpanStore::dropped_spans) with the next successful write. Thread-safe.
class BatchSpanWriter final : public SpanProcessor {
 public:
  /// Starts the background thread. `store` is shared with readers of the same connection.
  BatchSpanWriter(std::shared_ptr<SpanStore> store, BatchSpanWriterOptions options);
  /// Shutdown(5s) when not shut down yet.
  ~BatchSpanWriter() override;
  BatchSpanWriter(const BatchSpanWriter&) = delete;
  BatchSpanWriter& operator=(const BatchSpanWriter&) = delete;

  /// Copies `span` into the buffer, or drops and counts it when the buffer is full.
  void OnEnd(const SpanData& span) override;
  /// Queued like an ended span; the ended span replaces it in observe.db.
  void OnStart(const SpanData& snapshot) override { OnEnd(snapshot); }
  /// Waits until every span accepted before the call is written or counted as dropped (a failed
  /// write), at most `timeout` on the options' clock: kDeadlineExceeded when time ran out,
  /// kFailedPrecondition after Shutdown.
  Status Flush(Duration timeout) override;
  /// Flushes (at most `timeout`), then stops and joins the thread, waiting for a write in progress.
  /// Spans still queued then, and spans ended later, are dropped and counted. Idempotent.
  void Shutdown(Duration timeout) override;

  /// Waits (at most until `deadline`) until `count` spans were accepted and handled (written or
  /// dropped by a failed write), without asking for an early write. For tests of batching.
  bool WaitForHandled(uint64_t count, Time deadline);

  uint64_t written() const;       ///< spans written
  uint64_t dropped() const;       ///< spans dropped (buffer full, failed writes, after shutdown)
  uint64_t write_errors() const;  ///< failed batch writes

 private:
  void Loop();
  // Whether a write is due now; mu_ is held.
  bool WriteDue();
  // Writes the next batch (and the unpersisted drop count); called with `lock` held, released
  // during the write.
  void WriteNext(std::unique_lock<std::mutex>& lock);
  Status FlushLocked(std::unique_lock<std::mutex>& lock, Duration timeout);

  std::shared_ptr<SpanStore> store_;
  BatchSpanWriterOptions options_;
  std::unique_ptr<MetricsRegistry> own_metrics_;
  Counter* written_total_;
  Counter* dropped_total_;
  Counter* errors_total_;

  mutable std::mutex mu_;
  std::condition_variable work_cv_;  // the thread waits for spans, a flush or shutdown
  std::condition_variable done_cv_;  // Flush waits for handled_ to advance
  std::deque<SpanData> buffer_;
  Time oldest_{};                  // when the oldest span in buffer_ was accepted
  uint64_t accepted_ = 0;          // spans that entered buffer_
  uint64_t handled_ = 0;           // of those, written or dropped by a failed write
  uint64_t flush_target_ = 0;      // write everything up to here without waiting
  uint64_t flush_gen_ = 0;         // Flush calls so far
  uint64_t attempt_gen_ = 0;       // flush_gen_ when the last write (or empty round) began
  int64_t unpersisted_drops_ = 0;  // dropped, not yet added to the store's total
  uint64_t written_ = 0, dropped_ = 0, write_errors_ = 0;
  bool stopping_ = false;  // no more spans are accepted
  bool stop_ = false;      // the thread exits
  std::thread thread_;
};

}  // namespace mend::obs
