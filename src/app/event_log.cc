// Rotation of the JSONL event log: a log that outgrew its limit is renamed when a runtime opens
// it, and the renamed logs are what retention removes.
#include "app/event_log.h"

#include <string>

#include "mend/base/time_format.h"

namespace mend::app::internal {
namespace {

constexpr std::string_view kPrefix = "events-";
constexpr std::string_view kSuffix = ".jsonl";
constexpr size_t kStampSize = 16;  // YYYYMMDDTHHMMSSZ

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
  const std::string live = JoinPath(home, kEventsFile);
  Result<FileInfo> info = fs.Stat(live);
  if (info.status().code() == StatusCode::kNotFound) return std::string();
  MEND_RETURN_IF_ERROR(info.status());
  if (info->size <= max_bytes) return std::string();
  const std::string stamp = Stamp(now);
  std::string name = std::string(kPrefix) + stamp + std::string(kSuffix);
  for (int n = 1; fs.Exists(JoinPath(home, name)); ++n) {
    name = std::string(kPrefix) + stamp + "-" + std::to_string(n) + std::string(kSuffix);
  }
  Status renamed = fs.Rename(live, JoinPath(home, name));
  // Another process starting at the same moment rotated it first; its new log is ours too.
  if (renamed.code() == StatusCode::kNotFound) return std::string();
  MEND_RETURN_IF_ERROR(renamed);
  MEND_RETURN_IF_ERROR(fs.SyncDir(home));
  return name;
}

std::optional<Time> RotatedEventLogTime(std::string_view name) {
  if (!name.starts_with(kPrefix) || !name.ends_with(kSuffix)) return std::nullopt;
  name.remove_prefix(kPrefix.size());
  name.remove_suffix(kSuffix.size());
  if (name.size() < kStampSize) return std::nullopt;
  const std::string_view stamp = name.substr(0, kStampSize);
  const std::string_view rest = name.substr(kStampSize);
  if (!rest.empty() && !(rest[0] == '-' && AllDigits(rest.substr(1)))) return std::nullopt;
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
