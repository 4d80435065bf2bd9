#pragma once

// Events (docs/events_format.md): Event, EventBus (synchronous fan-out to sinks, with secrets
// redacted) and the EventSink interface, with JsonlFileSink (events.jsonl) and MemorySink. The bus
// and the sinks are thread-safe.

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mend/base/clock.h"
#include "mend/base/file_system.h"
#include "mend/base/result.h"

namespace mend::obs {

/// One field of an event: a key and its value as JSON text (e.g. "\"edit\"", "3", "{\"a\":1}").
struct EventField {
  std::string key;   ///< the field name
  std::string json;  ///< its value as JSON text
};

/// A typed observation, e.g. type "heal.action" with fields {run, step, tool, action, reason}.
/// Fields keep the order in which they were first added. Values are stored as JSON text so this
/// header stays free of a JSON library; the Add* methods always store valid JSON. Adding a key that
/// is already present replaces its value in place. The keys "type" and "time" are reserved for the
/// envelope (see EventToJson) and are ignored by the Add* methods. Thread-compatible.
class Event {
 public:
  /// An event of `type` ("run.completed", "heal.action", ...) with no fields.
  explicit Event(std::string type) : type_(std::move(type)) {}

  /// The event type.
  const std::string& type() const { return type_; }
  /// Set by EventBus::Publish from the bus's clock.
  Time time() const { return time_; }
  /// Sets the time; the bus does.
  void set_time(Time t) { time_ = t; }

  ///@{
  /// Adds or replaces field `key`; each returns the event for chaining.
  Event& AddString(std::string key, std::string_view value);
  Event& AddInt(std::string key, int64_t value);
  /// Non-finite values have no JSON spelling and are stored as null.
  Event& AddDouble(std::string key, double value);
  Event& AddBool(std::string key, bool value);
  ///@}
  /// `json` must be one JSON document; text that does not parse is stored as a JSON string of it,
  /// so serialized events stay valid JSON.
  Event& AddJson(std::string key, std::string_view json);

  /// The fields in the order first added.
  const std::vector<EventField>& fields() const { return fields_; }
  /// The JSON text of field `key`, or nullopt.
  std::optional<std::string_view> Find(std::string_view key) const;

  ///@{
  /// Direct replacement of the type and of every stored value, used by redaction. `json` values
  /// must be valid JSON text.
  void set_type(std::string type) { type_ = std::move(type); }
  std::vector<EventField>& mutable_fields() { return fields_; }
  ///@}

 private:
  Event& Put(std::string key, std::string json);

  std::string type_;
  Time time_{};
  std::vector<EventField> fields_;
};

/// `{"type":...,"time":"<RFC 3339 UTC>",<fields in order>}` on one line, without a newline. This is
/// the JSONL record format of JsonlFileSink.
std::string EventToJson(const Event& event);

/// Receives published events. Write may be called concurrently from several publishing threads, so
/// implementations synchronise themselves. A sink reports failure by returning an error (a sink
/// that throws is tolerated by the bus, but our sinks never do).
class EventSink {
 public:
  virtual ~EventSink() = default;
  /// Takes one event; an error is counted by the bus and reaches no publisher.
  virtual Status Write(const Event& event) = 0;
  /// Makes written events durable (or visible) as far as the sink can; default: nothing to do.
  virtual Status Flush() { return OkStatus(); }
};

/// Names a sink subscribed with EventBus::Subscribe.
enum class SubscriptionId : uint64_t {};

/// Synchronous fan-out of events to subscribed sinks. Publish stamps the event with the bus's
/// clock, redacts registered secrets, then calls every sink in subscription order on the publishing
/// thread. A sink that fails or throws neither stops the other sinks nor reaches the publisher: the
/// failure is counted (error_count) and remembered (last_error). Thread-safe. Unsubscribe may
/// return while a concurrent Publish still delivers to the removed sink (the bus keeps it alive
/// until then).
class EventBus {
 public:
  /// `clock` is not owned and must outlive the bus.
  explicit EventBus(Clock& clock);
  ~EventBus();
  EventBus(const EventBus&) = delete;
  EventBus& operator=(const EventBus&) = delete;

  /// Adds `sink` after those already subscribed; the bus shares its ownership.
  SubscriptionId Subscribe(std::shared_ptr<EventSink> sink);
  /// kNotFound when `id` is not (or no longer) subscribed.
  Status Unsubscribe(SubscriptionId id);

  /// Stamps, redacts and delivers `event` to every sink, on this thread.
  void Publish(Event event);

  /// Every later event has each occurrence of `secret` in its type, its field keys and anywhere in
  /// its field values (strings, object keys, the text of numbers) replaced by "[REDACTED]". An
  /// empty secret is ignored. A value that contained a secret may change JSON type (a number
  /// becomes a string).
  void AddRedactor(std::string secret);

  /// Flushes every sink; returns the first error (and counts every failure).
  Status Flush();

  /// Sink failures counted so far.
  uint64_t error_count() const { return error_count_.load(std::memory_order_relaxed); }
  /// The last sink failure (OK when none). A thrown exception is reported as kInternal.
  Status last_error() const;

 private:
  struct State;
  std::shared_ptr<const State> Snapshot() const;
  void RecordError(Status error);

  Clock& clock_;
  mutable std::mutex mu_;
  std::shared_ptr<const State> state_;  // copy-on-write: Publish never holds mu_ while delivering
  uint64_t next_id_ = 1;
  Status last_error_;
  std::atomic<uint64_t> error_count_{0};
};

/// How JsonlFileSink makes lines durable. Each event is appended with one write call either way, so
/// a crash of the process loses nothing already written; only a power cut can lose unsynced lines.
enum class JsonlSync {
  kOnFlush,     ///< fsync only when Flush() is called (events are observations, not state)
  kEveryEvent,  ///< fsync after every line; for audit trails that must survive a power cut
};

/// Appends one EventToJson line per event to a file (created when missing, never truncated).
/// Readers skip lines that do not parse: a crash mid-write can leave a torn last line. After a
/// failed write the next line starts with a newline so a torn fragment never swallows it.
/// Thread-safe.
class JsonlFileSink final : public EventSink {
 public:
  /// Creates the parent directory when needed and opens `path` for appending. `fs` is not owned and
  /// must outlive the sink. Errors are those of FileSystem::CreateDirs and OpenWritable.
  static Result<std::unique_ptr<JsonlFileSink>> Open(FileSystem& fs, const std::string& path,
                                                     JsonlSync sync = JsonlSync::kOnFlush);

  Status Write(const Event& event) override;
  /// fsync of the file.
  Status Flush() override;

  JsonlFileSink(std::unique_ptr<WritableFile> file, JsonlSync sync);  ///< use Open

 private:
  std::mutex mu_;
  std::unique_ptr<WritableFile> file_;
  const JsonlSync sync_;
  bool torn_ = false;
};

/// Keeps every event in memory, for tests and for in-process inspection. Thread-safe.
class MemorySink final : public EventSink {
 public:
  Status Write(const Event& event) override;

  /// A copy of every event written, oldest first.
  std::vector<Event> events() const;
  /// How many events it holds.
  size_t size() const;
  /// Forgets every event.
  void Clear();

 private:
  mutable std::mutex mu_;
  std::vector<Event> events_;
};

}  // namespace mend::obs
