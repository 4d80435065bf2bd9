// The relay of a streamed reply (docs/proxy.md, "Streams"): each server-sent event goes to the
// client as soon as it is complete, one write per event, never the whole reply at once. The
// events are watched on the way (usage, text, tool calls) for the span and the lessons, never
// changed. An upstream that breaks off ends the client's stream with an error event in the
// client's API; a client that goes away cancels the upstream request.
#include <pthread.h>
#include <signal.h>

#include <memory>
#include <utility>

#include "proxy/service_impl.h"

namespace mend::proxy {

// What a relayed stream keeps between calls of cpp-httplib's content provider. The provider and
// its releaser run on the thread that serves the client's connection.
struct RelayState {
  ModelCall call;
  int status = 200;
  std::unique_ptr<UpstreamCall> upstream;
  obs::Span span;
  SseParser parser;
  std::unique_ptr<StreamObserver> observer;
  std::string pending;  // received bytes of events not complete yet
  bool finished = false;
  bool counted_open = false;
};

namespace {

// The end of the first complete event in `s` at or after `from` (just past the blank line that
// ends it; lines end in \n, \r\n or \r), or npos. A lone \r at the end may still become \r\n:
// that event waits for the next byte.
size_t NextEventEnd(std::string_view s, size_t from) {
  bool at_line_start = true;
  for (size_t i = from; i < s.size();) {
    const char c = s[i];
    if (c != '\r' && c != '\n') {
      at_line_start = false;
      ++i;
      continue;
    }
    size_t next = i + 1;
    if (c == '\r') {
      if (next >= s.size()) return std::string_view::npos;
      if (s[next] == '\n') ++next;
    }
    if (at_line_start) return next;
    at_line_start = true;
    i = next;
  }
  return std::string_view::npos;
}

// A client that closed its connection makes the next write raise SIGPIPE; on this thread that
// must be a failed write, without changing the process's disposition.
void BlockSigpipeOnThisThread() {
  thread_local bool blocked = false;
  if (blocked) return;
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  blocked = true;
}

// Takes a SIGPIPE the failed write left pending, so none accumulates on a pool thread.
void DiscardPendingSigpipe() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  const timespec zero{0, 0};
  while (sigtimedwait(&set, nullptr, &zero) == SIGPIPE) {
  }
}

}  // namespace

void ProxyServiceImpl::RelayStream(httplib::Response& res, ModelCall call,
                                   std::unique_ptr<UpstreamCall> upstream, obs::Span span) {
  auto state = std::make_shared<RelayState>();
  state->observer = std::make_unique<StreamObserver>(call.shape);
  state->status = res.status;
  state->call = std::move(call);
  state->upstream = std::move(upstream);
  state->span = std::move(span);
  if (metrics_.open_streams != nullptr) {
    metrics_.open_streams->Inc();
    state->counted_open = true;
  }
  res.set_chunked_content_provider(
      "text/event-stream",
      [this, state](size_t, httplib::DataSink& sink) { return PumpRelay(*state, sink); },
      [this, state](bool success) {
        // The response is done, or the connection failed before the provider could finish.
        if (state->finished) return;
        FinishRelay(*state, /*client_gone=*/!success);
        state->upstream->Cancel();
      });
}

bool ProxyServiceImpl::PumpRelay(RelayState& state, httplib::DataSink& sink) {
  BlockSigpipeOnThisThread();
  std::string chunk;
  std::vector<SseEvent> events;
  while (true) {
    Status read = state.upstream->Read(chunk);
    if (!read.ok() || (chunk.empty() && state.upstream->done())) {
      EndRelay(state, sink, read);
      return true;
    }
    state.pending += chunk;
    size_t start = 0;
    for (size_t end = NextEventEnd(state.pending, 0); end != std::string::npos;
         end = NextEventEnd(state.pending, start)) {
      const std::string_view event = std::string_view(state.pending).substr(start, end - start);
      if (!sink.write(event.data(), event.size())) {
        DiscardPendingSigpipe();
        // The upstream stops generating (and billing) at once; the books are kept after.
        state.upstream->Cancel();
        if (metrics_.client_aborts != nullptr) metrics_.client_aborts->Inc();
        FinishRelay(state, /*client_gone=*/true);
        return false;
      }
      events.clear();
      if (state.parser.Feed(event, events).ok()) {
        for (const SseEvent& e : events) state.observer->OnEvent(e);
      }
      start = end;
    }
    state.pending.erase(0, start);
  }
}

void ProxyServiceImpl::EndRelay(RelayState& state, httplib::DataSink& sink, const Status& read) {
  const ReplySummary& summary = state.observer->summary();
  // Whatever the reply did not finish becomes an error event, so that the client never takes a
  // cut stream for a whole one; an upstream that sent its own error event has said it already.
  if ((!read.ok() || !summary.complete) && summary.error.empty()) {
    const std::string why = read.ok()
                                ? "the upstream ended the stream before its last event"
                                : "the upstream stream broke off: " + std::string(read.message());
    const std::string event =
        StreamErrorEvent(StyleFor(state.call.shape), state.call.shape == ApiShape::kResponses, why);
    (void)sink.write(event.data(), event.size());
  } else if (!state.pending.empty()) {
    (void)sink.write(state.pending.data(), state.pending.size());
  }
  DiscardPendingSigpipe();
  // The books first: a client that has the end of the stream finds the span and the counts.
  FinishRelay(state, /*client_gone=*/false);
  sink.done();
}

void ProxyServiceImpl::FinishRelay(RelayState& state, bool client_gone) {
  if (state.finished) return;
  state.finished = true;
  if (state.counted_open && metrics_.open_streams != nullptr) metrics_.open_streams->Dec();
  ReplySummary summary = state.observer->summary();
  if (!summary.complete && summary.error.empty()) {
    summary.error = client_gone ? "the client went away" : "the stream ended early";
  }
  FinishSpan(state.span, state.call, summary, client_gone ? kClientClosedStatus : state.status);
  state.span = obs::Span();
  Count(state.call.route, client_gone ? kClientClosedStatus : state.status);
  if (!client_gone && summary.complete) AfterReply(state.call.conversation_id, summary, "");
}

}  // namespace mend::proxy
