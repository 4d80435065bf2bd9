#pragma once

#include <string>
#include <vector>

#include "mend/obs/events.h"

namespace mend::obs {

inline constexpr std::string_view kRedacted = "[REDACTED]";

// Replaces every occurrence of each of `secrets` in the event's type, field keys and field values
// (string values and object keys at any depth, and the text of numbers, booleans and null, which
// then become strings) with kRedacted. `secrets` are applied in the given order, so callers put
// longer ones first; empty secrets are skipped. Field values must be valid JSON text.
// Replaces every occurrence of each of `secrets` in `text`; true when anything was replaced.
bool ReplaceAllSecrets(std::string* text, const std::vector<std::string>& secrets);

void RedactEvent(const std::vector<std::string>& secrets, Event* event);

}  // namespace mend::obs
