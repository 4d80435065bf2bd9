#pragma once

// The paths under mend's home directory ($MEND_HOME, default ~/.mend), named in one place:
// docs/home.md describes each of them, who writes it and its permissions. No other file spells a
// path under the home; code that needs one calls these. The paths are purely lexical
// (JoinPath): nothing here touches the disk.
//
// The layout sits in base, not in app, because modules below app need it too: the configuration
// loader reads config.toml, the lesson queue lays out its folder, and improve writes the audit
// folders. What lies inside an audit folder or a lesson WAL file is the format of the module that
// writes it (docs/improve.md, docs/wal_format.md).

#include <optional>
#include <string>
#include <string_view>

namespace mend::home {

/// The home directory when neither --home nor MEND_HOME names one ({user_home} is $HOME).
inline constexpr char kDefaultHome[] = "{user_home}/.mend";

/// The optional configuration file (docs/configuration.md).
std::string ConfigFile(std::string_view home);
/// The SQLite database of runs, checkpoints, leases, facts and proposals (docs/store_schema.md).
std::string DatabaseFile(std::string_view home);
/// The SQLite database of spans (docs/observe.md).
std::string ObserveFile(std::string_view home);

/// The live JSONL event log (docs/events_format.md) and the names it is renamed to when it outgrows
/// observe.events_max_bytes: `events-<YYYYMMDDTHHMMSSZ>[-<n>].jsonl`, beside it.
std::string EventLogFile(std::string_view home);
/// The rotated log's name for `stamp` (YYYYMMDDTHHMMSSZ); `n` > 0 tells apart logs rotated in the
/// same second.
std::string RotatedEventLogName(std::string_view stamp, int n);
/// The stamp of a rotated log's name, or nullopt when `name` is not one (the live log is not).
std::optional<std::string_view> RotatedEventLogStamp(std::string_view name);

/// The lesson queue's folder when reflexion.queue.base_dir is empty: {home}/reflexion, as the
/// configuration's default spells it (a configuration default is expanded against `home`).
inline constexpr char kDefaultLessonQueueDir[] = "{home}/reflexion";
/// The lesson queue folder of `home` with the default base_dir.
std::string LessonQueueDir(std::string_view home);
///@{
/// Inside a lesson queue's folder (wherever it is): pending jobs, dead-lettered jobs, and the
/// human-readable log of persisted lessons (docs/wal_format.md, docs/lesson_queue.md).
std::string LessonWalDir(std::string_view queue_dir);
std::string LessonDlqDir(std::string_view queue_dir);
std::string LessonsFile(std::string_view queue_dir);
///@}
/// The lock of the process that owns the queue's workers (one per folder).
std::string LessonQueueLockFile(std::string_view queue_dir);

/// The audit folders of improve attempts, one per attempt id (docs/improve.md).
std::string ImproveDir(std::string_view home);
/// The audit folder of one attempt.
std::string AttemptDir(std::string_view home, std::string_view attempt_id);

///@{
/// The scratch folder of the improve attempt run by process `pid` (`improve-scratch-<pid>`):
/// removed when the attempt ends, and by a later attempt when its process died. `ScratchOwner` is
/// the pid in a scratch folder's name, or nullopt when `name` is not one.
std::string ImproveScratchDir(std::string_view home, long pid);
std::optional<long> ScratchOwner(std::string_view name);
///@}
///@{
/// Inside a scratch folder: the arm's copy of the agent folder, the evaluation's own store and the
/// folders of its runs.
std::string ScratchAgentDir(std::string_view scratch_dir);
std::string ScratchStoreFile(std::string_view scratch_dir);
std::string ScratchRunsDir(std::string_view scratch_dir);
///@}

/// The agent folder `mend demo` writes into its home.
std::string DemoAgentDir(std::string_view home);

}  // namespace mend::home
