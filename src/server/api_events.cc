// The live events route group (docs/http_api.md, "Live events"): GET /api/v1/events streams the
// runtime's events as server-sent events; POST /api/v1/events/tickets lets a browser's
// EventSource, which cannot send the bearer token, open one.
#include <httplib.h>

#include <memory>
#include <string>

#include "server/api.h"
#include "server/serve_context.h"

namespace mend::server {

namespace {

constexpr char kEventsPath[] = "/api/v1/events";

// Writes what the stream has next: its queued events, or a heartbeat comment. Returns false to
// close the connection (the client fell behind, or a write failed); ends the response cleanly
// when the server shuts down.
bool WriteNext(EventStreams& streams, const std::shared_ptr<EventStream>& stream,
               httplib::DataSink& sink) {
  std::string text;
  switch (stream->Next(streams.options().heartbeat, text)) {
    case EventStream::Turn::kEvents:
      return sink.write(text.data(), text.size());
    case EventStream::Turn::kHeartbeat: {
      static constexpr std::string_view kBeat = ": heartbeat\n\n";
      return sink.write(kBeat.data(), kBeat.size());
    }
    case EventStream::Turn::kEnded:
      sink.done();
      return true;
    case EventStream::Turn::kDropped:
      return false;
  }
  return false;
}

void ServeEvents(EventStreams& streams, httplib::Response& res) {
  Result<std::shared_ptr<EventStream>> opened = streams.Open();
  if (!opened.ok()) return WriteError(res, opened.status());
  std::shared_ptr<EventStream> stream = *std::move(opened);
  res.set_header("Cache-Control", "no-store");
  // Tells nginx and its kind not to buffer the stream.
  res.set_header("X-Accel-Buffering", "no");
  const std::string hello =
      "retry: " + std::to_string(streams.options().retry.count()) + "\n: connected\n\n";
  res.set_chunked_content_provider(
      "text/event-stream",
      [&streams, stream, hello](size_t offset, httplib::DataSink& sink) {
        // The first write sends the head and the retry field at once, so the client knows the
        // stream is open before any event happens.
        if (offset == 0) return sink.write(hello.data(), hello.size());
        return WriteNext(streams, stream, sink);
      },
      [&streams, stream](bool) { streams.Close(stream); });
}

}  // namespace

bool RedeemsEventTicket(const httplib::Request& req, EventStreams& streams) {
  if (req.method != "GET" || req.path != kEventsPath || !req.has_param("ticket")) return false;
  return streams.RedeemTicket(req.get_param_value("ticket"));
}

void AddEventRoutes(ApiRoutes& routes, ServeContext& context) {
  EventStreams& streams = context.events();
  routes.http().Get(kEventsPath, [&streams](const httplib::Request&, httplib::Response& res) {
    ServeEvents(streams, res);
  });
  routes.Post("/api/v1/events/tickets", [&streams](const ApiRequest&) -> Result<ApiResponse> {
    std::string ticket = streams.IssueTicket();
    if (ticket.empty()) return UnavailableError("no randomness for a ticket");
    const auto lifetime =
        std::chrono::duration_cast<std::chrono::seconds>(streams.options().ticket_lifetime);
    return ApiResponse({{"ticket", std::move(ticket)}, {"expires_in_seconds", lifetime.count()}},
                       201);
  });
}

}  // namespace mend::server
