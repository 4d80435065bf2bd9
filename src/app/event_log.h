#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "mend/base/clock.h"
#include "mend/base/file_system.h"
#include "mend/base/result.h"

namespace mend::app::internal {

// When the live event log (home::EventLogFile) is larger than `max_bytes`, renames it to
// home::RotatedEventLogName(<now as YYYYMMDDTHHMMSSZ>, n), n = 0 first, then 1, 2, ... while the
// name is taken, and returns the new name; returns "" when there is nothing to rotate. The rename
// keeps the file's mode (0600). A log another process renamed first is not an error.
Result<std::string> RotateEventLog(FileSystem& fs, const std::string& home, uint64_t max_bytes,
                                   Time now);

// The time in the name of a rotated log ("events-20250102T030405Z.jsonl" or with a "-<n>"
// suffix); nullopt for any other name, the live log's included.
std::optional<Time> RotatedEventLogTime(std::string_view name);

}  // namespace mend::app::internal
