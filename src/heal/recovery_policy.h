#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "mend/base/clock.h"
#include "mend/store/checkpoint_store.h"

namespace mend::heal {

// The suffix of a retry-with-diagnosis fork: run "r1" is retried as "r1.heal".
inline constexpr std::string_view kHealSuffix = ".heal";

// interval × 2^(failures − 1), capped at `max`; `interval` for failures ≤ 1. Never overflows.
Duration BackoffDelay(Duration interval, Duration max, int64_t failures);

// True when `error` says the model provider is down or overloaded (class transient with code
// UNAVAILABLE, RESOURCE_EXHAUSTED or DEADLINE_EXCEEDED): what counts toward an outage. Auth and
// permanent errors never do.
bool IsProviderFailure(const store::RunError& error);

bool IsHealFork(std::string_view run_id);
std::string HealForkId(std::string_view run_id);
// The run a `.heal` fork was made from ("r1" for "r1.heal").
std::string HealOriginalId(std::string_view fork_id);

// True when the run is a session turn (`mend chat`), read from the agent layer's metadata
// {"kind":"session"}; retry-with-diagnosis does not apply to those. Unparseable metadata counts as
// not a session.
bool IsSessionRun(const store::RunRecord& run);

// `text` as one line of data: backslash, newlines, tabs and other control characters escaped,
// invalid UTF-8 bytes as \xNN, and no ">>>" (every third '>' in a row becomes "\>"), so it cannot
// close the quote it is put in. At most `max_bytes` bytes, cut between characters (never inside a
// UTF-8 sequence or an escape); a cut text ends with "...", counted in the bound.
std::string QuoteAsData(std::string_view text, size_t max_bytes);

}  // namespace mend::heal
