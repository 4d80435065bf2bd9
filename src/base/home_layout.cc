// The one place that spells the paths under the home directory (docs/home.md).
#include "mend/base/home_layout.h"

#include <charconv>

#include "mend/base/file_system.h"

namespace mend::home {
namespace {

constexpr std::string_view kEventLogPrefix = "events-";
constexpr std::string_view kEventLogSuffix = ".jsonl";
constexpr size_t kStampSize = 16;  // YYYYMMDDTHHMMSSZ
constexpr std::string_view kScratchPrefix = "improve-scratch-";

bool AllDigits(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

}  // namespace

std::string ConfigFile(std::string_view home) { return JoinPath(home, "config.toml"); }
std::string DatabaseFile(std::string_view home) { return JoinPath(home, "mend.db"); }
std::string ObserveFile(std::string_view home) { return JoinPath(home, "observe.db"); }

std::string EventLogFile(std::string_view home) { return JoinPath(home, "events.jsonl"); }

std::string RotatedEventLogName(std::string_view stamp, int n) {
  std::string name(kEventLogPrefix);
  name += stamp;
  if (n > 0) name += "-" + std::to_string(n);
  name += kEventLogSuffix;
  return name;
}

std::optional<std::string_view> RotatedEventLogStamp(std::string_view name) {
  if (!name.starts_with(kEventLogPrefix) || !name.ends_with(kEventLogSuffix)) return std::nullopt;
  name.remove_prefix(kEventLogPrefix.size());
  name.remove_suffix(kEventLogSuffix.size());
  if (name.size() < kStampSize) return std::nullopt;
  const std::string_view rest = name.substr(kStampSize);
  if (!rest.empty() && !(rest[0] == '-' && AllDigits(rest.substr(1)))) return std::nullopt;
  return name.substr(0, kStampSize);
}

std::string LessonQueueDir(std::string_view home) { return JoinPath(home, "reflexion"); }
std::string LessonWalDir(std::string_view queue_dir) { return JoinPath(queue_dir, "wal"); }
std::string LessonDlqDir(std::string_view queue_dir) { return JoinPath(queue_dir, "dlq"); }
std::string LessonsFile(std::string_view queue_dir) { return JoinPath(queue_dir, "LESSONS.md"); }
std::string LessonQueueLockFile(std::string_view queue_dir) {
  return JoinPath(queue_dir, "owner.lock");
}

std::string ImproveDir(std::string_view home) { return JoinPath(home, "improve"); }
std::string AttemptDir(std::string_view home, std::string_view attempt_id) {
  return JoinPath(ImproveDir(home), attempt_id);
}

std::string ImproveScratchDir(std::string_view home, long pid) {
  return JoinPath(home, std::string(kScratchPrefix) + std::to_string(pid));
}

std::optional<long> ScratchOwner(std::string_view name) {
  if (!name.starts_with(kScratchPrefix)) return std::nullopt;
  const std::string_view digits = name.substr(kScratchPrefix.size());
  if (!AllDigits(digits) || digits.size() > 9) return std::nullopt;
  long pid = 0;
  std::from_chars(digits.data(), digits.data() + digits.size(), pid);
  return pid;
}

std::string ScratchAgentDir(std::string_view scratch_dir) { return JoinPath(scratch_dir, "agent"); }
std::string ScratchStoreFile(std::string_view scratch_dir) {
  return JoinPath(scratch_dir, "store.db");
}
std::string ScratchRunsDir(std::string_view scratch_dir) { return JoinPath(scratch_dir, "runs"); }

std::string DemoAgentDir(std::string_view home) { return JoinPath(home, "demo-agent"); }

}  // namespace mend::home
