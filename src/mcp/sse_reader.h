#pragma once

// A reader of text/event-stream (server-sent events, WHATWG HTML §9.2) for the Streamable HTTP
// transport: the body of an answer goes in as it arrives, in chunks cut anywhere, and whole events
// come out. It keeps at most one event's worth of bytes, so a server cannot make it grow without
// bound.

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "mend/base/result.h"

namespace mend::mcp {

struct SseEvent {
  std::string type = "message";  // the "event" field; "message" when the event had none
  std::string data;              // the "data" lines joined with "\n"
  std::string id;                // the stream's last event id when the event was dispatched
};

// One reader per stream. Not thread-safe.
class SseReader {
 public:
  using EventFn = std::function<void(SseEvent event)>;

  // `max_event_bytes` bounds the data of one event (and with a little slack, one line).
  explicit SseReader(size_t max_event_bytes) : max_event_bytes_(max_event_bytes) {}

  // Reads `bytes`, calling `on_event` for each event they complete, in order. Lines end in LF, CR
  // or CRLF (also when a chunk ends between the CR and the LF); a leading byte order mark is
  // skipped; comments (":...") and unknown fields are ignored; an event without data is not
  // dispatched, but its id still counts. kResourceExhausted for an event's data over the limit,
  // after which the reader refuses everything.
  Status Feed(std::string_view bytes, const EventFn& on_event);

  // The id of the last dispatched event that had one ("" when none yet): what a reconnection
  // sends as Last-Event-ID. An event that was cut off at the end of the stream does not count.
  const std::string& last_event_id() const { return last_event_id_; }
  // The reconnection delay the server asked for in a "retry" field, if it did.
  std::optional<std::chrono::milliseconds> retry() const { return retry_; }

 private:
  Status Line(std::string_view line, const EventFn& on_event);
  void Dispatch(const EventFn& on_event);

  const size_t max_event_bytes_;
  Status failed_;
  bool started_ = false;   // whether the first byte (a possible BOM) was seen
  bool after_cr_ = false;  // the last byte read ended a line with CR; an LF next belongs to it
  std::string line_;       // the unfinished line
  std::string data_;       // the data of the event being read, each line followed by "\n"
  std::string type_;
  std::string id_buffer_;  // the id as last set by an "id" field
  std::string last_event_id_;
  std::optional<std::chrono::milliseconds> retry_;
};

}  // namespace mend::mcp
