#pragma once

// Tracing (docs/observe.md): span identity and W3C traceparent, SpanData, Span and Tracer, the
// thread's active span (ActiveSpanScope, StartSpan) and the SpanProcessor interface of the sinks. A
// Tracer is thread-safe; a Span belongs to the thread that does its work.

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "mend/base/clock.h"
#include "mend/base/random.h"
#include "mend/base/result.h"

namespace mend::obs {

/// The identity of a span as W3C Trace Context carries it: 16-byte trace id and 8-byte span id,
/// both as lowercase hex (32 and 16 characters), and the trace flags byte (bit 0: sampled).
struct SpanContext {
  std::string trace_id;  ///< 32 lowercase hex digits
  std::string span_id;   ///< 16 lowercase hex digits
  uint8_t flags = 1;     ///< W3C trace flags; bit 0: sampled

  /// Both ids have their length, are lowercase hex and are not all zeros.
  bool valid() const;
  /// Field by field.
  bool operator==(const SpanContext&) const = default;
};

/// Parses a `traceparent` header value ("00-<trace id>-<span id>-<flags>"). Version 00 must have
/// exactly four fields; a later version may append fields after the flags (they are ignored), as
/// the W3C specification asks. kInvalidArgument for anything else (wrong lengths, upper-case or
/// non-hex digits, all-zero ids, version ff).
Result<SpanContext> ParseTraceparent(std::string_view header);
/// "00-<trace id>-<span id>-<flags as 2 hex digits>". `context` must be valid().
std::string FormatTraceparent(const SpanContext& context);

///@{
/// 16 random bytes as 32 hex digits, 8 as 16; never all zeros.
std::string NewTraceId(Random& random);
std::string NewSpanId(Random& random);
///@}
/// True for exactly `hex_len` lowercase hex digits that are not all zeros.
bool IsSpanIdHex(std::string_view id, size_t hex_len);

/// An attribute value: the OpenTelemetry primitive types and a string array (for
/// gen_ai.response.finish_reasons).
using AttributeValue = std::variant<std::string, int64_t, double, bool, std::vector<std::string>>;

/// One key and value of a span, an event or a link.
struct Attribute {
  std::string key;       ///< e.g. gen_ai.request.model
  AttributeValue value;  ///< the value
  /// Field by field.
  bool operator==(const Attribute&) const = default;
};

/// The value of `key` among `attributes`, or nullptr.
const AttributeValue* FindAttribute(const std::vector<Attribute>& attributes, std::string_view key);

/// Numbers as OTLP's Span.SpanKind has them.
enum class SpanKind : int { kInternal = 1, kServer = 2, kClient = 3, kProducer = 4, kConsumer = 5 };
/// Numbers as OTLP's Status.StatusCode has them.
enum class SpanStatus : int { kUnset = 0, kOk = 1, kError = 2 };

std::string_view SpanKindName(SpanKind kind);      ///< "internal", "server", ...
std::string_view SpanStatusName(SpanStatus code);  ///< "unset", "ok", "error"

/// Something that happened during a span.
struct SpanEvent {
  std::string name;                   ///< e.g. heal.action
  Time time{};                        ///< when
  std::vector<Attribute> attributes;  ///< what
  /// Field by field.
  bool operator==(const SpanEvent&) const = default;
};

/// A span this one relates to outside its parent (a fork's original run, say).
struct SpanLink {
  SpanContext context;                ///< the linked span
  std::vector<Attribute> attributes;  ///< about the link
  /// Field by field.
  bool operator==(const SpanLink&) const = default;
};

/// A finished span as the sinks receive it (and as observe.db and OTLP keep it).
struct SpanData {
  SpanContext context;                     ///< its ids
  std::string parent_span_id;              ///< "" for a root span
  std::string name;                        ///< e.g. "chat gpt-4o", "execute_tool grep"
  SpanKind kind = SpanKind::kInternal;     ///< its kind
  Time start{};                            ///< when it started
  Time end{};                              ///< when it ended
  SpanStatus status = SpanStatus::kUnset;  ///< its outcome
  std::string status_message;              ///< set with kError
  std::vector<Attribute> attributes;       ///< in the order set
  std::vector<SpanEvent> events;           ///< in the order added
  std::vector<SpanLink> links;             ///< in the order added
  /// The mend run the span belongs to ("" for none); also the `mend.run.id` attribute. Kept apart
  /// so stores can index it without reading attributes.
  std::string run_id;

  /// Field by field.
  bool operator==(const SpanData&) const = default;
};

/// Receives finished spans. OnEnd is called on the thread that ended the span and must not block
/// on I/O: sinks that write somewhere queue the span (bounded) and write in the background,
/// dropping what does not fit rather than slowing the run. Thread-safe.
class SpanProcessor {
 public:
  virtual ~SpanProcessor() = default;
  /// Takes a finished span, without blocking on I/O.
  virtual void OnEnd(const SpanData& span) = 0;
  /// A snapshot of a span that announces itself when it starts (Span::Announce): its end
  /// equals its start and it carries `mend.span.in_progress = true`. The ended span has the same
  /// ids and replaces it; a span whose process died never ends, and its snapshot says so. Only
  /// sinks that keep spans (observe.db) care; exporters ignore it (the default).
  virtual void OnStart(const SpanData& snapshot) { (void)snapshot; }
  /// Writes what is queued, waiting at most `timeout`; kDeadlineExceeded when it could not.
  virtual Status Flush(Duration timeout) = 0;
  /// Flushes (bounded by `timeout`) and stops background work; later spans are dropped.
  virtual void Shutdown(Duration timeout) = 0;
};

/// Keeps every finished span in memory, for tests and for in-process inspection. Thread-safe.
class MemorySpanProcessor final : public SpanProcessor {
 public:
  void OnEnd(const SpanData& span) override;
  Status Flush(Duration) override { return OkStatus(); }
  void Shutdown(Duration) override {}

  /// A copy of every span ended so far, in end order.
  std::vector<SpanData> spans() const;
  /// Forgets every span.
  void Clear();

 private:
  mutable std::mutex mu_;
  std::vector<SpanData> spans_;
};

/// What a Tracer needs.
struct TracerOptions {
  Clock* clock = nullptr;    ///< required
  Random* random = nullptr;  ///< required; span and trace ids
  /// Record message and tool content (Span::SetContent) — off by default (observe.capture_content).
  bool capture_content = false;
};

class Tracer;

/// Where a new span hangs. With no parent (and no active span, see StartSpan) the span starts a new
/// trace, or joins `trace_id` as a root span when that is set.
struct SpanStart {
  std::optional<SpanContext> parent;    ///< the parent span, of this process or a caller
  std::string trace_id;                 ///< used when there is no parent: a root span of this trace
  SpanKind kind = SpanKind::kInternal;  ///< the new span's kind
  std::vector<SpanLink> links;          ///< links of the new span
  std::string run_id;  ///< "" inherits the parent's when the parent is a live span of this tracer
};

/// The attribute of a started span's snapshot (Span::Announce).
inline constexpr std::string_view kInProgressAttribute = "mend.span.in_progress";

/// A span being recorded. Move-only; ends (with its current status) when destroyed. A
/// default-constructed Span, or one from a null tracer, records nothing and every method is a
/// cheap no-op, so instrumented code never checks whether tracing is on. Not thread-safe: a span is
/// used by the thread that runs the work it measures.
class Span {
 public:
  Span() = default;
  ~Span();
  ///@{
  /// Moves the recording; `other` records nothing after.
  Span(Span&& other) noexcept;
  Span& operator=(Span&& other) noexcept;
  ///@}
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;

  /// Whether the span records anything.
  bool recording() const { return data_ != nullptr; }
  /// The context children and outgoing requests carry; invalid when not recording.
  SpanContext context() const;
  /// The mend run it belongs to; "" for none.
  const std::string& run_id() const;
  /// The tracer that started it; null when not recording.
  Tracer* tracer() const { return tracer_; }

  /// Sets attribute `key`, replacing an earlier value; returns the span for chaining.
  Span& SetAttribute(std::string key, AttributeValue value);
  ///@{
  /// Exact overloads, so that a bool, a double or an int64_t never converts to another type.
  Span& SetAttribute(std::string key, const char* value) {
    return SetAttribute(std::move(key), AttributeValue(std::string(value)));
  }
  Span& SetAttribute(std::string key, std::string value) {
    return SetAttribute(std::move(key), AttributeValue(std::move(value)));
  }
  Span& SetAttribute(std::string key, int value) {
    return SetAttribute(std::move(key), AttributeValue(static_cast<int64_t>(value)));
  }
  Span& SetAttribute(std::string key, int64_t value) {
    return SetAttribute(std::move(key), AttributeValue(value));
  }
  Span& SetAttribute(std::string key, double value) {
    return SetAttribute(std::move(key), AttributeValue(value));
  }
  Span& SetAttribute(std::string key, bool value) {
    return SetAttribute(std::move(key), AttributeValue(value));
  }
  Span& SetAttribute(std::string key, std::vector<std::string> value) {
    return SetAttribute(std::move(key), AttributeValue(std::move(value)));
  }
  ///@}
  /// Records message or tool content under `key` only when the tracer captures content.
  Span& SetContent(std::string key, std::string_view text);
  /// Adds an event at the current time.
  Span& AddEvent(std::string name, std::vector<Attribute> attributes = {});
  /// Adds a link to another span.
  Span& AddLink(SpanContext context, std::vector<Attribute> attributes = {});
  /// Status ERROR with `message`, and `error.type` = `type` when `type` is not empty.
  Span& SetError(std::string_view type, std::string_view message);
  /// Status OK.
  Span& SetOk();
  /// Sets the mend run (and the `mend.run.id` attribute).
  void set_run_id(std::string run_id);

  /// Hands the processors a snapshot of the span as it is now (SpanProcessor::OnStart), for long
  /// spans a crash may cut short: a run's attempts and recovery attempts. Call it once the start
  /// attributes are set.
  void Announce();

  /// Stamps the end time and hands the span to the tracer's processors. Idempotent.
  void End();

 private:
  friend class Tracer;
  Span(Tracer* tracer, std::unique_ptr<SpanData> data) : tracer_(tracer), data_(std::move(data)) {}

  Tracer* tracer_ = nullptr;
  std::unique_ptr<SpanData> data_;
};

/// Makes `span` the thread's active span until destroyed (restoring the previous one). Spans
/// started with obs::StartSpan become its children: code deep below (hooks, heal, memory) adds
/// spans and events to the run without being handed the tracer. Scopes nest and must be destroyed
/// in reverse order of creation on their thread.
class ActiveSpanScope {
 public:
  /// Makes `span` active; `span` must outlive the scope.
  explicit ActiveSpanScope(Span& span);
  ~ActiveSpanScope();
  ActiveSpanScope(const ActiveSpanScope&) = delete;
  ActiveSpanScope& operator=(const ActiveSpanScope&) = delete;

 private:
  Span* previous_;
};

/// The thread's active span, or nullptr.
Span* ActiveSpan();
/// A child of the active span, from the active span's tracer; a no-op Span when none is active.
Span StartSpan(std::string name, SpanKind kind = SpanKind::kInternal);
/// Adds an event to the active span (no-op when none).
void AddActiveSpanEvent(std::string name, std::vector<Attribute> attributes = {});

/// Creates spans and hands finished ones to its processors. Secrets registered with AddRedactor are
/// replaced by "[REDACTED]" in every string attribute, event attribute, status message and name
/// when a span ends, whether or not content is captured. Thread-safe.
class Tracer {
 public:
  /// A tracer without processors; clock and random are required.
  explicit Tracer(TracerOptions options);
  ~Tracer();
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  /// Processors are called in the order added. Add them before spans start.
  void AddProcessor(std::shared_ptr<SpanProcessor> processor);
  /// Registers a secret to replace in every later span.
  void AddRedactor(std::string secret);
  /// Whether Span::SetContent records anything.
  bool capture_content() const { return options_.capture_content; }
  /// The clock spans are timed with.
  Clock& clock() const { return *options_.clock; }

  /// Without `start.parent`, the thread's active span (when it is this tracer's and belongs to
  /// `start.trace_id` or no trace id is given) is the parent.
  Span StartSpan(std::string name, SpanStart start = {});

  /// Flushes every processor; the first error.
  Status Flush(Duration timeout);
  /// Shuts every processor down within `timeout`; later spans go nowhere.
  void Shutdown(Duration timeout);

  /// How many spans ended (and went to the processors) so far.
  uint64_t spans_ended() const;

 private:
  friend class Span;
  void Finish(SpanData& data);
  void Announce(const SpanData& data);

  TracerOptions options_;
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<SpanProcessor>> processors_;
  std::vector<std::string> secrets_;  // longest first
  uint64_t ended_ = 0;
  bool shut_down_ = false;
};

/// Replaces every occurrence of each secret in `span`'s string values (attributes, event
/// attributes, status message, names) with "[REDACTED]". Secrets are applied in order.
void RedactSpan(const std::vector<std::string>& secrets, SpanData* span);

}  // namespace mend::obs
