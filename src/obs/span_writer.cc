#include "mend/obs/span_writer.h"

#include <algorithm>
#include <utility>

namespace mend::obs {
namespace {

// How long the thread sleeps with nothing queued; any span or flush wakes it earlier.
constexpr Duration kIdleWait = std::chrono::hours(1);

}  // namespace

BatchSpanWriter::BatchSpanWriter(std::shared_ptr<SpanStore> store, BatchSpanWriterOptions options)
    : store_(std::move(store)), options_(options) {
  if (options_.metrics == nullptr) {
    own_metrics_ = std::make_unique<MetricsRegistry>();
    options_.metrics = own_metrics_.get();
  }
  options_.batch_spans = std::max<size_t>(options_.batch_spans, 1);
  MetricsRegistry& m = *options_.metrics;
  written_total_ = &m.counter("mend_trace_spans_written_total", "spans written to observe.db");
  dropped_total_ = &m.counter("mend_trace_spans_dropped_total",
                              "spans that never reached observe.db (buffer full, failed writes)");
  errors_total_ = &m.counter("mend_trace_write_errors_total", "failed observe.db batch writes");
  thread_ = std::thread([this] { Loop(); });
}

BatchSpanWriter::~BatchSpanWriter() { Shutdown(std::chrono::seconds(5)); }

void BatchSpanWriter::OnEnd(const SpanData& span) {
  SpanData copy = span;  // outside the lock: the run's thread pays for its own copy
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_ || buffer_.size() >= options_.buffer_spans) {
    ++dropped_;
    if (!stopping_) ++unpersisted_drops_;
    dropped_total_->Inc();
    return;
  }
  if (buffer_.empty()) oldest_ = options_.clock->Now();
  buffer_.push_back(std::move(copy));
  ++accepted_;
  // The thread learns the new deadline (first span) or that a batch is full.
  if (buffer_.size() == 1 || buffer_.size() == options_.batch_spans) work_cv_.notify_one();
}

bool BatchSpanWriter::WriteDue() {
  if (flush_gen_ > attempt_gen_ || flush_target_ > handled_) return true;
  if (buffer_.size() >= options_.batch_spans) return true;
  return !buffer_.empty() && options_.clock->Now() >= oldest_ + options_.max_delay;
}

void BatchSpanWriter::WriteNext(std::unique_lock<std::mutex>& lock) {
  const size_t n = std::min(buffer_.size(), options_.batch_spans);
  std::vector<SpanData> batch(std::make_move_iterator(buffer_.begin()),
                              std::make_move_iterator(buffer_.begin() + n));
  buffer_.erase(buffer_.begin(), buffer_.begin() + n);
  if (!buffer_.empty()) oldest_ = options_.clock->Now();
  const int64_t drops = unpersisted_drops_;
  const uint64_t gen = flush_gen_;
  Status status = OkStatus();
  if (!batch.empty() || drops > 0) {
    lock.unlock();
    status = store_->Write(batch, drops, options_.otlp);
    lock.lock();
  }
  attempt_gen_ = std::max(attempt_gen_, gen);
  if (status.ok()) {
    written_ += n;
    unpersisted_drops_ -= drops;
    written_total_->Inc(static_cast<double>(n));
  } else {
    // The run never hears of it: the spans are counted, and recorded with the next good write.
    dropped_ += n;
    unpersisted_drops_ += static_cast<int64_t>(n);
    ++write_errors_;
    dropped_total_->Inc(static_cast<double>(n));
    errors_total_->Inc();
  }
  handled_ += n;
  done_cv_.notify_all();
}

void BatchSpanWriter::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (WriteDue()) {
      WriteNext(lock);
      continue;
    }
    const Time deadline =
        buffer_.empty() ? options_.clock->Now() + kIdleWait : oldest_ + options_.max_delay;
    options_.clock->WaitUntil(work_cv_, lock, deadline);
  }
}

Status BatchSpanWriter::FlushLocked(std::unique_lock<std::mutex>& lock, Duration timeout) {
  const Time deadline = options_.clock->Now() + timeout;
  const uint64_t target = accepted_;
  const uint64_t gen = ++flush_gen_;
  flush_target_ = std::max(flush_target_, target);
  work_cv_.notify_one();
  const bool done = options_.clock->WaitUntil(
      done_cv_, lock, deadline, [&] { return handled_ >= target && attempt_gen_ >= gen; });
  if (!done) return DeadlineExceededError("spans not written to observe.db in time");
  return OkStatus();
}

Status BatchSpanWriter::Flush(Duration timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  if (stopping_) return FailedPreconditionError("the span writer is shut down");
  return FlushLocked(lock, timeout);
}

void BatchSpanWriter::Shutdown(Duration timeout) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    FlushLocked(lock, timeout).IgnoreError();  // what is left is counted below
    stop_ = true;
    work_cv_.notify_one();
  }
  thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  dropped_ += buffer_.size();
  dropped_total_->Inc(static_cast<double>(buffer_.size()));
  buffer_.clear();
}

bool BatchSpanWriter::WaitForHandled(uint64_t count, Time deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  return options_.clock->WaitUntil(done_cv_, lock, deadline, [&] { return handled_ >= count; });
}

uint64_t BatchSpanWriter::written() const {
  std::lock_guard<std::mutex> lock(mu_);
  return written_;
}

uint64_t BatchSpanWriter::dropped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dropped_;
}

uint64_t BatchSpanWriter::write_errors() const {
  std::lock_guard<std::mutex> lock(mu_);
  return write_errors_;
}

}  // namespace mend::obs
