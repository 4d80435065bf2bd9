#pragma once

// The browsers' view of the runtime's event bus (GET /api/v1/events, docs/http_api.md, "Live
// events"): every event the bus publishes, already redacted by it, is fanned out to the open
// streams. Each stream has a bounded queue: a client that cannot keep up is dropped, never waited
// for, so a slow browser can hold up neither a run nor the bus.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "mend/base/clock.h"
#include "mend/base/result.h"
#include "mend/obs/events.h"

namespace mend::server {

// How the event streams of one server behave.
struct EventStreamOptions {
  // Streams open at once; one more is refused (kUnavailable). Every open stream holds one of the
  // server's request turns (serve.threads) for as long as it lasts.
  size_t max_streams = 16;
  // Bytes of events a stream may have waiting for its client; one more event drops the stream.
  size_t max_queued_bytes = 1 << 20;
  // A comment line is sent after this long without an event, so proxies keep the stream open.
  std::chrono::milliseconds heartbeat{15'000};
  // What the client is told to wait before it reconnects (the `retry:` field).
  std::chrono::milliseconds retry{3'000};
  // How long a ticket (IssueTicket) may wait to be used.
  Duration ticket_lifetime = std::chrono::seconds(30);
};

// One open stream: what its connection writes next. Thread-safe.
class EventStream {
 public:
  // What Next found.
  enum class Turn {
    kEvents,     // `text` holds one or more whole SSE messages
    kHeartbeat,  // nothing arrived within the heartbeat interval
    kEnded,      // the server is shutting down: end the response
    kDropped,    // the client fell behind: close the connection
  };

  // Waits until events are queued, the stream ends, or `heartbeat` passed. On kEvents, `text`
  // gets the queued messages ("id: N\ndata: <event JSON>\n\n" each), which leave the queue.
  Turn Next(std::chrono::milliseconds heartbeat, std::string& text);

 private:
  friend class EventStreams;
  std::mutex mu_;
  std::condition_variable changed_;
  std::deque<std::string> queue_;  // guarded by mu_
  size_t queued_bytes_ = 0;
  bool ended_ = false;
  bool dropped_ = false;
};

// The open event streams of one server, subscribed to the runtime's bus while the object lives
// (the bus must outlive it). Thread-safe.
class EventStreams {
 public:
  // `bus` may be null (no events: streams only beat). `clock` stamps tickets; not owned.
  EventStreams(obs::EventBus* bus, Clock& clock, EventStreamOptions options);
  ~EventStreams();
  EventStreams(const EventStreams&) = delete;
  EventStreams& operator=(const EventStreams&) = delete;

  // A new stream, receiving every event published from now on. kUnavailable when max_streams are
  // open or Shutdown was called. The stream counts as open until Close.
  Result<std::shared_ptr<EventStream>> Open();
  // Forgets `stream` (its connection ended). Idempotent.
  void Close(const std::shared_ptr<EventStream>& stream);
  // Ends every open stream (Next returns kEnded) and refuses new ones. Idempotent.
  void Shutdown();

  // A single-use ticket that admits one GET of the events route without the bearer token, for a
  // browser's EventSource, which cannot send headers. Issued to a caller that had the token.
  std::string IssueTicket();
  // Whether `ticket` was issued, is unused and has not expired; it is spent either way.
  bool RedeemTicket(const std::string& ticket);

  const EventStreamOptions& options() const { return options_; }
  // Streams open now.
  size_t open_streams() const;
  // Streams dropped so far because their client fell behind.
  uint64_t dropped_streams() const;

  // The state the streams share with the bus's sink (event_streams.cc).
  struct Hub;

 private:
  std::shared_ptr<Hub> hub_;  // shared with the bus's sink, which may outlive an Unsubscribe
  obs::EventBus* const bus_;
  obs::SubscriptionId subscription_{};
  Clock& clock_;
  const EventStreamOptions options_;
  std::mutex tickets_mu_;
  std::map<std::string, Time> tickets_;  // guarded by tickets_mu_: ticket -> expiry
};

}  // namespace mend::server
