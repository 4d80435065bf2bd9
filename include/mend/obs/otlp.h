#pragma once

// OTLP export (docs/observe.md, "OTLP export"): OtlpExporter, a SpanProcessor that sends finished
// spans to a collector from a background thread, with batching, retries and observe.db as its
// backlog, and the parsers of the observe.otlp.* settings. Thread-safe.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "mend/base/clock.h"
#include "mend/base/random.h"
#include "mend/base/result.h"
#include "mend/obs/metrics.h"
#include "mend/obs/otlp_encode.h"
#include "mend/obs/otlp_transport.h"
#include "mend/obs/span_store.h"
#include "mend/obs/trace.h"

namespace mend::obs {

/// The OTLP/HTTP encodings.
enum class OtlpProtocol { kHttpProtobuf, kHttpJson };

/// "http/protobuf" or "http/json" (observe.otlp.protocol); kInvalidArgument otherwise.
Result<OtlpProtocol> ParseOtlpProtocol(std::string_view text);
/// "application/x-protobuf" or "application/json".
std::string_view OtlpContentType(OtlpProtocol protocol);

/// Parses observe.otlp.headers: "name=value,name2=value2". Whitespace around names, values and
/// members is ignored and empty members are skipped; each value is percent-decoded (as the
/// OpenTelemetry environment variable specification asks, so a value may hold ',' as %2C). A name
/// must be an HTTP token. kInvalidArgument, naming the member's position but never its value (it
/// may be a secret), for a member without '=', an empty or invalid name, a bad percent escape, or
/// a value holding a control character such as CR or LF.
Result<std::vector<HttpHeader>> ParseOtlpHeaders(std::string_view text);

/// The URL spans are POSTed to. `endpoint` must be an http:// or https:// URL with a host. When it
/// has no path (or only "/"), "/v1/traces" is appended, so "http://collector:4318" works as the
/// OTLP base URL; a URL with any other path is used as it is. kInvalidArgument otherwise.
Result<std::string> OtlpTracesUrl(std::string_view endpoint);

/// How long a Retry-After value asks to wait: delta-seconds, or an HTTP-date (IMF-fixdate) measured
/// from `now` (0 when already past). nullopt for anything else.
std::optional<Duration> ParseRetryAfter(std::string_view value, Time now);

/// How an OtlpExporter batches, sends and retries (the observe.otlp.* keys).
struct OtlpExporterOptions {
  std::string url;                                      ///< as OtlpTracesUrl returns it
  std::vector<HttpHeader> headers;                      ///< sent with every request
  OtlpProtocol protocol = OtlpProtocol::kHttpProtobuf;  ///< the body encoding
  Duration timeout = std::chrono::seconds(10);          ///< one request
  size_t queue_capacity = 2048;                         ///< spans waiting; more are dropped
  size_t max_batch_spans = 512;                         ///< spans per request at most
  Duration schedule_delay = std::chrono::seconds(2);    ///< a partial batch waits at most this long
  int max_retries = 5;                                  ///< retries after the first attempt
  Duration initial_backoff = std::chrono::seconds(1);   ///< the first retry delay; doubles
  Duration max_backoff = std::chrono::seconds(30);      ///< also caps Retry-After
  OtlpResource resource;                                ///< who produced the spans
  std::shared_ptr<OtlpTransport> transport;             ///< required
  Clock* clock = nullptr;              ///< required; waits, backoff and Retry-After dates
  Random* random = nullptr;            ///< required; backoff jitter
  MetricsRegistry* metrics = nullptr;  ///< optional; the exporter's own registry when null

  /// observe.db as the durable copy (docs/observe.md, "Spans a collector has not taken"), whose
  /// writer marks this process's spans OtlpExport::kAwait. When set, a span this exporter could
  /// not deliver (the queue was full, the collector refused or stayed unreachable, the shutdown
  /// deadline came) is handed over there instead of dropped, and every `backlog_interval` (the
  /// first time at once) the exporter sends what was handed over, by this process or another one.
  /// Null: undelivered spans are dropped.
  std::shared_ptr<SpanStore> backlog;
  /// A span that ended longer ago than this without reaching a collector is given up: dropped,
  /// reason `expired` (observe.otlp.retention).
  Duration retention = std::chrono::hours(24);
  Duration backlog_interval = std::chrono::minutes(1);  ///< how often the backlog is sent
  /// A span still waiting for its own process's exporter this long after it ended is sent by any
  /// exporter: that process died with it.
  Duration orphan_after = std::chrono::minutes(10);
};

/// A SpanProcessor that sends finished spans to an OTLP/HTTP collector from a background thread.
///
/// OnEnd only copies the span into a bounded queue (full: the span is handed over to the backlog,
/// or without one dropped, and counted), so a slow, failing or unreachable collector never slows
/// the thread that ended the span. The worker sends a batch when max_batch_spans are queued, when
/// schedule_delay has passed since the first span of a batch was queued, or on Flush/Shutdown. A
/// failed request is retried up to max_retries times with exponential backoff (initial_backoff
/// doubling up to max_backoff, each delay drawn uniformly from its upper half) on a connection
/// error, a timeout, or status 429, 502, 503 or 504; on 429 and 503 a Retry-After value replaces
/// the computed delay, capped by max_backoff. Any other non-2xx status gives the batch up at once.
/// Shutdown keeps retrying as long as the next attempt falls before its deadline. A batch given up
/// is handed over to the backlog (sent later, by this process or the next one) or, without one,
/// dropped.
///
/// Metrics: mend_otlp_spans_exported_total, mend_otlp_spans_dropped_total{reason} (with a
/// backlog: expired; without one: queue_full, rejected, retries_exhausted, shutdown),
/// mend_otlp_spans_deferred_total (spans handed over to the backlog) and
/// mend_otlp_export_failures_total (failed requests, retried or not). Thread-safe.
class OtlpExporter final : public SpanProcessor {
 public:
  /// Checks the options and starts the worker thread. kInvalidArgument for a missing transport,
  /// clock or random, an empty url, a zero capacity or batch size, negative retries or a backoff
  /// that is not positive.
  static Result<std::unique_ptr<OtlpExporter>> Create(OtlpExporterOptions options);
  /// Shuts down with no time left for sending: queued spans are dropped.
  ~OtlpExporter() override;

  /// Queues `span` for export, or hands it over or drops it when the queue is full.
  void OnEnd(const SpanData& span) override;
  /// Sends everything queued before the call, waiting at most `timeout`. kDeadlineExceeded when it
  /// was not all handled in time; kUnavailable when spans were dropped after a failed export since
  /// the previous Flush (the queue-full drops of OnEnd are only counted).
  Status Flush(Duration timeout) override;
  /// Sends what is queued for at most `timeout`, retrying failed requests while the retry falls
  /// before the deadline (a request in flight is cancelled at the deadline), then stops the
  /// worker; what is left is handed over to the backlog, or dropped without one. Later spans are
  /// dropped (with a backlog they wait in observe.db for the next process). Idempotent; a second
  /// call waits for the worker only.
  void Shutdown(Duration timeout) override;

  ///@{
  /// The counters, for tests and status output.
  uint64_t spans_exported() const;
  uint64_t spans_dropped() const;
  uint64_t spans_deferred() const;
  uint64_t export_failures() const;
  ///@}

 private:
  // How an export ended; the reasons a batch was given up are the drop reasons.
  enum class Delivery { kDelivered, kRejected, kRetriesExhausted, kShutdown };
  enum class Retries { kAsConfigured, kNone };

  explicit OtlpExporter(OtlpExporterOptions options);
  void Run();
  std::vector<SpanData> TakeBatch();
  // Takes a batch off the queue and sends it; `lock` is released meanwhile.
  void SendQueued(std::unique_lock<std::mutex>& lock);
  // Sends `batch`, retrying as `retries` says. Called without mu_ held.
  Delivery Export(const std::vector<SpanData>& batch, Retries retries);
  // Records the outcome of a batch of this process's spans: marked exported in the backlog, or
  // handed over to it, or dropped for `reason`.
  void Settle(const std::vector<SpanData>& batch, Delivery delivery);
  void GiveUp(std::vector<SpanKey> keys, std::string_view reason);
  // Appends `keys` to one of the lists of marks to try again, up to its bound; mu_ is held.
  void Keep(std::vector<SpanKey>& list, std::vector<SpanKey> keys);
  // The backlog's turn: the keys waiting to be marked, expiry, and one batch of handed-over
  // spans. True when more may be waiting. Called without mu_ held.
  bool Maintain();
  Duration Backoff(int retry, const Result<HttpReply>& reply);
  void Drop(size_t spans, std::string_view reason);
  Time Deadline();  // the shutdown deadline, or Time::max()

  OtlpExporterOptions options_;
  std::unique_ptr<MetricsRegistry> own_metrics_;
  Counter* exported_ = nullptr;
  Counter* failures_ = nullptr;
  CounterFamily* dropped_ = nullptr;
  Counter* dropped_queue_full_ =
      nullptr;  // looked up once: OnEnd's drop path takes no registry lock
  Counter* dropped_shutdown_ = nullptr;
  Counter* deferred_ = nullptr;

  std::mutex mu_;
  std::condition_variable work_cv_;  // the worker: spans queued, flush, shutdown
  std::condition_variable done_cv_;  // Flush: spans handled
  std::deque<SpanData> queue_;
  uint64_t accepted_ = 0;              // spans ever queued
  uint64_t handled_ = 0;               // spans ever taken off the queue and exported or dropped
  uint64_t undelivered_ = 0;           // of those, dropped after export failed
  uint64_t undelivered_reported_ = 0;  // undelivered_ as the last Flush reported it
  uint64_t flush_target_ = 0;
  // With a backlog: keys of spans the queue had no room for, and keys observe.db did not know
  // yet when they were marked (its writer lags); tried again at the next Maintain and at exit.
  std::vector<SpanKey> overflow_;
  std::vector<SpanKey> unmatched_exported_;
  std::vector<SpanKey> unmatched_handed_over_;
  bool stopping_ = false;
  bool worker_done_ = false;
  std::optional<Time> shutdown_deadline_;
  std::thread worker_;
};

}  // namespace mend::obs
