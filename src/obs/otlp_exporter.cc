#include <algorithm>

#include "mend/obs/otlp.h"

namespace mend::obs {
namespace {

// Far enough to mean "no deadline", near enough that no clock arithmetic overflows.
constexpr Duration kFarFuture = std::chrono::hours(24 * 365);

bool RetryableStatus(int status) {
  return status == 429 || status == 502 || status == 503 || status == 504;
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
  dropped_queue_full_ = &dropped_->WithLabels({"queue_full"});
  dropped_shutdown_ = &dropped_->WithLabels({"shutdown"});
}

OtlpExporter::~OtlpExporter() { Shutdown(Duration::zero()); }

void OtlpExporter::OnEnd(const SpanData& span) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stopping_ && queue_.size() < options_.queue_capacity) {
      queue_.push_back(span);
      ++accepted_;
      if (queue_.size() < options_.max_batch_spans) return;
    } else {
      (stopping_ ? dropped_shutdown_ : dropped_queue_full_)->Inc();
      return;
    }
  }
  work_cv_.notify_one();  // a full batch is waiting
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
        "mend_otlp_spans_dropped_total metric)");
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

void OtlpExporter::Run() {
  Clock& clock = *options_.clock;
  std::unique_lock<std::mutex> lock(mu_);
  Time next_send = clock.Now() + options_.schedule_delay;
  auto urgent = [&] {
    return stopping_ || queue_.size() >= options_.max_batch_spans || flush_target_ > handled_;
  };
  while (true) {
    if (!urgent()) {
      const Time wake = queue_.empty() ? clock.Now() + kFarFuture : next_send;
      clock.WaitUntil(work_cv_, lock, wake);
      if (!urgent() && (queue_.empty() || clock.Now() < next_send)) continue;
    }
    if (queue_.empty()) {
      if (stopping_) break;
      next_send = clock.Now() + options_.schedule_delay;
      continue;
    }
    if (stopping_ && clock.Now() >= *shutdown_deadline_) {
      Drop(queue_.size(), "shutdown");
      handled_ += queue_.size();
      queue_.clear();
      break;
    }
    std::vector<SpanData> batch = TakeBatch();
    lock.unlock();
    const bool delivered = Export(batch);
    lock.lock();
    handled_ += batch.size();
    if (!delivered) undelivered_ += batch.size();
    next_send = clock.Now() + options_.schedule_delay;
    done_cv_.notify_all();
  }
  worker_done_ = true;
  done_cv_.notify_all();
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

bool OtlpExporter::Export(const std::vector<SpanData>& batch) {
  const std::string body = options_.protocol == OtlpProtocol::kHttpJson
                               ? EncodeOtlpJson(options_.resource, batch)
                               : EncodeOtlpProtobuf(options_.resource, batch);
  const std::string_view content_type = OtlpContentType(options_.protocol);
  Clock& clock = *options_.clock;
  for (int retry = 0;; ++retry) {
    const Time deadline = Deadline();
    const Time now = clock.Now();
    if (now >= deadline) {
      Drop(batch.size(), "shutdown");
      return false;
    }
    const Result<HttpReply> reply = options_.transport->Post(
        options_.url, options_.headers, body, content_type,
        std::min(options_.timeout, std::chrono::duration_cast<Duration>(deadline - now)));
    if (reply.ok() && reply->status >= 200 && reply->status < 300) {
      exported_->Inc(static_cast<double>(batch.size()));
      return true;
    }
    failures_->Inc();
    if (!reply.ok() && reply.status().code() == StatusCode::kCancelled) {
      Drop(batch.size(), "shutdown");
      return false;
    }
    const bool retryable = reply.ok() ? RetryableStatus(reply->status)
                                      : reply.status().code() == StatusCode::kUnavailable ||
                                            reply.status().code() == StatusCode::kDeadlineExceeded;
    if (!retryable) {
      Drop(batch.size(), "rejected");
      return false;
    }
    if (retry >= options_.max_retries) {
      Drop(batch.size(), "retries_exhausted");
      return false;
    }

    std::unique_lock<std::mutex> lock(mu_);
    const Time retry_at = clock.Now() + Backoff(retry, reply);
    // Once shutting down, a failed batch is not retried: the process is exiting, and waiting out
    // a backoff for an unreachable collector would only delay that exit.
    auto gives_up = [&] {
      return stopping_ || (shutdown_deadline_ && *shutdown_deadline_ < retry_at);
    };
    clock.WaitUntil(work_cv_, lock, retry_at, gives_up);
    if (gives_up()) {
      Drop(batch.size(), "shutdown");
      return false;
    }
  }
}

}  // namespace mend::obs
