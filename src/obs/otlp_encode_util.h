#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "mend/base/clock.h"

namespace mend::obs::otlp_internal {

// `hex` (exactly 2 * `bytes` lowercase hex digits) as raw bytes; nullopt for anything else.
std::optional<std::string> HexToBytes(std::string_view hex, size_t bytes);

// Nanoseconds since the Unix epoch; 0 for a time before it.
uint64_t UnixNanos(Time t);

// `text` when it is valid UTF-8 (no copy); otherwise a sanitized copy kept in `scratch`.
std::string_view ValidUtf8(std::string_view text, std::string& scratch);

}  // namespace mend::obs::otlp_internal
