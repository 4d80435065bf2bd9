#pragma once

// The one reader of HTTP's Retry-After (RFC 9110, section 10.2.3), for every client mend has: the
// LLM providers, the OTLP exporter and the proxy.

#include <optional>
#include <string_view>

#include "mend/base/clock.h"

namespace mend {

/// How long a Retry-After value asks to wait: delta-seconds ("120"), or an HTTP-date (IMF-fixdate,
/// "Sun, 06 Nov 1994 08:49:37 GMT") measured from `now`, 0 when already past; never more than
/// `longest` (a far-off date or a huge number is `longest`, without overflow). Surrounding white
/// space is ignored. nullopt for anything else (a negative or fractional number, another date
/// format, text). Pure and thread-safe.
std::optional<Duration> ParseRetryAfter(std::string_view value, Time now, Duration longest);

}  // namespace mend
