#include <algorithm>

#include "mend/obs/otlp.h"

namespace mend::obs {
namespace {

// Far enough to mean "no deadline", near enough that no clock arithmetic overflows.
constexpr Duration kFarFuture = std::chrono::hours(24 * 365);

bool RetryableStatus(int status) {
  return status == 429 || status == 502 || status == 503 || status == 504;
}

// Keys of spans the exporter waits to mark in observe.db, at most this many per list: beyond it
// (a writer far behind, a queue full for long) a span waits in observe.db until it is orphaned.
constexpr size_t kMaxPendingKeysPerQueueSpan = 4;

std::vector<SpanKey> KeysOf(const std::vector<SpanData>& spans) {
  std::vector<SpanKey> keys;
  keys.reserve(spans.size());
  for (const SpanData& span : spans) keys.push_back({span.context.trace_id, span.context.span_id});
  return keys;
}

}  // namespace

Result<std::unique_ptr<OtlpExporter>> OtlpExporter::Create(OtlpExporterOptions options) {
  if (options.transport == nullptr || options.clock == nullptr || options.random == nullptr) {
    return InvalidArgumentError("OTLP exporter: transport, clock and random are required");
  }
  if (options.url.empty()) return InvalidArgumentError("OTLP exporter: empty url");
  if (options.queue_capacity == 0 || options.max_batch_spans == 0) {
    return InvalidArgumentError("OTLP exporter: queue capacity and batch size must be positive");
  }
  if (options.max_retries < 0 || options.initial_backoff <= Duration::zero() ||
      options.max_backoff < options.initial_backoff || options.timeout <= Duration::zero()) {
    return InvalidArgumentError(
        "OTLP exporter: retries must be >= 0, timeout and backoff positive, max >= initial");
  }
  if (options.backlog != nullptr &&
      (options.retention <= Duration::zero() || options.backlog_interval <= Duration::zero())) {
    return InvalidArgumentError("OTLP exporter: retention and backlog interval must be positive");
  }
  std::unique_ptr<OtlpExporter> exporter(new OtlpExporter(std::move(options)));
  exporter->worker_ = std::thread([e = exporter.get()] { e->Run(); });
  return exporter;
}

OtlpExporter::OtlpExporter(OtlpExporterOptions options) : options_(std::move(options)) {
  if (options_.metrics == nullptr) {
    own_metrics_ = std::make_unique<MetricsRegistry>();
    options_.metrics = own_metrics_.get();
  }
  MetricsRegistry& m = *options_.metrics;
  exported_ = &m.counter("mend_otlp_spans_exported_total",
                         "Spans an OTLP collector accepted (2xx answer).");
  failures_ = &m.counter("mend_otlp_export_failures_total",
                         "OTLP export requests that failed (error status or connection error), "
                         "retried or not.");
  dropped_ =
      &m.counter_family("mend_otlp_spans_dropped_total",
                        "Spans never delivered to the OTLP collector, by reason.", {"reason"});
  deferred_ = &m.counter("mend_otlp_spans_deferred_total",
                         "Spans handed over to observe.db for a later export (not yet taken by "
                         "the collector).");
  dropped_queue_full_ = &dropped_->WithLabels({"queue_full"});
  dropped_shutdown_ = &dropped_->WithLabels({"shutdown"});
}

OtlpExporter::~OtlpExporter() { Shutdown(Duration::zero()); }

void OtlpExporter::OnEnd(const SpanData& span) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      // With a backlog the span waits in observe.db, where the next process finds it.
      if (options_.backlog == nullptr) {
        dropped_shutdown_->Inc();
      } else {
        deferred_->Inc();
      }
      return;
    }
    if (queue_.size() >= options_.queue_capacity) {
      if (options_.backlog != nullptr &&
          overflow_.size() < kMaxPendingKeysPerQueueSpan * options_.queue_capacity) {
        overflow_.push_back({span.context.trace_id, span.context.span_id});
        deferred_->Inc();
      } else {
        dropped_queue_full_->Inc();
      }
      return;
    }
    queue_.push_back(span);
    ++accepted_;
    // The worker learns of the batch's first span (its send time) and of a full batch.
    if (queue_.size() != 1 && queue_.size() < options_.max_batch_spans) return;
  }
  work_cv_.notify_one();
}

Status OtlpExporter::Flush(Duration timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t target = accepted_;
  flush_target_ = std::max(flush_target_, target);
  work_cv_.notify_one();
  const bool drained =
      options_.clock->WaitUntil(done_cv_, lock, options_.clock->Now() + timeout,
                                [&] { return handled_ >= target || worker_done_; });
  if (!drained || handled_ < target) {
    return DeadlineExceededError("OTLP export: queued spans not sent within the flush timeout");
  }
  const bool lost = undelivered_ != undelivered_reported_;
  undelivered_reported_ = undelivered_;
  if (lost) {
    return UnavailableError(
        "OTLP export: some spans could not be delivered (see the "
        "mend_otlp_spans_dropped_total and mend_otlp_spans_deferred_total metrics)");
  }
  return OkStatus();
}

void OtlpExporter::Shutdown(Duration timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!shutdown_deadline_) {
    stopping_ = true;
    shutdown_deadline_ = options_.clock->Now() + timeout;
    work_cv_.notify_all();
  }
  const Time deadline = *shutdown_deadline_;
  if (!options_.clock->WaitUntil(done_cv_, lock, deadline, [&] { return worker_done_; })) {
    // The worker is inside a request that outlives the deadline (a hanging collector).
    options_.transport->Cancel();
  }
  lock.unlock();
  if (worker_.joinable() && worker_.get_id() != std::this_thread::get_id()) worker_.join();
}

uint64_t OtlpExporter::spans_exported() const { return static_cast<uint64_t>(exported_->value()); }
uint64_t OtlpExporter::export_failures() const { return static_cast<uint64_t>(failures_->value()); }
uint64_t OtlpExporter::spans_deferred() const { return static_cast<uint64_t>(deferred_->value()); }
uint64_t OtlpExporter::spans_dropped() const {
  double total = 0;
  for (const auto& [labels, counter] : dropped_->Children()) total += counter->value();
  return static_cast<uint64_t>(total);
}

Time OtlpExporter::Deadline() {
  std::lock_guard<std::mutex> lock(mu_);
  return shutdown_deadline_ ? *shutdown_deadline_ : options_.clock->Now() + kFarFuture;
}

void OtlpExporter::Drop(size_t spans, std::string_view reason) {
  dropped_->WithLabels({std::string(reason)}).Inc(static_cast<double>(spans));
}

std::vector<SpanData> OtlpExporter::TakeBatch() {
  const size_t n = std::min(queue_.size(), options_.max_batch_spans);
  std::vector<SpanData> batch(std::make_move_iterator(queue_.begin()),
                              std::make_move_iterator(queue_.begin() + static_cast<long>(n)));
  queue_.erase(queue_.begin(), queue_.begin() + static_cast<long>(n));
  return batch;
}

// With a backlog nothing is lost to a collector's hiccup: the spans wait in observe.db (which
// already holds them) and an exporter sends them later.
void OtlpExporter::GiveUp(std::vector<SpanKey> keys, std::string_view reason) {
  if (options_.backlog == nullptr) {
    Drop(keys.size(), reason);
    return;
  }
  deferred_->Inc(static_cast<double>(keys.size()));
  Result<std::vector<SpanKey>> unmatched = options_.backlog->HandOver(keys);
  std::lock_guard<std::mutex> lock(mu_);
  Keep(unmatched_handed_over_, unmatched.ok() ? std::move(unmatched).value() : std::move(keys));
}

void OtlpExporter::Keep(std::vector<SpanKey>& list, std::vector<SpanKey> keys) {
  const size_t cap = kMaxPendingKeysPerQueueSpan * options_.queue_capacity;
  for (SpanKey& key : keys) {
    if (list.size() >= cap) return;
    list.push_back(std::move(key));
  }
}

void OtlpExporter::Settle(const std::vector<SpanData>& batch, Delivery delivery) {
  if (delivery != Delivery::kDelivered) {
    GiveUp(KeysOf(batch), delivery == Delivery::kRejected           ? "rejected"
                          : delivery == Delivery::kRetriesExhausted ? "retries_exhausted"
                                                                    : "shutdown");
    return;
  }
  if (options_.backlog == nullptr) return;
  Result<std::vector<SpanKey>> unmatched = options_.backlog->MarkExported(KeysOf(batch));
  if (!unmatched.ok() || unmatched->empty()) return;  // a failed mark: sent again later, at worst
  std::lock_guard<std::mutex> lock(mu_);
  Keep(unmatched_exported_, std::move(unmatched).value());
}

void OtlpExporter::SendQueued(std::unique_lock<std::mutex>& lock) {
  std::vector<SpanData> batch = TakeBatch();
  lock.unlock();
  const Delivery delivery = Export(batch, Retries::kAsConfigured);
  Settle(batch, delivery);
  lock.lock();
  handled_ += batch.size();
  if (delivery != Delivery::kDelivered) undelivered_ += batch.size();
  done_cv_.notify_all();
}

bool OtlpExporter::Maintain() {
  SpanStore& store = *options_.backlog;
  std::vector<SpanKey> exported, handed_over;
  {
    std::lock_guard<std::mutex> lock(mu_);
    exported.swap(unmatched_exported_);
    handed_over.swap(unmatched_handed_over_);
    handed_over.insert(handed_over.end(), overflow_.begin(), overflow_.end());
    overflow_.clear();
  }
  // Marks observe.db could not take yet are tried again until they land (their spans were not
  // stored yet) or the process exits; the lists are bounded.
  Result<std::vector<SpanKey>> still_exported = store.MarkExported(exported);
  Result<std::vector<SpanKey>> still_handed_over = store.HandOver(handed_over);
  {
    std::lock_guard<std::mutex> lock(mu_);
    Keep(unmatched_exported_,
         still_exported.ok() ? std::move(still_exported).value() : std::move(exported));
    Keep(unmatched_handed_over_,
         still_handed_over.ok() ? std::move(still_handed_over).value() : std::move(handed_over));
  }
  const Time now = options_.clock->Now();
  if (Result<int64_t> expired = store.ExpireUnexported(now - options_.retention);
      expired.ok() && *expired > 0) {
    Drop(static_cast<size_t>(*expired), "expired");
  }
  Result<std::vector<SpanData>> batch =
      store.SpansToExport(now - options_.orphan_after, options_.max_batch_spans);
  if (!batch.ok() || batch->empty()) return false;
  // One attempt: a collector still failing is tried again at the next interval, and the spans
  // this process ends meanwhile do not wait behind a backoff for old ones.
  if (Export(*batch, Retries::kNone) != Delivery::kDelivered) return false;
  store.MarkExported(KeysOf(*batch)).status().IgnoreError();
  return batch->size() == options_.max_batch_spans;
}

void OtlpExporter::Run() {
  Clock& clock = *options_.clock;
  std::unique_lock<std::mutex> lock(mu_);
  // When the oldest queued span is sent at the latest; unset while the queue is empty.
  std::optional<Time> next_send;
  Time next_backlog = clock.Now();  // leftovers of earlier processes go first
  bool exit_pass_done = false;
  while (true) {
    const Time now = clock.Now();
    if (queue_.empty()) {
      next_send.reset();
      if (stopping_) {
        // Time left before the deadline goes to one more look at the backlog: a short process
        // may exit before its first look got to send what earlier ones left.
        if (options_.backlog == nullptr || exit_pass_done || now >= *shutdown_deadline_) break;
        exit_pass_done = true;
        lock.unlock();
        Maintain();
        lock.lock();
        continue;
      }
    } else if (!next_send) {
      next_send = now + options_.schedule_delay;
    }
    const bool urgent =
        stopping_ || queue_.size() >= options_.max_batch_spans || flush_target_ > handled_;
    if (!queue_.empty() && (urgent || now >= *next_send)) {
      if (stopping_ && now >= *shutdown_deadline_) {
        std::vector<SpanData> rest(std::make_move_iterator(queue_.begin()),
                                   std::make_move_iterator(queue_.end()));
        queue_.clear();
        handled_ += rest.size();
        undelivered_ += rest.size();
        lock.unlock();
        GiveUp(KeysOf(rest), "shutdown");
        lock.lock();
        break;
      }
      SendQueued(lock);
      next_send.reset();
      continue;
    }
    if (options_.backlog != nullptr && now >= next_backlog) {
      lock.unlock();
      const bool more = Maintain();
      lock.lock();
      next_backlog = more ? clock.Now() : clock.Now() + options_.backlog_interval;
      continue;
    }
    Time wake = next_send.value_or(now + kFarFuture);
    if (options_.backlog != nullptr) wake = std::min(wake, next_backlog);
    clock.WaitUntil(work_cv_, lock, wake);
  }
  worker_done_ = true;
  done_cv_.notify_all();
  lock.unlock();
  // The writer has stored this process's spans by now (it shuts down first): the marks it could
  // not take before get their last chance.
  if (options_.backlog != nullptr) {
    std::vector<SpanKey> exported, handed_over;
    {
      std::lock_guard<std::mutex> relock(mu_);
      exported.swap(unmatched_exported_);
      handed_over.swap(unmatched_handed_over_);
      handed_over.insert(handed_over.end(), overflow_.begin(), overflow_.end());
      overflow_.clear();
    }
    options_.backlog->MarkExported(exported).status().IgnoreError();
    options_.backlog->HandOver(handed_over).status().IgnoreError();
  }
}

Duration OtlpExporter::Backoff(int retry, const Result<HttpReply>& reply) {
  if (reply.ok() && (reply->status == 429 || reply->status == 503)) {
    if (std::optional<Duration> wait = ParseRetryAfter(reply->retry_after, options_.clock->Now())) {
      return std::min(*wait, options_.max_backoff);
    }
  }
  Duration base = options_.initial_backoff;
  for (int i = 0; i < retry && base < options_.max_backoff; ++i) base *= 2;
  base = std::min(base, options_.max_backoff);
  // Jitter keeps many exporters that failed together from retrying together.
  const double upper_half = 0.5 + 0.5 * options_.random->Uniform01();
  return std::chrono::duration_cast<Duration>(base * upper_half);
}

OtlpExporter::Delivery OtlpExporter::Export(const std::vector<SpanData>& batch, Retries retries) {
  const std::string body = options_.protocol == OtlpProtocol::kHttpJson
                               ? EncodeOtlpJson(options_.resource, batch)
                               : EncodeOtlpProtobuf(options_.resource, batch);
  const std::string_view content_type = OtlpContentType(options_.protocol);
  const int max_retries = retries == Retries::kNone ? 0 : options_.max_retries;
  Clock& clock = *options_.clock;
  for (int retry = 0;; ++retry) {
    const Time deadline = Deadline();
    const Time now = clock.Now();
    if (now >= deadline) return Delivery::kShutdown;
    const Result<HttpReply> reply = options_.transport->Post(
        options_.url, options_.headers, body, content_type,
        std::min(options_.timeout, std::chrono::duration_cast<Duration>(deadline - now)));
    if (reply.ok() && reply->status >= 200 && reply->status < 300) {
      exported_->Inc(static_cast<double>(batch.size()));
      return Delivery::kDelivered;
    }
    failures_->Inc();
    if (!reply.ok() && reply.status().code() == StatusCode::kCancelled) return Delivery::kShutdown;
    const bool retryable = reply.ok() ? RetryableStatus(reply->status)
                                      : reply.status().code() == StatusCode::kUnavailable ||
                                            reply.status().code() == StatusCode::kDeadlineExceeded;
    if (!retryable) return Delivery::kRejected;
    if (retry >= max_retries) return Delivery::kRetriesExhausted;

    std::unique_lock<std::mutex> lock(mu_);
    const Time retry_at = clock.Now() + Backoff(retry, reply);
    // A shutdown still retries, but only while the retry falls before its deadline: an exiting
    // process gives the collector every chance it has time for, and waits for nothing beyond.
    auto gives_up = [&] { return shutdown_deadline_ && *shutdown_deadline_ <= retry_at; };
    clock.WaitUntil(work_cv_, lock, retry_at, gives_up);
    if (gives_up()) return Delivery::kShutdown;
  }
}

}  // namespace mend::obs
