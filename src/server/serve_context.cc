// What the route groups share (serve_context.h).
#include "server/serve_context.h"

#include <algorithm>
#include <utility>

#include "mend/app/runtime.h"

namespace mend::server {
namespace {

// Event streams at most; never more than half the request turns, which open streams hold.
constexpr size_t kMaxEventStreams = 16;

EventStreamOptions EventStreamOptionsFor(const ServerOptions& options) {
  EventStreamOptions events;
  events.max_streams =
      std::min(kMaxEventStreams, static_cast<size_t>(std::max(1, options.threads / 2)));
  return events;
}

}  // namespace

ServeContext::ServeContext(app::Runtime& runtime, ServerOptions options)
    : runtime_(runtime),
      options_(std::move(options)),
      events_(runtime.events.get(), *runtime.env.clock, EventStreamOptionsFor(options_)) {}

}  // namespace mend::server
