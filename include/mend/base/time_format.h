#pragma once

// RFC 3339 timestamps and Go-style durations, the text forms of time in our files, on the wire and
// in configuration. Calendar arithmetic is done on the proleptic Gregorian calendar in code, never
// through the C library's time zone or locale state. All functions are pure and thread-safe.

#include <chrono>
#include <string>
#include <string_view>

#include "mend/base/clock.h"
#include "mend/base/result.h"

namespace mend {

/// `t` in UTC as "2006-01-02T15:04:05.999999999Z": the fraction has trailing zeros removed and is
/// left out entirely for a whole second, as Go's time.RFC3339Nano formats it.
std::string FormatRfc3339(Time t);

/// `t` in UTC as "2006-01-02T15:04:05Z", the fraction of a second truncated.
std::string FormatRfc3339Seconds(Time t);

/// Parses "YYYY-MM-DDTHH:MM:SS[.fraction](Z|±hh:mm)": 'T' or 't' between date and time, 'Z' or 'z'
/// or a numeric offset, which is applied so the result is the same instant in UTC. The fraction
/// has 1 to 9 digits. Impossible dates (February 30, month 13), hours above 23, minutes or seconds
/// above 59 (leap seconds included), any other shape, and instants that Time cannot hold all yield
/// kInvalidArgument.
Result<Time> ParseRfc3339(std::string_view text);

/// Parses a duration the way Go's time.ParseDuration does: an optional sign, then one or more
/// decimal numbers (with optional fraction) each followed by a unit "ns", "us", "µs", "ms", "s",
/// "m" or "h", e.g. "30s", "1h30m", "1.5h", "-250ms"; a bare "0" is allowed. Beyond Go, the unit
/// "d" is exactly 24 hours ("30d", "1d12h"), for retention limits. Parts below a
/// millisecond are truncated toward zero. Anything else (empty text, a missing or unknown unit,
/// spaces, magnitudes beyond about 292 years) yields kInvalidArgument.
Result<std::chrono::milliseconds> ParseDuration(std::string_view text);

/// Formats `d` as Go's time.Duration.String does: "0s", "250ms", "1.5s", "1m30s", "1h30m0s",
/// "168h0m0s", with a leading '-' when negative (never the unit "d"). ParseDuration reads every
/// result back exactly.
std::string FormatDuration(std::chrono::milliseconds d);

}  // namespace mend
