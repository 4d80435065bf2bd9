#pragma once

#include <string_view>

#include "mend/agent/hooks.h"

namespace mend::obs {
class EventBus;
}

namespace mend::heal {

// Publishes `heal.action` {run, step, tool, action, reason} for `call` on `events` (may be null:
// nothing is published).
void PublishHealAction(obs::EventBus* events, const agent::ToolCallInfo& call,
                       std::string_view action, std::string_view reason);

// The first line-ish excerpt of a tool's output for hints and event reasons: white space collapsed
// and cut to at most `max_bytes` bytes (without splitting a code point), "..." marking a cut.
std::string Excerpt(std::string_view text, size_t max_bytes = 200);

}  // namespace mend::heal
