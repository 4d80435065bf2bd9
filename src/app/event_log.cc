// Rotation of the JSONL event log: a log that outgrew its limit is renamed when a runtime opens
// it, and the renamed logs are what retention removes.
#include "app/event_log.h"

#include <string>

#include "mend/base/home_layout.h"
#include "mend/base/time_format.h"

namespace mend::app::internal {
namespace {

// "2025-01-02T03:04:05Z" → "20250102T030405Z": sortable, and free of ':' for every file system.
std::string Stamp(Time t) {
  std::string out;
  for (char c : FormatRfc3339Seconds(t)) {
    if (c != '-' && c != ':') out += c;
  }
  return out;
}

bool AllDigits(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

}  // namespace

Result<std::string> RotateEventLog(FileSystem& fs, const std::string& home, uint64_t max_bytes,
                                   Time now) {
  const std::string live = home::EventLogFile(home);
  Result<FileInfo> info = fs.Stat(live);
  if (info.status().code() == StatusCode::kNotFound) return std::string();
  MEND_RETURN_IF_ERROR(info.status());
  if (info->size <= max_bytes) return std::string();
  const std::string stamp = Stamp(now);
  std::string name = home::RotatedEventLogName(stamp, 0);
  for (int n = 1; fs.Exists(JoinPath(home, name)); ++n) {
    name = home::RotatedEventLogName(stamp, n);
  }
  Status renamed = fs.Rename(live, JoinPath(home, name));
  // Another process starting at the same moment rotated it first; its new log is ours too.
  if (renamed.code() == StatusCode::kNotFound) return std::string();
  MEND_RETURN_IF_ERROR(renamed);
  MEND_RETURN_IF_ERROR(fs.SyncDir(home));
  return name;
}

std::optional<Time> RotatedEventLogTime(std::string_view name) {
  const std::optional<std::string_view> found = home::RotatedEventLogStamp(name);
  if (!found.has_value()) return std::nullopt;
  const std::string_view stamp = *found;
  if (!AllDigits(stamp.substr(0, 8)) || stamp[8] != 'T' || !AllDigits(stamp.substr(9, 6)) ||
      stamp[15] != 'Z') {
    return std::nullopt;
  }
  const std::string rfc3339 =
      std::string(stamp.substr(0, 4)) + "-" + std::string(stamp.substr(4, 2)) + "-" +
      std::string(stamp.substr(6, 2)) + "T" + std::string(stamp.substr(9, 2)) + ":" +
      std::string(stamp.substr(11, 2)) + ":" + std::string(stamp.substr(13, 2)) + "Z";
  Result<Time> t = ParseRfc3339(rfc3339);
  if (!t.ok()) return std::nullopt;
  return *t;
}

}  // namespace mend::app::internal
